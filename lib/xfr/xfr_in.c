/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reader of an incoming AXFR/IXFR response stream (see xfr_in.h).
 *
 * The records of the answer sections, message after message, drive one
 * state machine (RFC 1995 section 4, RFC 5936 section 2.2):
 *
 *   FIRST        the first SOA: the serial being sent
 *   SECOND       the record after it tells the style: for an IXFR, a SOA
 *                with the secondary's serial opens change sets; anything
 *                else is AXFR style (the whole zone)
 *   AXFR_BODY    records until the closing SOA
 *   IXFR_REMOVE  removals until the SOA of the new version
 *   IXFR_ADD     additions until the next SOA: either the closing SOA
 *                (the serial being sent, after the last set) or the old
 *                SOA of the next set
 *   DONE         nothing more may come
 */

#include "xfr/xfr_in.h"

#include <ldns/ldns.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/rrtype.h"
#include "dns/serial.h"
#include "dns/wire.h"
#include "util/error.h"
#include "xfr/xfr_message.h"

enum phase {
	FIRST,
	SECOND,
	AXFR_BODY,
	IXFR_REMOVE,
	IXFR_ADD,
	DONE,
};

static int fail(apex_xfr_in_t *x, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(apex_xfr_in_t *x, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->err, sizeof(x->err), fmt, ap);
	va_end(ap);
	x->phase = DONE;
	x->style = APEX_XFR_STYLE_UNKNOWN;
	return rc;
}

int apex_xfr_in_init(apex_xfr_in_t *x, const uint8_t *zone, uint16_t id, uint16_t qtype,
		     uint32_t known_serial, const apex_xfr_in_handler_t *handler,
		     const apex_xfr_in_limits_t *limits)
{
	memset(x, 0, sizeof(*x));
	memcpy(x->zone, zone, apex_name_size(zone));
	x->id = id;
	x->qtype = qtype;
	x->known_serial = known_serial;
	x->handler = *handler;
	if (limits != NULL)
		x->limits = *limits;
	x->phase = FIRST;
	apex_changes_init(&x->set);
	/* its owner and RDATA buffers are written before they are read: not
	 * zeroed, 64 KiB for each of thousands of small zones transferred */
	x->rbuf = malloc(sizeof(*x->rbuf));
	if (x->rbuf == NULL)
		return APEX_ENOMEM;
	x->rbuf->ldns_buf = NULL;
	return APEX_OK;
}

void apex_xfr_in_free(apex_xfr_in_t *x)
{
	apex_changes_free(&x->set);
	free(x->first_soa);
	x->first_soa = NULL;
	if (x->rbuf != NULL)
		apex_xfr_record_buf_free(x->rbuf);
	free(x->rbuf);
	x->rbuf = NULL;
}

bool apex_xfr_in_done(const apex_xfr_in_t *x)
{
	return x->phase == DONE && x->style != APEX_XFR_STYLE_UNKNOWN;
}

/* ------------------------------------------------------------ records */

/* The serial of a SOA record, or false if its RDATA is not a SOA's. */
static bool soa_serial(const apex_rr_t *rr, uint32_t *serial)
{
	if (rr->type != APEX_TYPE_SOA || rr->rdlength < 22)
		return false;
	*serial = apex_read_u32(rr->rdata + rr->rdlength - 20);
	return true;
}

/* The first SOA, kept until the style is known (AXFR sends it on). */
static int keep_first_soa(apex_xfr_in_t *x, const apex_rr_t *rr)
{
	x->first_soa = malloc(rr->rdlength);
	if (x->first_soa == NULL)
		return fail(x, APEX_ENOMEM, "out of memory");
	memcpy(x->first_soa, rr->rdata, rr->rdlength);
	x->first_soa_rdlength = rr->rdlength;
	x->first_soa_ttl = rr->ttl;
	return APEX_OK;
}

static int send_first_soa(apex_xfr_in_t *x)
{
	apex_rr_t soa = {
		.owner = x->zone,
		.type = APEX_TYPE_SOA,
		.rclass = APEX_CLASS_IN,
		.ttl = x->first_soa_ttl,
		.rdlength = x->first_soa_rdlength,
		.rdata = x->first_soa,
	};
	return x->handler.record(x->handler.ctx, &soa);
}

