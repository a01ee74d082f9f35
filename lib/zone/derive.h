/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A version derived from the one before it, for an IXFR: only the names
 * the change reaches are built again, everything else is shared.
 *
 * The caller (xfr/ixfr_apply.h) gives a builder the records that the
 * changed owners hold after the change: the new SOA first, then for each
 * changed owner the records it keeps, then those added, as a whole build
 * from the same records would see them.  apex_zone_derive() builds those
 * owners' RRsets with the build's own steps (build_steps.h), copies the
 * pages of nodes they are on (zone.h: 512 nodes a page) and links the
 * new RRsets in.  Names added get new ids, and so do the empty
 * non-terminals they need (a name removed but for a new name below it
 * becomes one); names removed leave their ids unused, and the name index
 * and its hash table are copied with them (derive_names.c); the NSEC
 * links of the names from each of them to the next NSEC and of their
 * ancestors in an NSEC zone (derive_nsec.c); the NSEC3 chain when NSEC3
 * owners come and go, with the NSEC3 links of the names that reach
 * (derive_nsec3.c).  The NSEC3 chain when it stays, every page not
 * changed and every record not changed stay the old version's, which the
 * new one holds a reference to (zone->base).  Beyond the changed owners
 * it recomputes the structure of new names from their parents, the
 * RRsets elsewhere whose glue or RDATA-name nodes the change reaches, the
 * stray RRSIG list and the SOA fields; the caller then records the
 * precomputed answers (query/precompute.h).
 *
 * It does not do (APEX_ENOTSUP: the caller builds the version whole,
 * which also words any error as a whole build does): an NSEC3 of the
 * chain added that matches no changed name, an empty non-terminal given
 * records, a name removed with names left below it, a new name below an
 * owner of NSEC3 records only, a zone cut, CNAME, DNAME or NSEC appearing
 * or vanishing at an existing name, NSEC3PARAM changed, an NSEC3 owner
 * leaving the chain, a spelling that changes, an owner failing the
 * build's checks.
 * A chain of derived versions keeps the memory of the records they
 * replaced until the next whole build, which the caller makes every
 * APEX_DERIVE_DEPTH_MAX versions.
 */
#ifndef APEX_ZONE_DERIVE_H
#define APEX_ZONE_DERIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "zone/build.h"
#include "zone/zone.h"

/* Versions derived in a row before one is built whole again, and the
 * share of a version's memory its chain may hold beyond the whole build
 * (apex_zone_chain_memory(): zone->chain_memory less the node pages
 * given back, zone/page_discard.h; as 1/N; but always up to
 * APEX_DERIVE_CHAIN_FLOOR bytes, nothing to free in a small zone) before
 * the next is built whole. */
#define APEX_DERIVE_DEPTH_MAX 64
#define APEX_DERIVE_CHAIN_SHARE 4
#define APEX_DERIVE_CHAIN_FLOOR ((size_t)16 << 20)

/* Whether the next version of zone may be derived from it, or should be
 * built whole to let go of what its chain of derived versions holds. */
bool apex_zone_derivable(const apex_zone_t *zone);

/* The node of an owner name in zone, for a name of the index or an owner
 * of NSEC3 records only; NULL if zone has no such owner.  in_index (NULL:
 * not wanted) says which of the two a node found is. */
const apex_node_t *apex_zone_find_owner(const apex_zone_t *zone, const uint8_t *name,
					bool *in_index);

/* The same, name's lookup key (apex_name_key()) given. */
const apex_node_t *apex_zone_find_owner_keyed(const apex_zone_t *zone, const uint8_t *name,
					      const uint8_t *key, size_t key_size, bool *in_index);

/* The same, the name's hash (apex_name_hash()) and key given: for a
 * batch of lookups that asks memory ahead of them by hash
 * (zone/lookup_ahead.h). */
const apex_node_t *apex_zone_find_owner_hashed(const apex_zone_t *zone, uint32_t hash,
					       const uint8_t *key, size_t key_size, bool *in_index);

/* A changed owner as the caller found it in old: its lookup key, and
 * apex_zone_find_owner_keyed()'s answer (node: APEX_NODE_NONE for a name
 * old lacks). */
typedef struct apex_derive_found {
	const uint8_t *key;
	uint16_t key_size;
	bool in_index;
	uint32_t node;
} apex_derive_found_t;

/* The changed owners of a derivation. */
typedef struct apex_derive_owners {
	const uint32_t *changed; /* the ids of those old has, sorted */
	size_t changed_count;
	size_t count; /* all of them, the apex among them */
	/* each one's lookup in old, one per owner, sorted by key
	 * (apex_key_compare()), so that it is not looked up again; NULL:
	 * it is */
	const apex_derive_found_t *found;
	size_t found_count;
	/* Or NULL: told (with found_ctx) once the owners are matched and
	 * their RRsets built (the builder's records freed), after which found
	 * is not read again, so that the caller frees it and the keys it
	 * points to then rather than at the derivation's end (5 MB for the
	 * 100,000 owners of a reload of a tenth of a 1M-record zone, held
	 * through the links and the name index otherwise). */
	void (*found_read)(void *found_ctx);
	void *found_ctx;
	/* Copy each of old's changed owners' node page even where only its
	 * RRsets change (which copies only its page of RRsets pointers,
	 * zone.h): a rebuild in parts (xfr/version_part.h), whose aim is to
	 * move all a range of owners holds out of the arenas before it, so
	 * that those are swept. */
	bool copy_nodes;
} apex_derive_owners_t;

/*
 * Derive b->zone (a shell from apex_version_begin(), its records in b:
 * those of the changed owners) from old.  On APEX_OK the version is
 * complete but for its precomputed answers and holds a reference to old.
 * APEX_ENOTSUP: the change is not one a derivation does (see above);
 * APEX_ENOMEM; APEX_ECANCELED when b->give_way (build.h) said so after
 * the builder's sort, the owners, the name index, the new names or the
 * owners' links, or at every APEX_DERIVE_GIVE_WAY_EVERY-th owner whose
 * RRsets are built or linked and name of the pass over the names that
 * relinks what the change reaches.  b's arrays are consumed as by
 * apex_zone_build().
 */
#define APEX_DERIVE_GIVE_WAY_EVERY 4096
int apex_zone_derive(apex_zone_builder_t *b, apex_zone_t *old, const apex_derive_owners_t *owners);

#endif
