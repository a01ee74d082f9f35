/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Step 1 of a build (apex_build_sort() in build_steps.h): the owner
 * entries sorted by key, then their runs of records moved, run by run,
 * into the owners' order, then each owner's records sorted.  Every pass
 * but the radix sort and a prefix sum is split over the build's
 * threads with apex_parallel_for(): a part reads what it likes of the
 * arrays the pass does not write, and writes only its own items.  The
 * result does not depend on the number of parts: owners are ordered by
 * whole key, then by index; records by a total order (owner, type,
 * RDATA, file position).
 *
 * The records lie in file order, the owners' keys at random in it (a
 * TLD's delegations), so the move reads each run at random; but it
 * writes in order, and reads a run of records (most owners' records lie
 * together) where a scatter of the records one by one wrote each at
 * random.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/radix_sort.h"
#include "zone/build.h"
#include "zone/build_steps.h"
#include "zone/load_tuning.h"

/* A dropped duplicate's owner until the records are compacted. */
#define OWNER_DROPPED UINT32_MAX

/* The passes below read or write, for each record or owner in turn, a
 * place that follows another order (the owners' canonical one, the
 * records' file one): each asks for the place of the one SORT_AHEAD on
 * first, so that the cache misses overlap instead of following each
 * other. */
#define SORT_AHEAD 8

typedef struct sort_job {
	apex_zone_builder_t *b;
	size_t skip;         /* bytes of the origin's key that start every key */
	bool foreign;        /* a key does not start with them (atomic) */
	bool not_runs;       /* the records do not lie as build.h says (atomic) */
	uint32_t *run_first; /* owner entry -> its first record; count + 1 entries */
	/* (key prefix, owner entry, its record count), sorted by prefix;
	 * then the count becomes where the entry's records go */
	apex_sort_pair_t *pairs;
	/* Per sorted position: first 1 where a run of equal prefixes starts,
	 * then 1 where a new key starts, then (prefix sum) its rank + 1. */
	uint32_t *starts;
	apex_build_owner_t *sorted; /* owners by rank */
	uint32_t *first;            /* rank -> its first record; count + 1 entries */
	apex_build_rr_t *out;       /* records by owner */
	size_t dropped;             /* duplicates (atomic) */
} sort_job_t;

/* RFC 4034 6.3: RDATA compared as left-justified unsigned octet strings. */
static int rdata_compare(const apex_build_rr_t *a, const apex_build_rr_t *b)
{
	return apex_key_compare(a->canonical, a->rdlength, b->canonical, b->rdlength);
}

