/* SPDX-License-Identifier: BSD-3-Clause */
/* A transfer's response message decoded in place (see xfr_message.h). */
#include "xfr/xfr_message.h"

#include <ldns/ldns.h>
#include <string.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"

#define HEADER_SIZE 12

static int bad(apex_xfr_message_t *m, const char *why)
{
	m->why = why;
	return APEX_EMALFORMED;
}

int apex_xfr_message_open(apex_xfr_message_t *m, const uint8_t *msg, size_t size)
{
	memset(m, 0, sizeof(*m));
	m->msg = msg;
	m->size = size;
	if (size < HEADER_SIZE)
		return bad(m, "shorter than a header");
	m->id = apex_read_u16(msg);
	m->qr = (msg[2] & 0x80) != 0;
	m->opcode = (msg[2] >> 3) & 0xF;
	m->tc = (msg[2] & 0x02) != 0;
	m->rcode = msg[3] & 0xF;
	m->qdcount = apex_read_u16(msg + 4);
	m->ancount = apex_read_u16(msg + 6);
	m->nscount = apex_read_u16(msg + 8);
	m->arcount = apex_read_u16(msg + 10);
	m->pos = HEADER_SIZE;
	for (uint16_t i = 0; i < m->qdcount; i++) {
		uint8_t name[APEX_NAME_MAX];
		if (apex_name_unpack(msg, size, &m->pos, name) < 0 || m->pos + 4 > size)
			return bad(m, "a question cut short");
		if (i == 0) {
			memcpy(m->qname, name, apex_name_size(name));
			m->qtype = apex_read_u16(msg + m->pos);
			m->qclass = apex_read_u16(msg + m->pos + 2);
		}
		m->pos += 4;
	}
	return APEX_OK;
}

/* ------------------------------------------------------------ RDATA */

/* One name of the RDATA at *pos (before end) uncompressed to out + *at. */
static bool copy_name(const apex_xfr_message_t *m, size_t *pos, size_t end, uint8_t *out,
		      size_t *at)
{
	int n = apex_name_unpack(m->msg, end, pos, out + *at);
	if (n < 0)
		return false;
	*at += (size_t)n;
	return true;
}

/* Bytes [pos, end) copied to out + *at. */
static void copy_bytes(const apex_xfr_message_t *m, size_t pos, size_t end, uint8_t *out,
		       size_t *at)
{
	memcpy(out + *at, m->msg + pos, end - pos);
	*at += end - pos;
}

/* TXT: character strings that fill the RDATA exactly. */
static bool strings_fill(const uint8_t *p, size_t size)
{
	size_t pos = 0;

	while (pos < size)
		pos += 1u + p[pos];
	return size > 0 && pos == size;
}

/* NSEC3: algorithm, flags, iterations, salt, next hashed owner (not
 * empty), a type bitmap (not empty). */
static bool nsec3_shape(const uint8_t *p, size_t size)
{
	if (size < 5 || size < 5u + p[4] + 1u)
		return false;
	size_t at = 5u + p[4];
	return p[at] > 0 && at + 1 + p[at] < size;
}

/* RDATA with no names, of its type's shape. */
static bool verbatim_shape(uint16_t type, const uint8_t *p, size_t size)
{
	switch (type) {
	case APEX_TYPE_A: return size == 4;
	case APEX_TYPE_AAAA: return size == 16;
	case APEX_TYPE_DS:
	case APEX_TYPE_DNSKEY: return size > 4;
	case APEX_TYPE_NSEC3: return nsec3_shape(p, size);
	case APEX_TYPE_NSEC3PARAM: return size >= 5 && 5u + p[4] == size;
	case APEX_TYPE_TXT: return strings_fill(p, size);
	default: return false;
	}
}

/*
 * The RDATA [pos, end) of a type this file reads, uncompressed into out:
 * its size, or -1 when the type is not one of them or the RDATA does not
 * have its shape (ldns reads it then).
 */
static long read_rdata(const apex_xfr_message_t *m, uint16_t type, size_t pos, size_t end,
		       uint8_t *out)
{
	size_t at = 0, fixed = 0;

	if (verbatim_shape(type, m->msg + pos, end - pos)) {
		copy_bytes(m, pos, end, out, &at);
		return (long)at;
	}
	switch (type) {
	case APEX_TYPE_NS:
	case APEX_TYPE_CNAME:
	case APEX_TYPE_DNAME:
	case APEX_TYPE_PTR: return copy_name(m, &pos, end, out, &at) && pos == end ? (long)at : -1;
	case APEX_TYPE_MX: fixed = 2; break;
	case APEX_TYPE_SRV: fixed = 6; break;
	case APEX_TYPE_RRSIG: fixed = 18; break;
	case APEX_TYPE_SOA:
		if (!copy_name(m, &pos, end, out, &at) || !copy_name(m, &pos, end, out, &at) ||
		    end - pos != 20)
			return -1;
		copy_bytes(m, pos, end, out, &at);
		return (long)at;
	case APEX_TYPE_NSEC:
		/* the next owner, then a type bitmap */
		if (!copy_name(m, &pos, end, out, &at) || pos >= end)
			return -1;
		copy_bytes(m, pos, end, out, &at);
		return (long)at;
	default: return -1;
	}
	/* fixed bytes, then one name: the last field (MX, SRV), or followed
	 * by a signature that is not empty (RRSIG) */
	if (end - pos <= fixed)
		return -1;
	copy_bytes(m, pos, pos + fixed, out, &at);
	pos += fixed;
	if (!copy_name(m, &pos, end, out, &at))
		return -1;
	if (type == APEX_TYPE_RRSIG ? pos >= end : pos != end)
		return -1;
	copy_bytes(m, pos, end, out, &at);
	return (long)at;
}

