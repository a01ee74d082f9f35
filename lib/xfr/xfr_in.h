/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reader of an incoming zone transfer: the response messages of an
 * AXFR (RFC 5936) or IXFR (RFC 1995) request, in order, as a secondary
 * receives them over TCP.
 *
 * It checks every message (a response to this request: ID, opcode,
 * question, RCODE) and the stream as a whole (it opens and closes with
 * the zone's SOA, the serials chain, every record is of class IN and
 * within the zone, the limits hold), and tells what the primary sent:
 * - the SOA alone, not newer than what the secondary has: up to date;
 * - AXFR style (the answer to an AXFR, and to an IXFR the primary cannot
 *   answer incrementally): every record of the new version, once, the
 *   SOA first, through handler.record;
 * - IXFR style: one or more change sets (xfr/changes.h), each complete
 *   and chained to the previous one, through handler.changes.
 * Records outside the zone are dropped and counted, as Knot DNS does.
 * Nothing of a transfer that fails may be used: the caller keeps what it
 * received aside until apex_xfr_in_done() and throws it away on error.
 *
 * TSIG is verified before a message is given here (lib/tsig), with the
 * TSIG record removed. Messages are decoded by xfr_message.h, which
 * undoes name compression inside RDATA for every type that allows it.
 */
#ifndef APEX_XFR_XFR_IN_H
#define APEX_XFR_XFR_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/name.h"
#include "xfr/changes.h"

typedef enum apex_xfr_style {
	APEX_XFR_STYLE_UNKNOWN,    /* not yet seen enough to tell */
	APEX_XFR_STYLE_UP_TO_DATE, /* the SOA alone */
	APEX_XFR_STYLE_AXFR,       /* the whole zone */
	APEX_XFR_STYLE_IXFR,       /* change sets */
} apex_xfr_style_t;

/* Where the records go. A callback returns APEX_OK or an error, which
 * ends the transfer with that error. A record is borrowed for the
 * duration of the call.  A change set is the handler's to take: it may
 * move the set's data out (leaving *set empty, apex_changes_init()) so
 * that a large IXFR is not copied once more at its end; what it leaves
 * is freed after the call. */
typedef struct apex_xfr_in_handler {
	void *ctx;
	int (*record)(void *ctx, const apex_rr_t *rr);
	int (*changes)(void *ctx, apex_changes_t *set);
	/* Or NULL: called when the request is sent, before the answer is
	 * read (xfr_client.h; again if it is sent again, on a new
	 * connection), for work that the wait for the answer hides:
	 * a secondary makes the memory its derivation will write (apexd's
	 * transfers/secondary_transfer.c). */
	void (*requested)(void *ctx);
} apex_xfr_in_handler_t;

typedef struct apex_xfr_in_limits {
	uint64_t max_bytes;   /* of all messages; 0: no limit */
	uint64_t max_records; /* 0: no limit */
} apex_xfr_in_limits_t;

typedef struct apex_xfr_in {
	/* the request */
	uint8_t zone[APEX_NAME_MAX];
	uint16_t id;
	uint16_t qtype;        /* APEX_TYPE_AXFR or APEX_TYPE_IXFR */
	uint32_t known_serial; /* IXFR: the serial the secondary has */
	apex_xfr_in_handler_t handler;
	apex_xfr_in_limits_t limits;

	/* what was received */
	apex_xfr_style_t style;
	uint32_t serial; /* of the first SOA: the version being sent */
	uint8_t rcode;   /* of the last message */
	uint64_t messages, bytes, records;
	uint64_t out_of_zone; /* records dropped */
	char err[256];        /* why the transfer failed */
	/* CLOCK_MONOTONIC microseconds, set by apex_xfr_client_transfer():
	 * the connection made and the request sent, the first message of the
	 * answer read (0: none), for the log of the path to serving */
	uint64_t requested_us, first_message_us;
	/* the EDNS EXPIRE value of the answer (RFC 7314), set by
	 * apex_xfr_client_transfer(); -1: the primary sent none */
	int64_t expire;

	/* internal */
	int phase;
	apex_changes_t set; /* IXFR: the change set being received; owned */
	uint8_t *first_soa; /* RDATA of the first SOA, until the style is known; owned */
	uint16_t first_soa_rdlength;
	uint32_t first_soa_ttl;
	struct apex_xfr_record_buf *rbuf; /* the record being read (xfr_message.h); owned */
} apex_xfr_in_t;

/*
 * Start reading the response to a request for zone (wire form) with this
 * message ID and type (AXFR or IXFR; for IXFR, known_serial is the serial
 * sent in the request). Returns APEX_OK or APEX_ENOMEM. The reader owns
 * memory: release it with apex_xfr_in_free() in every case.
 */
int apex_xfr_in_init(apex_xfr_in_t *x, const uint8_t *zone, uint16_t id, uint16_t qtype,
		     uint32_t known_serial, const apex_xfr_in_handler_t *handler,
		     const apex_xfr_in_limits_t *limits);

void apex_xfr_in_free(apex_xfr_in_t *x);

/*
 * Read the next message (without the TCP length prefix).
 * Returns APEX_OK (x->err empty); APEX_EREFUSED when the primary answered
 * with an error RCODE (x->rcode: NOTIMP to an IXFR means "ask with AXFR");
 * APEX_EMALFORMED when the message or the stream is wrong, APEX_ESPACE
 * when a limit is passed, or a handler's error: x->err then says why.
 * After an error the transfer is over.
 */
int apex_xfr_in_message(apex_xfr_in_t *x, const uint8_t *msg, size_t size);

/* True once the closing SOA has been read (or the SOA alone of an up-to-
 * date answer, once its message ended): the transfer is complete. */
bool apex_xfr_in_done(const apex_xfr_in_t *x);

#endif
