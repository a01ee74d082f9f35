/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The server's TLS context: DNS over TLS (RFC 7858) and zone transfers
 * over TLS (RFC 9103).  TLS 1.2 at least, 1.3 when the client has it; the
 * ALPN protocol "dot" selected when the client offers it, a handshake
 * whose client offers other protocols but not "dot" refused with the
 * alert no_application_protocol (RFC 9103 §7.1), a client that offers
 * none accepted (DoT clients need not send ALPN); no renegotiation, no
 * compression, no 0-RTT data.  Sessions resume through stateless tickets
 * only (no session cache on the server), encrypted with a rotating key
 * ring (ticket_keys.h); where client certificates are required, only a
 * session that has one resumes.
 *
 * An SSL_CTX is reference counted (SSL_CTX_up_ref(), SSL_CTX_free()):
 * each session made from it holds a reference.  Certificate files renewed
 * on disk are taken by making a new context from the same options (the
 * same ticket ring, so that tickets stay valid) and putting it where new
 * connections find it (context_slot.h); the connections open keep the old
 * context, freed with the last of them.
 */
#ifndef APEX_TLS_SERVER_CONTEXT_H
#define APEX_TLS_SERVER_CONTEXT_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "tls/ticket_keys.h"

typedef struct apex_tls_server_options {
	const char *cert_file;    /* tls-service-pem: the certificate chain, PEM, leaf first */
	const char *key_file;     /* tls-service-key: its private key, PEM */
	const char *key_password; /* the key's password, or NULL: not encrypted */
	/* NULL, or tls-cert-bundle (PEM): a client certificate required and
	 * verified against these CAs (mutual TLS, tls-auth-port); the caller
	 * checks its name (apex_tls_peer_name_matches()). */
	const char *client_ca_file;
	/* NULL: no session resumption; else the ticket keys (a reference is
	 * taken for the context). */
	apex_tls_ticket_keys_t *tickets;
	/* Or, both set, instead of the files (then not read): a certificate
	 * and its private key in memory, e.g. made by a test or a fuzz target;
	 * the context takes a reference to each. */
	X509 *cert;
	EVP_PKEY *key;
} apex_tls_server_options_t;

/* A new server context from o into *out (one reference, the caller's:
 * SSL_CTX_free()).  Returns APEX_OK, or an error with the reason in err
 * (naming the file that failed). */
int apex_tls_server_context_new(const apex_tls_server_options_t *o, SSL_CTX **out, char *err,
				size_t err_size);

#endif
