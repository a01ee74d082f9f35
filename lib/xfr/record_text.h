/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One record as a zone file line (RFC 1035 section 5.1 presentation
 * format, absolute owner, TTL, class IN), written without allocating, for
 * the types that make up nearly all of a TLD: A, AAAA, NS, CNAME, DNAME,
 * PTR, DS, RRSIG, NSEC and NSEC3.  Other types are the caller's (ldns
 * writes them).  The line loads back into the same record through apex's
 * zone loader, NSD's and Knot DNS's: a secondary's copy of a zone is
 * written this way after every transfer, where text by ldns took a third
 * of the time of an IXFR into a 1M-record zone.
 */
#ifndef APEX_XFR_RECORD_TEXT_H
#define APEX_XFR_RECORD_TEXT_H

#include <stddef.h>

#include "dns/name.h"
#include "xfr/changes.h"

/* Enough for any record of the types handled: two names, the fixed
 * fields and 64 KiB of RDATA in hex (a type bitmap whose text would not
 * fit is left to the caller). */
#define APEX_RECORD_TEXT_MAX (8 * APEX_NAME_MAX + 2 * 65536 + 4096)

/*
 * Write rr as one line ending in a newline into buf (APEX_RECORD_TEXT_MAX
 * bytes).  Returns its length, or 0 when rr's type is not one handled
 * here or its RDATA is malformed (the caller then writes it otherwise).
 */
size_t apex_record_text(const apex_rr_t *rr, char *buf);

#endif
