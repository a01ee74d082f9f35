/* SPDX-License-Identifier: BSD-3-Clause */
#include "zone/lookup_ahead.h"

#include "zone/node_slots.h"

void apex_lookup_ahead_slots(apex_lookup_ahead_t *a, const apex_zone_t *zone,
			     const apex_lookup_name_t *name)
{
	a->zone = NULL;
	a->proofs = false;
	if (zone == NULL || !apex_lookup_ahead_worth(zone))
		return;
	a->zone = zone;
	a->count = 0;
	for (int l = name->labels; l > zone->origin_labels && a->count < APEX_LOOKUP_AHEAD_NAMES;
	     l--) {
		uint32_t hash = name->hashes[l];
		a->hashes[a->count++] = hash;
		__builtin_prefetch(
			apex_node_table_at(zone->node_table_pages,
					   apex_node_table_first(hash, zone->node_table_size)));
	}
}

/* The id the first slot of hash's run with its tag maps to, or
 * APEX_NODE_NONE: read from zone's table (its slots asked for before). */
static inline uint32_t tagged_id(const apex_zone_t *zone, uint32_t hash)
{
	uint32_t mask = zone->node_table_mask;

	/* runs never wrap around, and end with a free slot */
	for (uint32_t k = apex_node_table_first(hash, zone->node_table_size);; k++) {
		uint32_t slot = apex_node_table_get(zone->node_table_pages, k);
		if (slot == 0)
			return APEX_NODE_NONE;
		if (apex_node_table_tag_is(slot, hash, mask))
			return apex_node_table_id(slot, mask);
	}
}

/* Node id's node, and its RRsets pointer, which the next step reads. */
static inline void ahead_node(const apex_zone_t *zone, uint32_t id)
{
	__builtin_prefetch(apex_zone_node_of(zone, id));
	__builtin_prefetch(apex_zone_rrsets_slot(zone, id));
}

void apex_lookup_ahead_nodes(apex_lookup_ahead_t *a)
{
	const apex_zone_t *zone = a->zone;
	if (zone == NULL)
		return;
	for (unsigned i = 0; i < a->count; i++) {
		a->ids[i] = tagged_id(zone, a->hashes[i]);
		if (a->ids[i] != APEX_NODE_NONE)
			ahead_node(zone, a->ids[i]);
	}
}

void apex_lookup_ahead_data(const apex_lookup_ahead_t *a)
{
	if (a->zone == NULL)
		return;
	for (unsigned i = 0; i < a->count; i++) {
		if (a->ids[i] == APEX_NODE_NONE)
			continue;
		const apex_node_t *node = apex_zone_node_of(a->zone, a->ids[i]);
		__builtin_prefetch(node->name);
		__builtin_prefetch(apex_node_rrsets(a->zone, node));
		if (a->proofs && node->nsec3 != APEX_NODE_NONE)
			__builtin_prefetch(apex_zone_node_of(a->zone, node->nsec3));
	}
}

/* The proofs' part of step 4 for node: its other RRsets' RDATA and
 * RRSIGs (a cut's DS), and its NSEC3 owner's RRsets. */
static void ahead_proofs(const apex_zone_t *zone, const apex_node_t *node)
{
	unsigned n = node->rrset_count < 4 ? node->rrset_count : 4;

	for (unsigned k = 0; k < n; k++) {
		if (k > 0)
			__builtin_prefetch(apex_node_rrsets(zone, node)[k].rdata);
		__builtin_prefetch(apex_node_rrsets(zone, node)[k].rrsig);
	}
	if (node->nsec3 != APEX_NODE_NONE)
		__builtin_prefetch(apex_node_rrsets(zone, apex_zone_node_of(zone, node->nsec3)));
}

void apex_lookup_ahead_rdata(const apex_lookup_ahead_t *a)
{
	if (a->zone == NULL)
		return;
	for (unsigned i = 0; i < a->count; i++) {
		if (a->ids[i] == APEX_NODE_NONE)
			continue;
		const apex_node_t *node = apex_zone_node_of(a->zone, a->ids[i]);
		if (node->rrset_count == 0)
			continue;
		__builtin_prefetch(apex_node_rrsets(a->zone, node)[0].rdata);
		__builtin_prefetch(apex_node_rrsets(a->zone, node)[0].additional);
		if (a->proofs)
			ahead_proofs(a->zone, node);
	}
}

void apex_lookup_ahead_hashed_slot(const apex_zone_t *zone, uint32_t hash)
{
	if (zone->node_table_pages != NULL)
		__builtin_prefetch(
			apex_node_table_at(zone->node_table_pages,
					   apex_node_table_first(hash, zone->node_table_size)));
}

uint32_t apex_lookup_ahead_hashed_node(const apex_zone_t *zone, uint32_t hash)
{
	if (zone->node_table_pages == NULL)
		return APEX_NODE_NONE;
	uint32_t id = tagged_id(zone, hash);
	if (id != APEX_NODE_NONE)
		ahead_node(zone, id);
	return id;
}

void apex_lookup_ahead_id_name(const apex_zone_t *zone, uint32_t id)
{
	if (id != APEX_NODE_NONE)
		__builtin_prefetch(apex_zone_node_of(zone, id)->name);
}

void apex_lookup_ahead_id_node(const apex_zone_t *zone, uint32_t id)
{
	if (id != APEX_NODE_NONE)
		ahead_node(zone, id);
}

void apex_lookup_ahead_id_rrsets(const apex_zone_t *zone, uint32_t id)
{
	/* by id, not through the node (apex_node_rrsets()): the pointer is
	 * all that is read, and the node's line need not be there yet */
	if (id != APEX_NODE_NONE)
		__builtin_prefetch(*apex_zone_rrsets_slot(zone, id));
}

void apex_lookup_ahead_id_records(const apex_zone_t *zone, uint32_t id)
{
	if (id == APEX_NODE_NONE)
		return;
	const apex_node_t *node = apex_zone_node_of(zone, id);
	const apex_rrset_t *sets = apex_node_rrsets(zone, node);
	unsigned n = node->rrset_count < 4 ? node->rrset_count : 4;

	for (unsigned k = 0; k < n; k++) {
		__builtin_prefetch(sets[k].rdata);
		if (sets[k].rrsig != NULL)
			__builtin_prefetch(sets[k].rrsig);
	}
}
