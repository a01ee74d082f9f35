/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every record a served version holds, one at a time as a resource record
 * (xfr/changes.h): what the copy of a secondary zone writes and what an
 * IXFR applied keeps from the old version.
 */
#ifndef APEX_XFR_VERSION_RECORDS_H
#define APEX_XFR_VERSION_RECORDS_H

#include "xfr/changes.h"
#include "zone/zone.h"

/* Takes one record (pointers into the version); an error ends the walk. */
typedef int (*apex_rr_fn)(void *ctx, const apex_rr_t *rr);

/*
 * Give fn every record of zone but its SOA (zone->soa, which the caller
 * places), each RRset followed by its RRSIGs (the SOA's included), then a
 * name's stray RRSIGs (zone.h): the names, those of the index and the
 * owners of NSEC3 records only, in canonical order, as a zone file in that
 * order lists them (a copy so written, and a version built compact from
 * these records, are built without moving the records: zone/build_sort.c).
 * Returns APEX_OK or fn's error.
 */
int apex_version_records(const apex_zone_t *zone, apex_rr_fn fn, void *ctx);

/* The same for the records of one node of zone. */
int apex_node_records(const apex_zone_t *zone, const apex_node_t *node, apex_rr_fn fn, void *ctx);

#endif
