/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ZONEMD (RFC 8976): the digest of a zone's records, computed from a
 * built version (its name index is in canonical order already), and the
 * check of the zone's own ZONEMD records against it, done before a
 * version is published.
 *
 * Verification follows section 4 of the RFC, except for its first step
 * (validating the ZONEMD RRset with DNSSEC), which needs trust anchors
 * an authoritative server does not hold: a version is accepted when one
 * of its apex ZONEMD records with a supported scheme (SIMPLE) and hash
 * algorithm (SHA-384, SHA-512) has the SOA's serial and the digest
 * computed.  A zone without an apex ZONEMD record, or with only
 * unsupported schemes or algorithms, cannot be verified and is served
 * (the RFC's reading: it is as if it had none); two records with the
 * same scheme and algorithm (section 2.4) fail.
 */
#ifndef APEX_ZONEMD_ZONEMD_H
#define APEX_ZONEMD_ZONEMD_H

#include <stddef.h>
#include <stdint.h>

#include "zone/zone.h"

#define APEX_ZONEMD_SCHEME_SIMPLE 1
#define APEX_ZONEMD_SHA384 1
#define APEX_ZONEMD_SHA512 2
#define APEX_ZONEMD_DIGEST_MAX 64

typedef enum {
	APEX_ZONEMD_ABSENT,      /* no ZONEMD record at the apex: nothing to verify */
	APEX_ZONEMD_UNSUPPORTED, /* only unsupported schemes or algorithms: not verified */
	APEX_ZONEMD_VERIFIED,    /* a supported record matches */
	APEX_ZONEMD_FAILED,      /* none matches: see the detail */
} apex_zonemd_status_t;

typedef struct apex_zonemd_result {
	apex_zonemd_status_t status;
	uint8_t algorithm; /* VERIFIED: the hash algorithm that matched */
	/* What was found, for the log and zone-status: for FAILED, why
	 * (e.g. "ZONEMD digest mismatch: ..." with both digests in hex). */
	char detail[400];
} apex_zonemd_result_t;

/*
 * The SIMPLE digest of zone with hash algorithm (APEX_ZONEMD_SHA384 or
 * SHA512) into digest (APEX_ZONEMD_DIGEST_MAX bytes), *size its length:
 * every record in canonical order, the apex ZONEMD RRset and the RRSIGs
 * that cover it left out (RFC 8976 section 3.3).  Returns APEX_OK,
 * APEX_EINVAL for an unsupported algorithm or APEX_ENOMEM.
 */
int apex_zonemd_digest(const apex_zone_t *zone, uint8_t algorithm, uint8_t *digest, size_t *size);

/* Verify zone's apex ZONEMD records (see above) into *res.  Returns
 * APEX_OK (the outcome is in res, a failure included) or APEX_ENOMEM. */
int apex_zonemd_verify(const apex_zone_t *zone, apex_zonemd_result_t *res);

#endif
