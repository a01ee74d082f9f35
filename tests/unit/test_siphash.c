/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/siphash: SipHash-2-4 against the reference vectors of its paper.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_vectors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
