/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One response message of a zone transfer, decoded in place: its header,
 * its question, then the records of its answer section one at a time,
 * owner and RDATA names uncompressed (xfr_in.c reads a transfer with it).
 *
 * A transfer is a million records in thousands of messages: decoding them
 * with ldns, an object per record and per field, cost more than building
 * the zone.  Here the records of the types that make up large zones (A,
 * AAAA, NS, CNAME, DNAME, PTR, MX, SRV, SOA, RRSIG, NSEC, DS, DNSKEY,
 * NSEC3, NSEC3PARAM, TXT) are read from the message directly; any other
 * type, and a record of those types whose RDATA does not have the shape
 * of its type, is read by ldns from the same message, so that what is
 * accepted and what is refused stays ldns's (RFC 3597 section 4: names
 * in the RDATA of the types ldns describes are uncompressed).
 * Compression pointers must point strictly backwards (dns/name.h).
 */
#ifndef APEX_XFR_XFR_MESSAGE_H
#define APEX_XFR_XFR_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/name.h"
#include "xfr/changes.h"

typedef struct apex_xfr_message {
	const uint8_t *msg; /* borrowed */
	size_t size;
	uint16_t id, qdcount, ancount, nscount, arcount;
	bool qr, tc;
	uint8_t opcode, rcode;
	/* the question, when qdcount is 1 */
	uint8_t qname[APEX_NAME_MAX];
	uint16_t qtype, qclass;
	/* the answer section */
	size_t pos;            /* of the next answer record */
	uint16_t answers_read; /* of ancount */
	const char *why;       /* what is wrong, after an APEX_EMALFORMED */
} apex_xfr_message_t;

/* The buffers a record is decoded into (uncompressed owner and RDATA). */
typedef struct apex_xfr_record_buf {
	uint8_t owner[APEX_NAME_MAX];
	uint8_t rdata[65535 + APEX_NAME_MAX];
	void *ldns_buf; /* ldns_buffer for the records ldns reads; NULL until needed; owned */
} apex_xfr_record_buf_t;

/*
 * Decode the header and the question of msg[0..size) (borrowed until the
 * last record is read).  APEX_OK, or APEX_EMALFORMED with m->why.
 */
int apex_xfr_message_open(apex_xfr_message_t *m, const uint8_t *msg, size_t size);

/*
 * The next record of the answer section into *rr (pointing into buf):
 * 1; 0 after the last one, once the authority and additional sections
 * that follow were found well formed; APEX_EMALFORMED (m->why) or
 * APEX_ENOMEM.
 */
int apex_xfr_message_next(apex_xfr_message_t *m, apex_xfr_record_buf_t *buf, apex_rr_t *rr);

/* Release what buf owns (not buf). */
void apex_xfr_record_buf_free(apex_xfr_record_buf_t *buf);

#endif
