/* SPDX-License-Identifier: BSD-3-Clause */
#include "query/answer_ahead.h"

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"

/* The size of the plain name at query[APEX_HEADER_SIZE..query_size): its
 * labels all shorter than 64 bytes (no compression pointer), its root
 * label within the message, at most APEX_NAME_MAX bytes; 0 if it is not
 * one.  The parser (query/parse.c) copies such a name as it is, so a
 * name prepared from it is the one the answer would prepare. */
static size_t plain_name_size(const uint8_t *query, size_t query_size)
{
	size_t pos = APEX_HEADER_SIZE;
	for (;;) {
		if (pos >= query_size || pos - APEX_HEADER_SIZE >= APEX_NAME_MAX)
			return 0;
		uint8_t len = query[pos];
		if (len == 0)
			return pos + 1 - APEX_HEADER_SIZE;
		if (len >= 64)
			return 0;
		pos += 1 + (size_t)len;
	}
}

/* Whether the record after the question, which ends at query + end, is
 * an OPT record with the DO bit (RFC 6891 6.1.2, RFC 3225): where a
 * client puts it, the first and only additional record.  A query that
 * has it elsewhere is answered the same; only its lookahead does less. */
static bool asks_dnssec(const uint8_t *query, size_t query_size, size_t end)
{
	const uint8_t *opt = query + end;

	return query[10] == 0 && query[11] == 1 && end + 11 <= query_size && opt[0] == 0 &&
	       opt[1] == 0 && opt[2] == APEX_TYPE_OPT && (opt[7] & 0x80) != 0;
}

void apex_answer_ahead_begin(apex_answer_ahead_t *a, const apex_zoneset_t *zones,
			     const uint8_t *query, size_t query_size)
{
	a->named = false;
	a->lookup.zone = NULL;
	size_t name_size = query_size < APEX_HEADER_SIZE ? 0 : plain_name_size(query, query_size);
	if (name_size == 0)
		return;
	apex_lookup_name_init(&a->name, query + APEX_HEADER_SIZE);
	a->zone = apex_zoneset_find_name(zones, &a->name, a->name.labels);
	a->named = true;
	apex_lookup_ahead_slots(&a->lookup, a->zone, &a->name);
	a->lookup.proofs = a->zone != NULL && a->zone->dnssec == APEX_DNSSEC_NSEC3 &&
			   asks_dnssec(query, query_size, APEX_HEADER_SIZE + name_size + 4);
}
