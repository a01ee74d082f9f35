/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A name's lookup in a large zone asked of memory ahead of the lookup,
 * in four steps that a batch of queries interleaves (serve/udp.c): the
 * name table's slots of the name and of its parent, then the nodes their
 * tags point at, then those nodes' keys and RRsets, then the RDATA and
 * additional data of their first RRsets (a cut's NS and its glue list).  Each step only
 * reads what the step before asked for, so that the misses of several
 * queries overlap instead of following one another: in a zone of a
 * million names each of these is a cache miss, and a query waits for
 * them one after the other (doc/performance.md §1, "The lookahead").
 *
 * Only a prefetch: nothing is decided here, the lookup itself
 * (apex_zone_lookup_name()) is made as before.  Zones whose table fits
 * in the caches are not looked at (the steps would cost instructions for
 * nothing), and a zoneset without a zone that is
 * (apex_zoneset_t.read_ahead) has no query read ahead at all.
 * Read-only, no allocation.
 */
#ifndef APEX_ZONE_LOOKUP_AHEAD_H
#define APEX_ZONE_LOOKUP_AHEAD_H

#include <stdbool.h>
#include <stdint.h>

#include "zone/lookup_name.h"
#include "zone/zone.h"

/* The names a lookahead fetches: the name and its parent (the zone cut
 * of a referral, the most common answer of a TLD). */
#define APEX_LOOKUP_AHEAD_NAMES 2

typedef struct apex_lookup_ahead {
	const apex_zone_t *zone; /* NULL: nothing to fetch */
	unsigned count;          /* names fetched */
	/* An NSEC3 zone's query with DO: the found names' other RRsets
	 * (a cut's DS, the RRSIGs) and their NSEC3 are fetched too, which
	 * a referral's or a NODATA answer's proof reads.  Set by the
	 * caller after step 1 (false until then). */
	bool proofs;
	uint32_t hashes[APEX_LOOKUP_AHEAD_NAMES];
	uint32_t ids[APEX_LOOKUP_AHEAD_NAMES]; /* APEX_NODE_NONE: no tag matched */
} apex_lookup_ahead_t;

/* Tables of at most this many slots stay in the caches
 * (zone/node_slots.h: 1 MiB) and are not fetched ahead. */
#define APEX_LOOKUP_AHEAD_MIN_SLOTS ((uint32_t)1 << 18)

/* Whether zone's name table is fetched ahead of its lookups. */
static inline bool apex_lookup_ahead_worth(const apex_zone_t *zone)
{
	return zone->node_table_pages != NULL &&
	       zone->node_table_size > APEX_LOOKUP_AHEAD_MIN_SLOTS;
}

/* Step 1: the slots of name (prepared) in zone (NULL: none), unless the
 * zone is small. */
void apex_lookup_ahead_slots(apex_lookup_ahead_t *a, const apex_zone_t *zone,
			     const apex_lookup_name_t *name);

/* Step 2: the nodes the slots' tags point at. */
void apex_lookup_ahead_nodes(apex_lookup_ahead_t *a);

/* Step 3: those nodes' keys and RRsets; with proofs, their NSEC3
 * owners' nodes. */
void apex_lookup_ahead_data(const apex_lookup_ahead_t *a);

/* Step 4: the RDATA and additional data of those nodes' first RRsets
 * (RRsets are sorted by type: at a zone cut, NS; at most names, the
 * address the query asks for); with proofs, the RDATA and RRSIGs of
 * their other RRsets and their NSEC3 owners' RRsets. */
void apex_lookup_ahead_rdata(const apex_lookup_ahead_t *a);

/*
 * The same steps for a batch of exact lookups by hash and of the records
 * at the nodes found (an IXFR's changed owners, thousands of them, each
 * a few misses in a large zone): the caller runs each step some names
 * ahead of its lookups, the earlier steps further ahead.  Unlike the
 * query's steps above, these are asked of any zone: a batch is
 * thousands of names, so the few instructions cost nothing beside it.
 */

/* The slot of hash (apex_name_hash() of a name) in zone's table. */
void apex_lookup_ahead_hashed_slot(const apex_zone_t *zone, uint32_t hash);

/* The node the slot's tag of hash points at (its slot asked for
 * before), and its RRsets pointer: that node's id, for the next steps,
 * or APEX_NODE_NONE (no tag matched, or no table). */
uint32_t apex_lookup_ahead_hashed_node(const apex_zone_t *zone, uint32_t hash);

/* For ids that are APEX_NODE_NONE the steps below ask for nothing. */

/* How many owners ahead a walk over thousands of them (an IXFR's changed
 * owners) takes each of up to three steps, each reading what the one
 * before asked for, so that the misses of several owners overlap: with
 * 10,000 changes in a 1M-record zone each step is a miss.  A step that
 * reads what it has not asked for waits for it. */
#define APEX_LOOKUP_AHEAD_FIRST 12
#define APEX_LOOKUP_AHEAD_SECOND 8
#define APEX_LOOKUP_AHEAD_THIRD 4

/* Node id's node and RRsets pointer. */
void apex_lookup_ahead_id_node(const apex_zone_t *zone, uint32_t id);

/* Node id's name and key, which a lookup compares (the node asked for
 * before). */
void apex_lookup_ahead_id_name(const apex_zone_t *zone, uint32_t id);

/* Node id's RRsets (its RRsets pointer asked for before, by
 * apex_lookup_ahead_id_node(); its node is not read). */
void apex_lookup_ahead_id_rrsets(const apex_zone_t *zone, uint32_t id);

/* The RDATA and RRSIGs of node id's first four RRsets (its RRsets asked
 * for before): what reading its records (xfr/version_records.h) touches. */
void apex_lookup_ahead_id_records(const apex_zone_t *zone, uint32_t id);

#endif
