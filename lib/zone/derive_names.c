/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Names added and removed by a derivation (derive_state.h): the new names
 * get ids after old's, the removed ones leave theirs unused; the name
 * index is copied with both, the hash table updated in the pages they
 * reach (derive_table.c; built again when it would be more than half
 * full); the new names get their structure from
 * their parents.  The empty non-terminals a new name needs are made
 * (their ids after the new names'), those a removed one leaves with
 * nothing below are removed.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "util/populate.h"
#include "zone/build.h"
#include "zone/derive.h"
#include "zone/derive_state.h"
#include "zone/index_block.h"
#include "zone/node_table.h"

void apex_derive_init_fresh(apex_derive_t *d, uint32_t r, apex_node_t *node)
{
	const apex_build_owner_t *o = &d->bd.b->owners[r];

	memset(node, 0, sizeof(*node));
	node->name = o->name;
	node->key_size = o->key_size;
	node->name_size = o->name_size;
	assert(apex_node_key(node) == o->key);
	node->labels = o->labels;
	node->id = d->ids[r];
	node->parent = node->cut = node->wildcard_child = APEX_NODE_NONE;
	node->nsec = node->nsec3 = node->wildcard_nsec3 = APEX_NODE_NONE;
}

/* The rank of the builder's owner before rank r whose key is key (an
 * ancestor sorts before its descendants), or UINT32_MAX. */
static uint32_t earlier_owner(const apex_zone_builder_t *b, uint32_t r, const uint8_t *key,
			      size_t key_size)
{
	uint32_t lo = 0, hi = r;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = apex_key_compare(b->owners[mid].key, b->owners[mid].key_size, key,
					 key_size);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
}

/* The name of key is an empty non-terminal made already. */
static bool made_ent(const apex_derive_t *d, const uint8_t *key, size_t key_size)
{
	size_t lo = 0, hi = d->ent_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const apex_derive_ent_t *e = &d->ents[mid];
		int c = apex_key_compare(e->key, e->key_size, key, key_size);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Owner rank r's ancestors that no version has yet, appended to d->ents
 * from the highest down (canonical order: every earlier new name sorts
 * before them, or below one of them, whose ancestors came first). */
static int ents_of(apex_derive_t *d, uint32_t r)
{
	const apex_build_owner_t *o = &d->bd.b->owners[r];
	uint16_t ends[APEX_LABELS_MAX + 1];
	uint8_t key[APEX_KEY_MAX];
	unsigned labels = o->labels, top = labels;

	apex_name_key(o->name, key, ends);
	while (top - 1 > d->old->origin_labels) {
		size_t size = ends[top - 1];
		const uint8_t *up = o->name;
		for (unsigned skip = labels - (top - 1); skip > 0; skip--)
			up += 1 + up[0];
		uint32_t rank = earlier_owner(d->bd.b, r, o->key, size);
		const apex_node_t *had =
			apex_zone_find_hashed(d->old, apex_name_hash(up), o->key, size);
		/* a name of old's that is changed but no owner now is removed:
		 * it becomes an empty non-terminal (with a new id) */
		bool removed = had != NULL && rank == UINT32_MAX &&
			       apex_derive_marked(d->changed, had->id);
		if ((had != NULL && !removed) ||
		    (rank != UINT32_MAX && !d->bd.owner_is_nsec3[rank]) ||
		    made_ent(d, o->key, size))
			break;
		/* an owner of NSEC3 records only, outside the index, is no
		 * parent a derivation gives: the version is built whole */
		if (rank != UINT32_MAX ||
		    (had == NULL && apex_zone_find_owner(d->old, up, NULL) != NULL))
			return APEX_ENOTSUP;
		top--;
	}
	if (top == labels)
		return APEX_OK;
	apex_derive_ent_t *grown = realloc(d->ents, (d->ent_count + labels - top) * sizeof(*grown));
	if (grown == NULL)
		return APEX_ENOMEM;
	d->ents = grown;
	for (unsigned l = top; l < labels; l++) {
		apex_derive_ent_t *e = &d->ents[d->ent_count++];
		const uint8_t *name = o->name;
		for (unsigned skip = labels - l; skip > 0; skip--)
			name += 1 + name[0];
		e->name = name;
		e->key = o->key;
		e->key_size = ends[l];
		e->labels = (uint8_t)l;
		e->before = r;
		e->id = APEX_NODE_NONE;
	}
	return APEX_OK;
}

int apex_derive_find_ents(apex_derive_t *d)
{
	int rc = APEX_OK;

	for (uint32_t r = 0; r < d->bd.b->owner_count && rc == APEX_OK; r++)
		if (d->fresh[r] && !d->bd.owner_is_nsec3[r])
			rc = ents_of(d, r);
	return rc;
}

/* The nodes of the empty non-terminals made: name, key and id (their
 * structure comes with the new names'). */
static int init_ents(apex_derive_t *d)
{
	for (size_t i = 0; i < d->ent_count; i++) {
		const apex_derive_ent_t *e = &d->ents[i];
		apex_node_t *node = apex_derive_writable(d, e->id);
		if (node == NULL)
			return APEX_ENOMEM;
		memset(node, 0, sizeof(*node));
		node->name = e->name;
		node->name_size = (uint8_t)apex_name_size(e->name);
		node->key_size = e->key_size;
		assert(apex_node_key(node) == e->key);
		node->labels = e->labels;
		node->id = e->id;
		node->parent = node->cut = node->wildcard_child = APEX_NODE_NONE;
		node->nsec = node->nsec3 = node->wildcard_nsec3 = APEX_NODE_NONE;
	}
	return APEX_OK;
}

/* a's key starts with key (a is at or below that name). */
static bool at_or_below(const apex_node_t *a, const uint8_t *key, size_t key_size)
{
	return a->key_size >= key_size && memcmp(apex_node_key(a), key, key_size) == 0;
}

/* A name of the new version lies below the empty non-terminal ent: a name
 * of old's not removed, or a new one. */
static bool keeps_child(const apex_derive_t *d, const apex_node_t *ent, const uint8_t *gone)
{
	const apex_zone_t *old = d->old;

	for (size_t i = apex_zone_rank(old, apex_node_key(ent), ent->key_size) + 1;
	     i < old->node_count; i++) {
		const apex_node_t *n = apex_zone_node_at(old, i);
		if (!at_or_below(n, apex_node_key(ent), ent->key_size))
			break;
		if (!apex_derive_marked(gone, n->id))
			return true;
	}
	/* a new owner of NSEC3 records only is no name of the index, and
	 * keeps no empty non-terminal above it (ents_of() makes none) */
	for (size_t r = 0; r < d->bd.b->owner_count; r++) {
		const apex_build_owner_t *o = &d->bd.b->owners[r];
		if (d->fresh[r] && !d->bd.owner_is_nsec3[r] && o->key_size > ent->key_size &&
		    memcmp(o->key, apex_node_key(ent), ent->key_size) == 0)
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
		ranks[i] = apex_zone_rank(old, apex_node_key(node), node->key_size);
		for (size_t j = ranks[i] + 1; j < old->node_count; j++) {
			const apex_node_t *below = apex_zone_node_at(old, j);
			if (!at_or_below(below, apex_node_key(node), node->key_size))
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
	const apex_node_t *node = apex_derive_fresh_node(d, *r);
	return apex_zone_rank(d->old, apex_node_key(node), node->key_size);
}

/* The names in the new version's index. */
static size_t index_count(const apex_derive_t *d)
{
	return d->old->node_count - d->removed_count + d->fresh_count - d->fresh_nsec3 +
	       d->ent_count;
}

/* The new version's hash table is old's with the changes, rather than
 * built again: it stays at most half full (count names) and every
 * id fits its slots. */
static bool table_kept(const apex_derive_t *d, size_t count)
{
	return 2 * count <= d->old->node_table_size && d->zone->id_count <= d->old->node_table_mask;
}

/* The arrays of the new version's name index, in one block (64-byte
 * aligned each) that its chain keeps for the next derivation once no
 * version reads them (zone/index_block.h).  (The hash table is not among
 * them: its pages are copied as the changes reach them, derive_table.c.) */
typedef struct index_arrays {
	uint64_t *prefixes;
	uint32_t *order;
} index_arrays_t;

static int take_index_arrays(apex_derive_t *d, apex_index_mem_t *mem, size_t count,
			     index_arrays_t *a)
{
	size_t prefix_bytes = apex_index_prefix_bytes(count);
	size_t order_bytes = apex_index_order_bytes(count);
	uint8_t *block = apex_index_block_take(mem, d->old, prefix_bytes + order_bytes);

	if (block == NULL)
		return APEX_ENOMEM;
	/* a block taken fresh from the system is faulted in at once; a kept
	 * one is resident and left alone (util/populate.h) */
	apex_populate_for_write(block, prefix_bytes + order_bytes);
	a->prefixes = (uint64_t *)block;
	a->order = (uint32_t *)(block + prefix_bytes);
	return APEX_OK;
}

/* The name index of the new version, into order and prefixes (count + 1
 * each): old's in runs copied whole, without the removed names, the new
 * ones put in where they sort. */
static int merge_index(apex_derive_t *d, const uint8_t *gone, uint32_t *order, uint64_t *prefixes)
{
	const apex_zone_t *old = d->old;
	size_t count = index_count(d);
	size_t k = 0, src = 0;
	size_t *ranks = malloc((d->removed_count + 1) * sizeof(*ranks));
	int rc = ranks != NULL ? removed_ranks(d, gone, ranks) : APEX_ENOMEM;
	uint32_t r = 0;
	size_t removed = 0, fresh = next_fresh(d, &r), e = 0;

	while (rc == APEX_OK && (src < old->node_count || fresh <= old->node_count)) {
		size_t stop = removed < d->removed_count ? ranks[removed] : old->node_count;
		stop = fresh < stop ? fresh : stop;
		if (k + (stop - src) > count) {
			rc = APEX_ENOTSUP; /* cannot happen: the counts agree */
			break;
		}
		if (old->order != NULL)
			memcpy(order + k, old->order + src, (stop - src) * sizeof(*order));
		else
			for (size_t i = 0; i < stop - src; i++)
				order[k + i] = (uint32_t)(src + i);
		memcpy(prefixes + k, old->key_prefixes + src, (stop - src) * sizeof(*prefixes));
		k += stop - src;
		src = stop;
		if (fresh == src) { /* a new name sorts before old's at src */
			const apex_node_t *o = apex_derive_fresh_node(d, r);
			/* the empty non-terminals above it, just before it (old
			 * has no name below them) */
			for (; e < d->ent_count && d->ents[e].before == r && k < count; e++) {
				order[k] = d->ents[e].id;
				prefixes[k++] =
					apex_key_prefix(d->ents[e].key, d->ents[e].key_size);
			}
			if (k == count) {
				rc = APEX_ENOTSUP; /* cannot happen: the counts agree */
				break;
			}
			order[k] = d->ids[r];
			prefixes[k++] = apex_key_prefix(apex_node_key(o), o->key_size);
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

/* A new name's (or made empty non-terminal's) parent, flags, cut and
 * hash, from its parent in the new version; the parent's wildcard child. */
static int fresh_structure(apex_derive_t *d, uint32_t id, bool empty)
{
	apex_node_t *node = apex_derive_writable(d, id);
	uint16_t ends[APEX_LABELS_MAX + 1];
	uint8_t key[APEX_KEY_MAX];

	if (node == NULL)
		return APEX_ENOMEM;
	apex_name_key(node->name, key, ends);
	const apex_node_t *parent = apex_zone_find(d->zone, key, ends[node->labels - 1]);
	if (parent == NULL)
		return APEX_ENOTSUP; /* cannot happen: its ancestors are names or made */
	uint16_t flags = apex_name_is_wildcard(node->name) ? APEX_NODE_WILDCARD : 0;
	if (empty)
		flags |= APEX_NODE_EMPTY;
	if (apex_node_rrset(d->zone, node, APEX_TYPE_CNAME) != NULL)
		flags |= APEX_NODE_CNAME;
	if (apex_node_rrset(d->zone, node, APEX_TYPE_DNAME) != NULL)
		flags |= APEX_NODE_DNAME;
	if (apex_node_rrset(d->zone, node, APEX_TYPE_NS) != NULL)
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

/* The hash table: old's with the removed names out and the new ones in,
 * the pages those reach copied (derive_table.c); built again, with room to
 * spare (node_table.h), when it would be more than half full or an id
 * would not fit its slots, or a run its tail.  The table built again lies
 * in the version's arena, as copied pages do: the versions derived after
 * it share its pages. */
static int update_table(apex_derive_t *d)
{
	apex_zone_t *zone = d->zone;
	int rc = table_kept(d, zone->node_count) ? apex_derive_table(d) : APEX_ENOTSUP;

	if (rc == APEX_ENOTSUP)
		rc = apex_node_table_build_in(zone, zone->arena,
					      APEX_NODE_TABLE_SPARE(zone->node_count));
	return rc;
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

/* The NSEC3 links of the new names and empty non-terminals, in batches
 * whose lookups' misses overlap. */
static int link_nsec3(apex_derive_t *d)
{
	apex_node_t *batch[APEX_LINK_NSEC3_GATHER];
	size_t n = 0, owners = d->bd.b->owner_count;
	int rc = APEX_OK;

	for (size_t i = 0; rc == APEX_OK && i < owners + d->ent_count; i++) {
		uint32_t id;
		if (i < owners) {
			if (!d->fresh[i] || d->bd.owner_is_nsec3[i])
				continue;
			id = d->ids[i];
		} else {
			id = d->ents[i - owners].id;
		}
		batch[n] = apex_derive_writable(d, id);
		if (batch[n] == NULL)
			return APEX_ENOMEM;
		if (++n == APEX_LINK_NSEC3_GATHER) {
			rc = apex_build_link_nsec3_batch(d->zone, batch, n);
			n = 0;
		}
	}
	return rc == APEX_OK && n > 0 ? apex_build_link_nsec3_batch(d->zone, batch, n) : rc;
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
	index_arrays_t a = { 0 };

	for (size_t i = 0; rc == APEX_OK && i < d->removed_count; i++)
		apex_derive_mark(gone, d->removed[i]);
	if (rc == APEX_OK)
		rc = take_index_arrays(d, mem, index_count(d), &a);
	if (rc == APEX_OK)
		rc = merge_index(d, gone, a.order, a.prefixes);
	free(gone);
	rc = apex_derive_step_done(d, APEX_DERIVE_INDEX, rc);
	/* owners are in canonical order, and the empty non-terminals made
	 * come before the first owner below them: a new parent comes first */
	size_t e = 0;
	if (rc == APEX_OK)
		rc = init_ents(d);
	for (uint32_t r = 0; rc == APEX_OK && r < d->bd.b->owner_count; r++) {
		for (; rc == APEX_OK && e < d->ent_count && d->ents[e].before == r; e++)
			rc = fresh_structure(d, d->ents[e].id, true);
		if (rc == APEX_OK && d->fresh[r])
			rc = d->bd.owner_is_nsec3[r] ? fresh_nsec3_owner(d, r)
						     : fresh_structure(d, d->ids[r], false);
	}
	if (rc == APEX_OK)
		rc = forget_wildcards(d);
	if (rc == APEX_OK)
		rc = update_table(d);
	if (rc == APEX_OK && d->fresh_nsec3 + d->removed_nsec3_count > 0)
		rc = derive_nsec3_arrays(d);
	if (rc == APEX_OK && d->zone->dnssec == APEX_DNSSEC_NSEC3)
		rc = link_nsec3(d);
	if (rc == APEX_OK && d->zone->dnssec == APEX_DNSSEC_NSEC)
		rc = apex_derive_nsec(d);
	return apex_derive_step_done(d, APEX_DERIVE_NAMES, rc);
}
