/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/dns/edns.c: a request's OPT record found, an option
 * read from it, an OPT record with one option (an EDE, an EXPIRE) added. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dns/edns.h"
#include "dns/wire.h"

/* AXFR for "ex." with, in the additional section, an OPT record. */
static const uint8_t with_opt[] = {
	0x12, 0x34, 0x00, 0x00, 0,    1,   0, 0, 0, 0, 0, 1, /* header: QD 1, AR 1 */
	2,    'e',  'x',  0,    0,    252, 0, 1,             /* ex. AXFR IN */
	0,    0,    41,   0x04, 0xd0, 0,   0, 0, 0, 0, 0,    /* OPT, payload 1232 */
};

static void test_has_opt(void **state)
{
	uint8_t m[sizeof(with_opt)];

	(void)state;
	assert_true(apex_message_has_opt(with_opt, sizeof(with_opt)));
	/* cut short, or the record counted as an answer: no OPT */
	for (size_t n = 0; n < sizeof(with_opt); n++)
		assert_false(apex_message_has_opt(with_opt, n));
	memcpy(m, with_opt, sizeof(m));
	m[7] = 1; /* AN 1 */
	m[11] = 0;
	assert_false(apex_message_has_opt(m, sizeof(m)));
	/* an RDLENGTH past the end */
	memcpy(m, with_opt, sizeof(m));
	m[sizeof(m) - 1] = 4;
	assert_true(apex_message_has_opt(m, sizeof(m))); /* found before its RDATA is read */
}

static void test_add_ede(void **state)
{
	uint8_t m[64] = { 0x12, 0x34, 0x84, 0x05, 0,   1, 0, 0,   0, 0,
			  0,    0,    2,    'e',  'x', 0, 0, 252, 0, 1 };
	size_t n = 20;

	(void)state;
	assert_int_equal(apex_message_add_ede(m, n, n + 16, APEX_EDE_PROHIBITED), n); /* no room */
	assert_int_equal(apex_read_u16(m + 10), 0);
	size_t grown = apex_message_add_ede(m, n, sizeof(m), APEX_EDE_PROHIBITED);
	assert_int_equal(grown, n + 17);
	assert_int_equal(apex_read_u16(m + 10), 1);
	static const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 6, 0, 15, 0, 2, 0, 18 };
	assert_memory_equal(m + n, opt, sizeof(opt));
	assert_true(apex_message_has_opt(m, grown));
}

/* An EXPIRE option added (empty, as a request's; with a value, as an
 * answer's) and read back; options that are absent, cut short or past the
 * OPT record's RDATA are not read. */
static void test_expire_option(void **state)
{
	uint8_t m[64] = { 0x12, 0x34, 0x00, 0x00, 0,   1, 0, 0,   0, 0,
			  0,    0,    2,    'e',  'x', 0, 0, 252, 0, 1 };
	const uint8_t value[4] = { 0, 0, 0x0e, 0x10 }; /* 3600 */
	const uint8_t *data = NULL;
	size_t n = 20;

	(void)state;
	assert_int_equal(apex_message_opt_option(m, n, APEX_EDNS_EXPIRE, &data), -1); /* no OPT */
	size_t asked = apex_message_add_opt(m, n, sizeof(m), APEX_EDNS_EXPIRE, NULL, 0);
	assert_int_equal(asked, n + 15);
	assert_int_equal(apex_message_opt_option(m, asked, APEX_EDNS_EXPIRE, &data), 0);
	assert_int_equal(apex_message_opt_option(m, asked, APEX_EDNS_EDE, &data), -1);

	apex_write_u16(m + 10, 0); /* again, with a value */
	size_t answered = apex_message_add_opt(m, n, sizeof(m), APEX_EDNS_EXPIRE, value, 4);
	assert_int_equal(answered, n + 19);
	assert_int_equal(apex_message_opt_option(m, answered, APEX_EDNS_EXPIRE, &data), 4);
	assert_ptr_equal(data, m + n + 15);
	assert_int_equal(apex_read_u32(data), 3600);
	/* cut short anywhere: nothing read past the end */
	for (size_t cut = 0; cut < answered; cut++)
		assert_int_equal(apex_message_opt_option(m, cut, APEX_EDNS_EXPIRE, &data), -1);
	/* an option longer than the RDATA holds */
	m[n + 14] = 5;
	assert_int_equal(apex_message_opt_option(m, answered, APEX_EDNS_EXPIRE, &data), -1);
	/* no room: the message unchanged */
	assert_int_equal(apex_message_add_opt(m, n, n + 18, APEX_EDNS_EXPIRE, value, 4), n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_has_opt),
		cmocka_unit_test(test_add_ede),
		cmocka_unit_test(test_expire_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
