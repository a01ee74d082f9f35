/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Precomputed parts of responses, recorded once per zone version so that
 * the query path copies them instead of writing them record by record:
 * the referral to each zone cut (authority and additional sections,
 * without and with DNSSEC), the SOA of a negative answer (without and
 * with DNSSEC), the answer to a query for each type at the apex, and in
 * small NSEC zones each NSEC RRset as it follows that SOA in an NXDOMAIN
 * with DNSSEC.  apex_answer() copies a fragment when it applies and
 * writes the same bytes it would have written itself; a version without
 * fragments is answered the same, only more slowly.
 *
 * This is a step of its own after apex_zone_load()/apex_zone_build(),
 * run by whoever prepares a version for serving, before it is published
 * (a published version is never written).  It reads the version and
 * allocates the fragments in its arena.  A change that reaches only some
 * names (an incoming IXFR) recomputes only what it touches: the
 * referrals of the cuts whose NS, DS or glue changed
 * (apex_precompute_referrals()) and, when the SOA changed, the negative
 * SOA (apex_precompute_negative()).
 */
#ifndef APEX_QUERY_PRECOMPUTE_H
#define APEX_QUERY_PRECOMPUTE_H

#include <stddef.h>

#include "zone/zone.h"

/* Zones with more cuts than this get no precomputed referrals: they
 * would take more memory than the records. */
#define APEX_PRECOMPUTED_CUTS_MAX 16384
_Static_assert(APEX_PRECOMPUTED_CUTS_MAX < 65535, "zone->referral_index holds 16-bit indices");
/* Zones of at most this many node ids find a cut's referral through
 * zone->referral_index (two bytes an id) rather than a binary search. */
#define APEX_REFERRAL_INDEX_IDS_MAX 262144

/*
 * All of it: zone->negative, and zone->referrals for every highest cut
 * (if there are at most APEX_PRECOMPUTED_CUTS_MAX).  Adds the fragments'
 * bytes to zone->memory and the time taken to zone->load_seconds.
 * Returns 0 or APEX_ENOMEM (the version must then not be served).
 */
int apex_precompute(apex_zone_t *zone);

/* zone->negative[0] and [1]: the SOA of a negative answer. */
int apex_precompute_negative(apex_zone_t *zone);

/*
 * The fragments of the referrals to the cuts referrals[i].cut, for i <
 * count, into referrals[i].fragment[0] (without DO) and [1] (with DO);
 * a fragment that cannot be replayed for every name below its cut is
 * NULL.  The array is the caller's (in zone->arena to be kept).
 */
int apex_precompute_referrals(apex_zone_t *zone, apex_referral_t *referrals, size_t count);

/* zone->apex_answers: the answer to a query for the apex and its NS,
 * SOA or DNSKEY RRset, without and with DO (one fragment for both when
 * they are the same bytes, as in an unsigned zone; so are a referral's).
 * Returns 0 or APEX_ENOMEM. */
int apex_precompute_apex_answers(apex_zone_t *zone);

/* NSEC zones with more NSEC owners than this get no NSEC tails. */
#define APEX_PRECOMPUTED_NSEC_MAX 16384

/*
 * zone->nsec_tails (NSEC zones of at most APEX_PRECOMPUTED_NSEC_MAX
 * owners, once zone->negative is set): for each node with an NSEC RRset,
 * that RRset and its RRSIGs as they follow zone->negative[1] in an
 * NXDOMAIN whose closest encloser is the apex.  A version derived from
 * one without them gets none.  Returns 0 or APEX_ENOMEM.
 */
int apex_precompute_nsec_tails(apex_zone_t *zone);

#endif
