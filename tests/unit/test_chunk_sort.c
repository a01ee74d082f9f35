/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/chunk_sort: the order qsort() gives with the same comparison, for
 * strings that share long prefixes, end at any byte, repeat, or hold
 * zero bytes that padding could confuse with their end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/chunk_sort.h"

typedef struct item {
	const uint8_t *bytes;
	size_t size;
	size_t at; /* the position before the sort: breaks the ties */
} item_t;

/* memcmp() order, a proper prefix first, then the position. */
static int by_bytes(const void *a, const void *b)
{
	const item_t *x = a, *y = b;
	int c = memcmp(x->bytes, y->bytes, x->size < y->size ? x->size : y->size);

	if (c != 0)
		return c;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

static size_t calls;

static uint64_t chunk_of(const void *item, size_t offset, bool *more)
{
	const item_t *x = item;
	uint64_t v = 0;

	calls++;
	for (size_t i = offset; i < offset + 8; i++)
		v = v << 8 | (i < x->size ? x->bytes[i] : 0);
	*more = x->size > offset + 8;
	return v;
}

static uint32_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005u + 1442695040888963407u;
	return (uint32_t)(*state >> 33);
}

/* count strings of a shared prefix of `shared` bytes, then up to `tail`
 * bytes from an alphabet of `letters` (0 among them), some repeated;
 * with runs > 0, given to the sort as that many runs each in order, of
 * lengths that differ (as an IXFR's removals and additions come). */
static void check_runs(size_t count, size_t shared, size_t tail, unsigned letters, size_t runs)
{
	uint8_t *memory = malloc(count * (shared + tail) + 1);
	item_t *items = malloc((count + 1) * sizeof(*items));
	item_t *want = malloc((count + 1) * sizeof(*want));
	uint64_t state = count * 31 + shared * 7 + tail;

	assert_non_null(memory);
	assert_non_null(items);
	assert_non_null(want);
	for (size_t i = 0; i < count; i++) {
		uint8_t *s = memory + i * (shared + tail);
		if (i > 0 && next_random(&state) % 8 == 0) { /* the same string again */
			size_t j = next_random(&state) % i;
			items[i] = (item_t){ items[j].bytes, items[j].size, i };
			continue;
		}
		size_t size = shared + (tail > 0 ? next_random(&state) % (tail + 1) : 0);
		for (size_t k = 0; k < size; k++)
			s[k] = k < shared ? (uint8_t)('a' + k % 26)
					  : (uint8_t)(next_random(&state) % letters);
		items[i] = (item_t){ s, size, i };
	}
	for (size_t r = 0, at = 0; r < runs; r++) {
		/* run r: a share of the rest, the last run all of it */
		size_t n = r + 1 == runs ? count - at : (count - at) * (r + 1) / (runs + 1);
		qsort(items + at, n, sizeof(*items), by_bytes);
		at += n;
	}
	memcpy(want, items, count * sizeof(*items));
	qsort(want, count, sizeof(*want), by_bytes);
	calls = 0;
	apex_chunk_sort(items, count, sizeof(*items), chunk_of, by_bytes);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(items[i].at, want[i].at);
	free(memory);
	free(items);
	free(want);
}

static void check(size_t count, size_t shared, size_t tail, unsigned letters)
{
	check_runs(count, shared, tail, letters, 0);
}

static void test_orders_like_qsort(void **state)
{
	(void)state;
	check(0, 0, 8, 256);
	check(1, 0, 8, 256);
	check(16, 4, 4, 3); /* insertion only */
	check(17, 4, 4, 3); /* one radix pass */
	check(5000, 0, 20, 256);
	check(5000, 30, 12, 4); /* a long shared prefix, short tails */
	check(5000, 13, 0, 2);  /* every string the same */
	check(3000, 5, 40, 2);  /* zeros and ones: padding meets real zeros */
	check(20000, 21, 3, 26);
}

/* Strings sharing 40 bytes are read a chunk at a time down to where they
 * differ, not compared whole at every step. */
static void test_reads_each_chunk_once_per_level(void **state)
{
	(void)state;
	check(4096, 40, 8, 256);
	/* six levels (48 bytes) at most, each chunk read once an item */
	assert_true(calls <= 4096 * 7);
	assert_true(calls >= 4096 * 5);
}

/* Items that come in a few runs in order are merged, with no radix pass
 * (no chunk read), in qsort()'s order; more runs than that are sorted. */
static void test_merges_a_few_runs(void **state)
{
	(void)state;
	for (size_t runs = 1; runs <= 8; runs++) {
		check_runs(5000, 21, 3, 26, runs);
		assert_int_equal(calls, 0);
	}
	check_runs(3000, 5, 40, 2, 4); /* many ties between the runs */
	assert_int_equal(calls, 0);
	check_runs(5000, 21, 3, 26, 9);
	assert_true(calls > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_orders_like_qsort),
		cmocka_unit_test(test_reads_each_chunk_once_per_level),
		cmocka_unit_test(test_merges_a_few_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
