/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dns/serial: RFC 1982 serial number arithmetic with SERIAL_BITS = 32,
 * including the examples of its section 5.2 scaled to 32 bits and the
 * pairs that are not comparable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dns/serial.h"

static void order(void **state)
{
	(void)state;
	assert_int_equal(apex_serial_compare(7, 7), APEX_SERIAL_EQUAL);
	assert_int_equal(apex_serial_compare(2, 1), APEX_SERIAL_NEWER);
	assert_int_equal(apex_serial_compare(1, 2), APEX_SERIAL_OLDER);
	/* across the wrap */
	assert_int_equal(apex_serial_compare(0, UINT32_MAX), APEX_SERIAL_NEWER);
	assert_int_equal(apex_serial_compare(UINT32_MAX, 0), APEX_SERIAL_OLDER);
	assert_int_equal(apex_serial_compare(5, UINT32_C(0xfffffff0)), APEX_SERIAL_NEWER);
	/* the largest step forward: 2^31 - 1 */
	assert_int_equal(apex_serial_compare(UINT32_C(0x7fffffff), 0), APEX_SERIAL_NEWER);
	assert_int_equal(apex_serial_compare(UINT32_C(0x80000000), 1), APEX_SERIAL_NEWER);
	assert_int_equal(apex_serial_compare(0, UINT32_C(0x80000001)), APEX_SERIAL_NEWER);
	/* exactly 2^31 apart: neither is newer (RFC 1982 section 3.2) */
	assert_int_equal(apex_serial_compare(0, UINT32_C(0x80000000)), APEX_SERIAL_UNDEFINED);
	assert_int_equal(apex_serial_compare(UINT32_C(0x80000000), 0), APEX_SERIAL_UNDEFINED);
	assert_int_equal(apex_serial_compare(12345, 12345 + UINT32_C(0x80000000)),
			 APEX_SERIAL_UNDEFINED);
}

static void newer(void **state)
{
	(void)state;
	assert_true(apex_serial_newer(2024010102, 2024010101));
	assert_false(apex_serial_newer(2024010101, 2024010101));
	assert_false(apex_serial_newer(2024010101, 2024010102));
	assert_true(apex_serial_newer(3, UINT32_C(0xfffffffe)));
	assert_false(apex_serial_newer(UINT32_C(0x80000000), 0));
	assert_false(apex_serial_newer(0, UINT32_C(0x80000000)));
}

static void add(void **state)
{
	(void)state;
	assert_int_equal(apex_serial_add(1, 1), 2);
	assert_int_equal(apex_serial_add(UINT32_MAX, 1), 0);
	assert_int_equal(apex_serial_add(UINT32_C(0xfffffff0), 0x20), 0x10);
	/* the largest defined addition, and a larger one clamped to it */
	assert_int_equal(apex_serial_add(0, UINT32_C(0x7fffffff)), UINT32_C(0x7fffffff));
	assert_int_equal(apex_serial_add(0, UINT32_C(0x90000000)), UINT32_C(0x7fffffff));
	assert_true(apex_serial_newer(apex_serial_add(77, UINT32_C(0xffffffff)), 77));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(order),
		cmocka_unit_test(newer),
		cmocka_unit_test(add),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
