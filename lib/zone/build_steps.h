/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steps of a build (build.c) that work owner by owner, for the two
 * callers that make a version: apex_zone_build(), which builds one whole,
 * and apex_zone_derive() (derive.h), which builds only the owners an IXFR
 * changed and takes everything else from the version before.  Both build
 * an owner's RRsets with the same code, so that they cannot disagree.
 * Internal to lib/zone.
 */
#ifndef APEX_ZONE_BUILD_STEPS_H
#define APEX_ZONE_BUILD_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/name.h"
#include "zone/zone.h"

struct apex_zone_builder; /* zone/build.h */

typedef struct apex_build {
	struct apex_zone_builder *b;
	apex_zone_t *zone;
	char origin_text[APEX_NAME_MAX * 4 + 1];
	uint32_t *owner_first;     /* records of owner rank r: [owner_first[r], owner_first[r+1]) */
	bool *owner_is_nsec3;      /* owner holds only NSEC3 (and its RRSIGs) */
	apex_node_t **owner_node;  /* node of each owner rank */
	apex_rrset_t **owner_sigs; /* RRSIG sets of each owner rank, split by type covered */
	uint16_t *owner_sig_count;
	size_t ttl_warnings;
	size_t glue_warnings;
	size_t ds_warnings;
} apex_build_t;

/*
 * Step 1, on the build's threads (build_sort.c): b's owners sorted by
 * lookup key (canonical order), the entries the loader listed twice for
 * one key merged into one (the lowest index, the spelling first in the
 * file) and their names and keys copied into b->zone's arena in that
 * order; b's records sorted by owner rank, type and canonical RDATA, and
 * duplicate records dropped (the first in the file kept).  b->owners and
 * b->rrs are replaced by sorted arrays, owner_count and rr_count updated;
 * *owner_first (malloc'ed, the caller's to free, owner_count + 1 entries)
 * gives the records of owner rank r as [owner_first[r], owner_first[r +
 * 1]).  APEX_OK, or APEX_ENOMEM with the build to be abandoned (b's
 * arrays are still b's to free).
 */
int apex_build_sort(struct apex_zone_builder *b, uint32_t **owner_first);

/*
 * apex_build_sort(), then bd's per-owner arrays (owner ranks are then the
 * owners' order).  APEX_OK, APEX_ELOAD (the apex has no record, reason in
 * b->err) or APEX_ENOMEM; apex_build_end() either way.
 */
int apex_build_begin(apex_build_t *bd, struct apex_zone_builder *b);
void apex_build_end(apex_build_t *bd);

/* The zone checks of one owner (one SOA at the apex, none elsewhere, one
 * DNAME, CNAME alone): APEX_OK or APEX_ELOAD with "FILE:LINE: reason". */
int apex_build_check_owner(apex_build_t *bd, uint32_t owner, bool is_apex);

/* True if the owner holds only NSEC3 records and RRSIGs over them. */
bool apex_build_only_nsec3(apex_build_t *bd, uint32_t owner);

/* How many RRsets (RRSIG excluded), RRSIG sets and bytes of RDATA to copy
 * the records of owners [first, end) make; unless rdata is NULL, the
 * bytes of RDATA of all their RRsets (with the records' lengths) too. */
void apex_build_count(const apex_build_t *bd, uint32_t first, uint32_t end, size_t *sets,
		      size_t *sigs, size_t *blob, size_t *rdata);

/* Fill node's RRsets from the records of owner rank r, taking RRsets from
 * *rrset_next, RRSIG sets from *sig_next and RDATA space from *blob: the
 * node's RRsets are node->rrset_count from *rrset_next on, to which the
 * caller sets the version's pointer (zone->rrset_pages) before. */
int apex_build_fill_node(apex_build_t *bd, apex_node_t *node, uint32_t r, apex_rrset_t **rrset_next,
			 apex_rrset_t **sig_next, uint8_t **blob);

/* Link the RRSIGs of owner rank r with the RRsets they cover, by its
 * node's flags; the stray ones are counted into *stray_count, and stored
 * at strays[*stray_count - 1] unless strays is NULL. */
void apex_build_link_rrsigs(apex_build_t *bd, uint32_t r, apex_stray_rrsig_t *strays,
			    size_t *stray_count);

/* Whether rrset at node gets additional data (NS; MX and SRV where
 * authoritative), and that data, found in bd->zone, allocated from arena
 * (the zone's, or one the zone's adopts). */
bool apex_build_wants_additional(const apex_node_t *node, const apex_rrset_t *rrset);
int apex_build_additional(apex_build_t *bd, apex_arena_t *arena, const apex_node_t *node,
			  apex_rrset_t *rrset);

/* rrset->rdata_nodes, found in zone, into its arena (nothing for the
 * types without compressed RDATA names). */
int apex_build_rdata_nodes(apex_zone_t *zone, apex_rrset_t *rrset);

/* True if the NSEC3 RDATA (alg, flags, iterations, salt) is of the chain
 * announced by NSEC3PARAM. */
bool apex_build_nsec3_in_chain(const apex_nsec3_params_t *params, const uint8_t *rdata,
			       size_t size);

/* node->wildcard_nsec in an NSEC zone whose name index and nsec links
 * are complete: the nsec of the name "*.<name>" would follow; next is
 * the node after node in canonical order (NULL for the last). */
uint32_t apex_build_wildcard_nsec(const apex_zone_t *zone, const apex_node_t *node,
				  const apex_node_t *next);

/* node->nsec3 and node->wildcard_nsec3 (node->own_nsec3 at a delegation,
 * whose flags must be set) from zone's complete NSEC3 chain (none for an
 * occluded node); APEX_EINVAL if hashing fails. */
int apex_build_link_nsec3(const apex_zone_t *zone, apex_node_t *node);

/* apex_build_link_nsec3() for count nodes, their lookups' misses
 * overlapping (zone/link_nsec3.c). */
int apex_build_link_nsec3_batch(const apex_zone_t *zone, apex_node_t *const *nodes, size_t count);

/* How many nodes its callers gather for one apex_build_link_nsec3_batch()
 * (it works through them 16 at a time). */
#define APEX_LINK_NSEC3_GATHER 64

/* zone->soa, serial and negative TTL from the apex's SOA RRset. */
int apex_build_set_soa(apex_build_t *bd);

/* A DS RRset at node, which is not a delegation: logged (RFC 4035 2.4). */
void apex_build_warn_stray_ds(apex_build_t *bd, const apex_node_t *node);

#endif
