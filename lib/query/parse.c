/* SPDX-License-Identifier: BSD-3-Clause */
#include <stddef.h>
#include <string.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/parse.h"
#include "util/error.h"

/*
 * Options of an OPT record's RDATA: a sequence of (code, length, data).
 * An option running past the RDATA is FORMERR (RFC 6891 6.1.2); so is a
 * COOKIE option of a length RFC 7873 5.2.2 does not allow (8, or 16 to
 * 40 bytes).  NSID, COOKIE, EXPIRE and an empty ZONEVERSION (RFC 9660
 * section 3: a server ignores a non-empty one) are recorded; the others
 * are ignored.
 */
static apex_parse_result_t parse_options(const uint8_t *p, size_t size, apex_query_t *q)
{
	size_t pos = 0;
	while (pos < size) {
		if (size - pos < 4)
			return APEX_PARSE_FORMERR;
		uint16_t code = apex_read_u16(p + pos);
		uint16_t len = apex_read_u16(p + pos + 2);
		pos += 4;
		if (len > size - pos)
			return APEX_PARSE_FORMERR;
		if (code == APEX_EDNS_NSID)
			q->nsid = true;
		else if (code == APEX_EDNS_ZONEVERSION && len == 0)
			q->zoneversion = true;
		else if (code == APEX_EDNS_EXPIRE)
			q->expire = true; /* empty in a query; a value there means nothing */
		else if (code == APEX_EDNS_COOKIE && len != 8 && (len < 16 || len > 40))
			return APEX_PARSE_FORMERR;
		else if (code == APEX_EDNS_COOKIE && !q->cookie) {
			q->cookie = true;
			memcpy(q->cookie_client, p + pos, 8);
			q->cookie_server_size = (uint8_t)(len - 8);
			memcpy(q->cookie_server, p + pos + 8, len - 8u);
		}
		pos += len;
	}
	return APEX_PARSE_OK;
}

/* The serial of the SOA whose RDATA is pkt[pos..end) (an IXFR's, RFC 1995
 * section 3: the version the client has); its names may be compressed. */
static void read_ixfr_serial(const uint8_t *pkt, size_t end, size_t pos, apex_query_t *q)
{
	uint8_t name[APEX_NAME_MAX];

	if (q->ixfr_soa || apex_name_unpack(pkt, end, &pos, name) < 0 ||
	    apex_name_unpack(pkt, end, &pos, name) < 0 || end - pos < 20)
		return;
	q->ixfr_serial = apex_read_u32(pkt + pos);
	q->ixfr_soa = true;
}

/*
 * One resource record at *pos in section `section` (1 answer,
 * 2 authority, 3 additional).  *opt_seen counts OPT records.
 */
static apex_parse_result_t parse_record(const uint8_t *pkt, size_t len, size_t *pos, int section,
					int *opt_seen, apex_query_t *q)
{
	uint8_t owner[APEX_NAME_MAX];
	int owner_size = apex_name_unpack(pkt, len, pos, owner);
	if (owner_size < 0)
		return APEX_PARSE_FORMERR;
	if (len - *pos < 10)
		return APEX_PARSE_FORMERR;
	const uint8_t *p = pkt + *pos;
	uint16_t type = apex_read_u16(p);
	uint16_t rclass = apex_read_u16(p + 2);
	uint32_t ttl = apex_read_u32(p + 4);
	uint16_t rdlen = apex_read_u16(p + 8);
	*pos += 10;
	if (rdlen > len - *pos)
		return APEX_PARSE_FORMERR;
	const uint8_t *rdata = pkt + *pos;
	*pos += rdlen;

	if (type != APEX_TYPE_OPT) {
		q->tsig |= type == APEX_TYPE_TSIG;
		if (type == APEX_TYPE_SOA && section == 2)
			read_ixfr_serial(pkt, (size_t)(rdata - pkt) + rdlen, (size_t)(rdata - pkt),
					 q);
		return APEX_PARSE_OK;
	}
	/* RFC 6891 6.1.1: only in the additional section, at most one,
	 * owned by the root. */
	if (section != 3 || ++*opt_seen > 1 || owner_size != 1)
		return APEX_PARSE_FORMERR;
	apex_parse_result_t r = parse_options(rdata, rdlen, q);
	if (r != APEX_PARSE_OK)
		return r;
	q->edns = true;
	q->udp_payload = rclass < APEX_MIN_UDP_PAYLOAD ? APEX_MIN_UDP_PAYLOAD : rclass;
	q->edns_version = (uint8_t)(ttl >> 16);
	q->dnssec_ok = (ttl & 0x8000u) != 0;
	return APEX_PARSE_OK;
}

apex_parse_result_t apex_query_parse(const uint8_t *pkt, size_t len, apex_query_t *q)
{
	memset(q, 0, offsetof(apex_query_t, qname)); /* the arrays are filled as needed */
	q->udp_payload = APEX_MIN_UDP_PAYLOAD;

	if (len < APEX_HEADER_SIZE)
		return APEX_PARSE_DROP;
	q->id = apex_read_u16(pkt + APEX_HDR_ID);
	q->flags = apex_read_u16(pkt + APEX_HDR_FLAGS);
	if (q->flags & APEX_FLAG_QR)
		return APEX_PARSE_DROP;

	uint16_t qdcount = apex_read_u16(pkt + APEX_HDR_QDCOUNT);
	uint16_t counts[3] = {
		apex_read_u16(pkt + APEX_HDR_ANCOUNT),
		apex_read_u16(pkt + APEX_HDR_NSCOUNT),
		apex_read_u16(pkt + APEX_HDR_ARCOUNT),
	};
	bool notimp = APEX_OPCODE(q->flags) != APEX_OPCODE_QUERY;

	if (qdcount != 1)
		return notimp ? APEX_PARSE_NOTIMP : APEX_PARSE_FORMERR;
	size_t pos = APEX_HEADER_SIZE;
	int size = apex_name_unpack(pkt, len, &pos, q->qname);
	if (size < 0 || len - pos < 4)
		return notimp ? APEX_PARSE_NOTIMP : APEX_PARSE_FORMERR;
	q->qname_size = (uint8_t)size;
	q->qtype = apex_read_u16(pkt + pos);
	q->qclass = apex_read_u16(pkt + pos + 2);
	pos += 4;
	q->has_question = true;
	if (notimp)
		return APEX_PARSE_NOTIMP; /* the rest may follow another opcode's layout */

	int opt_seen = 0;
	for (int section = 1; section <= 3; section++) {
		for (unsigned i = 0; i < counts[section - 1]; i++) {
			apex_parse_result_t r = parse_record(pkt, len, &pos, section, &opt_seen, q);
			if (r != APEX_PARSE_OK) {
				q->edns = false;
				return r;
			}
		}
	}
	if (pos != len) {
		q->edns = false;
		return APEX_PARSE_FORMERR; /* trailing garbage */
	}
	if (q->edns && q->edns_version > 0)
		return APEX_PARSE_BADVERS;
	return APEX_PARSE_OK;
}
