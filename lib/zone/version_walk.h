/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every piece of memory a version reads, listed: what must stay when the
 * memory of the versions before it is given back (zone/chain_sweep.h).
 */
#ifndef APEX_ZONE_VERSION_WALK_H
#define APEX_ZONE_VERSION_WALK_H

#include <stddef.h>

#include "zone/zone.h"

/* Told of one piece: size bytes from start (size > 0). */
typedef void (*apex_zone_walk_fn)(void *ctx, const void *start, size_t size);

/*
 * fn for each piece of memory a query, a transfer or a derivation reads
 * of zone: its node pages and their table, every node's name, RRsets,
 * RDATA, RDATA names' nodes, additional data and RRSIGs (those of removed
 * names too, still in the pages), its name index, hash table and NSEC3
 * arrays, its stray RRSIGs, origin and SOA.  Pieces may overlap or repeat.
 * Not listed: the precomputed answers (query/precompute.h), which lie in
 * zone's own arena and point only at names and RDATA listed here.
 */
void apex_zone_walk_memory(const apex_zone_t *zone, apex_zone_walk_fn fn, void *ctx);

#endif
