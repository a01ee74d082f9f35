/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The difference between two versions of one zone, as a change set in
 * IXFR order (xfr/changes.h): what a reload records in the journal so
 * that a secondary can be brought up to date with IXFR.
 *
 * Records are compared as IXFR compares them: owner name (case-
 * insensitively), type, class and RDATA. A record whose TTL changed is
 * removed and added again, so that a secondary applying the set ends with
 * the new TTL. RRSIGs are compared like any other record; the SOA is not
 * (it opens each half of the set).
 *
 * A version derived from the other (zone/derive.h) shares the RRsets of
 * the owners it did not change: those are not compared, and the set is
 * sized by a first walk and allocated once (a reload of a large change
 * compares its versions for the journal at the peak of its memory,
 * zones/reload_diff.c).
 */
#ifndef APEX_XFR_DIFF_H
#define APEX_XFR_DIFF_H

#include "xfr/changes.h"
#include "zone/zone.h"

/*
 * Append to out (initialised, empty) the change set from version from to
 * version to of the same zone: from's SOA, the records only in from, to's
 * SOA, the records only in to. Both versions are only read. Returns
 * APEX_OK, APEX_EINVAL if the versions are of different zones, or
 * APEX_ENOMEM.
 */
int apex_xfr_diff(const apex_zone_t *from, const apex_zone_t *to, apex_changes_t *out);

/*
 * apex_xfr_diff(), for a set of at most max_bytes (as apex_changes_t
 * stores it, the SOAs included): a larger one is APEX_ESPACE, and out
 * holds whatever was made before that was known (the caller frees it as
 * always).  Where to is derived from from, the size is known before
 * anything is allocated, and a set past the bound costs one walk of the
 * changed owners, stopped where it passes, and no memory (a journal
 * that would not keep the set, xfr/journal.h).
 */
int apex_xfr_diff_within(const apex_zone_t *from, const apex_zone_t *to, size_t max_bytes,
			 apex_changes_t *out);

/* The size of the set apex_xfr_diff() makes from from to to, where to is
 * derived from from (APEX_EINVAL otherwise: only then is the walk short),
 * counted without making it; past max_bytes the count stops:
 * APEX_ESPACE. */
int apex_xfr_diff_size(const apex_zone_t *from, const apex_zone_t *to, size_t max_bytes,
		       size_t *bytes);

/* The set apex_xfr_diff() makes, given in pieces to sink in order (each
 * of APEX_XFR_DIFF_PIECE bytes or a little more, the last one shorter),
 * never whole in memory: out (initialised, empty) is the buffer the
 * pieces are made in, and after the call its counts (removed, added) and
 * serials are the set's; its data, the caller's to free as always, holds
 * nothing.  A sink's error ends the walk and is returned. */
#define APEX_XFR_DIFF_PIECE (256u * 1024)
#define APEX_XFR_DIFF_RR_MAX (APEX_NAME_MAX + 10u + 65535u) /* one record, stored */
typedef int (*apex_xfr_diff_sink_t)(void *ctx, const uint8_t *data, size_t size);
int apex_xfr_diff_stream(const apex_zone_t *from, const apex_zone_t *to, apex_changes_t *out,
			 apex_xfr_diff_sink_t sink, void *ctx);

#endif
