/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NSEC3 owners added and removed by a derivation (derive_state.h): the
 * list of owners of NSEC3 records only and the chain are copied with
 * them; then the links of the names they reach are found again:
 *  - the names whose own NSEC3 (node->nsec3) was removed;
 *  - the names whose wildcard proof (node->wildcard_nsec3; at a
 *    delegation the NSEC3 of its own hash, node->own_nsec3, in the same
 *    place) was removed, or is the NSEC3 before one inserted (which may
 *    cover it now);
 *  - the changed names, whose hash may match an inserted NSEC3.
 * A name's hash is fixed, so an inserted NSEC3 matches at most one name:
 * if it is no changed or new name, it would be an unchanged one, which
 * nothing here looks at: APEX_ENOTSUP, and the version is built whole.
 */
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "zone/build.h"
#include "zone/derive_state.h"
#include "zone/nsec3_index.h"

/* The owners of NSEC3 records only, in canonical order: old's without
 * the removed ones, the new ones merged in. */
static int merge_owners(apex_derive_t *d, const uint8_t *gone, apex_arena_t *arena)
{
	const apex_zone_t *old = d->old;
	const apex_zone_builder_t *b = d->bd.b;
	size_t count = old->nsec3_owner_count - d->removed_nsec3_count + d->fresh_nsec3, k = 0;
	uint32_t *owners = apex_arena_alloc(arena, (count + 1) * sizeof(*owners));
	uint32_t r = 0;

	if (owners == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i <= old->nsec3_owner_count; i++) {
		const apex_node_t *n =
			i < old->nsec3_owner_count ? apex_zone_nsec3_owner_at(old, i) : NULL;
		for (; r < b->owner_count; r++) {
			if (!d->fresh[r] || !d->bd.owner_is_nsec3[r])
				continue;
			const apex_node_t *o = apex_derive_fresh_node(d, r);
			if (n != NULL && apex_key_compare(apex_node_key(o), o->key_size,
							  apex_node_key(n), n->key_size) > 0)
				break;
			if (k == count)
				return APEX_ENOTSUP; /* cannot happen: the counts agree */
			owners[k++] = d->ids[r];
		}
		if (n != NULL && !apex_derive_marked(gone, n->id)) {
			if (k == count)
				return APEX_ENOTSUP;
			owners[k++] = n->id;
		}
	}
	if (k != count)
		return APEX_ENOTSUP;
	d->zone->nsec3_owners = owners;
	d->zone->nsec3_owner_count = count;
	return APEX_OK;
}

static int by_hash(const void *pa, const void *pb)
{
	const apex_nsec3_t *a = pa, *b = pb;
	return apex_key_compare(a->hash, a->hash_size, b->hash, b->hash_size);
}

/* The chain entry of a new NSEC3 owner, if its NSEC3 is of the chain. */
static bool chain_entry(const apex_zone_t *zone, const apex_node_t *node, apex_nsec3_t *e)
{
	const apex_rrset_t *set = apex_node_rrset(zone, node, APEX_TYPE_NSEC3);
	if (set == NULL || node->labels != zone->origin_labels + 1)
		return false;
	size_t size = (size_t)set->rdata[0] << 8 | set->rdata[1];
	if (!apex_build_nsec3_in_chain(&zone->nsec3_params, set->rdata + 2, size))
		return false;
	int n = apex_base32hex_decode((const char *)node->name + 1, node->name[0], e->hash,
				      sizeof(e->hash));
	if (n <= 0)
		return false; /* the build warns and leaves it out too */
	e->hash_size = (uint8_t)n;
	e->node = node->id;
	return true;
}

/* The chain: old's without the removed owners, the new entries merged in
 * by hash; `inserted` gets the new entries' ids, `proof` the ids of the
 * old entries just before each (the wildcard proofs they may take). */
