/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/radix_sort: the order of a stable comparison sort, for keys that
 * differ in any byte, share bytes, or are all equal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/error.h"
#include "util/radix_sort.h"

/* Stable reference: by key, then by the original position kept in value. */
static int by_key_then_value(const void *a, const void *b)
{
	const apex_sort_pair_t *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->value > y->value) - (x->value < y->value);
}

static uint64_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005u + 1442695040888963407u;
	return *state;
}

static void check(size_t count, uint64_t mask, uint64_t fixed)
{
	apex_sort_pair_t *pairs = malloc(count * sizeof(*pairs));
	apex_sort_pair_t *want = malloc(count * sizeof(*want));
	assert_non_null(pairs);
	assert_non_null(want);
	uint64_t state = count ^ mask;
	for (size_t i = 0; i < count; i++) {
		pairs[i].key = (next_random(&state) & mask) | fixed;
		pairs[i].value = (uint32_t)i; /* the position: shows stability */
		pairs[i].extra = (uint32_t)(i * 7 + 3);
	}
	for (size_t i = 0; i < count; i++)
		want[i] = pairs[i];
	qsort(want, count, sizeof(*want), by_key_then_value);
	assert_int_equal(apex_radix_sort(pairs, count), APEX_OK);
	for (size_t i = 0; i < count; i++) {
		assert_true(pairs[i].key == want[i].key);
		assert_int_equal(pairs[i].value, want[i].value);
		assert_int_equal(pairs[i].extra, want[i].extra);
	}
	free(pairs);
	free(want);
}

static void test_orders_like_a_stable_sort(void **state)
{
	(void)state;
	check(0, ~0ull, 0);
	check(1, ~0ull, 0);
	check(1000, ~0ull, 0);                                     /* every byte differs */
	check(5000, 0xFFull, 0);                                   /* many equal keys */
	check(5000, 0xFF000000000000FFull, 0x0012340000000000ull); /* shared middle bytes */
	check(3000, 0, 42);                                        /* all keys equal: order kept */
	check(20000, 0xFFFF0000FFFF0000ull, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_orders_like_a_stable_sort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
