/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A served version built whole again from its own records: the compact
 * form of a version at the end of a chain of derived ones (zone/derive.h),
 * which lets go of the records and index memory the chain still holds.
 *
 * The rule that bounds a derived version's extra memory: once the memory
 * its chain holds beyond a whole build (zone->chain_memory, less the
 * replaced node pages given back and those kept for the next copies,
 * which are bounded apart at 1/64: zone/page_discard.h) passes
 * 1/APEX_COMPACT_SHARE of the version's memory (but at least
 * APEX_COMPACT_FLOOR bytes), or APEX_COMPACT_DEPTH versions were derived
 * in a row, a secondary builds the compact version after publishing the
 * derived one (off the path of the IXFR that made it) and serves it in its
 * place.  The harder bound of zone/derive.h (a quarter, 64 versions),
 * past which an IXFR itself is built whole, is then never reached.
 */
#ifndef APEX_XFR_VERSION_COMPACT_H
#define APEX_XFR_VERSION_COMPACT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/give_way.h"
#include "zone/zone.h"

#define APEX_COMPACT_SHARE 32
#define APEX_COMPACT_FLOOR ((size_t)1 << 20)
#define APEX_COMPACT_DEPTH 32

/* Whether zone should be replaced by its compact form (the rule above). */
bool apex_version_wants_compact(const apex_zone_t *zone);

/*
 * The version built whole from zone's records: *out (one reference, the
 * caller's) with the same serial, records and load time, not yet precomputed
 * (query/precompute.h).  source names it in messages.  APEX_ENOMEM, or
 * the build's error with the reason in err.
 */
int apex_version_compact(const apex_zone_t *zone, const char *source, apex_zone_t **out, char *err,
			 size_t err_size);

/*
 * The same, asking give_way(ctx) before the first record, at every
 * APEX_VERSION_COMPACT_GIVE_WAY_EVERY-th record read and after each step
 * of the build (zone/build.h) whether to give way: if it says so, what
 * was built is let go of and APEX_ECANCELED returned, for the caller to
 * build it again later.  So that the compaction of a large zone (0.7 s
 * for 1M records) does not hold up the transfer a NOTIFY asks for.
 */
#define APEX_VERSION_COMPACT_GIVE_WAY_EVERY 4096
int apex_version_compact_or_give_way(const apex_zone_t *zone, const char *source,
				     apex_give_way_fn give_way, void *ctx, apex_zone_t **out,
				     char *err, size_t err_size);

#endif
