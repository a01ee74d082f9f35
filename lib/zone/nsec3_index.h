/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An index of a zone's NSEC3 chain by the first bits of the hash, so
 * that finding the NSEC3 matching or covering a hash searches the few
 * entries of one bucket (about 4) instead of the whole chain: one or
 * two cache lines on a chain of a million hashes instead of a dozen.
 * The prefix of a hash (its first bytes, zero-padded) never decreases
 * along the sorted chain, so every entry of a lower bucket sorts before
 * a hash and every entry of a higher one after it.
 */
#ifndef APEX_ZONE_NSEC3_INDEX_H
#define APEX_ZONE_NSEC3_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "zone/nsec3_bucket.h"
#include "zone/zone.h"

/*
 * Fill zone->nsec3_start and nsec3_bits for the sorted chain
 * zone->nsec3[0 .. nsec3_count), in the zone's arena.
 * Returns 0 or APEX_ENOMEM.
 */
int apex_nsec3_index_build(apex_zone_t *zone);

#endif
