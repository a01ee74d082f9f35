/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The part of a large array already read through given back to the
 * system before the array is freed: a zone build reads its array of
 * records (40 bytes a record, 40 MB for a million) once, owner after
 * owner, while it fills the nodes, and the nodes' memory grows as the
 * array is read; giving the part read back keeps the two from being
 * resident at once at the build's peak.
 *
 * Only whole 2 MiB units are given back: a large allocation is backed by
 * transparent huge pages (apexd asks jemalloc for them), and a huge page
 * given back in part stays resident until the kernel splits it.  The
 * memory read as zeros afterwards (MADV_DONTNEED), and stays the
 * allocator's: it is freed as before.
 */
#ifndef APEX_UTIL_GIVE_BACK_H
#define APEX_UTIL_GIVE_BACK_H

#include <stddef.h>
#include <stdint.h>

#define APEX_GIVE_BACK_UNIT ((uintptr_t)2 << 20)

/* A region read through from its start: memory [start, *next) is given
 * back, *next only moves forward. */
typedef struct apex_give_back {
	uintptr_t next; /* the first byte not given back, a unit's start */
} apex_give_back_t;

/* Start giving back the region that begins at start: nothing before its
 * first whole unit is ever given back (it may be another's). */
void apex_give_back_init(apex_give_back_t *g, const void *start);

/* The whole units of the region below end (read through, never read
 * again) given back; end need not be aligned: the unit it falls in is
 * kept.  Returns the bytes given back by this call. */
size_t apex_give_back_below(apex_give_back_t *g, const void *end);

#endif
