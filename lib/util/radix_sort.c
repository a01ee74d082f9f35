/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/radix_sort.h"

#define DIGIT_BITS 8
#define DIGITS (64 / DIGIT_BITS)
#define BUCKETS (1u << DIGIT_BITS)

/* Below this many pairs, an insertion sort (stable too): the counts of
 * every digit (16 KiB, zeroed) cost more than sorting a small zone. */
#define INSERTION_MAX 48

static void insertion_sort(apex_sort_pair_t *pairs, size_t count)
{
	for (size_t i = 1; i < count; i++) {
		apex_sort_pair_t p = pairs[i];
		size_t j = i;

		for (; j > 0 && pairs[j - 1].key > p.key; j--)
			pairs[j] = pairs[j - 1];
		pairs[j] = p;
	}
}

int apex_radix_sort(apex_sort_pair_t *pairs, size_t count)
{
	if (count < 2)
		return APEX_OK;
	if (count <= INSERTION_MAX) {
		insertion_sort(pairs, count);
		return APEX_OK;
	}
	apex_sort_pair_t *tmp = malloc(count * sizeof(*tmp));
	if (tmp == NULL)
		return APEX_ENOMEM;
	/* Counts of every digit position in one pass. */
	size_t(*counts)[BUCKETS] = calloc(DIGITS, sizeof(*counts));
	if (counts == NULL) {
		free(tmp);
		return APEX_ENOMEM;
	}
	for (size_t i = 0; i < count; i++)
		for (unsigned d = 0; d < DIGITS; d++)
			counts[d][(pairs[i].key >> (d * DIGIT_BITS)) & (BUCKETS - 1)]++;

	apex_sort_pair_t *from = pairs, *to = tmp;
	for (unsigned d = 0; d < DIGITS; d++) {
		size_t *c = counts[d];
		unsigned shift = d * DIGIT_BITS;
		/* A digit all pairs share does not reorder anything. */
		if (c[(from[0].key >> shift) & (BUCKETS - 1)] == count)
			continue;
		size_t offset = 0;
		for (unsigned b = 0; b < BUCKETS; b++) {
			size_t n = c[b];
			c[b] = offset;
			offset += n;
		}
		for (size_t i = 0; i < count; i++)
			to[c[(from[i].key >> shift) & (BUCKETS - 1)]++] = from[i];
		apex_sort_pair_t *t = from;
		from = to;
		to = t;
	}
	if (from != pairs)
		memcpy(pairs, from, count * sizeof(*pairs));
	free(counts);
	free(tmp);
	return APEX_OK;
}
