/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A secondary's side of the conversation with a primary, over TCP: the
 * SOA query that tells whether the zone changed, and the AXFR or IXFR
 * request whose response stream goes to the reader of incoming transfers
 * (xfr_in.h).  Every message is signed with the primary's TSIG key when
 * it has one, and every message of the answer must then be signed by it.
 *
 * The calls block, each within its time limits: they run on the thread
 * that keeps the secondary zones, never on a worker.  The socket is
 * closed before they return, or kept in primary->kept.
 */
#ifndef APEX_XFR_XFR_CLIENT_H
#define APEX_XFR_XFR_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tsig/tsig.h"
#include "xfr/tcp_stream.h"
#include "xfr/xfr_in.h"

/*
 * A connection to a primary kept open after an exchange that went well,
 * for the next exchange of the same thread with the same address (RFC
 * 5936 section 4.1: a connection may carry several requests; RFC 7766
 * section 6.2.1).  A catalog's thousand new members come from one
 * primary back to back: a TCP handshake and close less each.  Plain TCP
 * only; used again within APEX_XFR_KEPT_MS, and checked to be still open
 * first; a request the kept connection does not answer is sent again on
 * a new one.  fd -1: none.  One per thread, owned by it.
 */
typedef struct apex_xfr_kept {
	int fd;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	uint64_t since_ms; /* CLOCK_MONOTONIC */
} apex_xfr_kept_t;

/* Shorter than any primary's idle limit (Knot DNS 10 s, BIND 30 s, NSD
 * 120 s): a connection is closed by apexd, never left to time out. */
#define APEX_XFR_KEPT_MS 2000

#define APEX_XFR_KEPT_NONE \
	{                  \
		.fd = -1   \
	}

/* The connection kept closed, if there is one and older_than_ms (0: any
 * age) have passed since. */
void apex_xfr_kept_close(apex_xfr_kept_t *kept, uint64_t older_than_ms);

typedef struct apex_xfr_primary {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	const apex_tsig_key_t *key; /* NULL: unsigned */
	const char *text;           /* for messages: "192.0.2.1@53" */
	/* Over TLS (RFC 9103): the client context, and the name the primary's
	 * certificate must carry (its auth-domain-name, RFC 9103 section
	 * 9.3.2: a certificate that does not verify or does not name it means
	 * no exchange).  tls_name without tls: TLS is wanted but no context
	 * could be made, tls_error says why.  NULL: plain TCP. */
	SSL_CTX *tls;
	const char *tls_name;
	const char *tls_error;
	/* where the calling thread keeps a connection (plain TCP only); NULL:
	 * each exchange on a connection of its own */
	apex_xfr_kept_t *kept;
} apex_xfr_primary_t;

/*
 * Ask the primary for the zone's SOA serial.  APEX_OK with *serial and
 * *expire, the answer's EDNS EXPIRE value (RFC 7314; -1: none);
 * otherwise an apex code with the reason in err (no answer in time, an
 * error RCODE, no SOA, a bad or missing signature).
 */
int apex_xfr_client_soa(const apex_xfr_primary_t *primary, const uint8_t *origin,
			const apex_xfr_timeouts_t *t, uint32_t *serial, int64_t *expire, char *err,
			size_t err_size);

/*
 * Request a transfer of origin (qtype APEX_TYPE_AXFR, or APEX_TYPE_IXFR
 * from known_serial) and read the whole answer into x, which this call
 * initialises with handler and limits (release it with apex_xfr_in_free()
 * in every case; it holds the counts and the style afterwards).  APEX_OK
 * once the transfer is complete; otherwise an apex code with the reason
 * in err.
 */
int apex_xfr_client_transfer(const apex_xfr_primary_t *primary, const uint8_t *origin,
			     uint16_t qtype, uint32_t known_serial,
			     const apex_xfr_in_handler_t *handler,
			     const apex_xfr_in_limits_t *limits, const apex_xfr_timeouts_t *t,
			     apex_xfr_in_t *x, char *err, size_t err_size);

#endif
