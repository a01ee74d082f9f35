/* SPDX-License-Identifier: BSD-3-Clause */
/* Test helper: bytes from a string of hex digits. */
#ifndef APEX_TESTS_UNIT_TEST_HEX_H
#define APEX_TESTS_UNIT_TEST_HEX_H

#include <stdio.h>

static void hex(const char *text, uint8_t *out, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		unsigned v;

		assert_int_equal(sscanf(text + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

#endif
