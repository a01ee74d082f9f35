/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lookups in an immutable zone version.  Read-only: no allocation, no
 * write to memory shared between threads.
 */
#include <stdlib.h>
#include <string.h>

#include "dns/rrtype.h"
#include "util/arena.h"
#include "util/huge_map.h"
#include "zone/lookup_name.h"
#include "zone/node_slots.h"
#include "zone/nsec3_bucket.h"
#include "zone/zone.h"

size_t apex_zone_rank(const apex_zone_t *zone, const uint8_t *key, size_t key_size)
{
	/* Zero padding sorts before any key byte that could follow (label
	 * bytes are never 0 in a key: see dns/name.h), so comparing the
	 * prefixes orders keys as memcmp() does; only ties need the keys. */
	uint64_t prefix = apex_key_prefix(key, key_size);
	const uint64_t *prefixes = zone->key_prefixes;
	size_t lo = 0, hi = zone->node_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		bool less;
		if (prefixes[mid] != prefix) {
			less = prefixes[mid] < prefix;
		} else {
			const apex_node_t *node = apex_zone_node_at(zone, mid);
			less = apex_key_compare(apex_node_key(node), node->key_size, key,
						key_size) < 0;
		}
		if (less)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool node_has_key(const apex_node_t *node, const uint8_t *key, size_t key_size)
{
	return node->key_size == key_size && memcmp(apex_node_key(node), key, key_size) == 0;
}

const apex_node_t *apex_zone_find(const apex_zone_t *zone, const uint8_t *key, size_t key_size)
{
	size_t i = apex_zone_rank(zone, key, key_size);
	if (i < zone->node_count && node_has_key(apex_zone_node_at(zone, i), key, key_size))
		return apex_zone_node_at(zone, i);
	return NULL;
}

/* The node with this key and name hash, by the node table; NULL if absent.
 * Inlined: as a function of its own it saved and restored six registers
 * around its call to memcmp() on every call, though two of its 3.2 calls
 * a query on the root zone find nothing, most of them at their first
 * slot, a free one. */
static inline __attribute__((always_inline)) const apex_node_t *
node_table_find(const apex_zone_t *zone, uint32_t hash, const uint8_t *key, size_t key_size)
{
	uint32_t mask = zone->node_table_mask;
	const uint32_t *const *pages = zone->node_table_pages;

	/* runs never wrap around, and end with a free slot */
	for (uint32_t i = apex_node_table_first(hash, zone->node_table_size);; i++) {
		uint32_t slot = apex_node_table_get(pages, i);
		if (slot == 0)
			return NULL;
		if (apex_node_table_tag_is(slot, hash, mask)) {
			const apex_node_t *node =
				apex_zone_node(zone, apex_node_table_id(slot, mask));
			if (node_has_key(node, key, key_size))
				return node;
		}
	}
}

const apex_node_t *apex_zone_find_hashed(const apex_zone_t *zone, uint32_t hash, const uint8_t *key,
					 size_t key_size)
{
	if (zone->node_table_pages == NULL)
		return apex_zone_find(zone, key, key_size);
	return node_table_find(zone, hash, key, key_size);
}

void apex_zone_lookup_name(const apex_zone_t *zone, const apex_lookup_name_t *name,
			   apex_lookup_t *out)
{
	out->key = name->key;
	out->key_size = name->size;
	out->node = out->previous = NULL;
	out->encloser = zone->apex;
	/* The name (ends[labels] is its size), then its ancestors below the
	 * apex, deepest first: empty non-terminals are nodes, so the closest
	 * encloser is the deepest ancestor that is one.  One loop, so that
	 * node_table_find() is inlined once. */
	int l = name->labels;
	do {
		const apex_node_t *node =
			node_table_find(zone, name->hashes[l], name->key, name->ends[l]);
		if (node != NULL) {
			if (l == name->labels)
				out->node = out->previous = node;
			out->encloser = node;
			return;
		}
	} while (--l > zone->origin_labels);
}

const apex_node_t *apex_lookup_previous(const apex_zone_t *zone, const apex_lookup_t *lk)
{
	if (lk->previous != NULL)
		return lk->previous;
	/* The apex key is a prefix of every key in the zone, so it sorts
	 * first and i > 0 for any name below the origin. */
	size_t i = apex_zone_rank(zone, lk->key, lk->key_size);
	return apex_zone_node_at(zone, i > 0 ? i - 1 : 0);
}

void apex_zone_lookup(const apex_zone_t *zone, const uint8_t *key, size_t key_size,
		      const uint16_t *label_ends, int labels, apex_lookup_t *out)
{
	out->key = key;
	out->key_size = key_size;
	size_t i = apex_zone_rank(zone, key, key_size);
	if (i < zone->node_count && node_has_key(apex_zone_node_at(zone, i), key, key_size)) {
		out->node = out->encloser = out->previous = apex_zone_node_at(zone, i);
		return;
	}
	out->node = NULL;
	/* The apex key is a prefix of every key in the zone, so it sorts
	 * first and i > 0 for any name below the origin. */
	out->previous = apex_zone_node_at(zone, i > 0 ? i - 1 : 0);
	/* Empty non-terminals are nodes, so the closest encloser is the
	 * deepest ancestor found by an exact lookup. */
	out->encloser = zone->apex;
	for (int l = labels - 1; l > zone->origin_labels; l--) {
		const apex_node_t *node = apex_zone_find(zone, key, label_ends[l]);
		if (node != NULL) {
			out->encloser = node;
			break;
		}
	}
}

const apex_stray_rrsig_t *apex_zone_stray_rrsigs(const apex_zone_t *zone, const apex_node_t *node,
						 size_t *count)
{
	size_t lo = 0, hi = zone->stray_rrsig_count, end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (zone->stray_rrsigs[mid].node < node->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < zone->stray_rrsig_count && zone->stray_rrsigs[end].node == node->id;)
		end++;
	*count = end - lo;
	return end > lo ? &zone->stray_rrsigs[lo] : NULL;
}

const apex_nsec3_t *apex_zone_nsec3_find(const apex_zone_t *zone, const uint8_t *hash,
					 size_t hash_size, bool *matched)
{
	size_t lo = 0, hi = zone->nsec3_count;
	*matched = false;
	if (zone->nsec3_count == 0)
		return NULL;
	if (zone->nsec3_start != NULL) {
		/* Entries of lower buckets sort before the hash, of higher ones after. */
		uint32_t v = apex_nsec3_bucket(hash, hash_size, zone->nsec3_bits);
		lo = zone->nsec3_start[v];
		hi = zone->nsec3_start[v + 1];
	}
	/* First entry whose hash is >= hash. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const apex_nsec3_t *n = &zone->nsec3[mid];
		if (apex_key_compare(n->hash, n->hash_size, hash, hash_size) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < zone->nsec3_count) {
		const apex_nsec3_t *n = &zone->nsec3[lo];
		if (n->hash_size == hash_size && memcmp(n->hash, hash, hash_size) == 0) {
			*matched = true;
			return n;
		}
	}
	/* Covering: the last one before, wrapping around to the last one. */
	return &zone->nsec3[lo > 0 ? lo - 1 : zone->nsec3_count - 1];
}

apex_index_mem_t *apex_index_mem_new(void)
{
	apex_index_mem_t *mem = calloc(1, sizeof(*mem));

	if (mem == NULL)
		return NULL;
	mem->arena = apex_arena_create();
	if (mem->arena == NULL) {
		free(mem);
		return NULL;
	}
	atomic_init(&mem->refcount, 1);
	return mem;
}

void apex_index_mem_ref(apex_index_mem_t *mem)
{
	atomic_fetch_add_explicit(&mem->refcount, 1, memory_order_relaxed);
}

/* mem's block, its last reference going: kept by the chain it was taken
 * for when that chain keeps none, else freed (zone/index_block.h). */
static void index_block_release(apex_index_mem_t *mem)
{
	void *block = mem->block;

	mem->block = NULL;
	apex_zone_keep_index_block(mem->keeper, block, mem->block_size);
}

void apex_zone_keep_index_block(apex_zone_t *root, void *block, size_t size)
{
	if (block != NULL && root != NULL) {
		pthread_mutex_lock(&root->spare_lock);
		if (root->spare_index == NULL) {
			root->spare_index = block;
			root->spare_index_size = size;
			block = NULL;
		}
		pthread_mutex_unlock(&root->spare_lock);
	}
	apex_huge_block_free(block, size);
}

void apex_index_mem_unref(apex_index_mem_t *mem)
{
	if (mem != NULL &&
	    atomic_fetch_sub_explicit(&mem->refcount, 1, memory_order_acq_rel) == 1) {
		index_block_release(mem);
		apex_arena_destroy(mem->arena);
		free(mem);
	}
}

/* zone.h; also the first step of freeing a version (once: the pointers
 * are taken). */
void apex_zone_release_index(apex_zone_t *zone)
{
	atomic_store_explicit(&zone->released, true, memory_order_release);
	apex_index_mem_unref(
		atomic_exchange_explicit(&zone->index_mem, NULL, memory_order_acq_rel));
	apex_index_mem_unref(
		atomic_exchange_explicit(&zone->nsec3_mem, NULL, memory_order_acq_rel));
}

void apex_zone_unref(apex_zone_t *zone)
{
	/* A chain of derived versions is released in a loop, not by recursion;
	 * nothing of a version is touched once its count is dropped, unless
	 * this was the last reference. */
	while (zone != NULL &&
	       atomic_fetch_sub_explicit(&zone->refcount, 1, memory_order_acq_rel) == 1) {
		apex_zone_release_index(zone);
		apex_zone_t *base = zone->base;
		if (base != NULL) /* still ours: this version's reference holds it */
			atomic_fetch_sub_explicit(&base->base_refs, 1, memory_order_relaxed);
		pthread_mutex_destroy(&zone->spare_lock);
		/* pointers into its chain's arenas */
		free(zone->spare_nodes.pages);
		free(zone->spare_small.pages);
		apex_huge_block_free(zone->spare_index, zone->spare_index_size);
		/* The zone structure itself lives in its arena. */
		apex_arena_destroy(zone->arena);
		zone = base;
	}
}
