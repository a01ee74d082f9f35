/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Names added and removed by a derivation (derive_state.h): the new names
 * get ids after old's, the removed ones leave theirs unused; the name
 * index is copied with both, the hash table too (or built again when it
 * would be more than half full); the new names get their structure from
 * their parents, which must be names of the new version (no empty
 * non-terminal is made or removed).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "util/hash_slots.h"
#include "zone/build.h"
#include "zone/derive_state.h"
#include "zone/node_table.h"

void apex_derive_init_fresh(apex_derive_t *d, uint32_t r, apex_node_t *node)
{
	const apex_build_owner_t *o = &d->bd.b->owners[r];

	memset(node, 0, sizeof(*node));
	node->name = o->name;
	node->key = o->key;
	node->key_size = o->key_size;
	node->name_size = o->name_size;
	node->labels = o->labels;
	node->id = d->ids[r];
	node->parent = node->cut = node->wildcard_child = APEX_NODE_NONE;
	node->nsec = node->nsec3 = node->wildcard_nsec3 = APEX_NODE_NONE;
}

/* a's key starts with key (a is at or below that name). */
static bool at_or_below(const apex_node_t *a, const uint8_t *key, size_t key_size)
{
	return a->key_size >= key_size && memcmp(a->key, key, key_size) == 0;
}

/* A name of the new version lies below the empty non-terminal ent: a name
 * of old's not removed, or a new one. */
static bool keeps_child(const apex_derive_t *d, const apex_node_t *ent, const uint8_t *gone)
{
	const apex_zone_t *old = d->old;

	for (size_t i = apex_zone_rank(old, ent->key, ent->key_size) + 1; i < old->node_count;
	     i++) {
		const apex_node_t *n = apex_zone_node_at(old, i);
		if (!at_or_below(n, ent->key, ent->key_size))
			break;
		if (!apex_derive_marked(gone, n->id))
			return true;
	}
	for (size_t r = 0; r < d->bd.b->owner_count; r++) {
		const apex_build_owner_t *o = &d->bd.b->owners[r];
		if (d->fresh[r] && o->key_size > ent->key_size &&
		    memcmp(o->key, ent->key, ent->key_size) == 0)
			return true;
	}
	return false;
}

/* Removed too: the empty non-terminals above a removed name that have no
 * name left below them. */
static int remove_empty_parents(apex_derive_t *d, uint8_t *gone)
{
	for (size_t i = 0; i < d->removed_count; i++) {
		const apex_node_t *node = apex_zone_node_of(d->old, d->removed[i]);
		const apex_node_t *parent = apex_zone_node(d->old, node->parent);
		if (parent == NULL || !(parent->flags & APEX_NODE_EMPTY) ||
		    apex_derive_marked(gone, parent->id) || keeps_child(d, parent, gone))
			continue;
		uint32_t *grown = realloc(d->removed, (d->removed_count + 1) * sizeof(*grown));
		if (grown == NULL)
			return APEX_ENOMEM;
		d->removed = grown;
		d->removed[d->removed_count++] = parent->id; /* and its own parent, in turn */
		apex_derive_mark(gone, parent->id);
		apex_derive_mark(d->changed, parent->id);
	}
	return APEX_OK;
}

int apex_derive_check_removed(apex_derive_t *d)
{
	uint8_t *gone = calloc(d->old->id_count / 8 + 1, 1);

	if (gone == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < d->removed_count; i++) {
		const apex_node_t *node = apex_zone_node_of(d->old, d->removed[i]);
		apex_derive_mark(gone, node->id);
		if (node->flags & APEX_NODE_DELEGATION)
			d->cuts_changed = true;
	}
	int rc = remove_empty_parents(d, gone);
	free(gone);
	return rc;
}

/* The ranks in old of the removed names, sorted; APEX_ENOTSUP if a name
 * below a removed one stays. */
