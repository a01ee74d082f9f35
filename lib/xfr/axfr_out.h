/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An outgoing zone transfer (AXFR, RFC 5936) of one zone version: the
 * messages that carry it, one at a time, into a buffer the caller sends
 * (over TCP, after signing it with TSIG if the transfer is signed).
 *
 * The first message repeats the question; the version's SOA comes first
 * and last, every other RRset (with its RRSIGs, the SOA's RRSIGs too, the
 * glue and the NSEC3 records) once in between, as many whole RRsets per
 * message as fit, names compressed.  The version is only read: it must
 * stay referenced until the transfer ends.  Nothing is allocated.
 */
#ifndef APEX_XFR_AXFR_OUT_H
#define APEX_XFR_AXFR_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/name.h"
#include "zone/zone.h"

typedef struct apex_axfr_out {
	const apex_zone_t *zone;
	uint16_t id;                  /* of the request */
	uint8_t qname[APEX_NAME_MAX]; /* the question as asked (its letter case) */
	uint16_t qtype;               /* AXFR; IXFR for an IXFR answered with the whole zone */
	/* where the transfer is */
	int phase;          /* opening SOA, name index, NSEC3 owners, closing SOA, done */
	size_t node, rrset; /* the next RRset: node (or NSEC3 owner) and RRset in it */
	bool rrsig_next;    /* that RRset's RRSIGs are next */
	unsigned messages;  /* written so far */
} apex_axfr_out_t;

/* Start the transfer of zone in answer to a request with this ID and
 * question name. */
void apex_axfr_out_init(apex_axfr_out_t *a, const apex_zone_t *zone, uint16_t id,
			const uint8_t *qname);

/*
 * Write the next message into buf[0..capacity) (at most 65535 bytes, less
 * the room the caller keeps for a TSIG record): *size is its size, 0 once
 * the transfer is complete.  APEX_ESPACE when one RRset does not fit in a
 * message of that capacity (the transfer cannot go on).
 */
int apex_axfr_out_next(apex_axfr_out_t *a, uint8_t *buf, size_t capacity, size_t *size);

#endif
