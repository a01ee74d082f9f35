/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/page_pool: runs of pages inside 2 MiB-aligned regions, first fit,
 * freed runs (and ends of runs) taken again, empty regions given back,
 * regions made ahead,
 * and frees on other threads while one thread takes pages (the way
 * workers let go of old versions while the reload thread builds).
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/arena.h"
#include "util/page_pool.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_LSAN 1
#endif
#endif
#ifdef TEST_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#define PAGE APEX_PAGE_POOL_PAGE
#define REGION APEX_PAGE_POOL_REGION

static uintptr_t region_of(const void *p)
{
	return (uintptr_t)p & ~(uintptr_t)(REGION - 1);
}

/* Start each test with an empty pool: whatever a test left is freed. */
static int pool_empty(void **state)
{
	size_t mapped, in_use;

	(void)state;
	apex_page_pool_release();
	apex_page_pool_usage(&mapped, &in_use);
	return mapped == 0 && in_use == 0 ? 0 : -1;
}

static void runs_are_distinct_and_aligned(void **state)
{
	uint8_t *runs[40];
	size_t sizes[40], mapped, in_use, total = 0;

	(void)state;
	for (size_t i = 0; i < 40; i++) {
		sizes[i] = 1 + (i * 7) % APEX_PAGE_POOL_MAX_PAGES;
		runs[i] = apex_page_pool_alloc(sizes[i]);
		assert_non_null(runs[i]);
		assert_int_equal((uintptr_t)runs[i] % PAGE, 0);
		/* never the region's first page, never across its end */
		assert_true((uintptr_t)runs[i] - region_of(runs[i]) >= PAGE);
		assert_int_equal(region_of(runs[i] + sizes[i] * PAGE - 1), region_of(runs[i]));
		memset(runs[i], (int)i, sizes[i] * PAGE);
		total += sizes[i];
	}
	for (size_t i = 0; i < 40; i++) /* nothing overwrote another run */
		for (size_t b = 0; b < sizes[i] * PAGE; b += 997)
			assert_int_equal(runs[i][b], (uint8_t)i);
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(in_use, total * PAGE);
	assert_true(mapped >= in_use + mapped / REGION * PAGE);               /* headers beside */
	assert_true(mapped <= (total * PAGE / (REGION - PAGE) + 2) * REGION); /* packed */
	assert_null(apex_page_pool_alloc(0));
	assert_null(apex_page_pool_alloc(APEX_PAGE_POOL_MAX_PAGES + 1));
	for (size_t i = 0; i < 40; i++)
		apex_page_pool_free(runs[i], sizes[i]);
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(in_use, 0);
	assert_int_equal(apex_page_pool_release(), mapped);
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(mapped, 0);
}

/* First fit: a hole is taken again by a run that fits it, the end of a
 * run freed on its own is too, and a run too long for the hole goes on. */
static void holes_are_reused(void **state)
{
	(void)state;
	uint8_t *a = apex_page_pool_alloc(8), *b = apex_page_pool_alloc(8);
	uint8_t *c = apex_page_pool_alloc(8);

	assert_non_null(a);
	assert_ptr_equal(b, a + 8 * PAGE); /* packed */
	assert_ptr_equal(c, b + 8 * PAGE);
	apex_page_pool_free(b, 8);
	uint8_t *d = apex_page_pool_alloc(9); /* does not fit b's hole */
	assert_true(d >= c + 8 * PAGE);
	uint8_t *e = apex_page_pool_alloc(5), *f = apex_page_pool_alloc(3);
	assert_ptr_equal(e, b);
	assert_ptr_equal(f, b + 5 * PAGE);
	apex_page_pool_free(a + 6 * PAGE, 2); /* a trimmed to 6 pages */
	assert_ptr_equal(apex_page_pool_alloc(2), a + 6 * PAGE);
	apex_page_pool_free(a, 8);
	apex_page_pool_free(c, 8);
	apex_page_pool_free(d, 9);
	apex_page_pool_free(e, 5);
	apex_page_pool_free(f, 3);
	assert_int_equal(apex_page_pool_release(), REGION);
}

/* More than a region's worth: a second region, given back alone once
 * its pages are free while the first still holds some. */
