/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/siphash: SipHash-2-4 against the reference vectors of its paper;
 * util/siphash_stream: the same hash of the same bytes given in pieces.
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

#include "util/error.h"
#include "util/siphash.h"
#include "util/siphash_stream.h"

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

/* Every length up to 64 bytes, cut at every point into two pieces, and
 * into pieces of every size from 1 to 9: the one-shot value each time
 * (which the vectors above pin to the paper's). */
static void test_siphash_in_pieces(void **state)
{
	uint8_t key[16], msg[64];
	apex_siphash_stream_t s;

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)(0xa0 + i);
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	for (size_t n = 0; n <= sizeof(msg); n++) {
		uint64_t want = apex_siphash24(key, msg, n);
		for (size_t cut = 0; cut <= n; cut++) {
			apex_siphash_stream_init(&s, key);
			apex_siphash_stream_add(&s, msg, cut);
			apex_siphash_stream_add(&s, msg + cut, n - cut);
			assert_true(apex_siphash_stream_end(&s) == want);
		}
		for (size_t step = 1; step <= 9; step++) {
			apex_siphash_stream_init(&s, key);
			for (size_t at = 0; at < n; at += step)
				apex_siphash_stream_add(&s, msg + at,
							n - at < step ? n - at : step);
			assert_true(apex_siphash_stream_end(&s) == want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_vectors),
		cmocka_unit_test(test_siphash_in_pieces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
