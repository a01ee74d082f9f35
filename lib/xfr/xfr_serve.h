/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A primary's side of a zone transfer: one AXFR or IXFR request received
 * over TCP, checked and answered on a transfer thread (never a worker).
 *
 * The request is checked in this order: its TSIG record (a signature that
 * does not verify: NOTAUTH, unsigned); one question of class IN for a zone
 * served here (else NOTAUTH, RFC 5936 section 2.2.1); the zone's
 * provide-xfr list (an address it does not allow or BLOCKED: REFUSED; the
 * wrong key or none: NOTAUTH).  An allowed AXFR gets the whole served
 * version (axfr_out.h); an IXFR (RFC 1995) the version's SOA alone when
 * the secondary's serial is not older, else the change sets from the
 * journal when the caller has them from that serial (ixfr_out.h), else
 * the whole zone.  Every message is signed when the request was (the
 * running MAC of RFC 8945 section 5.3.1).
 */
#ifndef APEX_XFR_XFR_SERVE_H
#define APEX_XFR_XFR_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tsig/tsig.h"
#include "xfr/acl.h"
#include "xfr/tcp_stream.h"
#include "zone/zone.h"

/* A zone served here: the version to send (a reference the caller of
 * apex_xfr_serve() gets and apex_xfr_serve() drops) and its provide-xfr
 * list; false when the zone is not served. */
typedef bool (*apex_xfr_serve_zone_fn)(void *ctx, const uint8_t *zone, apex_zone_t **version,
				       const apex_acl_entry_t **acl, size_t *acl_count);

/* The change sets that lead from serial to the version being sent, or
 * none (*count 0: send the whole zone).  The arrays stay the caller's
 * until release(ctx, sets_ctx). */
typedef struct apex_xfr_serve_journal {
	void *ctx;
	void (*changes)(void *ctx, const uint8_t *zone, uint32_t from, uint32_t to,
			const uint8_t *const **sets, const size_t **sizes, size_t *count,
			void **sets_ctx);
	void (*release)(void *ctx, void *sets_ctx);
} apex_xfr_serve_journal_t;

/* The connection a request came on: its descriptor (not owned) and, when
 * it came over TLS, the session it goes on with (owned: ended, with
 * close_notify, before apex_xfr_serve() returns), the client certificate
 * the access list may ask for (a verified one, or NULL), and when every
 * request on it is to be refused, why (tls-auth-xfr-only). */
typedef struct apex_xfr_serve_conn {
	int fd;
	apex_tls_session_t *tls;
	const apex_acl_tls_peer_t *tls_peer;
	const char *refuse;
} apex_xfr_serve_conn_t;

typedef struct apex_xfr_serve_result {
	uint8_t rcode;   /* of the answer */
	uint16_t qtype;  /* asked: AXFR or IXFR (0 when unknown) */
	const char *how; /* "AXFR", "IXFR", "IXFR as AXFR", "IXFR up to date" */
	bool whole;      /* an IXFR answered with the whole zone ("IXFR as AXFR") */
	const char *why; /* when refused or failed: the reason */
	uint8_t zone[APEX_NAME_MAX];
	uint32_t serial;
	uint64_t messages, bytes;
} apex_xfr_serve_result_t;

/*
 * Answer the request msg[0..size) from peer on the connected socket fd
 * (not closed here), under t.  journal may be NULL.  Returns APEX_OK when
 * an answer (a transfer or a refusal) was sent; otherwise an apex code
 * with the reason in err (the peer went away, a time-out, a version that
 * cannot be sent).
 */
int apex_xfr_serve(const apex_xfr_serve_conn_t *conn, const struct sockaddr *peer,
		   const char *peer_text, const uint8_t *msg, size_t size,
		   const apex_tsig_keyring_t *ring, apex_xfr_serve_zone_fn zone_of, void *ctx,
		   const apex_xfr_serve_journal_t *journal, const apex_xfr_timeouts_t *t,
		   apex_xfr_serve_result_t *res, char *err, size_t err_size);

/* The type asked by a query (the first question's), or 0 when msg is not
 * a query with one question: how a worker tells an AXFR or IXFR. */
uint16_t apex_xfr_request_type(const uint8_t *msg, size_t size);

#endif
