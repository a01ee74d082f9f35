/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A name's links into its zone's NSEC3 chain (zone/build_steps.h): the
 * NSEC3 of its own hash, and the one covering the hash of its wildcard.
 *
 * In a TLD's chain (half a million NSEC3s for a million records) each
 * lookup is two or three cache misses: the index's bucket, then the
 * chain's entries the search reads.  A whole build links every name, an
 * IXFR's derivation every new one (5,000 of them for 10,000 changes, a
 * tenth of its time); so names are linked in batches, whose hashes are
 * computed first and whose buckets, then entries, are asked of memory
 * for the whole batch before any is looked up: the misses of a batch
 * overlap instead of following one another.  The lookups themselves are
 * apex_zone_nsec3_find()'s, as the queries' are.
 */
#include <stdbool.h>
#include <string.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "util/error.h"
#include "zone/build_steps.h"
#include "zone/nsec3_bucket.h"

/* Names a batch hashes before it looks them up: enough misses in flight
 * to fill the core's line fill buffers, twice over for the wildcards. */
#define LINK_BATCH 16

/* The chain's entries asked for at most, from a bucket's first: a
 * bucket holds about 4 (zone/nsec3_index.c), the search may read one
 * on either side. */
#define AHEAD_ENTRIES_MAX 8

/* The hashes one name is linked by. */
typedef struct hashes {
	uint8_t own[20];
	uint8_t wild[20];
	bool skip;     /* occluded: no links */
	bool wildcard; /* wild computed (not a delegation, nor too long a name) */
} hashes_t;

/* node's hashes into *h.  APEX_EINVAL if hashing fails. */
static int hash_node(const apex_zone_t *zone, const apex_node_t *node, hashes_t *h)
{
	const apex_nsec3_params_t *params = &zone->nsec3_params;

	h->skip = (node->flags & APEX_NODE_OCCLUDED) != 0;
	h->wildcard = false;
	if (h->skip)
		return APEX_OK;
	if (apex_nsec3_hash(params->algorithm, params->salt, params->salt_size, params->iterations,
			    node->name, h->own) < 0)
		return APEX_EINVAL;
	/* A delegation is never the closest encloser of a name that does not
	 * exist: a query below it is referred.  Its wildcard proof is never
	 * asked for, so not hashed (most names of a TLD are delegations:
	 * half of the hashes of its load, and of an IXFR's new names); it
	 * keeps the NSEC3 of its own hash instead (zone.h, own_nsec3).  A
	 * derivation never makes a delegation of a name that was none, or
	 * the reverse (zone/derive.c, same_structure()). */
	if ((node->flags & APEX_NODE_DELEGATION) || (size_t)node->name_size + 2 > APEX_NAME_MAX)
		return APEX_OK;
	uint8_t wild[APEX_NAME_MAX];
	wild[0] = 1;
	wild[1] = '*';
	memcpy(wild + 2, node->name, node->name_size);
	if (apex_nsec3_hash(params->algorithm, params->salt, params->salt_size, params->iterations,
			    wild, h->wild) < 0)
		return APEX_EINVAL;
	h->wildcard = true;
	return APEX_OK;
}

/* Ask for the index's bucket of hash. */
static void ahead_bucket(const apex_zone_t *zone, const uint8_t *hash)
{
	if (zone->nsec3_start != NULL)
		__builtin_prefetch(
			&zone->nsec3_start[apex_nsec3_bucket(hash, 20, zone->nsec3_bits)]);
}

/* Ask for the chain's entries the search for hash reads: its bucket's,
 * with the one before (a covering NSEC3) and the one after. */
static void ahead_entries(const apex_zone_t *zone, const uint8_t *hash)
{
	if (zone->nsec3_start == NULL || zone->nsec3_count == 0)
		return;
	uint32_t v = apex_nsec3_bucket(hash, 20, zone->nsec3_bits);
	size_t lo = zone->nsec3_start[v], hi = zone->nsec3_start[v + 1];
	lo = lo > 0 ? lo - 1 : 0;
	hi = hi < zone->nsec3_count ? hi : zone->nsec3_count - 1;
	if (hi > lo + AHEAD_ENTRIES_MAX)
		hi = lo + AHEAD_ENTRIES_MAX;
	const char *first = (const char *)&zone->nsec3[lo], *last = (const char *)&zone->nsec3[hi];
	for (const char *p = first; p <= last; p += 64)
		__builtin_prefetch(p);
	__builtin_prefetch(last);
}

/* node's links from its hashes h. */
static void link_hashed(const apex_zone_t *zone, apex_node_t *node, const hashes_t *h)
{
	bool matched;
	const apex_nsec3_t *n3 = apex_zone_nsec3_find(zone, h->own, sizeof(h->own), &matched);

	node->nsec3 = matched ? n3->node : APEX_NODE_NONE;
	if (node->flags & APEX_NODE_DELEGATION) {
		node->own_nsec3 = n3->node;
		return;
	}
	node->wildcard_nsec3 =
		h->wildcard ? apex_zone_nsec3_find(zone, h->wild, sizeof(h->wild), &matched)->node
			    : APEX_NODE_NONE;
}

int apex_build_link_nsec3_batch(const apex_zone_t *zone, apex_node_t *const *nodes, size_t count)
{
	hashes_t h[LINK_BATCH];

	for (size_t at = 0; at < count; at += LINK_BATCH) {
		size_t n = count - at < LINK_BATCH ? count - at : LINK_BATCH;
		for (size_t i = 0; i < n; i++) {
			if (hash_node(zone, nodes[at + i], &h[i]) != APEX_OK)
				return APEX_EINVAL;
			if (h[i].skip)
				continue;
			ahead_bucket(zone, h[i].own);
			if (h[i].wildcard)
				ahead_bucket(zone, h[i].wild);
		}
		for (size_t i = 0; i < n; i++) {
			if (h[i].skip)
				continue;
			ahead_entries(zone, h[i].own);
			if (h[i].wildcard)
				ahead_entries(zone, h[i].wild);
		}
		for (size_t i = 0; i < n; i++)
			if (!h[i].skip)
				link_hashed(zone, nodes[at + i], &h[i]);
	}
	return APEX_OK;
}

int apex_build_link_nsec3(const apex_zone_t *zone, apex_node_t *node)
{
	return apex_build_link_nsec3_batch(zone, &node, 1);
}