static int append_change(apex_xfr_in_t *x, apex_change_kind_t kind, const apex_rr_t *rr)
{
	int rc = apex_changes_append(&x->set, kind, rr);
	if (rc == APEX_ENOMEM)
		return fail(x, rc, "out of memory");
	if (rc < 0)
		return fail(x, APEX_EMALFORMED, "record of type %u out of IXFR order", rr->type);
	return APEX_OK;
}

/* A SOA in IXFR_ADD: the closing SOA, or the first of the next set. */
static int end_of_set(apex_xfr_in_t *x, const apex_rr_t *rr, uint32_t serial)
{
	bool last = x->set.serial_to == x->serial && serial == x->serial;

	if (!last && serial != x->set.serial_to)
		return fail(x, APEX_EMALFORMED,
			    "IXFR: SOA serial %u after the change set to %u (closing serial %u)",
			    serial, x->set.serial_to, x->serial);
	uint32_t from = x->set.serial_from, to = x->set.serial_to; /* the handler may take it */
	int rc = x->handler.changes(x->handler.ctx, &x->set);
	if (rc < 0)
		return fail(x, rc, "IXFR: change set %u to %u not applied: %s", from, to,
			    apex_strerror(rc));
	apex_changes_free(&x->set);
	if (last) {
		x->phase = DONE;
		return APEX_OK;
	}
	x->phase = IXFR_REMOVE;
	return append_change(x, APEX_CHANGE_OLD_SOA, rr);
}

/* The second record: a SOA with the secondary's serial opens IXFR change
 * sets; anything else is the second record of a whole zone. */
static int tell_style(apex_xfr_in_t *x, const apex_rr_t *rr, bool soa, uint32_t serial)
{
	if (x->qtype == APEX_TYPE_IXFR && soa && serial == x->known_serial && serial != x->serial) {
		x->style = APEX_XFR_STYLE_IXFR;
		x->phase = IXFR_REMOVE;
		return append_change(x, APEX_CHANGE_OLD_SOA, rr);
	}
	x->style = APEX_XFR_STYLE_AXFR;
	x->phase = AXFR_BODY;
	int rc = send_first_soa(x);
	if (rc < 0)
		return fail(x, rc, "record not taken: %s", apex_strerror(rc));
	return 1; /* the record itself still to be taken as AXFR_BODY */
}

/* A record of a whole zone: the closing SOA, or one to pass on. */
static int axfr_record(apex_xfr_in_t *x, const apex_rr_t *rr, bool soa, uint32_t serial)
{
	if (soa) {
		if (serial != x->serial)
			return fail(x, APEX_EMALFORMED, "closing SOA serial %u, first SOA %u",
				    serial, x->serial);
		x->phase = DONE;
		return APEX_OK;
	}
	int rc = x->handler.record(x->handler.ctx, rr);
	return rc < 0 ? fail(x, rc, "record not taken: %s", apex_strerror(rc)) : APEX_OK;
}

/* One record of the answer sections, in stream order. */
static int take_record(apex_xfr_in_t *x, const apex_rr_t *rr)
{
	uint32_t serial = 0;
	bool soa = rr->type == APEX_TYPE_SOA;
	int rc;

	if (x->limits.max_records != 0 && x->records >= x->limits.max_records)
		return fail(x, APEX_ESPACE, "more than %llu records",
			    (unsigned long long)x->limits.max_records);
	x->records++;
	if (rr->rclass != APEX_CLASS_IN)
		return fail(x, APEX_EMALFORMED, "record of class %u", rr->rclass);
	if (rr->type == 0 || rr->type == APEX_TYPE_OPT || (rr->type >= 128 && rr->type <= 255))
		return fail(x, APEX_EMALFORMED, "record of type %u, which may not be in a zone",
			    rr->type);
	if (soa && (!apex_name_equal(rr->owner, x->zone) || !soa_serial(rr, &serial)))
		return fail(x, APEX_EMALFORMED, "a SOA record that is not the zone's");
	if (!soa && x->phase != FIRST && x->phase != DONE &&
	    !apex_name_is_subdomain(rr->owner, x->zone)) {
		x->out_of_zone++;
		return APEX_OK;
	}

	switch (x->phase) {
	case FIRST:
		if (!soa)
			return fail(x, APEX_EMALFORMED, "the first record is not the zone's SOA");
		x->serial = serial;
		x->phase = SECOND;
		return keep_first_soa(x, rr);
	case SECOND:
		rc = tell_style(x, rr, soa, serial);
		/* 1: the second record of a whole zone */
		return rc == 1 ? axfr_record(x, rr, soa, serial) : rc;
	case AXFR_BODY: return axfr_record(x, rr, soa, serial);
	case IXFR_REMOVE:
		if (soa) {
			x->phase = IXFR_ADD;
			return append_change(x, APEX_CHANGE_NEW_SOA, rr);
		}
		return append_change(x, APEX_CHANGE_REMOVE, rr);
	case IXFR_ADD:
		if (soa)
			return end_of_set(x, rr, serial);
		return append_change(x, APEX_CHANGE_ADD, rr);
	default: return fail(x, APEX_EMALFORMED, "records after the closing SOA");
	}
}

