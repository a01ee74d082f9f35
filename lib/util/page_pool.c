/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Page pool (page_pool.h).  Each region is 512 pages; its first page
 * holds its page map, a bit per page, set while the page is in use.
 * Runs are taken first fit, in the order the regions were mapped, so
 * that the pages in use stay packed in the oldest regions and the newest
 * empty first.  A free clears its bits with an atomic and (release): the
 * thread that takes those pages again reads the map with acquire, so
 * the freeing thread's last use of them comes before their reuse.
 *
 * Freed pages stay resident until taken again or until their whole
 * region is empty and given back (apex_page_pool_release()): giving
 * back a part of a region would split its huge page.
 *
 * The pool's list of regions and their free page counts are arrays of
 * its own, so that looking for room reads a few cache lines rather than
 * the header of each region, each on a huge page of its own: with a few
 * hundred regions (10,000 small zones), a walk over their headers missed
 * the TLB at every one and was most of taking pages.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* _GNU_SOURCE */
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "util/page_pool.h"
#include "util/huge_map.h"
#include "util/populate.h"

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ASAN 1
#endif
#endif
#ifdef POOL_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
/* pages not handed out are poisoned: a use after free is reported */
#define POOL_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define POOL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
/* LeakSanitizer scans malloc'd blocks, stacks and globals, not our
 * mappings: a region is a root of its own, or what only its pages point
 * to (an arena's list of large chunks) would be reported as leaked */
#define POOL_ROOT(p, n) __lsan_register_root_region((p), (n))
#define POOL_UNROOT(p, n) __lsan_unregister_root_region((p), (n))
#else
#define POOL_POISON(p, n) ((void)(p), (void)(n))
#define POOL_UNPOISON(p, n) ((void)(p), (void)(n))
#define POOL_ROOT(p, n) ((void)(p), (void)(n))
#define POOL_UNROOT(p, n) ((void)(p), (void)(n))
#endif

#define REGION_PAGES (APEX_PAGE_POOL_REGION / APEX_PAGE_POOL_PAGE)
#define MAP_WORDS (REGION_PAGES / 64)

typedef struct pool_region {
	_Atomic uint64_t map[MAP_WORDS]; /* bit p % 64 of word p / 64: page p in use */
	uint32_t slot;                   /* its place in the pool's arrays */
} pool_region_t;

_Static_assert(sizeof(pool_region_t) <= APEX_PAGE_POOL_PAGE, "a region's header is its first page");
_Static_assert(APEX_PAGE_POOL_REGION == APEX_HUGE_PAGE, "a region is one huge page");

/* 128 GiB of regions; the arrays are zero pages until used */
#define POOL_SLOTS 65536u

