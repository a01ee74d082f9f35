/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building the exact-match hash table of a zone's name index
 * (zone->node_table_pages; its slots: zone/node_slots.h).
 */
#ifndef APEX_ZONE_NODE_TABLE_H
#define APEX_ZONE_NODE_TABLE_H

#include "zone/node_slots.h"
#include "zone/zone.h"

/* The room such a table has beyond its version's nodes: 1/8 more (the
 * table is 8 bytes a node: 0.2 MB at the 206,000 names of the 1M-record
 * nu.nsec3, 0.1 MB more than 1/16).  Without it, each IXFR that adds
 * names to a version whose table is full builds the table again from
 * the whole index (8.4 million instructions, and a table of fresh memory,
 * for nu.nsec3).  A chain of derived versions is built whole again after
 * three IXFRs of 10,000 changes, half of them new names: with 1/16 the
 * third of them built the table again, with 1/8 none does. */
#define APEX_NODE_TABLE_SPARE(nodes) ((nodes) / 8 + 64)

/*
 * Fill zone->node_table_pages from the name index (apex_zone_id_at()), whose nodes'
 * hash fields must be set, for ids below zone->id_count.
 * The table lives in the zone's arena.  Returns 0 or APEX_ENOMEM.
 */
int apex_node_table_build(apex_zone_t *zone);

/* The same, the table in arena, with room for spare more nodes and ids
 * (a version IXFRs are derived from: the versions derived after it
 * insert their new names into a copy instead of building the table
 * again). */
int apex_node_table_build_in(apex_zone_t *zone, apex_arena_t *arena, size_t spare);

#endif