/* The record at m->pos read by ldns instead, into buf. */
static int read_by_ldns(apex_xfr_message_t *m, apex_xfr_record_buf_t *buf, apex_rr_t *rr)
{
	ldns_rr *lrr = NULL;
	size_t pos = m->pos;

	if (buf->ldns_buf == NULL && (buf->ldns_buf = ldns_buffer_new(1024)) == NULL)
		return APEX_ENOMEM;
	ldns_status status = ldns_wire2rr(&lrr, m->msg, m->size, &pos, LDNS_SECTION_ANSWER);
	if (status == LDNS_STATUS_MEM_ERR)
		return APEX_ENOMEM;
	if (status != LDNS_STATUS_OK)
		return bad(m, ldns_get_errorstr_by_id(status));
	ldns_buffer *lb = buf->ldns_buf;
	const ldns_rdf *owner = ldns_rr_owner(lrr);
	int rc = APEX_OK;
	ldns_buffer_clear(lb);
	if (owner == NULL || ldns_rdf_size(owner) == 0 || ldns_rdf_size(owner) > APEX_NAME_MAX)
		rc = bad(m, "a record with a bad owner name");
	else if (ldns_rr_rdata2buffer_wire(lb, lrr) != LDNS_STATUS_OK ||
		 ldns_buffer_position(lb) > 65535)
		rc = bad(m, "a record with bad RDATA");
	if (rc == APEX_OK) {
		memcpy(buf->owner, ldns_rdf_data(owner), ldns_rdf_size(owner));
		rr->rdlength = (uint16_t)ldns_buffer_position(lb);
		memcpy(buf->rdata, ldns_buffer_begin(lb), rr->rdlength);
		m->pos = pos;
	}
	ldns_rr_free(lrr);
	return rc;
}

/* ------------------------------------------------------------ records */

/* The authority and additional sections after the answers: well formed. */
static int check_rest(apex_xfr_message_t *m, apex_xfr_record_buf_t *buf)
{
	size_t pos = m->pos;

	for (uint32_t i = 0; i < (uint32_t)m->nscount + m->arcount; i++) {
		if (apex_name_unpack(m->msg, m->size, &pos, buf->owner) < 0 || pos + 10 > m->size ||
		    pos + 10 + apex_read_u16(m->msg + pos + 8) > m->size)
			return bad(m, "a record of the authority or additional section cut short");
		pos += 10u + apex_read_u16(m->msg + pos + 8);
	}
	return APEX_OK;
}

int apex_xfr_message_next(apex_xfr_message_t *m, apex_xfr_record_buf_t *buf, apex_rr_t *rr)
{
	size_t pos = m->pos;

	if (m->answers_read == m->ancount) {
		int rc = check_rest(m, buf);
		return rc < 0 ? rc : 0;
	}
	if (apex_name_unpack(m->msg, m->size, &pos, buf->owner) < 0)
		return bad(m, "a record with a bad owner name");
	if (pos + 10 > m->size)
		return bad(m, "a record cut short");
	const uint8_t *p = m->msg + pos;
	size_t rdlength = apex_read_u16(p + 8);
	if (pos + 10 + rdlength > m->size)
		return bad(m, "RDATA past the end of the message");
	rr->owner = buf->owner;
	rr->type = apex_read_u16(p);
	rr->rclass = apex_read_u16(p + 2);
	/* RFC 2181 section 8: a TTL with the top bit set is taken as 0. */
	rr->ttl = apex_read_u32(p + 4) > INT32_MAX ? 0 : apex_read_u32(p + 4);
	rr->rdata = buf->rdata;
	long n = read_rdata(m, rr->type, pos + 10, pos + 10 + rdlength, buf->rdata);
	if (n >= 0 && n <= 65535) {
		rr->rdlength = (uint16_t)n;
		m->pos = pos + 10 + rdlength;
	} else {
		int rc = read_by_ldns(m, buf, rr);
		if (rc < 0)
			return rc;
	}
	m->answers_read++;
	return 1;
}

void apex_xfr_record_buf_free(apex_xfr_record_buf_t *buf)
{
	if (buf->ldns_buf != NULL)
		ldns_buffer_free(buf->ldns_buf);
	buf->ldns_buf = NULL;
}