static struct {
	pthread_mutex_t lock;
	size_t slots;   /* slots used so far, under the lock */
	size_t regions; /* regions mapped now, under the lock */
	/* the regions, oldest first but where one given back left a slot
	 * a newer one took; NULL: a free slot.  Under the lock. */
	pool_region_t *region[POOL_SLOTS];
	/* pages free in each: a region that cannot have room is passed over
	 * with one load.  Never below the map's count but while the lock
	 * holder takes pages; above it while a free sets its bits before
	 * its count (the map decides). */
	_Atomic uint32_t free_pages[POOL_SLOTS];
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A new empty region of the system, aligned to its size, or NULL. */
static pool_region_t *region_map(void)
{
	pool_region_t *r = apex_huge_map(APEX_PAGE_POOL_REGION);

	if (r == NULL)
		return NULL;
	POOL_POISON((uint8_t *)r + APEX_PAGE_POOL_PAGE,
		    APEX_PAGE_POOL_REGION - APEX_PAGE_POOL_PAGE);
	POOL_ROOT(r, APEX_PAGE_POOL_REGION);
	for (size_t w = 0; w < MAP_WORDS; w++)
		atomic_init(&r->map[w], 0);
	atomic_store_explicit(&r->map[0], 1, memory_order_relaxed); /* the header's page */
	return r;
}

/* Under the pool's lock: a new region in the first free slot, or NULL
 * (no slot, or the system gave none). */
static pool_region_t *region_add(void)
{
	size_t slot = 0;

	while (slot < pool.slots && pool.region[slot] != NULL)
		slot++;
	if (slot == POOL_SLOTS)
		return NULL;
	pool_region_t *r = region_map();
	if (r == NULL)
		return NULL;
	r->slot = (uint32_t)slot;
	atomic_store_explicit(&pool.free_pages[slot], REGION_PAGES - 1, memory_order_relaxed);
	pool.region[slot] = r;
	if (slot == pool.slots)
		pool.slots++;
	pool.regions++;
	return r;
}

/* The bits of pages [from, to) that fall in map word w. */
static uint64_t word_mask(size_t w, size_t from, size_t to)
{
	size_t lo = w * 64, hi = lo + 64;

	if (from > lo)
		lo = from;
	if (to < hi)
		hi = to;
	if (lo >= hi)
		return 0;
	size_t n = hi - lo;
	uint64_t bits = n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
	return bits << (lo % 64);
}

/* The first page of the first run of pages free pages in r, or 0. */
static size_t region_find(pool_region_t *r, size_t pages)
{
	size_t run = 0;

	for (size_t p = 0; p < REGION_PAGES;) {
		uint64_t word = atomic_load_explicit(&r->map[p / 64], memory_order_acquire);

		if (p % 64 == 0 && word == 0) { /* 64 free pages */
			run += 64;
			p += 64;
			if (run >= pages)
				return p - run;
			continue;
		}
		if (p % 64 == 0 && word == ~(uint64_t)0) {
			run = 0;
			p += 64;
			continue;
		}
		if (word & ((uint64_t)1 << (p % 64))) {
			run = 0;
		} else if (++run == pages) {
			return p + 1 - pages;
		}
		p++;
	}
	return 0;
}

/* Under the pool's lock: mark pages [first, first + pages) of r in use. */
static void region_take(pool_region_t *r, size_t first, size_t pages)
{
	for (size_t w = first / 64; w < MAP_WORDS; w++) {
		uint64_t mask = word_mask(w, first, first + pages);

		if (mask == 0)
			break;
		atomic_fetch_or_explicit(&r->map[w], mask, memory_order_relaxed);
	}
	atomic_fetch_sub_explicit(&pool.free_pages[r->slot], (uint32_t)pages, memory_order_relaxed);
}

void *apex_page_pool_alloc(size_t pages)
{
	pool_region_t *r = NULL;
	size_t first = 0;

	if (pages == 0 || pages > APEX_PAGE_POOL_MAX_PAGES)
		return NULL;
	pthread_mutex_lock(&pool.lock);
	for (size_t i = 0; i < pool.slots && r == NULL; i++)
		if (pool.region[i] != NULL &&
		    atomic_load_explicit(&pool.free_pages[i], memory_order_relaxed) >= pages &&
		    (first = region_find(pool.region[i], pages)) != 0)
			r = pool.region[i];
	if (r == NULL && (r = region_add()) != NULL)
		first = 1;
	if (r != NULL)
		region_take(r, first, pages);
	pthread_mutex_unlock(&pool.lock);
	if (r == NULL)
		return NULL;
	uint8_t *p = (uint8_t *)r + first * APEX_PAGE_POOL_PAGE;
	POOL_UNPOISON(p, pages * APEX_PAGE_POOL_PAGE);
	return p;
}

void apex_page_pool_free(void *p, size_t pages)
{
	if (p == NULL || pages == 0)
		return;
	pool_region_t *r =
		(pool_region_t *)((uintptr_t)p & ~(uintptr_t)(APEX_PAGE_POOL_REGION - 1));
	size_t first = ((uintptr_t)p - (uintptr_t)r) / APEX_PAGE_POOL_PAGE;

	/* before the bits: once they are clear another thread may take them,
	 * and once all are, the region may be given back */
	uint32_t slot = r->slot;
	POOL_POISON(p, pages * APEX_PAGE_POOL_PAGE);
	for (size_t w = first / 64; w < MAP_WORDS; w++) {
		uint64_t mask = word_mask(w, first, first + pages);

		if (mask == 0)
			break;
		atomic_fetch_and_explicit(&r->map[w], ~mask, memory_order_release);
	}
	atomic_fetch_add_explicit(&pool.free_pages[slot], (uint32_t)pages, memory_order_relaxed);
}

static bool region_empty(pool_region_t *r)
{
	for (size_t w = 0; w < MAP_WORDS; w++)
		if (atomic_load_explicit(&r->map[w], memory_order_acquire) != (w == 0 ? 1u : 0u))
			return false;
	return true;
}

size_t apex_page_pool_release(void)
{
	size_t released = 0;

	pthread_mutex_lock(&pool.lock);
	for (size_t i = 0; i < pool.slots; i++) {
		pool_region_t *r = pool.region[i];

		/* its pages cannot be taken while we hold the lock */
		if (r == NULL || !region_empty(r))
			continue;
		pool.region[i] = NULL;
		pool.regions--;
		POOL_UNROOT(r, APEX_PAGE_POOL_REGION);
		POOL_UNPOISON(r, APEX_PAGE_POOL_REGION); /* the next mapping here starts clean */
		apex_huge_unmap(r, APEX_PAGE_POOL_REGION);
		released += APEX_PAGE_POOL_REGION;
	}
	pthread_mutex_unlock(&pool.lock);
	return released;
}

size_t apex_page_pool_prepare(size_t regions)
{
	size_t empty = 0, mapped = 0;

	if (regions > APEX_PAGE_POOL_PREPARE_MAX)
		regions = APEX_PAGE_POOL_PREPARE_MAX;
	pthread_mutex_lock(&pool.lock);
	for (size_t i = 0; i < pool.slots && empty < regions; i++)
		empty += pool.region[i] != NULL && region_empty(pool.region[i]);
	for (; empty + mapped < regions; mapped++) {
		pool_region_t *r = region_add();
		if (r == NULL)
			break;
		/* under the lock: a release cannot unmap it meanwhile */
		apex_populate_for_write(r, APEX_PAGE_POOL_REGION);
	}
	pthread_mutex_unlock(&pool.lock);
	return mapped;
}

void apex_page_pool_usage(size_t *mapped, size_t *in_use)
{
	size_t pages = 0;

	pthread_mutex_lock(&pool.lock);
	for (size_t i = 0; i < pool.slots; i++)
		for (size_t w = 0; pool.region[i] != NULL && w < MAP_WORDS; w++)
			pages += (size_t)__builtin_popcountll(atomic_load_explicit(
				&pool.region[i]->map[w], memory_order_relaxed));
	*mapped = pool.regions * APEX_PAGE_POOL_REGION;
	*in_use = (pages - pool.regions) * APEX_PAGE_POOL_PAGE; /* less the headers */
	pthread_mutex_unlock(&pool.lock);
}
