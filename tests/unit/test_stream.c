/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/dns/stream.c: DNS messages framed in a byte stream,
 * whole, cut at every byte, several in one buffer, of the largest length,
 * and the stream out of step (a length of 0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dns/stream.h"
#include "dns/wire.h"

/* Three messages of 1, 12 and 3 bytes, each after its length. */
static const uint8_t three[] = {
	0, 1,  0xaa,                                        /* 1 byte */
	0, 12, 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, /* a header */
	0, 3,  'a',  'b',  'c',                             /* 3 bytes */
};
static const size_t three_at[] = { 0, 3, 17, 22 }; /* where each starts; the end */

static void test_whole(void **state)
{
	apex_stream_msg_t msg;

	(void)state;
	assert_int_equal(apex_stream_next(three, 3, 0, &msg), APEX_STREAM_MESSAGE);
	assert_ptr_equal(msg.data, three + 2);
	assert_int_equal(msg.size, 1);
	assert_int_equal(msg.next, 3);
	/* nothing, or a position at or past the end: more */
	memset(&msg, 0x5a, sizeof(msg));
	assert_int_equal(apex_stream_next(three, 0, 0, &msg), APEX_STREAM_MORE);
	assert_int_equal(apex_stream_next(three, 3, 3, &msg), APEX_STREAM_MORE);
	assert_int_equal(apex_stream_next(three, 3, 4, &msg), APEX_STREAM_MORE);
	assert_int_equal(msg.size, (size_t)0x5a5a5a5a5a5a5a5aULL); /* untouched */
}

static void test_several(void **state)
{
	apex_stream_msg_t msg;
	size_t pos = 0;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(apex_stream_next(three, sizeof(three), pos, &msg),
				 APEX_STREAM_MESSAGE);
		assert_int_equal(pos, three_at[i]);
		assert_ptr_equal(msg.data, three + pos + 2);
		assert_int_equal(msg.size, three_at[i + 1] - three_at[i] - 2);
		assert_int_equal(msg.next, three_at[i + 1]);
		pos = msg.next;
	}
	assert_int_equal(pos, sizeof(three));
	assert_int_equal(apex_stream_next(three, sizeof(three), pos, &msg), APEX_STREAM_MORE);
}

/* The stream cut after every byte: the messages wholly before the cut are
 * framed, the one across it asks for more, and none is framed twice. */
static void test_split_everywhere(void **state)
{
	(void)state;
	for (size_t used = 0; used <= sizeof(three); used++) {
		/* a heap copy of exactly used bytes: ASan sees a read past it */
		uint8_t *buf = malloc(used ? used : 1);
		apex_stream_msg_t msg;
		size_t pos = 0, framed = 0;

		assert_non_null(buf);
		memcpy(buf, three, used);
		while (apex_stream_next(buf, used, pos, &msg) == APEX_STREAM_MESSAGE) {
			assert_true(msg.next <= used);
			assert_memory_equal(msg.data, three + pos + 2, msg.size);
			pos = msg.next;
			framed++;
		}
		size_t whole = 0;
		while (whole < 3 && three_at[whole + 1] <= used)
			whole++;
		assert_int_equal(framed, whole);
		assert_int_equal(pos, three_at[whole]);
		assert_int_equal(apex_stream_next(buf, used, pos, &msg), APEX_STREAM_MORE);
		free(buf);
	}
}

static void test_zero_length(void **state)
{
	static const uint8_t zero[] = { 0, 1, 0xaa, 0, 0, 0, 1, 0xbb };
	apex_stream_msg_t msg;

	(void)state;
	assert_int_equal(apex_stream_next(zero, sizeof(zero), 0, &msg), APEX_STREAM_MESSAGE);
	assert_int_equal(msg.next, 3);
	/* one byte of the length: more; both: out of step, whatever follows */
	assert_int_equal(apex_stream_next(zero, 4, 3, &msg), APEX_STREAM_MORE);
	assert_int_equal(apex_stream_next(zero, 5, 3, &msg), APEX_STREAM_MALFORMED);
	assert_int_equal(apex_stream_next(zero, sizeof(zero), 3, &msg), APEX_STREAM_MALFORMED);
	assert_int_equal(apex_stream_next(zero + 3, 2, 0, &msg), APEX_STREAM_MALFORMED);
}

/* A message of 65535 bytes, the largest, and one more after it. */
static void test_largest(void **state)
{
	size_t used = 2 + APEX_MAX_MESSAGE + 3;
	uint8_t *buf = malloc(used);
	apex_stream_msg_t msg;

	(void)state;
	assert_non_null(buf);
	memset(buf, 0x77, used);
	apex_write_u16(buf, APEX_MAX_MESSAGE);
	apex_write_u16(buf + 2 + APEX_MAX_MESSAGE, 1);
	assert_int_equal(apex_stream_next(buf, 2 + APEX_MAX_MESSAGE - 1, 0, &msg),
			 APEX_STREAM_MORE);
	assert_int_equal(apex_stream_next(buf, 2 + APEX_MAX_MESSAGE, 0, &msg), APEX_STREAM_MESSAGE);
	assert_int_equal(msg.size, 65535);
	assert_ptr_equal(msg.data, buf + 2);
	assert_int_equal(msg.next, 2 + APEX_MAX_MESSAGE);
	assert_int_equal(apex_stream_next(buf, used, 0, &msg), APEX_STREAM_MESSAGE);
	assert_int_equal(apex_stream_next(buf, used, msg.next, &msg), APEX_STREAM_MESSAGE);
	assert_int_equal(msg.size, 1);
	assert_int_equal(msg.next, used);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_several),
		cmocka_unit_test(test_split_everywhere),
		cmocka_unit_test(test_zero_length),
		cmocka_unit_test(test_largest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
