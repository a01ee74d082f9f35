/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memory of a derived version's name index (its key prefixes and
 * order: zone/derive_names.c), kept by its chain for the next derivation
 * instead of given back to the allocator.
 *
 * A version derived with names added or removed copies the name index
 * whole: 12 bytes a name, 2.5 MiB for the 1M-record nu.nsec3 zone (its
 * hash table is copied only in the pages the changes reach,
 * zone/derive_table.c).  Taken from the allocator, that is memory it gave
 * back to the system a moment before or never had, and on a virtual
 * machine the first write to each of its 4 KiB pages costs microseconds
 * (10 µs each on the test machine, whether or not it was faulted in ahead
 * with MADV_POPULATE_WRITE): 10 ms of a 100-change IXFR that otherwise
 * takes 1.  Two things keep that off the IXFR's path:
 *  - once the version is replaced and released, its index is read by no
 *    one; its block is then kept at the chain's whole build (one block,
 *    under spare_lock), and the next derivation writes its index there,
 *    into pages written an IXFR ago.  A chain therefore holds one index
 *    beyond the versions that use one until the block is dropped
 *    (apex_index_block_drop(): apexd does a few seconds after the last
 *    IXFR) or goes with the chain's whole build (a compaction);
 *  - a new block of 2 MiB or more is a mapping aligned to 2 MiB whose
 *    whole 2 MiB are transparent huge pages (util/huge_map.h): the first
 *    IXFR after the drop faults one page for each of them, and small
 *    pages for the tail only (doc/performance.md section 15).
 */
#ifndef APEX_ZONE_INDEX_BLOCK_H
#define APEX_ZONE_INDEX_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "zone/zone.h"

/*
 * A block of at least size bytes for the index of a version derived from
 * zone, into mem (which owns it from then on: apex_index_mem_unref()
 * gives it to the chain it was taken for, which keeps it when it keeps
 * none, else frees it).  The chain's kept block when it is
 * large enough and not more than twice as large; else a new one with a
 * sixteenth more room, so that the derivations after it, a few names
 * larger, still fit; a new one from apex_huge_block_alloc() (its
 * whole 2 MiB in transparent huge pages from APEX_HUGE_PAGE up), freed by
 * apex_huge_block_free() with mem->block_size.  Returns the block (its
 * contents undefined) or NULL.
 */
void *apex_index_block_take(apex_index_mem_t *mem, const apex_zone_t *zone, size_t size);

/* The bytes of the name index of count names in a block (derive_names.c):
 * their key prefixes, then their order, each from a 64-byte line. */
static inline size_t apex_index_prefix_bytes(size_t count)
{
	return ((count + 1) * sizeof(uint64_t) + 63) & ~(size_t)63;
}

static inline size_t apex_index_order_bytes(size_t count)
{
	return ((count + 1) * sizeof(uint32_t) + 63) & ~(size_t)63;
}

/*
 * The block the next derivation from zone will take, made now and
 * faulted in, when zone's chain keeps none and zone's own names came or
 * went (its index is not its base's: the next change's likely do too).
 * For a server to call while the change is still on its way (apexd: once
 * an IXFR is asked for, xfr_in.h's requested()), so that the derivation
 * finds its index's memory in place rather than faulting a fresh block
 * in: after the drop below, 2.5 MiB for nu.nsec3, about a tenth of a
 * 10,000-change derivation.  Nothing otherwise; apex_index_block_drop()
 * gives it back as it does a kept one.
 */
void apex_index_block_prepare(const apex_zone_t *zone);

/* The block zone's chain keeps, freed (nothing if none): what a server
 * gives back once no derivation is expected soon (apexd: a few seconds
 * after the last IXFR, at once after a reload). */
void apex_index_block_drop(const apex_zone_t *zone);

/* The bytes of the block zone's chain keeps (0 if none). */
size_t apex_index_block_kept(const apex_zone_t *zone);

#endif
