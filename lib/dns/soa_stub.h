/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SOA record a secondary's IXFR request (RFC 1995 section 3) and a
 * NOTIFY (RFC 1996 section 3.7) carry: owned by the question's name (a
 * pointer to offset 12), TTL 0, and rdata whose only meaningful field is
 * the serial (two root names and zeros around it), as NSD, Knot DNS and
 * BIND send it.
 */
#ifndef APEX_DNS_SOA_STUB_H
#define APEX_DNS_SOA_STUB_H

#include <stdint.h>
#include <string.h>

#include "dns/rrtype.h"
#include "dns/wire.h"

#define APEX_SOA_STUB_SIZE 34 /* owner 2, fixed 10, rdata 22 */

/* Write the record at m (APEX_SOA_STUB_SIZE bytes). */
static inline void apex_soa_stub_write(uint8_t *m, uint32_t serial)
{
	apex_write_u16(m, 0xc00c);
	apex_write_u16(m + 2, APEX_TYPE_SOA);
	apex_write_u16(m + 4, APEX_CLASS_IN);
	apex_write_u32(m + 6, 0);
	apex_write_u16(m + 10, 22);
	memset(m + 12, 0, 22);
	apex_write_u32(m + 14, serial);
}

#endif
