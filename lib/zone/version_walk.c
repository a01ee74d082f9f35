/* SPDX-License-Identifier: BSD-3-Clause */
/* Every piece of memory a version reads (version_walk.h). */
#include "zone/version_walk.h"

#include "dns/name.h"
#include "zone/node_slots.h"

static void piece(apex_zone_walk_fn fn, void *ctx, const void *start, size_t size)
{
	if (start != NULL && size > 0)
		fn(ctx, start, size);
}

/* An RRset's own memory (not the struct itself: the caller's array). */
static void rrset_memory(const apex_rrset_t *rs, apex_zone_walk_fn fn, void *ctx)
{
	piece(fn, ctx, rs->rdata, rs->rdata_size);
	piece(fn, ctx, rs->rdata_nodes,
	      (size_t)rs->count * apex_rdata_compressed_names(rs->type) * sizeof(uint32_t));
	if (rs->additional != NULL) {
		const apex_additional_t *add = rs->additional;

		piece(fn, ctx, add, sizeof(*add) + add->count * sizeof(add->items[0]));
		for (uint16_t i = 0; i < add->count; i++) {
			piece(fn, ctx, add->items[i].a, sizeof(apex_rrset_t));
			piece(fn, ctx, add->items[i].aaaa, sizeof(apex_rrset_t));
		}
	}
	if (rs->rrsig != NULL) {
		piece(fn, ctx, rs->rrsig, sizeof(*rs->rrsig));
		rrset_memory(rs->rrsig, fn, ctx);
	}
}

static void node_memory(const apex_zone_t *zone, const apex_node_t *node, apex_zone_walk_fn fn,
			void *ctx)
{
	const apex_rrset_t *sets = apex_node_rrsets(zone, node);

	/* the name, then its key (zone.h) */
	piece(fn, ctx, node->name, (size_t)node->name_size + node->key_size);
	if (sets == NULL)
		return;
	piece(fn, ctx, sets, node->rrset_count * sizeof(*sets));
	for (uint16_t i = 0; i < node->rrset_count; i++)
		rrset_memory(&sets[i], fn, ctx);
}

void apex_zone_walk_memory(const apex_zone_t *zone, apex_zone_walk_fn fn, void *ctx)
{
	size_t pages = (zone->id_count + APEX_NODE_PAGE - 1) / APEX_NODE_PAGE;

	piece(fn, ctx, zone->node_pages, pages * sizeof(*zone->node_pages));
	piece(fn, ctx, zone->rrset_pages, pages * sizeof(*zone->rrset_pages));
	for (size_t p = 0; p < pages; p++) {
		size_t first = p * APEX_NODE_PAGE, nodes = zone->id_count - first;

		if (nodes > APEX_NODE_PAGE)
			nodes = APEX_NODE_PAGE;
		piece(fn, ctx, zone->node_pages[p], nodes * sizeof(apex_node_t));
		piece(fn, ctx, zone->rrset_pages[p], nodes * sizeof(*zone->rrset_pages[p]));
		for (size_t i = 0; i < nodes; i++)
			node_memory(zone, &zone->node_pages[p][i], fn, ctx);
	}
	piece(fn, ctx, zone->order, zone->node_count * sizeof(*zone->order));
	piece(fn, ctx, zone->key_prefixes, (zone->node_count + 1) * sizeof(*zone->key_prefixes));
	if (zone->node_table_pages != NULL) {
		size_t table_pages = apex_node_table_page_count(zone->node_table_length);

		piece(fn, ctx, zone->node_table_pages,
		      table_pages * sizeof(*zone->node_table_pages));
		for (size_t p = 0; p < table_pages; p++)
			piece(fn, ctx, zone->node_table_pages[p],
			      apex_node_table_page_slots(zone->node_table_length, p) *
				      sizeof(uint32_t));
	}
	piece(fn, ctx, zone->nsec3, zone->nsec3_count * sizeof(*zone->nsec3));
	piece(fn, ctx, zone->nsec3_owners, zone->nsec3_owner_count * sizeof(*zone->nsec3_owners));
	if (zone->nsec3_start != NULL)
		piece(fn, ctx, zone->nsec3_start,
		      (((size_t)1 << zone->nsec3_bits) + 1) * sizeof(*zone->nsec3_start));
	piece(fn, ctx, zone->stray_rrsigs, zone->stray_rrsig_count * sizeof(*zone->stray_rrsigs));
	for (size_t i = 0; i < zone->stray_rrsig_count; i++) {
		piece(fn, ctx, zone->stray_rrsigs[i].sigs, sizeof(apex_rrset_t));
		if (zone->stray_rrsigs[i].sigs != NULL)
			rrset_memory(zone->stray_rrsigs[i].sigs, fn, ctx);
	}
	if (zone->origin != NULL)
		piece(fn, ctx, zone->origin, apex_name_size(zone->origin));
	piece(fn, ctx, zone->origin_key, zone->origin_key_size);
	if (zone->soa != NULL) {
		piece(fn, ctx, zone->soa, sizeof(*zone->soa));
		rrset_memory(zone->soa, fn, ctx);
	}
}
