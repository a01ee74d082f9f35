/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Big-endian reads and writes of DNS wire-format integers, and the
 * layout of the 12-byte message header (RFC 1035 section 4.1.1).
 * Everything here is inline: it sits on the query path.
 */
#ifndef APEX_DNS_WIRE_H
#define APEX_DNS_WIRE_H

#include <stdint.h>
#include <string.h>

#define APEX_HEADER_SIZE 12
#define APEX_MAX_MESSAGE 65535
#define APEX_MIN_UDP_PAYLOAD 512

/* Header offsets */
#define APEX_HDR_ID 0
#define APEX_HDR_FLAGS 2
#define APEX_HDR_QDCOUNT 4
#define APEX_HDR_ANCOUNT 6
#define APEX_HDR_NSCOUNT 8
#define APEX_HDR_ARCOUNT 10

/* Flag bits in the 16-bit flags word */
#define APEX_FLAG_QR 0x8000u
#define APEX_FLAG_AA 0x0400u
#define APEX_FLAG_TC 0x0200u
#define APEX_FLAG_RD 0x0100u
#define APEX_FLAG_RA 0x0080u
#define APEX_FLAG_AD 0x0020u
#define APEX_FLAG_CD 0x0010u
#define APEX_OPCODE(flags) (((flags) >> 11) & 0xFu)
#define APEX_RCODE(flags) ((flags)&0xFu)

/* Opcodes and rcodes */
#define APEX_OPCODE_QUERY 0
#define APEX_RCODE_NOERROR 0
#define APEX_RCODE_FORMERR 1
#define APEX_RCODE_SERVFAIL 2
#define APEX_RCODE_NXDOMAIN 3
#define APEX_RCODE_NOTIMP 4
#define APEX_RCODE_REFUSED 5
#define APEX_RCODE_BADVERS 16   /* extended: upper 8 bits go in the OPT TTL */
#define APEX_RCODE_BADCOOKIE 23 /* extended (RFC 7873 section 8) */

static inline uint16_t apex_read_u16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t apex_read_u32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
	       (uint32_t)p[3];
}

static inline void apex_write_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void apex_write_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#endif
