/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The references a zone set (zoneset.h) holds to its zones, kept in
 * APEX_ZONE_BAGS bags by origin hash.  A bag is immutable and shared by
 * every set in which none of its zones changed, so that the set published
 * for one zone's new version takes new references to one bag's zones
 * (about one in 256 of them) and to the bags, not to every zone: with
 * thousands of zones transferred one after another (a catalog's members)
 * those references, one cache miss each, were most of a publication.
 */
#ifndef APEX_ZONE_ZONE_BAGS_H
#define APEX_ZONE_ZONE_BAGS_H

#include <stddef.h>

#include "zone/zone.h"

#define APEX_ZONE_BAG_BITS 8
#define APEX_ZONE_BAGS (1u << APEX_ZONE_BAG_BITS)

typedef struct apex_zone_bag apex_zone_bag_t; /* zone_bags.c */

typedef struct apex_zone_bags {
	apex_zone_bag_t *bag[APEX_ZONE_BAGS]; /* NULL: no zone; one reference each */
} apex_zone_bags_t;

/*
 * Fill next (its bags all NULL) from cur's (NULL: none), for a set whose
 * zones are cur's but those of leaving (zones of cur) and with those of
 * joining: a bag that neither touches is shared, the others are made
 * again.  Every zone held gets a reference of the bags' own; the caller's
 * references to the joining zones stay the caller's.  APEX_ENOMEM when
 * out of memory: then next holds nothing.
 */
int apex_zone_bags_derive(apex_zone_bags_t *next, const apex_zone_bags_t *cur,
			  apex_zone_t *const *leaving, size_t leaving_count,
			  apex_zone_t *const *joining, size_t joining_count);

/* Let go of every bag (the last holder of a bag lets go of its zones). */
void apex_zone_bags_release(apex_zone_bags_t *bags);

#endif
