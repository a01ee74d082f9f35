/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building the exact-match hash table of a zone's name index
 * (zone->node_table; its slots: zone/node_slots.h).
 */
#ifndef APEX_ZONE_NODE_TABLE_H
#define APEX_ZONE_NODE_TABLE_H

#include "zone/node_slots.h"
#include "zone/zone.h"

/*
 * Fill zone->node_table from the name index (apex_zone_id_at()), whose nodes'
 * hash fields must be set, for ids below zone->id_count.
 * The table lives in the zone's arena.  Returns 0 or APEX_ENOMEM.
 */
int apex_node_table_build(apex_zone_t *zone);

/* The same, the table in arena, with room for spare more nodes and ids
 * (a derived version's: the versions derived after it insert their new
 * names into a copy instead of building the table again). */
int apex_node_table_build_in(apex_zone_t *zone, apex_arena_t *arena, size_t spare);

#endif
