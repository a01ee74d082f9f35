/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a signed zone's version says of its own DNSSEC records, for
 * apex-checkzone: signatures expired or not yet valid at a given time
 * (RFC 4034 section 3.1.5, serial arithmetic), authoritative RRsets
 * without a signature, and breaks in the NSEC chain (RFC 4034 section
 * 4.1.1) or the NSEC3 chain (RFC 5155 section 7.1).  apexd serves such a
 * zone as it is; validating resolvers would not accept its answers.
 * Unsigned zones (no DNSKEY at the apex) have nothing to report.
 */
#ifndef APEX_ZONE_CHECK_DNSSEC_H
#define APEX_ZONE_CHECK_DNSSEC_H

#include <stddef.h>
#include <stdint.h>

#include "zone/zone.h"

/* One finding: a line of text (the owner, the type, what is wrong). */
typedef void (*apex_check_report_t)(void *arg, const char *finding);

/* Report the findings of zone at now (seconds since the epoch, mod 2^32);
 * returns how many there were. */
size_t apex_zone_check_dnssec(const apex_zone_t *zone, uint32_t now, apex_check_report_t report,
			      void *arg);

#endif
