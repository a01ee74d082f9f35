/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SOA serial number arithmetic (RFC 1982, with SERIAL_BITS = 32).
 *
 * Serials wrap around: s1 is newer than s2 when it is ahead of it by less
 * than half the number space. Two serials exactly half the space apart
 * are not comparable: neither is newer, and code that must decide (a
 * secondary choosing whether to transfer) treats that as "not newer".
 * Everything here is inline and pure.
 */
#ifndef APEX_DNS_SERIAL_H
#define APEX_DNS_SERIAL_H

#include <stdbool.h>
#include <stdint.h>

typedef enum apex_serial_order {
	APEX_SERIAL_EQUAL,
	APEX_SERIAL_OLDER,     /* the first serial is behind the second */
	APEX_SERIAL_NEWER,     /* the first serial is ahead of the second */
	APEX_SERIAL_UNDEFINED, /* exactly 2^31 apart (RFC 1982 section 3.2) */
} apex_serial_order_t;

/* How s1 relates to s2. */
static inline apex_serial_order_t apex_serial_compare(uint32_t s1, uint32_t s2)
{
	uint32_t ahead = s1 - s2; /* modulo 2^32 */

	if (ahead == 0)
		return APEX_SERIAL_EQUAL;
	if (ahead == UINT32_C(0x80000000))
		return APEX_SERIAL_UNDEFINED;
	return ahead < UINT32_C(0x80000000) ? APEX_SERIAL_NEWER : APEX_SERIAL_OLDER;
}

/* True if s1 is newer than s2 (false when equal or not comparable). */
static inline bool apex_serial_newer(uint32_t s1, uint32_t s2)
{
	return apex_serial_compare(s1, s2) == APEX_SERIAL_NEWER;
}

/* s + n for 0 <= n <= 2^31 - 1 (RFC 1982 section 3.1): what a primary does
 * to its serial; larger n are not defined and are clamped. */
static inline uint32_t apex_serial_add(uint32_t s, uint32_t n)
{
	if (n > UINT32_C(0x7fffffff))
		n = UINT32_C(0x7fffffff);
	return s + n;
}

#endif
