/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The query engine: one query message in, one response message out.
 *
 * apex_answer() reads only the immutable zoneset and configuration and
 * writes only the caller's buffers: no allocation, no lock, no write to
 * memory shared with another thread.  A worker thread calls it with its
 * own (thread-local) output buffer.
 */
#ifndef APEX_QUERY_ANSWER_H
#define APEX_QUERY_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/zoneset.h"

/* Server-wide answer settings; read-only while workers run. */
typedef struct apex_answer_config {
	uint16_t edns_payload; /* our UDP payload size in OPT (default 1232) */
	const uint8_t *nsid;   /* NSID option payload (RFC 5001), NULL = off */
	uint16_t nsid_size;
	/* CHAOS TXT answers; NULL = REFUSED for that name (off by default). */
	const char *chaos_id;      /* id.server. and hostname.bind. */
	const char *chaos_version; /* version.server. and version.bind. */
	/* DNS cookies (query/cookie.h): the 16-byte server secret; NULL =
	 * cookies off (a cookie option is then only checked for syntax). */
	const uint8_t *cookie_secret;
	/* A second secret whose server cookies are accepted too (a rotation
	 * across the servers that share it), never used to make one; NULL. */
	const uint8_t *cookie_staging_secret;
	/* Over UDP, a query with a client cookie but no valid server cookie
	 * gets BADCOOKIE with a new server cookie, not the answer (RFC 7873
	 * section 5.2.3); queries without a cookie are answered. */
	bool require_cookie;
} apex_answer_config_t;

/* Defaults: edns_payload 1232, everything else off. */
void apex_answer_config_init(apex_answer_config_t *cfg);

typedef enum {
	APEX_TRANSPORT_UDP = 0,
	APEX_TRANSPORT_TCP = 1,
	APEX_TRANSPORT_TLS = 2, /* DNS over TLS: a stream, answered as over TCP */
} apex_transport_t;

/* What happened to one query, for the caller's statistics. */
typedef struct apex_answer_info {
	uint16_t qtype; /* 0 if the question could not be read */
	uint8_t rcode;  /* rcode of the response (low 4 bits + extended) */
	bool truncated; /* TC was set */
	bool dropped;   /* no response (e.g. QR=1, too short) */
	uint8_t cookie; /* apex_cookie_status_t of the query's cookie */
	bool tsig;      /* the query carries a TSIG record: its answer is to be signed */
	bool edns;      /* the query has an OPT record */
	bool dnssec_ok; /* ... with the DO bit */
	/* The stats_slot of the zone the question was answered from (the
	 * first of a CNAME chain's), or APEX_ANSWER_NO_ZONE. */
	uint32_t zone_slot;
} apex_answer_info_t;

#define APEX_ANSWER_NO_ZONE UINT32_MAX

/* Who sent a query, for what depends on it (server cookies). */
typedef struct apex_answer_client {
	const uint8_t *addr; /* IPv4 (4 bytes) or IPv6 (16 bytes) source address */
	uint8_t addr_size;
	uint32_t now; /* wall-clock seconds (RFC 9018 timestamps) */
} apex_answer_client_t;

/*
 * Answer the query in query[0..query_size).  The response is written to
 * out[0..out_capacity) (at least 512; 65535 for TCP).  Returns the
 * response size, or 0 if the message must be dropped silently.
 * info may be NULL.
 */
size_t apex_answer(const apex_zoneset_t *zones, const apex_answer_config_t *cfg,
		   apex_transport_t transport, const uint8_t *query, size_t query_size,
		   uint8_t *out, size_t out_capacity, apex_answer_info_t *info);

/*
 * apex_answer() for a query from client (NULL: unknown, as for
 * apex_answer()): with cookies on, a query's cookie is verified and a
 * new server cookie returned.
 */
size_t apex_answer_from(const apex_zoneset_t *zones, const apex_answer_config_t *cfg,
			apex_transport_t transport, const apex_answer_client_t *client,
			const uint8_t *query, size_t query_size, uint8_t *out, size_t out_capacity,
			apex_answer_info_t *info);

/* A query read ahead of its answer (query/answer_ahead.h). */
typedef struct apex_answer_ahead apex_answer_ahead_t;

/* apex_answer_from() for a query read ahead into a (its name and zone
 * taken from a when it has them).  The answer is the one
 * apex_answer_from() gives. */
size_t apex_answer_ahead(const apex_zoneset_t *zones, const apex_answer_config_t *cfg,
			 apex_transport_t transport, const apex_answer_client_t *client,
			 apex_answer_ahead_t *a, const uint8_t *query, size_t query_size,
			 uint8_t *out, size_t out_capacity, apex_answer_info_t *info);

/*
 * The BADCOOKIE answer (RFC 7873 section 5.2.3) to query from client:
 * the question and an OPT record with the client cookie and a new server
 * cookie; 0 when the query has no cookie or cookies are off.  For a
 * rate-limited client that sent a cookie, instead of a truncated answer:
 * with the cookie it retries, it is not limited.
 */
size_t apex_answer_badcookie(const apex_answer_config_t *cfg, const apex_answer_client_t *client,
			     const uint8_t *query, size_t query_size, uint8_t *out,
			     size_t out_capacity);

#endif
