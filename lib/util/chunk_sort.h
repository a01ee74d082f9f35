/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A sort of items by byte strings that share long prefixes (the names of
 * one zone, whose first bytes are mostly the same): a radix sort on the
 * strings' first 8 bytes, then on the next 8 of each run those share,
 * and so on (most significant first), with a comparison only to order
 * runs of at most a few items and the ties the strings leave.  A
 * comparison sort (qsort()) compares the shared prefix again at every
 * step: with 10,000 new names of one zone, most of an IXFR's sort.
 */
#ifndef APEX_UTIL_CHUNK_SORT_H
#define APEX_UTIL_CHUNK_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes [offset, offset + 8) of item's string as a big-endian integer,
 * zero past its end; *more: the string goes on past offset + 8.  Where
 * two strings differ, their first differing chunk orders them as the
 * comparison does. */
typedef uint64_t (*apex_chunk_fn)(const void *item, size_t offset, bool *more);

/* The items' order: the strings' order, then whatever breaks their ties
 * (as qsort()'s). */
typedef int (*apex_chunk_cmp_fn)(const void *a, const void *b);

/*
 * Sort items[0..count) (size bytes each) in cmp's order, which must agree
 * with the strings chunk() reads where those differ.  Items that come in
 * a few runs already in cmp's order (at most 8: an IXFR's removals and
 * additions as a primary sends them) are merged, with no radix pass.
 * Never fails: where memory for the radix passes is lacking, it sorts by
 * qsort() instead.
 */
void apex_chunk_sort(void *items, size_t count, size_t size, apex_chunk_fn chunk,
		     apex_chunk_cmp_fn cmp);

#endif