static int removed_ranks(apex_derive_t *d, const uint8_t *gone, size_t *ranks)
{
	const apex_zone_t *old = d->old;

	for (size_t i = 0; i < d->removed_count; i++) {
		const apex_node_t *node = apex_zone_node_of(old, d->removed[i]);
		ranks[i] = apex_zone_rank(old, node->key, node->key_size);
		for (size_t j = ranks[i] + 1; j < old->node_count; j++) {
			const apex_node_t *below = apex_zone_node_at(old, j);
			if (!at_or_below(below, node->key, node->key_size))
				break;
			if (!apex_derive_marked(gone, below->id))
				return APEX_ENOTSUP; /* a name below a removed one would stay */
		}
	}
	qsort(ranks, d->removed_count, sizeof(*ranks), apex_derive_by_rank);
	return APEX_OK;
}

/* The next new name from owner rank *r on, and where it goes in old's
 * order (its rank there); old->node_count + 1 if none is left. */
static size_t next_fresh(const apex_derive_t *d, uint32_t *r)
{
	const apex_zone_builder_t *b = d->bd.b;

	while (*r < b->owner_count && (!d->fresh[*r] || d->bd.owner_is_nsec3[*r]))
		(*r)++;
	if (*r == b->owner_count)
		return d->old->node_count + 1;
	return apex_zone_rank(d->old, b->owners[*r].key, b->owners[*r].key_size);
}

/* The name index of the new version: old's in runs copied whole, without
 * the removed names, the new ones put in where they sort. */
static int merge_index(apex_derive_t *d, const uint8_t *gone, apex_arena_t *arena)
{
	const apex_zone_t *old = d->old;
	size_t count = old->node_count - d->removed_count + d->fresh_count - d->fresh_nsec3;
	size_t k = 0, src = 0;
	uint32_t *order = apex_arena_alloc(arena, (count + 1) * sizeof(*order));
	uint64_t *prefixes = apex_arena_alloc(arena, (count + 1) * sizeof(*prefixes));
	size_t *ranks = malloc((d->removed_count + 1) * sizeof(*ranks));
	int rc = order && prefixes && ranks ? removed_ranks(d, gone, ranks) : APEX_ENOMEM;
	uint32_t r = 0;
	size_t removed = 0, fresh = next_fresh(d, &r);

	while (rc == APEX_OK && (src < old->node_count || fresh <= old->node_count)) {
		size_t stop = removed < d->removed_count ? ranks[removed] : old->node_count;
		stop = fresh < stop ? fresh : stop;
		if (k + (stop - src) > count) {
			rc = APEX_ENOTSUP; /* cannot happen: the counts agree */
			break;
		}
		memcpy(order + k, old->order + src, (stop - src) * sizeof(*order));
		memcpy(prefixes + k, old->key_prefixes + src, (stop - src) * sizeof(*prefixes));
		k += stop - src;
		src = stop;
		if (fresh == src) { /* a new name sorts before old's at src */
			const apex_build_owner_t *o = &d->bd.b->owners[r];
			if (k == count) {
				rc = APEX_ENOTSUP; /* cannot happen: the counts agree */
				break;
			}
			order[k] = d->ids[r];
			prefixes[k++] = apex_key_prefix(o->key, o->key_size);
			r++;
			fresh = next_fresh(d, &r);
		} else if (removed < d->removed_count && ranks[removed] == src) {
			src++;
			removed++;
		}
	}
	free(ranks);
	if (rc == APEX_OK && k != count)
		rc = APEX_ENOTSUP; /* cannot happen: the counts agree */
	if (rc != APEX_OK)
		return rc;
	d->zone->order = order;
	d->zone->key_prefixes = prefixes;
	d->zone->node_count = count;
	return APEX_OK;
}

/* A new name's parent, flags, cut and hash, from its parent in the new
 * version; the parent's wildcard child.  APEX_ENOTSUP if the parent is
 * no name of the new version. */
