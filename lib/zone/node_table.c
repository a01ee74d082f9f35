/* SPDX-License-Identifier: BSD-3-Clause */
#include "util/arena.h"
#include "util/error.h"
#include "util/hash_slots.h"
#include "zone/node_table.h"

int apex_node_table_build(apex_zone_t *zone)
{
	return apex_node_table_build_in(zone, zone->arena);
}

int apex_node_table_build_in(apex_zone_t *zone, apex_arena_t *arena)
{
	if (zone->node_count >= UINT32_MAX)
		return APEX_ENOMEM;
	unsigned bits = apex_hash_slots_bits(zone->node_count);
	uint64_t *slots = apex_arena_calloc(arena, (size_t)1 << bits, sizeof(*slots));
	if (slots == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < zone->node_count; i++)
		apex_hash_slots_insert(slots, bits, apex_zone_node_at(zone, i)->hash,
				       zone->order[i]);
	zone->node_table = slots;
	zone->node_table_bits = bits;
	return APEX_OK;
}
