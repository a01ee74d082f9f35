/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rrl: the response-rate-limiting table (per prefix, shares, whitelist)
 * and its slipped replies.
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
#include "rrl/rrl.h"
#include "util/error.h"

static struct sockaddr_in v4(const char *text)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	assert_int_equal(inet_pton(AF_INET, text, &sin.sin_addr), 1);
	return sin;
}

static void test_rrl_limits_prefix(void **state)
{
	apex_rrl_config_t cfg = {
		.rate = 10, .slip = 2, .ipv4_prefix = 24, .ipv6_prefix = 56, .table_size = 64
	};
	apex_rrl_t rrl;
	struct sockaddr_in a = v4("192.0.2.1"), b = v4("192.0.2.200"), c = v4("198.51.100.7");
	unsigned sent = 0, slipped = 0, dropped = 0;

	(void)state;
	assert_int_equal(apex_rrl_init(&rrl, &cfg, 1), APEX_OK);
	assert_true(apex_rrl_enabled(&rrl));
	/* 100 responses in the same millisecond: 10 (the bucket) go out */
	for (int i = 0; i < 100; i++) {
		apex_rrl_action_t act =
			apex_rrl_account(&rrl, (struct sockaddr *)(i % 2 ? &a : &b), 1000);

		sent += act == APEX_RRL_SEND;
		slipped += act == APEX_RRL_SLIP;
		dropped += act == APEX_RRL_DROP;
	}
	assert_int_equal(sent, 10);
	assert_int_equal(slipped, 45); /* every second limited one */
	assert_int_equal(dropped, 45);
	/* another prefix is not affected */
	assert_int_equal(apex_rrl_account(&rrl, (struct sockaddr *)&c, 1000), APEX_RRL_SEND);
	/* 100 ms later one token (rate 10/s) has come back, not two */
	assert_int_equal(apex_rrl_account(&rrl, (struct sockaddr *)&a, 1100), APEX_RRL_SEND);
	assert_int_not_equal(apex_rrl_account(&rrl, (struct sockaddr *)&a, 1100), APEX_RRL_SEND);
	apex_rrl_free(&rrl);
}

static void test_rrl_shares_and_whitelist(void **state)
{
	apex_prefix_t white;
	apex_rrl_config_t cfg = { .rate = 10,
				  .slip = 0,
				  .ipv4_prefix = 24,
				  .ipv6_prefix = 56,
				  .table_size = 16,
				  .whitelist = &white,
				  .whitelist_count = 1 };
	apex_rrl_t rrl;
	struct sockaddr_in a = v4("10.1.2.3"), w = v4("10.9.9.9");
	unsigned sent = 0;

	(void)state;
	assert_int_equal(apex_prefix_parse("10.9.0.0/16", &white, NULL), APEX_OK);
	assert_int_equal(apex_prefix_parse("10.9.0.0/33", &white, NULL), APEX_EINVAL);
	assert_int_equal(apex_prefix_parse("nonsense", &white, NULL), APEX_EINVAL);
	assert_int_equal(apex_prefix_parse("10.9.1.1/16", &white, NULL), APEX_OK); /* masked */
	/* 4 shares of 10/s: 3 per second each (rounded up) */
	assert_int_equal(apex_rrl_init(&rrl, &cfg, 4), APEX_OK);
	for (int i = 0; i < 20; i++)
		sent += apex_rrl_account(&rrl, (struct sockaddr *)&a, 5000) == APEX_RRL_SEND;
	assert_int_equal(sent, 3);
	/* slip 0: all limited ones dropped */
	assert_int_equal(apex_rrl_account(&rrl, (struct sockaddr *)&a, 5000), APEX_RRL_DROP);
	for (int i = 0; i < 50; i++)
		assert_int_equal(apex_rrl_account(&rrl, (struct sockaddr *)&w, 5000),
				 APEX_RRL_SEND);
	apex_rrl_free(&rrl);

	cfg.rate = 0;
	assert_int_equal(apex_rrl_init(&rrl, &cfg, 4), APEX_OK);
	assert_false(apex_rrl_enabled(&rrl));
	assert_int_equal(apex_rrl_account(&rrl, (struct sockaddr *)&a, 5000), APEX_RRL_SEND);
	apex_rrl_free(&rrl);
}

static void test_rrl_slip_response(void **state)
{
	/* header (QR, AA, 1 question, 1 answer, 0, 1 additional) + question + junk records */
	uint8_t msg[64] = { 0x12, 0x34, 0x84, 0x00, 0,  1, 0, 1, 0,    0,  0, 1, 3,
			    'c',  'o',  'm',  0,    0,  1, 0, 1, 0xc0, 12, 0, 1, 0,
			    1,    0,    0,    0,    60, 0, 4, 1, 2,    3,  4 };
	size_t size;

	(void)state;
	size = apex_rrl_slip_response(msg, 37);
	assert_int_equal(size, 21);
	assert_int_equal(apex_read_u16(msg + APEX_HDR_FLAGS), 0x8400 | APEX_FLAG_TC);
	assert_int_equal(apex_read_u16(msg + APEX_HDR_QDCOUNT), 1);
	assert_int_equal(apex_read_u16(msg + APEX_HDR_ANCOUNT), 0);
	assert_int_equal(apex_read_u16(msg + APEX_HDR_ARCOUNT), 0);
	/* a question running past the end is refused */
	assert_int_equal(apex_rrl_slip_response(msg, 16), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rrl_limits_prefix),
		cmocka_unit_test(test_rrl_shares_and_whitelist),
		cmocka_unit_test(test_rrl_slip_response),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
