/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Page pool: runs of whole pages for small arenas' chunks, taken from
 * regions of 2 MiB aligned to 2 MiB that the process shares, so that a
 * transparent huge page can back each region.
 *
 * Why: a server of 10,000 small zones holds 10,000 versions of a few
 * chunks of 4 to 250 KiB each.  Taken one by one from the system they
 * lie on 4 KiB pages, and a query spread over every zone misses the TLB
 * at each zone it touches; packed into huge pages it does not.
 *
 * Any thread may free; a free never waits (an atomic and on the region's
 * page map).  Taking pages and giving empty regions back to the system
 * take the pool's lock: the threads that build versions do that, never
 * a worker.
 */
#ifndef APEX_UTIL_PAGE_POOL_H
#define APEX_UTIL_PAGE_POOL_H

#include <stdbool.h>
#include <stddef.h>

#define APEX_PAGE_POOL_PAGE 4096u
#define APEX_PAGE_POOL_REGION (2u * 1024 * 1024)
/* the longest run the pool hands out: a region's first page is its own */
#define APEX_PAGE_POOL_MAX_PAGES 64u

/* pages consecutive pages (1 to APEX_PAGE_POOL_MAX_PAGES), aligned to a
 * page, owned by the caller until apex_page_pool_free(); NULL when the
 * system gives no region (the caller falls back to malloc()).  Not
 * zeroed when reused. */
void *apex_page_pool_alloc(size_t pages);

/* Give back pages pages at p, from apex_page_pool_alloc() or a part of
 * such a run (its end, when a chunk is trimmed).  Any thread; never
 * waits. */
void apex_page_pool_free(void *p, size_t pages);

/* Regions no page of which is in use, given back to the system; the
 * bytes they held.  Called where the process purges its allocator. */
size_t apex_page_pool_release(void);

/* The most regions apex_page_pool_prepare() keeps empty: 16 MiB. */
#define APEX_PAGE_POOL_PREPARE_MAX 8u

/*
 * Regions mapped and faulted in (util/populate.h) until the pool holds
 * at least regions empty ones (at most APEX_PAGE_POOL_PREPARE_MAX), for
 * the allocations of a version about to be built, made while something
 * else is awaited (apexd: an IXFR's answer), so that they do not fault
 * in fresh regions on their way.  apex_page_pool_release() gives back
 * those left empty.  Returns the regions mapped.
 */
size_t apex_page_pool_prepare(size_t regions);

/* Bytes of the regions the pool holds now, and of the pages of them in
 * use (statistics and tests). */
void apex_page_pool_usage(size_t *mapped, size_t *in_use);

#endif
