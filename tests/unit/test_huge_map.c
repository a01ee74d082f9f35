/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/huge_map: mappings aligned to 2 MiB and rounded up to whole 2 MiB,
 * zero, writable to their last byte, and given back whole; blocks from
 * the allocator below that size, and from it up aligned to 2 MiB but
 * rounded up to the small page only.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/huge_map.h"

#define MIB ((size_t)1 << 20)

static void rounded_to_huge_pages(void **state)
{
	(void)state;
	assert_int_equal(apex_huge_round(0), 0);
	assert_int_equal(apex_huge_round(1), 2 * MIB);
	assert_int_equal(apex_huge_round(2 * MIB), 2 * MIB);
	assert_int_equal(apex_huge_round(2 * MIB + 1), 4 * MIB);
	assert_int_equal(apex_huge_round(5 * MIB), 6 * MIB);
	assert_null(apex_huge_map(0));
}

/* Whether any page of [p, p + size) is mapped (mincore() fails with
 * ENOMEM on a range with no mapping in it). */
static bool any_mapped(const void *p, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char in;

	for (size_t off = 0; off < size; off += (size_t)page)
		if (mincore((uint8_t *)p + off, 1, &in) == 0 || errno != ENOMEM)
			return true;
	return false;
}

static void aligned_zero_and_whole(void **state)
{
	static const size_t sizes[] = { 1, 2 * MIB, 3 * MIB, 5 * MIB + 4096 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i], mapped = apex_huge_round(size);
		uint8_t *p = apex_huge_map(size);

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % APEX_HUGE_PAGE, 0);
		/* zero and writable to the end of the rounded size */
		for (size_t off = 0; off < mapped; off += 4096)
			assert_int_equal(p[off], 0);
		assert_int_equal(p[mapped - 1], 0);
		memset(p, 0xa5, mapped);
		assert_int_equal(p[mapped - 1], 0xa5);
		assert_true(any_mapped(p, mapped));
		apex_huge_unmap(p, size);
		assert_false(any_mapped(p, mapped));
	}
	apex_huge_unmap(NULL, 3 * MIB); /* nothing */
}

/* A block below a huge page from the allocator, of what was asked; from
 * it up, a mapping aligned to a huge page of whole small pages, not
 * rounded up to a huge page (ASan tells a free() of mapped memory or an
 * munmap() of the allocator's). */
static void blocks_small_and_large(void **state)
{
	size_t size = 100000;
	uint8_t *small = apex_huge_block_alloc(&size);

	(void)state;
	assert_non_null(small);
	assert_int_equal(size, 100000);
	memset(small, 1, size);
	apex_huge_block_free(small, size);

	size = 2 * MIB + 100;
	uint8_t *large = apex_huge_block_alloc(&size);
	assert_non_null(large);
	assert_int_equal(size, 2 * MIB + (size_t)sysconf(_SC_PAGESIZE));
	assert_int_equal((uintptr_t)large % APEX_HUGE_PAGE, 0);
	memset(large, 1, size);
	apex_huge_block_free(large, size);
	assert_false(any_mapped(large, size));
	apex_huge_block_free(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rounded_to_huge_pages),
		cmocka_unit_test(aligned_zero_and_whole),
		cmocka_unit_test(blocks_small_and_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