static void regions_given_back_when_empty(void **state)
{
	uint8_t *runs[20];
	size_t mapped, in_use;

	(void)state;
	for (size_t i = 0; i < 20; i++) /* 20 × 32 pages: two regions */
		assert_non_null(runs[i] = apex_page_pool_alloc(32));
	assert_true(region_of(runs[19]) != region_of(runs[0]));
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(mapped, 2 * REGION);
	for (size_t i = 0; i < 20; i++)
		if (region_of(runs[i]) != region_of(runs[0]))
			apex_page_pool_free(runs[i], 32);
	assert_int_equal(apex_page_pool_release(), REGION);
	assert_int_equal(runs[0][0], runs[0][0]); /* the first region still mapped */
	memset(runs[0], 1, 32 * PAGE);
	for (size_t i = 0; i < 20; i++)
		if (region_of(runs[i]) == region_of(runs[0]))
			apex_page_pool_free(runs[i], 32);
	assert_int_equal(apex_page_pool_release(), REGION);
}

/* Regions made ahead: as many empty ones as asked for, counting those
 * the pool holds already, at most APEX_PAGE_POOL_PREPARE_MAX; taken by
 * the runs that follow before a new one is mapped; given back by the
 * release when left empty. */
static void regions_prepared_ahead(void **state)
{
	size_t mapped, in_use;

	(void)state;
	assert_int_equal(apex_page_pool_prepare(2), 2);
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(mapped, 2 * REGION);
	assert_int_equal(in_use, 0);
	assert_int_equal(apex_page_pool_prepare(2), 0); /* two empty already */
	assert_int_equal(apex_page_pool_prepare(3), 1);

	/* the runs go to the regions made: none more mapped */
	uint8_t *runs[3];
	for (size_t i = 0; i < 3; i++) {
		assert_non_null(runs[i] = apex_page_pool_alloc(APEX_PAGE_POOL_MAX_PAGES));
		memset(runs[i], (int)i, APEX_PAGE_POOL_MAX_PAGES * PAGE);
	}
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(mapped, 3 * REGION);

	/* the two left empty given back, the one in use kept */
	assert_int_equal(apex_page_pool_release(), 2 * REGION);
	for (size_t i = 0; i < 3; i++)
		apex_page_pool_free(runs[i], APEX_PAGE_POOL_MAX_PAGES);
	assert_int_equal(apex_page_pool_release(), REGION);

	/* never more than the bound */
	assert_int_equal(apex_page_pool_prepare(1000), APEX_PAGE_POOL_PREPARE_MAX);
	assert_int_equal(apex_page_pool_release(), APEX_PAGE_POOL_PREPARE_MAX * REGION);
}

/* Three regions, the middle one given back: room is looked for oldest
 * first (a hole in the first region before the third's free pages), and
 * a new region is mapped only once none has room; what is freed in a
 * region is counted as free there again. */
static void oldest_region_with_room_first(void **state)
{
	uint8_t *runs[45];
	size_t mapped, in_use;

	(void)state;
	for (size_t i = 0; i < 45; i++) /* 15 runs of 32 pages a region: three */
		assert_non_null(runs[i] = apex_page_pool_alloc(32));
	uintptr_t first = region_of(runs[0]), middle = region_of(runs[15]);
	uintptr_t last = region_of(runs[30]);
	assert_true(first != middle && middle != last && first != last);
	for (size_t i = 15; i < 30; i++) {
		assert_int_equal(region_of(runs[i]), middle);
		apex_page_pool_free(runs[i], 32);
	}
	assert_int_equal(apex_page_pool_release(), REGION);
	apex_page_pool_free(runs[3], 32);
	apex_page_pool_free(runs[33], 32);
	assert_ptr_equal(apex_page_pool_alloc(32), runs[3]); /* the oldest first */
	/* the first region's last 31 pages, then the third's hole and end */
	uint8_t *a = apex_page_pool_alloc(31);
	assert_int_equal(region_of(a), first);
	assert_ptr_equal(apex_page_pool_alloc(16), runs[33]);
	uint8_t *b = apex_page_pool_alloc(31);
	assert_ptr_equal(b, runs[44] + 32 * PAGE);
	assert_ptr_equal(apex_page_pool_alloc(16), runs[33] + 16 * PAGE);
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(mapped, 2 * REGION);
	uint8_t *c = apex_page_pool_alloc(32); /* no room: a region mapped again */
	assert_non_null(c);
	assert_true(region_of(c) != first && region_of(c) != last);
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(mapped, 3 * REGION);
	apex_page_pool_free(c, 32);
	apex_page_pool_free(a, 31);
	apex_page_pool_free(b, 31);
	for (size_t i = 0; i < 45; i++)
		if (i < 15 || i >= 30)
			apex_page_pool_free(runs[i], 32);
	assert_int_equal(apex_page_pool_release(), 3 * REGION);
}

