/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * query/opt: an EDNS option appended to a response's OPT record.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "dns/wire.h"
#include "query/opt.h"
#include "query/writer.h"
#include "util/error.h"

static void test_opt_append(void **state)
{
	uint8_t buf[128], data[24];
	apex_writer_t w;
	size_t opt_pos;

	(void)state;
	memset(data, 0xab, sizeof(data));
	apex_writer_init(&w, buf, 64, sizeof(buf));
	opt_pos = w.pos;
	assert_int_equal(apex_writer_opt(&w, 1232, 0, false, NULL, 0), APEX_OK);
	assert_int_equal(apex_writer_opt_append(&w, opt_pos, 10, data, 24), APEX_OK);
	assert_int_equal(w.pos, opt_pos + 11 + 28);
	assert_int_equal(apex_read_u16(buf + opt_pos + 9), 28);
	assert_int_equal(apex_read_u16(buf + opt_pos + 11), 10);
	assert_int_equal(apex_read_u16(buf + opt_pos + 13), 24);
	assert_memory_equal(buf + opt_pos + 15, data, 24);
	/* no room: nothing written */
	w.capacity = w.pos + 10;
	assert_int_equal(apex_writer_opt_append(&w, opt_pos, 10, data, 24), APEX_ESPACE);
	assert_int_equal(apex_read_u16(buf + opt_pos + 9), 28);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opt_append),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
