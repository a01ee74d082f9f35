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
 * closed before they return.
 */
#ifndef APEX_XFR_XFR_CLIENT_H
#define APEX_XFR_XFR_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tsig/tsig.h"
#include "xfr/tcp_stream.h"
#include "xfr/xfr_in.h"

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