static int rr_compare(const void *pa, const void *pb)
{
	const apex_build_rr_t *a = pa;
	const apex_build_rr_t *b = pb;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	int c = rdata_compare(a, b);
	if (c != 0)
		return c;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Pairs of (key prefix, owner index) by the owners' whole keys, then
 * by index (qsort_r; arg is the owner array). */
static int owner_pair_compare(const void *pa, const void *pb, void *arg)
{
	const apex_build_owner_t *owners = arg;
	uint32_t ia = ((const apex_sort_pair_t *)pa)->value;
	uint32_t ib = ((const apex_sort_pair_t *)pb)->value;
	const apex_build_owner_t *a = &owners[ia], *b = &owners[ib];
	int c = apex_key_compare(a->key, a->key_size, b->key, b->key_size);
	if (c != 0)
		return c;
	return (ia > ib) - (ia < ib);
}

/* ------------------------------------------------------------ owners */

/* run_first[e] for the owner entries e of records [begin, end): where
 * the run of e's records starts.  Sets j->not_runs unless the records
 * are in runs of entries 0, 1, 2, ... in order. */
static int find_runs(void *ctx, size_t begin, size_t end)
{
	sort_job_t *j = ctx;
	const apex_build_rr_t *rrs = j->b->rrs;
	for (size_t i = begin; i < end; i++) {
		uint32_t e = rrs[i].owner, before = i > 0 ? rrs[i - 1].owner : UINT32_MAX;
		if (e == before)
			continue;
		if (e != before + 1) /* 0 after UINT32_MAX: the first record */
			__atomic_store_n(&j->not_runs, true, __ATOMIC_RELAXED);
		else
			j->run_first[e] = (uint32_t)i;
	}
	return APEX_OK;
}

/* Every key starts with the origin's key; the radix sort orders them by
 * the 8 bytes after it (zero-padded: that order never contradicts the
 * keys' own).  A key that does not start with it sets j->foreign. */
static int take_prefixes(void *ctx, size_t begin, size_t end)
{
	sort_job_t *j = ctx;
	const apex_build_owner_t *owners = j->b->owners;
	const uint8_t *origin = j->b->zone->origin_key;
	for (size_t i = begin; i < end; i++) {
		const apex_build_owner_t *o = &owners[i];
		if (o->key_size < j->skip || memcmp(o->key, origin, j->skip) != 0) {
			__atomic_store_n(&j->foreign, true, __ATOMIC_RELAXED);
			continue;
		}
		j->pairs[i].key = apex_key_prefix(o->key + j->skip, o->key_size - j->skip);
		j->pairs[i].value = (uint32_t)i;
		j->pairs[i].extra = j->run_first[i + 1] - j->run_first[i];
	}
	return APEX_OK;
}

static int mark_runs(void *ctx, size_t begin, size_t end)
{
	sort_job_t *j = ctx;
	for (size_t i = begin; i < end; i++)
		j->starts[i] = i == 0 || j->pairs[i].key != j->pairs[i - 1].key;
	return APEX_OK;
}

/* The runs of equal prefixes that start in [begin, end), each sorted by
 * whole key; a run may reach past end (the part after skips it). */
static int sort_runs(void *ctx, size_t begin, size_t end)
{
	sort_job_t *j = ctx;
	size_t n = j->b->owner_count;
	size_t i = begin;
	while (i < end && !j->starts[i])
		i++;
	while (i < end) {
		size_t k = i + 1;
		while (k < n && !j->starts[k])
			k++;
		if (k - i > 1)
			qsort_r(&j->pairs[i], k - i, sizeof(*j->pairs), owner_pair_compare,
				j->b->owners);
		i = k;
	}
	return APEX_OK;
}

/* Owners with the same key (the loader lists one again when it is met
 * again, or by two parser threads) become one: 1 where a new key
 * starts.  Where a run of equal prefixes starts (mark_runs()) the key is
 * new without reading it: only owners inside a run, few in a large zone,
 * cost two cache misses. */
static int mark_new_keys(void *ctx, size_t begin, size_t end)
{
	sort_job_t *j = ctx;
	const apex_build_owner_t *owners = j->b->owners;
	for (size_t i = begin; i < end; i++) {
		if (j->starts[i])
			continue;
		const apex_build_owner_t *o = &owners[j->pairs[i].value];
		const apex_build_owner_t *p = &owners[j->pairs[i - 1].value];
		j->starts[i] = apex_key_compare(p->key, p->key_size, o->key, o->key_size) != 0;
	}
	return APEX_OK;
}

/*
 * Are the owner entries in key order already (equal keys side by side,
 * as the order by key then index has them)?  Then the pairs are sorted as
 * take_prefixes() left them and starts[] is set, one pass and no sort: a
 * derivation's owners come in key order by construction, and so do a
 * transfer's from a server that sends its zone in canonical order and a
 * version's records built compact.  The prefixes decide most steps; the
 * keys are read only where two prefixes are equal.  Stops at the first
 * entry out of order.
 */
static bool in_key_order(sort_job_t *j)
{
	const apex_build_owner_t *owners = j->b->owners;
	const apex_sort_pair_t *pairs = j->pairs;
	size_t n = j->b->owner_count;

	for (size_t i = 0; i < n; i++) {
		int c = 1;
		if (i > 0 && pairs[i].key < pairs[i - 1].key)
			return false;
		if (i > 0 && pairs[i].key == pairs[i - 1].key) {
			const apex_build_owner_t *o = &owners[i], *p = &owners[i - 1];
			c = apex_key_compare(p->key, p->key_size, o->key, o->key_size);
			if (c > 0)
				return false;
		}
		j->starts[i] = c != 0;
	}
	return true;
}

/*
 * The owners by rank under the spelling seen first in the file (the
 * lowest index, which sorts first among equal keys), and the records by
 * rank, in parts of sorted positions.  Each owner's name and key are
 * copied, in canonical order, into an arena of the part's that the
 * version's adopts: the loader wrote them in file order (into the sinks'
 * scratch memory), and every later step and every lookup reads them in
 * canonical order, so in a large zone each read would be a cache and TLB
 * miss.  Each entry's run of records goes where the prefix sum of the
 * counts says (pairs[i].extra), its owner now the rank.
 */
#define PLACE_PARTS_MAX 16

typedef struct place_part {
	sort_job_t *j;
	size_t begin, end; /* sorted positions */
	apex_arena_t *arena;
} place_part_t;

static int place_owners(void *ctx, size_t begin, size_t end)
{
	place_part_t *parts = ctx;
	for (size_t p = begin; p < end; p++) {
		sort_job_t *j = parts[p].j;
		const apex_build_owner_t *owners = j->b->owners;
		const apex_build_rr_t *rrs = j->b->rrs;
		const apex_sort_pair_t *pairs = j->pairs;
		const uint32_t *run_first = j->run_first;
		size_t n = j->b->owner_count, end_p = parts[p].end;
		for (size_t i = parts[p].begin; i < end_p; i++) {
			/* the owners and records lie in file order: the entry
			 * and where its run starts two steps ahead, then the
			 * name and the records of the one a step ahead */
			if (i + 2 * SORT_AHEAD < end_p) {
				uint32_t e = pairs[i + 2 * SORT_AHEAD].value;
				__builtin_prefetch(&owners[e]);
				__builtin_prefetch(&run_first[e]);
			}
			if (i + SORT_AHEAD < end_p) {
				uint32_t e = pairs[i + SORT_AHEAD].value;
				const apex_build_rr_t *run = &rrs[run_first[e]];
				__builtin_prefetch(owners[e].name);
				__builtin_prefetch(run);
				__builtin_prefetch(
					(const char *)(run + run_first[e + 1] - run_first[e]) - 1);
			}
			uint32_t r = j->starts[i] - 1, e = pairs[i].value;
			uint32_t at = pairs[i].extra;
			uint32_t count =
				(i + 1 < n ? pairs[i + 1].extra : (uint32_t)j->b->rr_count) - at;
			const apex_build_rr_t *run = &rrs[run_first[e]];
			if (j->out != rrs) /* else run is already there (in order) */
				memcpy(&j->out[at], run, count * sizeof(*run));
			for (uint32_t k = 0; k < count; k++)
				j->out[at + k].owner = r;
			if (i > 0 && j->starts[i] == j->starts[i - 1])
				continue;
			const apex_build_owner_t *o = &owners[e];
			apex_build_owner_t *to = &j->sorted[r];
			*to = *o;
			if (apex_build_owner_copy(parts[p].arena, to, o) != APEX_OK)
				return APEX_ENOMEM;
		}
	}
	return APEX_OK;
}

static int place_all_owners(sort_job_t *j, size_t n, unsigned threads, size_t min)
{
	place_part_t parts[PLACE_PARTS_MAX];
	size_t count = apex_parallel_parts(threads, n, PLACE_PARTS_MAX, min);
	int rc = APEX_OK;
	for (size_t p = 0; p < count; p++) {
		parts[p] = (place_part_t){ .j = j,
					   .begin = n * p / count,
					   .end = n * (p + 1) / count,
					   .arena = apex_arena_create() };
		if (parts[p].arena == NULL)
			rc = APEX_ENOMEM;
	}
	if (rc == APEX_OK)
		rc = apex_parallel_for(count, (unsigned)count, 1, place_owners, parts);
	/* a derivation's owners: most are names the version has already */
	if (j->b->names_apart && j->b->sorted_names == NULL &&
	    (j->b->sorted_names = apex_arena_create()) == NULL)
		rc = APEX_ENOMEM;
	apex_arena_t *into = j->b->names_apart ? j->b->sorted_names : j->b->zone->arena;
	for (size_t p = 0; p < count; p++)
		if (into != NULL)
			apex_arena_adopt(into, parts[p].arena); /* NULL: nothing */
		else
			apex_arena_destroy(parts[p].arena);
	return rc;
}

/* Where each owner entry's run of records starts (j->run_first); APEX_OK,
 * or APEX_EINVAL if the records are not in runs as build.h asks (the
 * loader's sinks make them so: cannot happen). */
static int runs_of_records(sort_job_t *j)
{
	apex_zone_builder_t *b = j->b;
	size_t n = b->owner_count, count = b->rr_count;
	j->run_first = malloc((n + 1) * sizeof(*j->run_first));
	if (j->run_first == NULL)
		return APEX_ENOMEM;
	apex_parallel_for(count, b->threads, atomic_load(&apex_build_part_min), find_runs, j);
	if (j->not_runs || (count > 0 ? b->rrs[count - 1].owner + (size_t)1 : 0) != n) {
		if (b->err_size > 0)
			snprintf(b->err, b->err_size,
				 "internal error: records not in runs of owners");
		return APEX_EINVAL;
	}
	j->run_first[n] = (uint32_t)count;
	return APEX_OK;
}

/* Sort the owners by key and merge equal keys, and move the records to
 * their owners' order: b->owners and b->rrs replaced by the owners by
 * rank and their records, j->first set (each owner's records are not
 * sorted yet).  APEX_OK, APEX_ENOMEM or APEX_EINVAL (runs_of_records()). */
static int sort_owners(sort_job_t *j)
{
	apex_zone_builder_t *b = j->b;
	size_t n = b->owner_count, count = b->rr_count;
	unsigned threads = b->threads;
	size_t min = atomic_load(&apex_build_part_min);
	const apex_zone_t *zone = b->zone;

	int rc = runs_of_records(j);
	if (rc != APEX_OK)
		return rc;
	j->pairs = malloc((n ? n : 1) * sizeof(*j->pairs));
	j->starts = malloc((n ? n : 1) * sizeof(*j->starts));
	j->sorted = malloc((n ? n : 1) * sizeof(*j->sorted));
	j->first = malloc((n + 1) * sizeof(*j->first));
	if (j->pairs == NULL || j->starts == NULL || j->sorted == NULL || j->first == NULL)
		return APEX_ENOMEM;
	j->skip = zone->origin_key_size;
	apex_parallel_for(n, threads, min, take_prefixes, j);
	if (j->foreign) { /* cannot happen: the loader checks every owner */
		j->skip = 0;
		apex_parallel_for(n, threads, min, take_prefixes, j);
	}
	if (!in_key_order(j)) {
		rc = apex_radix_sort(j->pairs, n);
		if (rc != APEX_OK)
			return rc;
		apex_parallel_for(n, threads, min, mark_runs, j);
		apex_parallel_for(n, threads, min, sort_runs, j);
		apex_parallel_for(n, threads, min, mark_new_keys, j);
	}
	/* ranks, and where each entry's records go: owners with the same
	 * key are next to each other, so each rank's records are together */
	uint32_t unique = 0, at = 0;
	for (size_t i = 0; i < n; i++) {
		if (j->starts[i])
			j->first[unique] = at;
		unique += j->starts[i];
		j->starts[i] = unique;
		uint32_t records = j->pairs[i].extra;
		j->pairs[i].extra = at;
		at += records;
	}
	j->first[unique] = at;
	/* Records whose runs already lie in their owners' order (a file in
	 * canonical order, most transfers, a version's records built compact)
	 * are renumbered where they are, not copied into a second array of
	 * them (40 bytes a record, beside the first at the build's peak). */
	bool in_order = true;
	for (size_t i = 0; i < n && in_order; i++)
		in_order = j->pairs[i].value == i;
	j->out = in_order ? b->rrs : malloc((count ? count : 1) * sizeof(*j->out));
	if (j->out == NULL)
		return APEX_ENOMEM;
	rc = place_all_owners(j, n, threads, min);
	if (rc != APEX_OK)
		return rc;
	free(b->owners);
	b->owners = j->sorted;
	j->sorted = NULL;
	b->owner_count = unique;
	if (b->rrs != j->out)
		free(b->rrs);
	b->rrs = j->out; /* sort_records() and compact_records() work on it as j->out */
	return APEX_OK;
}

/* ------------------------------------------------------------ records */

/* Sort the records of one owner, [first, end), by type, RDATA and file
 * position: few records each, so mostly by insertion. */
static void sort_owner_records(apex_build_rr_t *rrs, size_t first, size_t end)
{
	if (end - first > 16) {
		qsort(&rrs[first], end - first, sizeof(*rrs), rr_compare);
		return;
	}
	for (size_t i = first + 1; i < end; i++) {
		apex_build_rr_t rr = rrs[i];
		size_t j = i;
		while (j > first && rr_compare(&rrs[j - 1], &rr) > 0) {
			rrs[j] = rrs[j - 1];
			j--;
		}
		rrs[j] = rr;
	}
}

/* The records of owner ranks [begin, end) sorted, and their duplicates
 * (same type and canonical RDATA) marked dropped: sorted by file position
 * last, so the first in the file is kept. */
static int sort_records(void *ctx, size_t begin, size_t end)
{
	sort_job_t *j = ctx;
	apex_build_rr_t *rrs = j->out;
	size_t dropped = 0;
	for (size_t r = begin; r < end; r++) {
		size_t first = j->first[r], last = j->first[r + 1];
		if (r + SORT_AHEAD < end &&
		    j->first[r + SORT_AHEAD] + 1 < j->first[r + SORT_AHEAD + 1])
			__builtin_prefetch(rrs[j->first[r + SORT_AHEAD]].canonical);
		sort_owner_records(rrs, first, last);
		for (size_t i = first + 1; i < last; i++)
			if (rrs[i].type == rrs[i - 1].type &&
			    rdata_compare(&rrs[i], &rrs[i - 1]) == 0) {
				rrs[i].owner = OWNER_DROPPED;
				dropped++;
			}
	}
	if (dropped > 0)
		__atomic_fetch_add(&j->dropped, dropped, __ATOMIC_RELAXED);
	return APEX_OK;
}

/* Remove the dropped records and count every owner's again (rare: only
 * for zones with duplicate records). */
static void compact_records(sort_job_t *j)
{
	apex_zone_builder_t *b = j->b;
	size_t kept = 0;
	for (size_t i = 0; i < b->rr_count; i++)
		if (j->out[i].owner != OWNER_DROPPED)
			j->out[kept++] = j->out[i];
	b->rr_count = kept;
	size_t i = 0;
	for (uint32_t r = 0; r < b->owner_count; r++) {
		j->first[r] = (uint32_t)i;
		while (i < kept && j->out[i].owner == r)
			i++;
	}
	j->first[b->owner_count] = (uint32_t)i;
}

/* Sort each owner's records by type and RDATA and drop duplicates:
 * b->rrs, j->first updated. */
static void sort_records_by_owner(sort_job_t *j)
{
	apex_zone_builder_t *b = j->b;
	apex_parallel_for(b->owner_count, b->threads, atomic_load(&apex_build_part_min),
			  sort_records, j);
	if (j->dropped > 0)
		compact_records(j);
}

int apex_build_sort(apex_zone_builder_t *b, uint32_t **owner_first)
{
	sort_job_t j = { .b = b };
	int rc = sort_owners(&j);
	free(j.run_first);
	free(j.pairs);
	free(j.starts);
	free(j.sorted);
	if (rc != APEX_OK) {
		if (j.out != b->rrs)
			free(j.out); /* b->rrs is still the loader's */
		free(j.first);
		return rc;
	}
	/* The owners' names are the version's now, or in b->sorted_names
	 * (place_owners()). */
	apex_arena_destroy(b->names);
	b->names = NULL;
	sort_records_by_owner(&j);
	*owner_first = j.first;
	return APEX_OK;
}
