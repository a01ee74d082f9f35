/* SPDX-License-Identifier: BSD-3-Clause */
#include "zone/zone_bags.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/hash_slots.h"
#include "zone/lookup_ahead.h"

/* The bag of a zone: from its origin's name hash (zone_bags.h). */
static unsigned bag_of(const apex_zone_t *zone)
{
	return apex_zone_bags_bag(apex_zone_bags_spread(zone->apex->hash));
}

static void bag_release(apex_zone_bag_t *bag)
{
	if (bag == NULL || atomic_fetch_sub_explicit(&bag->refcount, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < bag->count; i++)
		apex_zone_unref(bag->zones[i]);
	free(bag);
}

struct apex_zone_shelf {
	atomic_uint refcount;
	apex_zone_bag_t *bag[APEX_ZONE_SHELF_BAGS]; /* one reference each; NULL: none */
};

static void shelf_release(apex_zone_shelf_t *shelf)
{
	if (shelf == NULL ||
	    atomic_fetch_sub_explicit(&shelf->refcount, 1, memory_order_acq_rel) != 1)
		return;
	for (unsigned i = 0; i < APEX_ZONE_SHELF_BAGS; i++)
		bag_release(shelf->bag[i]);
	free(shelf);
}

void apex_zone_bags_release(apex_zone_bags_t *bags)
{
	for (unsigned s = 0; s < APEX_ZONE_SHELVES; s++) {
		shelf_release(bags->shelf[s]);
		bags->shelf[s] = NULL;
	}
	memset(bags->bag, 0, sizeof(bags->bag));
}

/*
 * zones grouped by bag: into sorted (count of them), with from[b] the
 * first of bag b's and from[b + 1] the end; NULL sorted and count 0 are
 * fine.  sorted is malloc'ed by the caller.
 */
static void group(apex_zone_t *const *zones, size_t count, apex_zone_t **sorted,
		  uint32_t from[APEX_ZONE_BAGS + 1])
{
	memset(from, 0, (APEX_ZONE_BAGS + 1) * sizeof(from[0]));
	for (size_t i = 0; i < count; i++)
		from[bag_of(zones[i]) + 1]++;
	for (unsigned b = 0; b < APEX_ZONE_BAGS; b++)
		from[b + 1] += from[b];
	uint32_t at[APEX_ZONE_BAGS];
	memcpy(at, from, sizeof(at));
	for (size_t i = 0; i < count; i++)
		sorted[at[bag_of(zones[i])]++] = zones[i];
}

/* Whether zone is one of the count zones from `from` on. */
static bool among(apex_zone_t *const *from, size_t count, const apex_zone_t *zone)
{
	for (size_t i = 0; i < count; i++)
		if (from[i] == zone)
			return true;
	return false;
}

/* Fill bag's slots, max_origin_labels and ahead_count once its zones are in. */
static void bag_index(apex_zone_bag_t *bag, uint64_t *slots)
{
	uint32_t mask = (1u << bag->bits) - 1;

	memset(slots, 0, ((size_t)1 << bag->bits) * sizeof(*slots));
	bag->max_origin_labels = -1;
	bag->ahead_count = 0;
	for (uint32_t n = 0; n < bag->count; n++) {
		const apex_zone_t *z = bag->zones[n];
		uint32_t hash = z->apex->hash;
		uint32_t i = apex_zone_bags_first(apex_zone_bags_spread(hash), bag->bits);

		while (slots[i] != 0)
			i = (i + 1) & mask;
		slots[i] = (uint64_t)hash << 32 | (n + 1u);
		if (z->origin_labels > bag->max_origin_labels)
			bag->max_origin_labels = z->origin_labels;
		bag->ahead_count += apex_lookup_ahead_worth(z);
	}
	bag->slots = slots;
}

/* Bag b made again from old (NULL: none): its zones but the `lost` ones,
 * and the `gained` ones, each with a new reference; NULL when none is
 * left (*rc APEX_OK) or out of memory (*rc APEX_ENOMEM). */
static apex_zone_bag_t *bag_remake(const apex_zone_bag_t *old, apex_zone_t *const *lost,
				   size_t lost_count, apex_zone_t *const *gained,
				   size_t gained_count, int *rc)
{
	size_t most = (old != NULL ? old->count : 0) + gained_count;
	/* the slots' bits are those below the bag's in a 32-bit spread hash */
	unsigned bits = apex_hash_slots_bits(most);
	apex_zone_bag_t *bag;

	*rc = APEX_OK;
	if (most == 0)
		return NULL;
	if (most >= UINT32_MAX || bits > 32 - APEX_ZONE_BAG_BITS) {
		*rc = APEX_ENOMEM;
		return NULL;
	}
	/* the zones, then the slots, 8-byte aligned after them */
	size_t slots_at = sizeof(*bag) + most * sizeof(bag->zones[0]);
	if ((bag = malloc(slots_at + ((size_t)1 << bits) * sizeof(uint64_t))) == NULL) {
		*rc = APEX_ENOMEM;
		return NULL;
	}
	size_t n = 0;
	for (size_t i = 0; old != NULL && i < old->count; i++)
		if (!among(lost, lost_count, old->zones[i]))
			bag->zones[n++] = old->zones[i];
	for (size_t i = 0; i < gained_count; i++)
		bag->zones[n++] = gained[i];
	if (n == 0) {
		free(bag);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		apex_zone_ref(bag->zones[i]);
	atomic_init(&bag->refcount, 1);
	bag->count = (uint32_t)n;
	bag->bits = bits;
	bag_index(bag, (uint64_t *)((uint8_t *)bag + slots_at));
	return bag;
}

int apex_zone_bags_max_origin_labels(const apex_zone_bags_t *bags)
{
	int most = -1;

	for (unsigned b = 0; b < APEX_ZONE_BAGS; b++)
		if (bags->bag[b] != NULL && bags->bag[b]->max_origin_labels > most)
			most = bags->bag[b]->max_origin_labels;
	return most;
}

bool apex_zone_bags_read_ahead(const apex_zone_bags_t *bags)
{
	for (unsigned b = 0; b < APEX_ZONE_BAGS; b++)
		if (bags->bag[b] != NULL && bags->bag[b]->ahead_count > 0)
			return true;
	return false;
}

/* Whether bag b neither loses nor gains a zone. */
static bool untouched(const uint32_t *lost, const uint32_t *gained, unsigned b)
{
	return lost[b] == lost[b + 1] && gained[b] == gained[b + 1];
}

/* Shelf s of next made again from cur's (NULL: none): its untouched bags
 * shared, the others made again.  APEX_ENOMEM when out of memory (what
 * was made is in next, for the caller to let go of). */
static int shelf_remake(apex_zone_bags_t *next, const apex_zone_bags_t *cur, unsigned s,
			apex_zone_t **leave, const uint32_t *lost, apex_zone_t **join,
			const uint32_t *gained)
{
	const apex_zone_shelf_t *old = cur != NULL ? cur->shelf[s] : NULL;
	apex_zone_shelf_t *shelf = calloc(1, sizeof(*shelf));
	int rc = APEX_OK;
	bool any = false;

	if (shelf == NULL)
		return APEX_ENOMEM;
	atomic_init(&shelf->refcount, 1);
	next->shelf[s] = shelf;
	for (unsigned i = 0; rc == APEX_OK && i < APEX_ZONE_SHELF_BAGS; i++) {
		unsigned b = s * APEX_ZONE_SHELF_BAGS + i;
		apex_zone_bag_t *was = old != NULL ? old->bag[i] : NULL;

		if (untouched(lost, gained, b)) {
			if (was != NULL)
				atomic_fetch_add_explicit(&was->refcount, 1, memory_order_relaxed);
			shelf->bag[i] = was;
		} else {
			shelf->bag[i] =
				bag_remake(was, leave + lost[b], lost[b + 1] - lost[b],
					   join + gained[b], gained[b + 1] - gained[b], &rc);
		}
		next->bag[b] = shelf->bag[i];
		any |= shelf->bag[i] != NULL;
	}
	if (rc == APEX_OK && !any) { /* no zone left on it */
		free(shelf);
		next->shelf[s] = NULL;
	}
	return rc;
}

int apex_zone_bags_derive(apex_zone_bags_t *next, const apex_zone_bags_t *cur,
			  apex_zone_t *const *leaving, size_t leaving_count,
			  apex_zone_t *const *joining, size_t joining_count)
{
	uint32_t lost[APEX_ZONE_BAGS + 1], gained[APEX_ZONE_BAGS + 1];
	apex_zone_t **by_bag = malloc((leaving_count + joining_count + 1) * sizeof(*by_bag));
	apex_zone_t **leave = by_bag, **join = by_bag + leaving_count;
	int rc = by_bag != NULL ? APEX_OK : APEX_ENOMEM;

	if (rc == APEX_OK) {
		group(leaving, leaving_count, leave, lost);
		group(joining, joining_count, join, gained);
	}
	for (unsigned s = 0; rc == APEX_OK && s < APEX_ZONE_SHELVES; s++) {
		unsigned first = s * APEX_ZONE_SHELF_BAGS;
		bool touched = false;

		for (unsigned b = first; b < first + APEX_ZONE_SHELF_BAGS; b++)
			touched |= !untouched(lost, gained, b);
		if (touched) {
			rc = shelf_remake(next, cur, s, leave, lost, join, gained);
			continue;
		}
		apex_zone_shelf_t *old = cur != NULL ? cur->shelf[s] : NULL;
		if (old != NULL)
			atomic_fetch_add_explicit(&old->refcount, 1, memory_order_relaxed);
		next->shelf[s] = old;
		if (old != NULL) /* next's are NULL otherwise */
			memcpy(&next->bag[first], &cur->bag[first],
			       APEX_ZONE_SHELF_BAGS * sizeof(next->bag[0]));
	}
	free(by_bag);
	if (rc != APEX_OK)
		apex_zone_bags_release(next);
	return rc;
}
