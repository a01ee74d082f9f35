/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stable LSD radix sort of (64-bit key, 32-bit value) pairs, for the
 * zone builder's large sorts: linear in the number of pairs, no
 * comparison callback.  A pair carries a second 32-bit value along
 * (its struct's padding otherwise).
 */
#ifndef APEX_UTIL_RADIX_SORT_H
#define APEX_UTIL_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct apex_sort_pair {
	uint64_t key;
	uint32_t value;
	uint32_t extra; /* moves with the pair; not sorted on */
} apex_sort_pair_t;

/*
 * Sort pairs[0..count) by key, ascending; pairs with equal keys keep
 * their order.  Uses a scratch array of count pairs (malloc'ed and freed
 * here).  Returns APEX_OK or APEX_ENOMEM (pairs unchanged).
 */
int apex_radix_sort(apex_sort_pair_t *pairs, size_t count);

#endif
