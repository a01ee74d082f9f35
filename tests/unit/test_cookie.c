/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * query/cookie: RFC 9018 server cookies, the RFC's test vectors and
 * every reason to reject one.
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
#include "util/error.h"
#include "test_hex.h"

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
	uint8_t secret[16] = { 1, 2, 3 }, client[8] = { 9, 8, 7 }, cookie[16],
		addr[4] = { 127, 0, 0, 1 };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cookie_rfc9018_vector),
		cmocka_unit_test(test_cookie_verify_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