/* A small arena's chunks come from the pool, and the pool's pages are
 * what it gives back when destroyed; its trim gives back whole pages. */
static void small_arenas_use_the_pool(void **state)
{
	size_t mapped, in_use;

	(void)state;
	apex_arena_t *a = apex_arena_create();
	assert_non_null(a);
	for (int i = 0; i < 100; i++)
		assert_non_null(apex_arena_alloc(a, 300));
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(in_use, apex_arena_footprint(a));
	apex_arena_trim(a);
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(in_use, apex_arena_footprint(a));
	assert_true(in_use < 300 * 100 + 2 * PAGE); /* trimmed to whole pages */
	apex_arena_destroy(a);
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(in_use, 0);
	apex_page_pool_release();
}

#define FREERS 2
#define RUNS 64000 /* runs of two pages handed from the builder to the freers */

typedef struct {
	uint8_t *_Atomic slots[64];
	_Atomic size_t freed;
	_Atomic size_t bad; /* runs whose bytes were not the builder's */
} handoff_t;

/* Takes what the builder left in the slots and frees it, as workers let
 * go of a version (no cmocka assertion off the main thread). */
static void *freer_main(void *arg)
{
	handoff_t *h = arg;

	while (atomic_load(&h->freed) < RUNS) {
		for (size_t i = 0; i < 64; i++) {
			uint8_t *p = atomic_exchange(&h->slots[i], NULL);

			if (p == NULL)
				continue;
			if (p[0] != p[PAGE * 2 - 1])
				atomic_fetch_add(&h->bad, 1);
			memset(p, 0xee, 2 * PAGE);
			apex_page_pool_free(p, 2);
			atomic_fetch_add(&h->freed, 1);
		}
	}
	return NULL;
}

static void frees_on_other_threads(void **state)
{
	handoff_t h;
	pthread_t t[FREERS];
	size_t handed = 0, mapped, in_use;

	(void)state;
	for (size_t i = 0; i < 64; i++)
		atomic_init(&h.slots[i], NULL);
	atomic_init(&h.freed, 0);
	atomic_init(&h.bad, 0);
	for (int i = 0; i < FREERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, freer_main, &h), 0);
	while (handed < RUNS) {
		size_t i = handed % 64;

		if (atomic_load(&h.slots[i]) != NULL)
			continue; /* not taken yet */
		uint8_t *p = apex_page_pool_alloc(2);
		assert_non_null(p);
		memset(p, (int)(handed & 0xff), 2 * PAGE);
		atomic_store(&h.slots[i], p);
		handed++;
	}
	for (int i = 0; i < FREERS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(atomic_load(&h.freed), RUNS);
	assert_int_equal(atomic_load(&h.bad), 0);
	apex_page_pool_usage(&mapped, &in_use);
	assert_int_equal(in_use, 0);
	assert_true(mapped <= 2 * REGION); /* holes were taken again */
	apex_page_pool_release();
}

/* A block that only a pooled page points to is in use, not leaked: an
 * arena keeps its list of large chunks in its first chunk, which may be
 * pooled.  LeakSanitizer must scan the pool's regions (only under ASan). */
#ifdef TEST_LSAN
/* In a frame of its own, so that no register or live stack slot of the
 * test still holds the block's address when the leak check runs. */
static __attribute__((noinline)) int hide_block_in(void **page)
{
	page[7] = malloc(1000);
	return page[7] != NULL;
}
#endif

static void pool_pages_are_leak_roots(void **state)
{
	(void)state;
#ifdef TEST_LSAN
	void **page = apex_page_pool_alloc(1);

	assert_non_null(page);
	assert_true(hide_block_in(page));
	assert_int_equal(__lsan_do_recoverable_leak_check(), 0);
	free(page[7]);
	apex_page_pool_free(page, 1);
	assert_int_equal(apex_page_pool_release(), REGION);
#else
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(runs_are_distinct_and_aligned, pool_empty),
		cmocka_unit_test_setup(holes_are_reused, pool_empty),
		cmocka_unit_test_setup(regions_given_back_when_empty, pool_empty),
		cmocka_unit_test_setup(regions_prepared_ahead, pool_empty),
		cmocka_unit_test_setup(oldest_region_with_room_first, pool_empty),
		cmocka_unit_test_setup(small_arenas_use_the_pool, pool_empty),
		cmocka_unit_test_setup(frees_on_other_threads, pool_empty),
		cmocka_unit_test_setup(pool_pages_are_leak_roots, pool_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
