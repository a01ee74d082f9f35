/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zone set's zones (zoneset.h), kept in APEX_ZONE_BAGS bags by origin
 * hash, each with hash slots of its own from origin hash to zone.  A bag
 * is immutable and shared by every set in which none of its zones
 * changed, so that the set published for one zone's new version makes one
 * bag again (about one zone in 256), and one shelf of 16 bags (below), and
 * takes a reference to each other shelf: nothing in it grows with the
 * zones served.  With thousands of zones
 * transferred one after another (a catalog's members), a set of all of
 * them built again for each, its array and its slots, was most of a
 * publication.
 */
#ifndef APEX_ZONE_ZONE_BAGS_H
#define APEX_ZONE_ZONE_BAGS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/hash_slots.h"
#include "zone/zone.h"

#define APEX_ZONE_BAG_BITS 8
#define APEX_ZONE_BAGS (1u << APEX_ZONE_BAG_BITS)

typedef struct apex_zone_bag {
	atomic_uint refcount;
	uint32_t count;
	unsigned bits;         /* log2 of the number of slots */
	int max_origin_labels; /* the most labels of its zones' origins */
	/* its zones whose name table is read ahead of queries
	 * (apex_lookup_ahead_worth()) */
	uint32_t ahead_count;
	/* 1 << bits slots (util/hash_slots.h) from origin hash to index in
	 * zones, in the same allocation, after them */
	const uint64_t *slots;
	apex_zone_t *zones[]; /* each holds one reference; in no order */
} apex_zone_bag_t;

/* The set's references are to shelves of bags, shared as bags are: a
 * publication takes one reference to each of 16 shelves and one to each
 * of the other bags of the shelf it makes again, not one to each of 256
 * bags (each on a cache line of its own, and given back by the worker
 * that lets go of the set last). */
#define APEX_ZONE_SHELF_BITS 4
#define APEX_ZONE_SHELVES (1u << APEX_ZONE_SHELF_BITS)
#define APEX_ZONE_SHELF_BAGS (APEX_ZONE_BAGS / APEX_ZONE_SHELVES)

typedef struct apex_zone_shelf apex_zone_shelf_t; /* zone_bags.c */

typedef struct apex_zone_bags {
	apex_zone_shelf_t *shelf[APEX_ZONE_SHELVES]; /* NULL: no zone; one reference each */
	/* the shelves' bags, found without going through the shelves (not
	 * references of their own); NULL: no zone */
	apex_zone_bag_t *bag[APEX_ZONE_BAGS];
} apex_zone_bags_t;

/* The spread hash a bag and its slots take their bits from: the bag the
 * top APEX_ZONE_BAG_BITS, its first slot the bits below them. */
static inline uint32_t apex_zone_bags_spread(uint32_t hash)
{
	return hash * 0x9E3779B1u;
}

static inline unsigned apex_zone_bags_bag(uint32_t spread)
{
	return spread >> (32 - APEX_ZONE_BAG_BITS);
}

static inline uint32_t apex_zone_bags_first(uint32_t spread, unsigned bits)
{
	return (spread << APEX_ZONE_BAG_BITS) >> (32 - bits);
}

/*
 * The zone whose origin has this name hash (dns/name_hash.h) and lookup
 * key (dns/name.h), or NULL.  One bag pointer, then one probe of its
 * slots (usually one cache line); no allocation, no shared write.
 */
static inline apex_zone_t *apex_zone_bags_find(const apex_zone_bags_t *bags, uint32_t hash,
					       const uint8_t *key, size_t key_size)
{
	uint32_t spread = apex_zone_bags_spread(hash);
	const apex_zone_bag_t *bag = bags->bag[apex_zone_bags_bag(spread)];

	if (bag == NULL)
		return NULL;
	uint32_t mask = (1u << bag->bits) - 1;
	for (uint32_t i = apex_zone_bags_first(spread, bag->bits);; i = (i + 1) & mask) {
		uint64_t slot = bag->slots[i];
		if (slot == 0)
			return NULL;
		if (apex_hash_slots_hash(slot) != hash)
			continue;
		apex_zone_t *z = bag->zones[apex_hash_slots_index(slot)];
		if (z->origin_key_size == key_size && memcmp(z->origin_key, key, key_size) == 0)
			return z;
	}
}

/*
 * Fill next (all NULL) from cur's (NULL: none), for a set whose zones are
 * cur's but those of leaving (zones of cur) and with those of joining
 * (none of the same origin as a zone of cur that stays): a bag, and a
 * shelf, that neither touches is shared, the others are made again.  Every zone
 * held gets a reference of the bags' own; the caller's references to the
 * joining zones stay the caller's.  APEX_ENOMEM when out of memory: then
 * next holds nothing.
 */
int apex_zone_bags_derive(apex_zone_bags_t *next, const apex_zone_bags_t *cur,
			  apex_zone_t *const *leaving, size_t leaving_count,
			  apex_zone_t *const *joining, size_t joining_count);

/* The most labels of an origin in bags; -1 when there is no zone. */
int apex_zone_bags_max_origin_labels(const apex_zone_bags_t *bags);

/* Whether a zone of bags has a name table worth reading ahead of its
 * queries (zone/lookup_ahead.h). */
bool apex_zone_bags_read_ahead(const apex_zone_bags_t *bags);

/* Let go of every shelf (the last holder of a shelf lets go of its bags,
 * that of a bag of its zones). */
void apex_zone_bags_release(apex_zone_bags_t *bags);

#endif
