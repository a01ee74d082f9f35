/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zone version built from records already in wire form, as a zone
 * transfer delivers them (owner, type, TTL and uncompressed RDATA, class
 * IN): the records go to a sink as the zone file reader's do and the
 * version is built the same way (version_build.h), so that a zone read
 * from a transfer answers exactly as the same zone read from a file.
 * The RDATA's canonical form (RFC 4034 section 6.2) comes from ldns's
 * description of each type.
 */
#ifndef APEX_ZONE_ZONE_FROM_WIRE_H
#define APEX_ZONE_ZONE_FROM_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "util/give_way.h"
#include "zone/zone.h"

typedef struct apex_zone_from_wire apex_zone_from_wire_t;

/*
 * Start a version of origin; source names where the records come from in
 * messages ("transfer from 192.0.2.1"); err (kept until the end) gets
 * "SOURCE:N: reason" for the N-th record.  Returns APEX_OK with *out the
 * builder (the caller's: finish or abort it), or APEX_ENOMEM.
 */
int apex_zone_from_wire_begin(apex_zone_from_wire_t **out, const uint8_t *origin,
			      const char *source, char *err, size_t err_size);

/* Add one record; APEX_ELOAD (reason in err) for a record the zone cannot
 * hold (outside it, a type that may not be in a zone, bad RDATA). */
int apex_zone_from_wire_add(apex_zone_from_wire_t *w, const uint8_t *owner, uint16_t type,
			    uint32_t ttl, const uint8_t *rdata, uint16_t rdlength);

/*
 * The same for a record whose RDATA lies behind its 16-bit length (as in
 * an RRset's rdata, zone.h) in memory that outlives the version built: a
 * served version's, which a version derived from it keeps through its
 * base.  The version's RRsets point at it rather than at a copy, where
 * the records of an RRset lie back to back in order there (a rebuild in
 * parts, xfr/version_part.h, copies no RDATA of the owners it moves);
 * else they are copied.
 */
int apex_zone_from_wire_add_borrowed(apex_zone_from_wire_t *w, const uint8_t *owner, uint16_t type,
				     uint32_t ttl, const uint8_t *rdata, uint16_t rdlength);

/* Room for `records` records of `owners` owners in all, for the builder
 * not to grow its arrays as they come (which copies them): APEX_OK or
 * APEX_ENOMEM. */
int apex_zone_from_wire_reserve(apex_zone_from_wire_t *w, size_t records, size_t owners);

/* Let apex_zone_from_wire_finish()'s build ask give_way(ctx) after each
 * of its steps (zone/build.h) whether to give way. */
void apex_zone_from_wire_give_way(apex_zone_from_wire_t *w, apex_give_way_fn give_way, void *ctx);

/* Build the version: *out with one reference (the caller's), or
 * APEX_ELOAD / APEX_ENOMEM with the reason in err, or APEX_ECANCELED if
 * the build gave way.  w is freed. */
int apex_zone_from_wire_finish(apex_zone_from_wire_t *w, apex_zone_t **out);

struct apex_derive_owners; /* zone/derive.h */

/* Derive the version from old, the records added being those of the
 * owners an IXFR changed (zone/derive.h): as apex_zone_from_wire_finish(),
 * or APEX_ENOTSUP.  w is freed. */
int apex_zone_from_wire_derive(apex_zone_from_wire_t *w, apex_zone_t *old,
			       const struct apex_derive_owners *owners, apex_zone_t **out);

/* Give up; w is freed. */
void apex_zone_from_wire_abort(apex_zone_from_wire_t *w);

#endif