static int merge_chain(apex_derive_t *d, const uint8_t *gone, apex_arena_t *arena,
		       uint8_t *inserted, uint8_t *proof, size_t *added)
{
	const apex_zone_t *old = d->old;
	apex_nsec3_t *fresh = calloc(d->fresh_nsec3 + 1, sizeof(*fresh));
	size_t n = 0;

	if (fresh == NULL)
		return APEX_ENOMEM;
	for (uint32_t r = 0; r < d->bd.b->owner_count; r++)
		if (d->fresh[r] && d->bd.owner_is_nsec3[r] &&
		    chain_entry(d->zone, apex_zone_node_of(d->zone, d->ids[r]), &fresh[n]))
			n++;
	qsort(fresh, n, sizeof(*fresh), by_hash);
	apex_nsec3_t *chain = apex_arena_alloc(arena, (old->nsec3_count + n + 1) * sizeof(*chain));
	size_t k = 0, f = 0;
	for (size_t i = 0; chain != NULL && i <= old->nsec3_count; i++) {
		const apex_nsec3_t *e = i < old->nsec3_count ? &old->nsec3[i] : NULL;
		for (; f < n && (e == NULL || by_hash(&fresh[f], e) < 0); f++) {
			chain[k++] = fresh[f];
			apex_derive_mark(inserted, fresh[f].node);
		}
		if (e != NULL && !apex_derive_marked(gone, e->node))
			chain[k++] = *e;
	}
	free(fresh);
	if (chain == NULL)
		return APEX_ENOMEM;
	if (k == 0)
		return APEX_ENOTSUP; /* the whole build refuses a chain without NSEC3 */
	/* The old entry before each inserted one, wrapping around. */
	for (size_t i = 0; i < k; i++) {
		if (!apex_derive_marked(inserted, chain[i].node))
			continue;
		for (size_t j = 1; j < k; j++) {
			const apex_nsec3_t *before = &chain[(i + k - j) % k];
			if (!apex_derive_marked(inserted, before->node)) {
				apex_derive_mark(proof, before->node);
				break;
			}
		}
	}
	d->zone->nsec3 = chain;
	d->zone->nsec3_count = k;
	*added = n;
	return apex_nsec3_index_build(d->zone);
}

/* Every name whose links the chain's change reaches, linked again; each
 * inserted NSEC3 matched by a changed or new name, or APEX_ENOTSUP. */
static int relink_names(apex_derive_t *d, const uint8_t *gone, const uint8_t *inserted,
			const uint8_t *proof, size_t added)
{
	size_t matched = 0;

	for (size_t i = 0; i < d->zone->node_count; i++) {
		const apex_node_t *node = apex_zone_node_at(d->zone, i);
		bool changed = apex_derive_marked(d->changed, node->id);
		if (node->flags & APEX_NODE_OCCLUDED)
			continue;
		if (changed ||
		    (node->nsec3 != APEX_NODE_NONE && apex_derive_marked(gone, node->nsec3)) ||
		    (node->wildcard_nsec3 != APEX_NODE_NONE &&
		     (apex_derive_marked(gone, node->wildcard_nsec3) ||
		      apex_derive_marked(proof, node->wildcard_nsec3)))) {
			apex_node_t *w = apex_derive_writable(d, node->id);
			int rc = w != NULL ? apex_build_link_nsec3(d->zone, w) : APEX_ENOMEM;
			if (rc != APEX_OK)
				return rc;
			node = w;
		}
		if (changed && node->nsec3 != APEX_NODE_NONE &&
		    apex_derive_marked(inserted, node->nsec3))
			matched++;
	}
	return matched == added ? APEX_OK : APEX_ENOTSUP;
}

int apex_derive_nsec3(apex_derive_t *d, apex_arena_t *arena)
{
	size_t bytes = (d->zone->id_count + 7) / 8, added = 0;
	uint8_t *gone = calloc(bytes, 1), *inserted = calloc(bytes, 1), *proof = calloc(bytes, 1);
	int rc = gone && inserted && proof ? APEX_OK : APEX_ENOMEM;

	for (size_t i = 0; rc == APEX_OK && i < d->removed_nsec3_count; i++)
		apex_derive_mark(gone, d->removed_nsec3[i]);
	if (rc == APEX_OK)
		rc = merge_owners(d, gone, arena);
	if (rc == APEX_OK && d->zone->dnssec == APEX_DNSSEC_NSEC3) {
		rc = merge_chain(d, gone, arena, inserted, proof, &added);
		if (rc == APEX_OK)
			rc = relink_names(d, gone, inserted, proof, added);
	}
	free(gone);
	free(inserted);
	free(proof);
	return rc;
}
