/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state of one derivation (derive.h), shared by derive.c (the changed
 * owners' RRsets and what points at them) and derive_names.c (names added
 * and removed: ids, the name index, the new names' structure).  Internal
 * to lib/zone.
 */
#ifndef APEX_ZONE_DERIVE_STATE_H
#define APEX_ZONE_DERIVE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "zone/build.h"
#include "zone/build_steps.h"
#include "zone/derive_profile.h"
#include "zone/zone.h"

/* An empty non-terminal a derivation makes: a missing ancestor of a new
 * name.  Its name and key are the new name's (as in a whole build). */
typedef struct apex_derive_ent {
	const uint8_t *name, *key;
	uint16_t key_size;
	uint8_t labels;
	uint32_t before; /* the owner rank of the new name it is above */
	uint32_t id;
} apex_derive_ent_t;

/* apex_derive_t's copied: how a page became the new version's own. */
enum {
	COPIED = 1,            /* into memory of the new version's arena */
	COPIED_INTO_SPARE = 2, /* into a page its chain kept (zone/page_discard.h) */
};

typedef struct apex_derive {
	apex_build_t bd;         /* the build's state for the changed owners */
	apex_zone_t *zone, *old; /* the version made, the one it comes from */
	const uint32_t *touched; /* ids of old's changed owners, sorted */
	size_t touched_count;
	const struct apex_derive_found *found; /* the caller's lookups (derive.h), or NULL */
	size_t found_count, found_at;          /* the next owner's, found_at on */
	void (*found_read)(void *found_ctx);   /* derive.h's, or NULL */
	void *found_ctx;
	const apex_node_t **pages; /* the new version's page table */
	size_t page_count;
	const apex_rrset_t ***rrset_pages; /* its RRsets pointers' page table */
	uint8_t *rrsets_copied;            /* per page: already the new version's own */
	const apex_rrset_t **rrsets_pool;  /* pages for those copies, in one piece */
	size_t rrsets_pool_left;
	uint32_t **table_pages; /* the new version's hash table pages (derive_table.c) */
	uint8_t *table_copied;  /* per such page: already the new version's own */
	uint32_t *table_pool;   /* whole pages for those copies, in one piece */
	size_t table_pool_left;
	uint8_t *copied;   /* per page: 0, or already the new version's own: */
	apex_node_t *pool; /* pages for the copies, faulted in together */
	size_t pool_left;
	uint32_t *ids;      /* per owner rank: its node's id (a new name's new id) */
	bool *fresh;        /* per owner rank: a name old lacks */
	size_t fresh_count; /* of which NSEC3 owners: */
	size_t fresh_nsec3;
	uint32_t *removed; /* ids of old's changed names left without records */
	size_t removed_count;
	uint32_t *removed_nsec3; /* the same of NSEC3 owners */
	size_t removed_nsec3_count;
	apex_derive_ent_t *ents; /* the empty non-terminals made, in canonical order */
	size_t ent_count;
	uint8_t *changed;   /* bit per id: a changed owner's node, a removed or made one */
	size_t old_records; /* records old's changed owners held */
	bool cuts_changed;  /* a zone cut added or removed */
	bool copy_nodes;    /* apex_derive_owners_t's */
	apex_derive_profile_t profile; /* where the time goes, step by step */
} apex_derive_t;

static inline bool apex_derive_marked(const uint8_t *bits, uint32_t id)
{
	return bits[id >> 3] >> (id & 7) & 1;
}

static inline void apex_derive_mark(uint8_t *bits, uint32_t id)
{
	bits[id >> 3] |= (uint8_t)(1u << (id & 7));
}

/* Whether the derivation gives way here: the builder's give_way
 * (build.h), which only a part of a compaction sets (xfr/version_part.h),
 * says so.  The way out is then the one every step's failure takes
 * (apex_zone_derive() lets go of what the steps took), with
 * APEX_ECANCELED. */
static inline bool apex_derive_gives_way(const apex_derive_t *d)
{
	const apex_zone_builder_t *b = d->bd.b;

	return b->give_way != NULL && b->give_way(b->give_way_ctx);
}

/* The step just done marked in the profile (derive_profile.h); rc if it
 * failed, APEX_ECANCELED if the derivation gives way there. */
static inline int apex_derive_step_done(apex_derive_t *d, apex_derive_step_t step, int rc)
{
	apex_derive_profile_step(&d->profile, step);
	return rc == APEX_OK && apex_derive_gives_way(d) ? APEX_ECANCELED : rc;
}

/* The node of owner rank r when it is new (d->fresh[r]): its name and key
 * are the owner's, copied into the version (apex_derive_init_fresh()),
 * where they stay after the builder's list of owners is freed. */
static inline const apex_node_t *apex_derive_fresh_node(const apex_derive_t *d, uint32_t r)
{
	return apex_zone_node_of(d->zone, d->ids[r]);
}

/* The node of id in the new version, writable: its page becomes the new
 * version's own (copied, or new and zeroed) the first time.  NULL: out of
 * memory. */
apex_node_t *apex_derive_writable(apex_derive_t *d, uint32_t id);

/* The node of id gets the RRsets sets in the new version: the page of
 * RRsets pointers becomes the new version's own (copied, or new and
 * zeroed) the first time; the node's page is not copied.  APEX_OK, or
 * APEX_ENOMEM. */
int apex_derive_set_rrsets(apex_derive_t *d, uint32_t id, const apex_rrset_t *sets);

/* derive_names.c: the removed names: whether a zone cut goes, and the
 * empty non-terminals above them left with no name below, removed too
 * (a name left below a removed one: APEX_ENOTSUP, from the index merge). */
int apex_derive_check_removed(apex_derive_t *d);

/* derive_names.c: the empty non-terminals the new names need (d->ents),
 * each placed before the first new name below it; their ids are given
 * by the caller. */
int apex_derive_find_ents(apex_derive_t *d);

/* derive_names.c: the new names' nodes (name, key, id) before their
 * RRsets are filled. */
void apex_derive_init_fresh(apex_derive_t *d, uint32_t r, apex_node_t *node);

/* derive_nsec3.c: the owners of NSEC3 records only and the NSEC3 chain
 * without the removed ones and with the new ones, in arena; the NSEC3
 * links of the names they reach found again.  APEX_ENOTSUP if a new
 * NSEC3 of the chain matches no changed name (an unchanged one would
 * then be the one it matches). */
int apex_derive_nsec3(apex_derive_t *d, apex_arena_t *arena);

/* derive_nsec.c: in an NSEC zone, the nsec and wildcard_nsec links of the
 * names that the new and removed names reach, once the name index is
 * complete. */
int apex_derive_nsec(apex_derive_t *d);

/* derive_table.c: the new version's hash table, old's (in pages) with the
 * removed names out and the new names and made empty non-terminals in
 * (their nodes' hashes set): the pages that reaches copied, the rest
 * shared.  APEX_OK; APEX_ENOTSUP if a run would reach the table's last
 * slot (the caller builds it again; the copies are left); APEX_ENOMEM. */
int apex_derive_table(apex_derive_t *d);

/* derive_table.c: the chain's kept pages a failed derivation took for its
 * table, kept again. */
void apex_derive_table_return(apex_derive_t *d);

/* qsort() order of ranks (size_t). */
static inline int apex_derive_by_rank(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

/* derive_names.c: the name index without the removed names and with the
 * new ones and the empty non-terminals made (order, key prefixes, hash
 * table), the new names' structure (parent, flags, cut, hash, the
 * parent's wildcard child) and NSEC or NSEC3 links.  APEX_ENOTSUP for
 * what derive.h lists. */
int apex_derive_names(apex_derive_t *d);

#endif
