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
	x->rdata_buf = ldns_buffer_new(1024);
	return x->rdata_buf != NULL ? APEX_OK : APEX_ENOMEM;
}

void apex_xfr_in_free(apex_xfr_in_t *x)
{
	apex_changes_free(&x->set);
	free(x->first_soa);
	x->first_soa = NULL;
	if (x->rdata_buf != NULL)
		ldns_buffer_free(x->rdata_buf);
	x->rdata_buf = NULL;
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
	int rc = x->handler.changes(x->handler.ctx, &x->set);
	if (rc < 0)
		return fail(x, rc, "IXFR: change set %u to %u not applied: %s", x->set.serial_from,
			    x->set.serial_to, apex_strerror(rc));
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

/* The parts of an ldns record as an apex_rr_t; the RDATA goes to the
 * reader's buffer. */
static int rr_from_ldns(apex_xfr_in_t *x, const ldns_rr *lrr, apex_rr_t *rr)
{
	const ldns_rdf *owner = ldns_rr_owner(lrr);
	ldns_buffer *buf = x->rdata_buf;

	if (owner == NULL || ldns_rdf_size(owner) == 0 || ldns_rdf_size(owner) > APEX_NAME_MAX)
		return fail(x, APEX_EMALFORMED, "record with a bad owner name");
	ldns_buffer_clear(buf);
	if (ldns_rr_rdata2buffer_wire(buf, lrr) != LDNS_STATUS_OK ||
	    ldns_buffer_position(buf) > 65535)
		return fail(x, APEX_EMALFORMED, "record of type %u with bad RDATA",
			    (unsigned)ldns_rr_get_type(lrr));
	rr->owner = ldns_rdf_data(owner);
	rr->type = (uint16_t)ldns_rr_get_type(lrr);
	rr->rclass = (uint16_t)ldns_rr_get_class(lrr);
	/* RFC 2181 section 8: a TTL with the top bit set is taken as 0. */
	rr->ttl = ldns_rr_ttl(lrr) > INT32_MAX ? 0 : ldns_rr_ttl(lrr);
	rr->rdlength = (uint16_t)ldns_buffer_position(buf);
	rr->rdata = ldns_buffer_begin(buf);
	return APEX_OK;
}

/* Is this message a response to our request? */
static int check_header(apex_xfr_in_t *x, const ldns_pkt *pkt)
{
	if (!ldns_pkt_qr(pkt) || ldns_pkt_get_opcode(pkt) != LDNS_PACKET_QUERY ||
	    ldns_pkt_id(pkt) != x->id)
		return fail(x, APEX_EMALFORMED, "not a response to the transfer request");
	x->rcode = (uint8_t)ldns_pkt_get_rcode(pkt);
	if (x->rcode != LDNS_RCODE_NOERROR) {
		ldns_lookup_table *name = ldns_lookup_by_id(ldns_rcodes, x->rcode);
		int rc = fail(x, APEX_EREFUSED, "the primary answered %s",
			      name != NULL ? name->name : "an error");
		return rc;
	}
	if (ldns_pkt_tc(pkt))
		return fail(x, APEX_EMALFORMED, "truncated response");
	/* RFC 5936 section 2.2.1: the first message repeats the question;
	 * later ones may. */
	ldns_rr_list *question = ldns_pkt_question(pkt);
	size_t qdcount = question != NULL ? ldns_rr_list_rr_count(question) : 0;
	if (qdcount == 0 && x->messages == 0)
		return fail(x, APEX_EMALFORMED, "the first message has no question");
	if (qdcount > 1)
		return fail(x, APEX_EMALFORMED, "%zu questions", qdcount);
	if (qdcount == 1) {
		const ldns_rr *q = ldns_rr_list_rr(question, 0);
		const ldns_rdf *qname = ldns_rr_owner(q);
		if (qname == NULL || ldns_rdf_size(qname) > APEX_NAME_MAX ||
		    !apex_name_equal(ldns_rdf_data(qname), x->zone) ||
		    (uint16_t)ldns_rr_get_type(q) != x->qtype ||
		    ldns_rr_get_class(q) != LDNS_RR_CLASS_IN)
			return fail(x, APEX_EMALFORMED, "the question is not the one asked");
	}
	return APEX_OK;
}

static int take_answers(apex_xfr_in_t *x, const ldns_pkt *pkt)
{
	ldns_rr_list *answer = ldns_pkt_answer(pkt);
	size_t count = answer != NULL ? ldns_rr_list_rr_count(answer) : 0;

	for (size_t i = 0; i < count; i++) {
		apex_rr_t rr;
		int rc = rr_from_ldns(x, ldns_rr_list_rr(answer, i), &rr);
		if (rc == APEX_OK)
			rc = take_record(x, &rr);
		if (rc < 0)
			return rc;
	}
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
	ldns_pkt *pkt = NULL;

	if (x->phase == DONE)
		return fail(x, APEX_EMALFORMED, "a message after the end of the transfer");
	x->bytes += size;
	if (x->limits.max_bytes != 0 && x->bytes > x->limits.max_bytes)
		return fail(x, APEX_ESPACE, "more than %llu bytes",
			    (unsigned long long)x->limits.max_bytes);
	ldns_status status = ldns_wire2pkt(&pkt, msg, size);
	if (status != LDNS_STATUS_OK)
		return fail(x, APEX_EMALFORMED, "undecodable message: %s",
			    ldns_get_errorstr_by_id(status));
	int rc = check_header(x, pkt);
	if (rc == APEX_OK)
		rc = take_answers(x, pkt);
	ldns_pkt_free(pkt);
	x->messages++;
	return rc;
}
