/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/apexd/serve/buffer_pool: the buffers a worker's TCP connections take
 * and give back.  A buffer given back is the next one taken (no
 * allocation in steady state); a trim frees only the buffers that stayed
 * free since the trim before, beyond the few a pool keeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "serve/buffer_pool.h"

#define SIZE 65537
#define KEEP 2

/* Taken and given back in turn, one buffer serves every take. */
static void test_reuse(void **state)
{
	apex_buffer_pool_t pool;
	uint8_t *first, *b;

	(void)state;
	apex_buffer_pool_init(&pool, SIZE, KEEP);
	first = apex_buffer_pool_take(&pool);
	assert_non_null(first);
	memset(first, 0xa5, SIZE); /* the whole size is there (ASan would see past it) */
	apex_buffer_pool_give(&pool, first);
	for (int i = 0; i < 1000; i++) {
		b = apex_buffer_pool_take(&pool);
		assert_ptr_equal(b, first);
		assert_int_equal(pool.taken, 1);
		assert_int_equal(pool.idle, 0);
		apex_buffer_pool_give(&pool, b);
	}
	apex_buffer_pool_give(&pool, NULL); /* ignored */
	assert_int_equal(pool.idle, 1);
	assert_int_equal(pool.taken, 0);
	apex_buffer_pool_free(&pool);
	assert_int_equal(pool.idle, 0);
}

/* The last buffer given back is the first taken (warm in the cache), and
 * apex_buffer_pool_release() empties the holder. */
static void test_last_in_first_out(void **state)
{
	apex_buffer_pool_t pool;
	uint8_t *a, *b, *held;

	(void)state;
	apex_buffer_pool_init(&pool, 16, KEEP);
	a = apex_buffer_pool_take(&pool);
	b = apex_buffer_pool_take(&pool);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	apex_buffer_pool_give(&pool, a);
	held = b;
	apex_buffer_pool_release(&pool, &held);
	assert_null(held);
	assert_ptr_equal(apex_buffer_pool_take(&pool), b);
	assert_ptr_equal(apex_buffer_pool_take(&pool), a);
	apex_buffer_pool_give(&pool, a);
	apex_buffer_pool_give(&pool, b);
	apex_buffer_pool_free(&pool);
}

/* A burst of 10 held at once: the pool keeps them while takes need them,
 * frees those that stayed free a whole period after, down to KEEP. */
static void test_trim_after_burst(void **state)
{
	apex_buffer_pool_t pool;
	uint8_t *held[10];

	(void)state;
	apex_buffer_pool_init(&pool, SIZE, KEEP);
	for (int i = 0; i < 10; i++)
		held[i] = apex_buffer_pool_take(&pool);
	for (int i = 0; i < 10; i++)
		apex_buffer_pool_give(&pool, held[i]);
	assert_int_equal(pool.idle, 10);
	/* the period of the burst: none stayed free throughout */
	assert_int_equal(apex_buffer_pool_trim(&pool), 0);
	assert_int_equal(pool.idle, 10);
	/* steady load of 3 at once: 7 stayed free, 5 of them go */
	for (int i = 0; i < 3; i++)
		held[i] = apex_buffer_pool_take(&pool);
	for (int i = 0; i < 3; i++)
		apex_buffer_pool_give(&pool, held[i]);
	assert_int_equal(apex_buffer_pool_trim(&pool), 5);
	assert_int_equal(pool.idle, 5);
	/* the same load again: the 2 beyond it and KEEP stay... */
	for (int i = 0; i < 3; i++)
		held[i] = apex_buffer_pool_take(&pool);
	for (int i = 0; i < 3; i++)
		apex_buffer_pool_give(&pool, held[i]);
	assert_int_equal(apex_buffer_pool_trim(&pool), 0);
	/* ...and quiet: down to KEEP */
	assert_int_equal(apex_buffer_pool_trim(&pool), 3);
	assert_int_equal(pool.idle, KEEP);
	assert_int_equal(apex_buffer_pool_trim(&pool), 0);
	/* the buffers kept are the ones given back last */
	assert_ptr_equal(apex_buffer_pool_take(&pool), held[2]);
	apex_buffer_pool_give(&pool, held[2]);
	apex_buffer_pool_free(&pool);
	assert_int_equal(pool.idle, 0);
}

/* A buffer out during a trim is not the pool's to free. */
static void test_trim_leaves_taken(void **state)
{
	apex_buffer_pool_t pool;
	uint8_t *b;

	(void)state;
	apex_buffer_pool_init(&pool, SIZE, 0);
	b = apex_buffer_pool_take(&pool);
	assert_int_equal(apex_buffer_pool_trim(&pool), 0);
	assert_int_equal(apex_buffer_pool_trim(&pool), 0);
	b[SIZE - 1] = 1;
	apex_buffer_pool_give(&pool, b);
	assert_int_equal(apex_buffer_pool_trim(&pool), 0); /* it was out all along */
	assert_int_equal(apex_buffer_pool_trim(&pool), 1);
	assert_int_equal(pool.idle, 0);
	assert_null(pool.first);
	apex_buffer_pool_free(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_last_in_first_out),
		cmocka_unit_test(test_trim_after_burst),
		cmocka_unit_test(test_trim_leaves_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
