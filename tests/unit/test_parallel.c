/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/parallel: every index of the range is worked on exactly once,
 * whatever the thread count and part size, and the first failing part's
 * error (in range order) is returned after every part has run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/error.h"
#include "util/parallel.h"

typedef struct visits {
	atomic_uint *count; /* per index: how often it was worked on */
	size_t fail_at;     /* the part containing this index fails */
	int fail_rc;
	atomic_uint parts;
} visits_t;

static int visit(void *arg, size_t begin, size_t end)
{
	visits_t *v = arg;
	atomic_fetch_add(&v->parts, 1);
	for (size_t i = begin; i < end; i++)
		atomic_fetch_add(&v->count[i], 1);
	return begin <= v->fail_at && v->fail_at < end ? v->fail_rc : APEX_OK;
}

static void check(size_t count, unsigned threads, size_t min_part, size_t fail_at, int fail_rc,
		  unsigned max_parts)
{
	visits_t v = { .count = calloc(count + 1, sizeof(atomic_uint)),
		       .fail_at = fail_at,
		       .fail_rc = fail_rc };
	assert_non_null(v.count);
	assert_int_equal(apex_parallel_for(count, threads, min_part, visit, &v), fail_rc);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(atomic_load(&v.count[i]), 1);
	assert_true(atomic_load(&v.parts) >= 1 && atomic_load(&v.parts) <= max_parts);
	free(v.count);
}

static void test_every_index_once(void **state)
{
	(void)state;
	check(0, 4, 1, SIZE_MAX, APEX_OK, 1);
	check(10, 4, 100, SIZE_MAX, APEX_OK, 1); /* below min_part: one part */
	check(1000, 1, 1, SIZE_MAX, APEX_OK, 1);
	check(1000, 3, 1, SIZE_MAX, APEX_OK, 3);
	check(1001, 7, 10, SIZE_MAX, APEX_OK, 7);
	check(100000, 200, 1, SIZE_MAX, APEX_OK, 64); /* capped number of parts */
}

static void test_error_of_a_part(void **state)
{
	(void)state;
	check(1000, 4, 1, 999, APEX_ENOMEM, 4); /* the last part fails */
	check(1000, 4, 1, 0, APEX_EINVAL, 4);   /* the first part fails */
}

/* One part per thread, capped by max, none below min_part, at least one. */
static void test_part_count(void **state)
{
	(void)state;
	assert_int_equal(apex_parallel_parts(2, 1000000, 16, 32768), 2);
	assert_int_equal(apex_parallel_parts(32, 1000000, 16, 32768), 16);
	assert_int_equal(apex_parallel_parts(4, 100000, 16, 32768), 3);
	assert_int_equal(apex_parallel_parts(2, 40000, 16, 32768), 1);
	assert_int_equal(apex_parallel_parts(2, 0, 16, 32768), 1);
	assert_int_equal(apex_parallel_parts(0, 1000000, 16, 32768), 1);
	assert_int_equal(apex_parallel_parts(2, 40, 16, 0), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_index_once),
		cmocka_unit_test(test_error_of_a_part),
		cmocka_unit_test(test_part_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
