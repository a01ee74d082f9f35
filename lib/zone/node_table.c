/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "util/arena.h"
#include "util/error.h"
#include "zone/node_table.h"

int apex_node_table_build(apex_zone_t *zone)
{
	return apex_node_table_build_in(zone, zone->arena, 0);
}

int apex_node_table_build_in(apex_zone_t *zone, apex_arena_t *arena, size_t spare)
{
	uint32_t mask = apex_node_table_mask(zone->id_count + spare);
	size_t size = apex_node_table_size(zone->node_count + spare);

	/* A run that reaches past the tail is all but impossible at most
	 * half full; were it to happen, a table with a longer tail. */
	for (size_t tail = APEX_NODE_TABLE_TAIL;; tail *= 4) {
		if (mask == 0 || size + tail > UINT32_MAX)
			return APEX_ENOMEM;
		uint32_t length = (uint32_t)(size + tail);
		size_t page_count = apex_node_table_page_count(length);
		/* a table of more than a page on system pages of its own, so
		 * that a page a derived version replaces can be given back */
		uint32_t *slots =
			apex_arena_alloc_aligned(arena, length * sizeof(*slots),
						 page_count > 1 ? APEX_NODE_TABLE_PAGE_SIZE : 64);
		const uint32_t **pages = apex_arena_alloc(arena, page_count * sizeof(*pages));
		if (slots == NULL || pages == NULL)
			return APEX_ENOMEM;
		memset(slots, 0, length * sizeof(*slots));
		for (size_t p = 0; p < page_count; p++)
			pages[p] = slots + (p << APEX_NODE_TABLE_PAGE_BITS);
		size_t i = 0;
		while (i < zone->node_count &&
		       apex_node_table_insert(slots, (uint32_t)size, (uint32_t)(size + tail), mask,
					      apex_zone_node_at(zone, i)->hash,
					      apex_zone_id_at(zone, i)) == 0)
			i++;
		if (i == zone->node_count) {
			zone->node_table_pages = pages;
			zone->node_table_size = (uint32_t)size;
			zone->node_table_length = (uint32_t)(size + tail);
			zone->node_table_mask = mask;
			return APEX_OK;
		}
	}
}
