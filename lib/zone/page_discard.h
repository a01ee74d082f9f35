/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node pages that no version reads any more, given back to the system
 * before the version that holds them is freed.
 *
 * A version derived from another (zone/derive.h) copies the node pages it
 * changes and shares the rest; it holds its base, and so the base's pages,
 * until the whole chain is let go of (a compaction, xfr/version_compact.h).
 * An IXFR that re-points delegations spread over a zone copies a page for
 * each: without this, every replaced page stayed in memory until the next
 * compaction, which the chain's growth then brought every few IXFRs.
 *
 * Once a version is replaced by the one derived from it and released
 * (apex_zone_release_index(): nobody but its derived versions reads it),
 * its pages that the successor replaced are read by no one, provided
 * every version before it in the chain is released too and none of them
 * has another derived version.  Such a page is kept for the chain's next
 * derivations (up to apex_spare_pages_max of them, and 1/64 of the whole
 * build's memory, at the chain's whole build): a derivation copies a node
 * page into a kept one before it asks its arena for memory, so an IXFR
 * writes into memory already resident
 * rather than faulting fresh pages in (on a virtual machine a fault costs
 * microseconds: 400 of them an IXFR of 100 changes here) and the chain
 * does not grow by its copies.  The memory of a kept page lies in the
 * arena of a version before the one that takes it, which the taker holds
 * through its base.  The pages beyond that number are given back with
 * madvise(MADV_DONTNEED): the allocation stays (its arena frees it with
 * the version); only whole 4 KiB pages inside a node page are given back.
 * A replaced page of RRsets pointers (zone.h: 4 KiB, on a system page of
 * its own) is kept or given back the same way: a derivation that only
 * gives nodes other RRsets copies those and not their node pages.  So is
 * a replaced page of the hash table (zone/node_slots.h: 4 KiB too, kept
 * among the pages of RRsets pointers), which a derivation copies where
 * its new and removed names reach it.
 * What was given back is counted at the chain's whole build, and the
 * rules that bound a chain's memory count it out (apex_zone_chain_memory()).
 *
 * The same conditions free the whole build's own name index (its key
 * prefixes) and NSEC3 arrays once the successor holds copies of its own,
 * which a derivation makes when names (or NSEC3 owners) come or go: no
 * version of the chain reads the whole build's again.  (The pages of its
 * hash table are kept or given back one by one, as node pages are, as
 * derivations replace them.)  They are
 * given back once, counted out of the zone's memory (apex_zone_memory())
 * but not of its chain's, whose copies replace them.
 */
#ifndef APEX_ZONE_PAGE_DISCARD_H
#define APEX_ZONE_PAGE_DISCARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "zone/zone.h"

/* Node pages a chain keeps for its next derivations (default 256, 6 MiB;
 * fewer for a zone under 384 MiB: 1/64 of its memory, at least one page);
 * tests set 0 to see every page given back.  Set before versions are
 * derived, not while. */
extern _Atomic size_t apex_spare_pages_max;

/*
 * Keep, or give back, old's node pages that successor (derived from old)
 * replaced, and the whole build's arrays successor no longer shares, if
 * the conditions above hold; old must be released.  Returns the bytes
 * given back (0 when the conditions do not hold, or when every page was
 * kept and no array is left to give back).
 */
size_t apex_zone_discard_replaced(apex_zone_t *old, const apex_zone_t *successor);

/* A node page of APEX_NODE_PAGE nodes (contents undefined) that zone's
 * chain kept, taken for a version derived from zone; NULL if none is
 * kept.  The taker holds zone, and so the page's memory. */
struct apex_node *apex_zone_take_spare_page(const apex_zone_t *zone);

/* The bytes of the pages zone's chain keeps (resident, and counted in its
 * chain's memory): the compaction rule leaves them out, as the next
 * derivation writes into them instead of growing the chain. */
size_t apex_zone_spare_memory(const apex_zone_t *zone);

/* A page taken from zone's chain but not used (the derivation failed)
 * kept again, or left to its arena when the chain keeps enough. */
void apex_zone_return_spare_page(const apex_zone_t *zone, struct apex_node *page);

/* The same two of a small page, 4 KiB (APEX_RRSETS_PAGE_SIZE): a page of
 * RRsets pointers (zone.h's rrset_pages) or of a hash table's slots
 * (zone/node_slots.h), both kinds in one list, kept as node pages are,
 * and as many; and how many the chain keeps. */
void *apex_zone_take_spare_small(const apex_zone_t *zone);
void apex_zone_return_spare_small(const apex_zone_t *zone, void *page);
size_t apex_zone_spare_small_count(const apex_zone_t *zone);

/* Nobody reads what zone's one derived version replaced: zone and every
 * version before it are released, and each has that one derived version
 * only. */
bool apex_zone_chain_is_private(const apex_zone_t *zone);

/* The memory zone's chain holds beyond its whole build (zone->chain_memory)
 * less what the chain gave back. */
size_t apex_zone_chain_memory(const apex_zone_t *zone);

/* The memory zone holds with its chain (zone->memory) less what the chain
 * gave back. */
size_t apex_zone_memory(const apex_zone_t *zone);

#endif
