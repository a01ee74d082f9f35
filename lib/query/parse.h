/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parsing of a query message: header, the one question, and the EDNS
 * OPT record (RFC 6891).  Nothing is allocated: the result lives in the
 * caller's apex_query_t (on its stack).
 */
#ifndef APEX_QUERY_PARSE_H
#define APEX_QUERY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/edns.h" /* the option codes */
#include "dns/name.h"

/* What the parser decided about a message. */
typedef enum {
	APEX_PARSE_OK = 0,  /* a well-formed QUERY: answer it */
	APEX_PARSE_DROP,    /* no response at all (QR=1, shorter than a header) */
	APEX_PARSE_FORMERR, /* malformed: FORMERR */
	APEX_PARSE_NOTIMP,  /* opcode other than QUERY: NOTIMP */
	APEX_PARSE_BADVERS, /* EDNS version above 0: BADVERS with OPT */
} apex_parse_result_t;

typedef struct apex_query {
	uint16_t id;
	uint16_t flags; /* header flags word as received */

	bool has_question; /* qname/qtype/qclass are valid */
	uint8_t qname_size;
	uint16_t qtype;
	uint16_t qclass;

	bool edns; /* a valid OPT record was present */
	uint8_t edns_version;
	bool dnssec_ok;       /* DO bit */
	uint16_t udp_payload; /* requestor's payload size, at least 512 */
	bool nsid;            /* NSID requested */
	bool zoneversion;     /* an empty ZONEVERSION option: the zone's version asked */
	bool expire;          /* an EXPIRE option (RFC 7314): the zone's expire time asked */
	/* The EXPIRE option to send back, set by apex_answer_from() for an
	 * SOA or IXFR query asking for it (RFC 7314 section 2). */
	bool expire_reply;
	uint32_t expire_seconds;
	/* COOKIE option (RFC 7873), the first one if several: client cookie
	 * and the server cookie that followed it (0 bytes: none). */
	bool cookie;
	uint8_t cookie_server_size;
	/* The COOKIE option to send back (client + new server cookie), set
	 * by apex_answer_from() when cookies are on; 0: none. */
	uint8_t cookie_reply_size;
	bool tsig;            /* a TSIG record came (the worker checks it and signs the answer) */
	bool ixfr_soa;        /* an SOA in the authority section (an IXFR's, RFC 1995) */
	uint32_t ixfr_serial; /* its serial */

	/* The arrays: apex_query_parse() clears the fields above only, and
	 * each array holds data only as the fields above say. */
	uint8_t qname[APEX_NAME_MAX]; /* uncompressed, letter case as received */
	uint8_t cookie_client[8];
	uint8_t cookie_server[32];
	uint8_t cookie_reply[24];
} apex_query_t;

/*
 * Parse pkt[0..len) into q.  Never reads outside pkt.  On FORMERR or
 * NOTIMP, q->has_question tells whether the question can be echoed; on
 * BADVERS q->edns is true.
 */
apex_parse_result_t apex_query_parse(const uint8_t *pkt, size_t len, apex_query_t *q);

#endif
