/* SPDX-License-Identifier: BSD-3-Clause */
/* Byte strings sorted 8 bytes at a time (see chunk_sort.h). */
#include "util/chunk_sort.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/radix_sort.h"

/* Runs this short are put in order by insertion, and up to RADIX_MIN by
 * qsort(): a radix pass costs its counts (and their memory) whatever the
 * run's length, more than a comparison sort of a few hundred. */
#define INSERTION_MAX 16
#define RADIX_MIN 256
/* Items that come in at most this many runs already in order are merged
 * rather than sorted: a primary sends an IXFR's removals and additions
 * each in the zone's order, and a diff of two versions comes in that
 * order too, where the radix passes cost the same as for any order. */
#define RUNS_MAX 8

typedef struct sort {
	char *items;
	size_t size;
	apex_chunk_fn chunk;
	apex_chunk_cmp_fn cmp;
	apex_sort_pair_t *pairs; /* as many as items */
	char *scratch;           /* one item */
} sort_t;

static void insertion(const sort_t *s, char *items, size_t count)
{
	char *x = s->scratch;

	for (size_t i = 1; i < count; i++) {
		size_t j = i;
		memcpy(x, items + i * s->size, s->size);
		for (; j > 0 && s->cmp(items + (j - 1) * s->size, x) > 0; j--)
			memcpy(items + j * s->size, items + (j - 1) * s->size, s->size);
		memcpy(items + j * s->size, x, s->size);
	}
}

/* items[0..count) in cmp's order by comparisons alone: a short run, or
 * one whose strings are all the same. */
static void compare_sort(const sort_t *s, char *items, size_t count)
{
	if (count <= INSERTION_MAX)
		insertion(s, items, count);
	else
		qsort(items, count, s->size, s->cmp);
}

/*
 * items[i] = the item at pairs[i].value before, for i in [0, count): the
 * permutation followed cycle by cycle in place, each pair's value made
 * its own index once its item is placed.  In place rather than through a
 * copy of the items: the touches of a reload of a tenth of a 10M-record
 * zone are 46 MiB.
 */
static void permute(const sort_t *s, char *items, apex_sort_pair_t *pairs, size_t count)
{
	size_t size = s->size;

	for (size_t i = 0; i < count; i++) {
		if (pairs[i].value == i)
			continue;
		memcpy(s->scratch, items + i * size, size);
		size_t j = i;
		for (;;) {
			size_t from = pairs[j].value;
			pairs[j].value = (uint32_t)j;
			if (from == i) {
				memcpy(items + j * size, s->scratch, size);
				break;
			}
			memcpy(items + j * size, items + from * size, size);
			j = from;
		}
	}
}

/* items[first, first + count) all share their strings' bytes before
 * offset: put them in order from there. */
static void sort_from(const sort_t *s, size_t first, size_t count, size_t offset)
{
	char *items = s->items + first * s->size;
	apex_sort_pair_t *pairs = s->pairs + first;

	if (count < RADIX_MIN) {
		compare_sort(s, items, count);
		return;
	}
	for (size_t i = 0; i < count; i++) {
		bool more = false;
		pairs[i] = (apex_sort_pair_t){ s->chunk(items + i * s->size, offset, &more),
					       (uint32_t)i, more };
	}
	if (apex_radix_sort(pairs, count) != APEX_OK) {
		qsort(items, count, s->size, s->cmp);
		return;
	}
	permute(s, items, pairs, count);
	for (size_t i = 0, j; i < count; i = j) {
		bool more = pairs[i].extra != 0;
		for (j = i + 1; j < count && pairs[j].key == pairs[i].key; j++)
			more |= pairs[j].extra != 0;
		if (j - i < 2)
			continue;
		if (more)
			sort_from(s, first + i, j - i, offset + 8);
		else /* the same string: the ties are cmp's alone */
			compare_sort(s, items + i * s->size, j - i);
	}
}

/* Items [at, end) of a run in order. */
typedef struct run {
	size_t at, end;
} run_t;

/* The runs of items[0..count) in cmp's order, into runs: how many, or 0
 * when there are more than RUNS_MAX (found out within the first few
 * items of any other order). */
static size_t find_runs(const sort_t *s, size_t count, run_t *runs)
{
	size_t n = 0, start = 0;

	for (size_t i = 1; i <= count; i++) {
		if (i < count && s->cmp(s->items + (i - 1) * s->size, s->items + i * s->size) <= 0)
			continue;
		if (n == RUNS_MAX)
			return 0;
		runs[n++] = (run_t){ start, i };
		start = i;
	}
	return n;
}

/* The order of the k runs merged, as pairs[i].value = the index of the
 * item that goes to i (permute()'s): the runs kept in the order of the
 * items at their heads, the first one's head taken and the run placed
 * again among the others by its next head (one comparison when the runs
 * come in blocks, as an IXFR's parts do). */
static void merge_runs(const sort_t *s, run_t *runs, size_t k, apex_sort_pair_t *pairs)
{
	size_t order[RUNS_MAX];
	const char *items = s->items;
	size_t size = s->size, out = 0;

	for (size_t i = 0; i < k; i++) {
		size_t j = i;
		for (; j > 0 &&
		       s->cmp(items + runs[order[j - 1]].at * size, items + runs[i].at * size) > 0;
		     j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	while (k > 0) {
		size_t first = order[0];
		run_t *r = &runs[first];
		pairs[out++].value = (uint32_t)r->at++;
		if (r->at == r->end) {
			memmove(order, order + 1, --k * sizeof(*order));
			continue;
		}
		size_t j = 1;
		for (; j < k && s->cmp(items + runs[order[j]].at * size, items + r->at * size) < 0;
		     j++)
			order[j - 1] = order[j];
		order[j - 1] = first;
	}
}

void apex_chunk_sort(void *items, size_t count, size_t size, apex_chunk_fn chunk,
		     apex_chunk_cmp_fn cmp)
{
	if (count < 2)
		return;
	sort_t s = { items, size, chunk, cmp, NULL, NULL };
	if (count <= INSERTION_MAX || count > UINT32_MAX) { /* pairs hold 32-bit indices */
		qsort(items, count, size, cmp);
		return;
	}
	run_t runs[RUNS_MAX];
	size_t run_count = find_runs(&s, count, runs);
	if (run_count == 1) /* in order already */
		return;
	s.pairs = malloc(count * sizeof(*s.pairs));
	s.scratch = malloc(size);
	if (s.pairs == NULL || s.scratch == NULL) {
		qsort(items, count, size, cmp);
	} else if (run_count > 1) {
		merge_runs(&s, runs, run_count, s.pairs);
		permute(&s, items, s.pairs, count);
	} else {
		sort_from(&s, 0, count, 0);
	}
	free(s.pairs);
	free(s.scratch);
}
