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

#endif
