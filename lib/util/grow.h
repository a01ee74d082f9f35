/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Growable arrays: room for one more item, the capacity doubled when
 * full (the change sets and journal indexes of transfers).
 */
#ifndef APEX_UTIL_GROW_H
#define APEX_UTIL_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * items (count used of *capacity, item_size bytes each) with room for one
 * more: items itself, or a larger copy of it (*capacity doubled, starting
 * at first), or NULL when memory runs out (items is then unchanged and
 * still the caller's).
 */
static inline void *apex_grow(void *items, size_t *capacity, size_t count, size_t item_size,
			      size_t first)
{
	size_t want = *capacity ? 2 * *capacity : first;
	void *grown;

	if (count < *capacity)
		return items;
	if (want > SIZE_MAX / item_size)
		return NULL;
	grown = realloc(items, want * item_size);
	if (grown != NULL)
		*capacity = want;
	return grown;
}

#endif