static int fresh_structure(apex_derive_t *d, uint32_t r)
{
	apex_node_t *node = apex_derive_writable(d, d->ids[r]);
	uint16_t ends[APEX_LABELS_MAX + 1];
	uint8_t key[APEX_KEY_MAX];

	apex_name_key(node->name, key, ends);
	const apex_node_t *parent = apex_zone_find(d->zone, key, ends[node->labels - 1]);
	if (parent == NULL)
		return APEX_ENOTSUP; /* an empty non-terminal would be made */
	uint16_t flags = apex_name_is_wildcard(node->name) ? APEX_NODE_WILDCARD : 0;
	if (apex_node_rrset(node, APEX_TYPE_CNAME) != NULL)
		flags |= APEX_NODE_CNAME;
	if (apex_node_rrset(node, APEX_TYPE_DNAME) != NULL)
		flags |= APEX_NODE_DNAME;
	if (apex_node_rrset(node, APEX_TYPE_NS) != NULL)
		flags |= APEX_NODE_DELEGATION;
	if (parent->flags & (APEX_NODE_OCCLUDED | APEX_NODE_DELEGATION | APEX_NODE_DNAME))
		flags |= APEX_NODE_OCCLUDED;
	node->parent = parent->id;
	node->cut = parent->cut;
	if (node->cut == APEX_NODE_NONE && (flags & (APEX_NODE_DELEGATION | APEX_NODE_DNAME)))
		node->cut = node->id;
	node->flags = flags;
	node->hash = apex_name_hash_label(parent->hash, node->name);
	if (flags & APEX_NODE_DELEGATION)
		d->cuts_changed = true;
	if (flags & APEX_NODE_WILDCARD) {
		apex_node_t *p = apex_derive_writable(d, parent->id);
		if (p == NULL)
			return APEX_ENOMEM;
		p->wildcard_child = node->id;
	}
	return APEX_OK;
}

/* A new owner of NSEC3 records only: the apex is its parent when it is
 * one label below it (zone/build.c does the same), its name hash. */
static int fresh_nsec3_owner(apex_derive_t *d, uint32_t r)
{
	apex_node_t *node = apex_derive_writable(d, d->ids[r]);
	const apex_node_t *apex = apex_zone_node_of(d->zone, d->old->apex->id);

	if (node == NULL)
		return APEX_ENOMEM;
	if (node->labels == apex->labels + 1) {
		node->parent = apex->id;
		node->hash = apex_name_hash_label(apex->hash, node->name);
	} else {
		node->hash = apex_name_hash(node->name);
	}
	return APEX_OK;
}

/* Remove the entry of id from a linear-probing table (the entries after
 * it in its run move back so that every lookup still finds them). */
static void table_delete(uint64_t *slots, unsigned bits, uint32_t hash, uint32_t id)
{
	uint32_t mask = (1u << bits) - 1;
	uint32_t i = apex_hash_slots_first(hash, bits);

	while (slots[i] != 0 && apex_hash_slots_index(slots[i]) != id)
		i = (i + 1) & mask;
	if (slots[i] == 0)
		return;
	for (uint32_t j = (i + 1) & mask; slots[j] != 0; j = (j + 1) & mask) {
		uint32_t home = apex_hash_slots_first(apex_hash_slots_hash(slots[j]), bits);
		/* the entry at j may move to i unless its home lies in (i, j] */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			slots[i] = slots[j];
			i = j;
		}
	}
	slots[i] = 0;
}

/* The hash table: old's copied, the removed names out, the new ones in;
 * built again when it would be more than half full. */
static int update_table(apex_derive_t *d, apex_arena_t *arena)
{
	apex_zone_t *zone = d->zone;
	unsigned bits = d->old->node_table_bits;

	if (2 * zone->node_count > ((size_t)1 << bits))
		return apex_node_table_build_in(zone, arena);
	uint64_t *slots =
		apex_arena_memdup(arena, d->old->node_table, ((size_t)1 << bits) * sizeof(*slots));
	if (slots == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < d->removed_count; i++)
		table_delete(slots, bits, apex_zone_node_of(d->old, d->removed[i])->hash,
			     d->removed[i]);
	for (uint32_t r = 0; r < d->bd.b->owner_count; r++)
		if (d->fresh[r] && !d->bd.owner_is_nsec3[r])
			apex_hash_slots_insert(slots, bits,
					       apex_zone_node_of(zone, d->ids[r])->hash, d->ids[r]);
	zone->node_table = slots;
	zone->node_table_bits = bits;
	return APEX_OK;
}

