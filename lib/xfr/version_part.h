/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One part of a served version built again as it is: the version derived
 * (zone/derive.h) from zone with the records of one part of its owners
 * copied into the new version's memory, the rest shared.
 *
 * This is how a chain of derived versions is made compact without a
 * whole build beside the version served (xfr/version_compact.h): the
 * owners are taken part by part, in canonical order, each part published
 * in turn; once a part's base is released, the memory of the chain that
 * no version reads any more (the records the parts replaced, with those
 * the chain had replaced before among them) is given back
 * (zone/chain_sweep.h).  The peak is the version served and one part,
 * where a whole build holds two versions at once.
 */
#ifndef APEX_XFR_VERSION_PART_H
#define APEX_XFR_VERSION_PART_H

#include "util/give_way.h"
#include "zone/zone.h"

/*
 * The version derived from zone with part `part` (< parts) of its owners
 * built again: the names of ranks [part * n / parts, (part + 1) * n /
 * parts) of its name index (n names) and the same share of its owners of
 * NSEC3 records only, as they are; the apex is always among them.  *out
 * (one reference, the caller's) has zone's serial, records and load time,
 * not yet precomputed (query/precompute.h).  source names it in messages.
 * APEX_ENOMEM, APEX_ENOTSUP (the derivation does not take it: zone/derive.h),
 * or the build's error with the reason in err.
 */
int apex_version_rebuild_part(apex_zone_t *zone, unsigned part, unsigned parts, const char *source,
			      apex_zone_t **out, char *err, size_t err_size);

/*
 * The same, asking give_way(ctx) (NULL: never) before the first record,
 * at every APEX_VERSION_PART_GIVE_WAY_EVERY-th record read and in the
 * derivation (zone/derive.h: after the builder's sort, the owners and
 * their links, and within its loops over the owners and the names)
 * whether to give way: if it says so, what was built is let go of and
 * APEX_ECANCELED returned with where it stopped in err.  So that a part
 * of a large zone (0.4 s at 10M records in one process) does not hold up
 * the transfer a NOTIFY asks for.
 */
#define APEX_VERSION_PART_GIVE_WAY_EVERY 4096
int apex_version_rebuild_part_or_give_way(apex_zone_t *zone, unsigned part, unsigned parts,
					  const char *source, apex_give_way_fn give_way, void *ctx,
					  apex_zone_t **out, char *err, size_t err_size);

/*
 * After the parts of zone (the last of them; parts of them, one derived
 * from the other in order): the version derived from zone with the owners
 * built again whose RRsets are still where a part copied them without
 * building them (an NS RRset whose glue another part built again: its
 * additional data points at the new records).  Those copies are the one
 * thing of the parts' memory that stays interleaved with records no
 * version reads; once they are built again, what the parts left behind
 * is given back whole.  Its chain counts as compact again
 * (derived_depth 0).  APEX_EINVAL when zone is not the last of parts.
 */
int apex_version_rebuild_relinked(apex_zone_t *zone, unsigned parts, const char *source,
				  apex_zone_t **out, char *err, size_t err_size);

/*
 * The bytes of RDATA zone reads from its chain's whole build
 * (apex_zone_chain_root()), which the parts borrow rather than copy:
 * what is left of the RDATA the whole build read (its rdata_bytes) is
 * RDATA no version reads any more, given back only where a whole page of
 * it is.  0 when memory for the count is lacking.
 */
size_t apex_version_rdata_borrowed(const apex_zone_t *zone);

#endif
