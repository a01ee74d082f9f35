/* SPDX-License-Identifier: BSD-3-Clause */
#include "zone/zone_bags.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/hash_slots.h"

struct apex_zone_bag {
	atomic_uint refcount;
	size_t count;
	apex_zone_t *zones[]; /* each holds one reference */
};

/* The bag of a zone: from its origin's name hash, spread as the hash
 * slots spread it. */
static unsigned bag_of(const apex_zone_t *zone)
{
	return apex_hash_slots_first(zone->apex->hash, APEX_ZONE_BAG_BITS);
}

static void bag_release(apex_zone_bag_t *bag)
{
	if (bag == NULL || atomic_fetch_sub_explicit(&bag->refcount, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < bag->count; i++)
		apex_zone_unref(bag->zones[i]);
	free(bag);
}

void apex_zone_bags_release(apex_zone_bags_t *bags)
{
	for (unsigned b = 0; b < APEX_ZONE_BAGS; b++) {
		bag_release(bags->bag[b]);
		bags->bag[b] = NULL;
	}
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

/* Bag b made again from old (NULL: none): its zones but the `lost` ones,
 * and the `gained` ones, each with a new reference; NULL when none is
 * left (*rc APEX_OK) or out of memory (*rc APEX_ENOMEM). */
static apex_zone_bag_t *bag_remake(const apex_zone_bag_t *old, apex_zone_t *const *lost,
				   size_t lost_count, apex_zone_t *const *gained,
				   size_t gained_count, int *rc)
{
	size_t most = (old != NULL ? old->count : 0) + gained_count;
	apex_zone_bag_t *bag;

	*rc = APEX_OK;
	if (most == 0)
		return NULL;
	if ((bag = malloc(sizeof(*bag) + most * sizeof(bag->zones[0]))) == NULL) {
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
	bag->count = n;
	return bag;
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
	for (unsigned b = 0; rc == APEX_OK && b < APEX_ZONE_BAGS; b++) {
		apex_zone_bag_t *old = cur != NULL ? cur->bag[b] : NULL;

		if (lost[b] == lost[b + 1] && gained[b] == gained[b + 1]) {
			if (old != NULL)
				atomic_fetch_add_explicit(&old->refcount, 1, memory_order_relaxed);
			next->bag[b] = old;
			continue;
		}
		next->bag[b] = bag_remake(old, leave + lost[b], lost[b + 1] - lost[b],
					  join + gained[b], gained[b + 1] - gained[b], &rc);
	}
	free(by_bag);
	if (rc != APEX_OK)
		apex_zone_bags_release(next);
	return rc;
}