/* A removed wildcard is its parent's wildcard child no more. */
static int forget_wildcards(apex_derive_t *d)
{
	for (size_t i = 0; i < d->removed_count; i++) {
		const apex_node_t *node = apex_zone_node_of(d->old, d->removed[i]);
		const apex_node_t *parent = apex_zone_node(d->zone, node->parent);
		if (parent == NULL || parent->wildcard_child != node->id)
			continue;
		apex_node_t *p = apex_derive_writable(d, parent->id);
		if (p == NULL)
			return APEX_ENOMEM;
		p->wildcard_child = APEX_NODE_NONE;
	}
	return APEX_OK;
}

/* A new NSEC3 chain and owner list, in memory of their own that the
 * versions derived after this one without NSEC3 changes share (zone.h). */
static int derive_nsec3_arrays(apex_derive_t *d)
{
	apex_zone_t *zone = d->zone;
	apex_index_mem_t *mem = apex_index_mem_new();

	if (mem == NULL)
		return APEX_ENOMEM;
	apex_index_mem_unref(atomic_exchange_explicit(&zone->nsec3_mem, mem, memory_order_acq_rel));
	int rc = apex_derive_nsec3(d, mem->arena);
	/* Outside NSEC3 zones only the owner list changes: the chain (if any)
	 * must not stay behind in the memory just replaced. */
	if (rc == APEX_OK && zone->dnssec != APEX_DNSSEC_NSEC3 && zone->nsec3_count > 0) {
		zone->nsec3 = apex_arena_memdup(mem->arena, zone->nsec3,
						zone->nsec3_count * sizeof(*zone->nsec3));
		if (zone->nsec3 == NULL)
			rc = APEX_ENOMEM;
	}
	return rc;
}

int apex_derive_names(apex_derive_t *d)
{
	uint8_t *gone = calloc(d->old->id_count / 8 + 1, 1);
	/* The new index in memory of its own, freed with the last version
	 * that uses it, not with the chain (zone.h) */
	apex_index_mem_t *mem = apex_index_mem_new();
	int rc = gone != NULL && mem != NULL ? APEX_OK : APEX_ENOMEM;

	if (mem != NULL)
		apex_index_mem_unref(
			atomic_exchange_explicit(&d->zone->index_mem, mem, memory_order_acq_rel));
	for (size_t i = 0; rc == APEX_OK && i < d->removed_count; i++)
		apex_derive_mark(gone, d->removed[i]);
	if (rc == APEX_OK)
		rc = merge_index(d, gone, mem->arena);
	free(gone);
	/* owners are in canonical order: a new name's new parent comes first */
	for (uint32_t r = 0; rc == APEX_OK && r < d->bd.b->owner_count; r++)
		if (d->fresh[r])
			rc = d->bd.owner_is_nsec3[r] ? fresh_nsec3_owner(d, r)
						     : fresh_structure(d, r);
	if (rc == APEX_OK)
		rc = forget_wildcards(d);
	if (rc == APEX_OK)
		rc = update_table(d, mem->arena);
	if (rc == APEX_OK && d->fresh_nsec3 + d->removed_nsec3_count > 0)
		rc = derive_nsec3_arrays(d);
	for (uint32_t r = 0; rc == APEX_OK && r < d->bd.b->owner_count; r++)
		if (d->fresh[r] && !d->bd.owner_is_nsec3[r] && d->zone->dnssec == APEX_DNSSEC_NSEC3)
			rc = apex_build_link_nsec3(d->zone, apex_derive_writable(d, d->ids[r]));
	if (rc == APEX_OK && d->zone->dnssec == APEX_DNSSEC_NSEC)
		rc = apex_derive_nsec(d);
	return rc;
}
