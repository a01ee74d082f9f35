/*
 * Unit tests of the hardening pieces of lib/: SipHash-2-4 (reference
 * vectors), RFC 9018 server cookies (the RFC's test vectors), the
 * response-rate-limiting table and its slipped replies, and the EDNS
 * option appended to a response's OPT record.
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
#include "query/cookie.h"
#include "query/opt.h"
#include "query/writer.h"
#include "rrl/rrl.h"
#include "util/error.h"
#include "util/siphash.h"

static void hex(const char *text, uint8_t *out, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		unsigned v;

		assert_int_equal(sscanf(text + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* The SipHash paper's appendix: key 00..0f, messages 00..(n-1). */
static void test_siphash_vectors(void **state)
{
	uint8_t key[16], msg[64];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	assert_true(apex_siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ULL);
	assert_true(apex_siphash24(key, msg, 1) == 0x74f839c593dc67fdULL);
	assert_true(apex_siphash24(key, msg, 8) == 0x93f5f5799a932462ULL);
	assert_true(apex_siphash24(key, msg, 15) == 0xa129ca6149be45e5ULL);
	assert_true(apex_siphash24(key, msg, 63) == 0x958a324ceb064572ULL);
}

/* RFC 9018 appendix A.1: learning a new server cookie. */
static void test_cookie_rfc9018_vector(void **state)
{
	uint8_t secret[16], client[8], expect[16], out[16], addr[4];

	(void)state;
	hex("e5e973e5a6b2a43f48e7dc849e37bfcf", secret, 16);
	hex("2464c4abcf10c957", client, 8);
	hex("010000005cf79f111f8130c3eee29480", expect, 16);
	assert_int_equal(inet_pton(AF_INET, "198.51.100.100", addr), 1);
	apex_cookie_make(secret, client, addr, 4, 1559731985, out);
	assert_memory_equal(out, expect, 16);
	assert_int_equal(apex_cookie_verify(secret, client, out, 16, addr, 4, 1559731985),
			 APEX_COOKIE_VALID);
}

static void test_cookie_verify_rejects(void **state)
{
	uint8_t secret[16] = { 1, 2, 3 }, client[8] = { 9, 8, 7 }, cookie[16], addr[4] = { 127, 0, 0, 1 };
	uint8_t other[4] = { 127, 0, 0, 2 };
	uint32_t now = 1700000000;

	(void)state;
	apex_cookie_make(secret, client, addr, 4, now, cookie);
	assert_int_equal(apex_cookie_verify(secret, client, cookie, 16, addr, 4, now + 100),
			 APEX_COOKIE_VALID);
	/* another address, a changed byte, too old, too far ahead, wrong size */
	assert_int_equal(apex_cookie_verify(secret, client, cookie, 16, other, 4, now),
			 APEX_COOKIE_INVALID);
	cookie[15] ^= 1;
	assert_int_equal(apex_cookie_verify(secret, client, cookie, 16, addr, 4, now),
			 APEX_COOKIE_INVALID);
	cookie[15] ^= 1;
	assert_int_equal(apex_cookie_verify(secret, client, cookie, 16, addr, 4, now + 3601),
			 APEX_COOKIE_INVALID);
	assert_int_equal(apex_cookie_verify(secret, client, cookie, 16, addr, 4, now - 301),
			 APEX_COOKIE_INVALID);
	assert_int_equal(apex_cookie_verify(secret, client, cookie, 8, addr, 4, now),
			 APEX_COOKIE_INVALID);
}

static struct sockaddr_in v4(const char *text)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	assert_int_equal(inet_pton(AF_INET, text, &sin.sin_addr), 1);
	return sin;
}

static void test_rrl_limits_prefix(void **state)
{
	apex_rrl_config_t cfg = { .rate = 10, .slip = 2, .ipv4_prefix = 24, .ipv6_prefix = 56,
				  .table_size = 64 };
	apex_rrl_t rrl;
	struct sockaddr_in a = v4("192.0.2.1"), b = v4("192.0.2.200"), c = v4("198.51.100.7");
	unsigned sent = 0, slipped = 0, dropped = 0;

	(void)state;
	assert_int_equal(apex_rrl_init(&rrl, &cfg, 1), APEX_OK);
	assert_true(apex_rrl_enabled(&rrl));
	/* 100 responses in the same millisecond: 10 (the bucket) go out */
	for (int i = 0; i < 100; i++) {
		apex_rrl_action_t act = apex_rrl_account(&rrl, (struct sockaddr *)(i % 2 ? &a : &b), 1000);

		sent += act == APEX_RRL_SEND;
		slipped += act == APEX_RRL_SLIP;
		dropped += act == APEX_RRL_DROP;
	}
	assert_int_equal(sent, 10);
	assert_int_equal(slipped, 45);  /* every second limited one */
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
	apex_rrl_prefix_t white;
	apex_rrl_config_t cfg = { .rate = 10, .slip = 0, .ipv4_prefix = 24, .ipv6_prefix = 56,
				  .table_size = 16, .whitelist = &white, .whitelist_count = 1 };
	apex_rrl_t rrl;
	struct sockaddr_in a = v4("10.1.2.3"), w = v4("10.9.9.9");
	unsigned sent = 0;

	(void)state;
	assert_int_equal(apex_rrl_prefix_parse("10.9.0.0/16", &white), APEX_OK);
	assert_int_equal(apex_rrl_prefix_parse("10.9.0.0/33", &white), APEX_EINVAL);
	assert_int_equal(apex_rrl_prefix_parse("nonsense", &white), APEX_EINVAL);
	assert_int_equal(apex_rrl_prefix_parse("10.9.1.1/16", &white), APEX_OK);  /* masked */
	/* 4 shares of 10/s: 3 per second each (rounded up) */
	assert_int_equal(apex_rrl_init(&rrl, &cfg, 4), APEX_OK);
	for (int i = 0; i < 20; i++)
		sent += apex_rrl_account(&rrl, (struct sockaddr *)&a, 5000) == APEX_RRL_SEND;
	assert_int_equal(sent, 3);
	/* slip 0: all limited ones dropped */
	assert_int_equal(apex_rrl_account(&rrl, (struct sockaddr *)&a, 5000), APEX_RRL_DROP);
	for (int i = 0; i < 50; i++)
		assert_int_equal(apex_rrl_account(&rrl, (struct sockaddr *)&w, 5000), APEX_RRL_SEND);
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
	uint8_t msg[64] = { 0x12, 0x34, 0x84, 0x00, 0, 1, 0, 1, 0, 0, 0, 1,
			    3, 'c', 'o', 'm', 0, 0, 1, 0, 1,
			    0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 1, 2, 3, 4 };
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
		cmocka_unit_test(test_siphash_vectors),
		cmocka_unit_test(test_cookie_rfc9018_vector),
		cmocka_unit_test(test_cookie_verify_rejects),
		cmocka_unit_test(test_rrl_limits_prefix),
		cmocka_unit_test(test_rrl_shares_and_whitelist),
		cmocka_unit_test(test_rrl_slip_response),
		cmocka_unit_test(test_opt_append),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