/* ------------------------------------------------------------ messages */

/* Is this message a response to our request? */
static int check_header(apex_xfr_in_t *x, const apex_xfr_message_t *m)
{
	if (!m->qr || m->opcode != LDNS_PACKET_QUERY || m->id != x->id)
		return fail(x, APEX_EMALFORMED, "not a response to the transfer request");
	x->rcode = m->rcode;
	if (x->rcode != LDNS_RCODE_NOERROR) {
		ldns_lookup_table *name = ldns_lookup_by_id(ldns_rcodes, x->rcode);
		return fail(x, APEX_EREFUSED, "the primary answered %s",
			    name != NULL ? name->name : "an error");
	}
	if (m->tc)
		return fail(x, APEX_EMALFORMED, "truncated response");
	/* RFC 5936 section 2.2.1: the first message repeats the question;
	 * later ones may. */
	if (m->qdcount == 0 && x->messages == 0)
		return fail(x, APEX_EMALFORMED, "the first message has no question");
	if (m->qdcount > 1)
		return fail(x, APEX_EMALFORMED, "%u questions", (unsigned)m->qdcount);
	if (m->qdcount == 1 && (!apex_name_equal(m->qname, x->zone) || m->qtype != x->qtype ||
				m->qclass != LDNS_RR_CLASS_IN))
		return fail(x, APEX_EMALFORMED, "the question is not the one asked");
	return APEX_OK;
}

static int take_answers(apex_xfr_in_t *x, apex_xfr_message_t *m)
{
	apex_rr_t rr;
	int rc;

	while ((rc = apex_xfr_message_next(m, x->rbuf, &rr)) == 1)
		if ((rc = take_record(x, &rr)) < 0)
			return rc;
	if (rc == APEX_ENOMEM)
		return fail(x, rc, "out of memory");
	if (rc < 0)
		return fail(x, rc, "undecodable message: %s", m->why);
	/* An IXFR answered by the SOA alone: nothing newer to send. */
	if (x->phase == SECOND && x->qtype == APEX_TYPE_IXFR &&
	    !apex_serial_newer(x->serial, x->known_serial)) {
		x->style = APEX_XFR_STYLE_UP_TO_DATE;
		x->phase = DONE;
	}
	return APEX_OK;
}

int apex_xfr_in_message(apex_xfr_in_t *x, const uint8_t *msg, size_t size)
{
	apex_xfr_message_t m;

	if (x->phase == DONE)
		return fail(x, APEX_EMALFORMED, "a message after the end of the transfer");
	x->bytes += size;
	if (x->limits.max_bytes != 0 && x->bytes > x->limits.max_bytes)
		return fail(x, APEX_ESPACE, "more than %llu bytes",
			    (unsigned long long)x->limits.max_bytes);
	if (apex_xfr_message_open(&m, msg, size) < 0)
		return fail(x, APEX_EMALFORMED, "undecodable message: %s", m.why);
	int rc = check_header(x, &m);
	if (rc == APEX_OK)
		rc = take_answers(x, &m);
	x->messages++;
	return rc;
}
