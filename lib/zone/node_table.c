/* SPDX-License-Identifier: BSD-3-Clause */
#include "util/arena.h"
#include "util/error.h"
#include "zone/node_table.h"

int apex_node_table_build(apex_zone_t *zone)
{
	return apex_node_table_build_in(zone, zone->arena);
}

int apex_node_table_build_in(apex_zone_t *zone, apex_arena_t *arena)
{
	unsigned index_bits = apex_node_table_index_bits(zone->id_count);
	size_t size = apex_node_table_size(zone->node_count);

	if (index_bits == 0 || size > UINT32_MAX)
		return APEX_ENOMEM;
	uint32_t *slots = apex_arena_calloc(arena, size, sizeof(*slots));
	if (slots == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < zone->node_count; i++)
		apex_node_table_insert(slots, (uint32_t)size, index_bits,
				       apex_zone_node_at(zone, i)->hash, apex_zone_id_at(zone, i));
	zone->node_table = slots;
	zone->node_table_size = (uint32_t)size;
	zone->node_table_index_bits = index_bits;
	return APEX_OK;
}
