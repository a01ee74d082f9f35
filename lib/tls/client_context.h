/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client's TLS context: a secondary requesting zone transfers over TLS
 * from its primaries (RFC 9103; NSD's tls-auth clause).  TLS 1.2 at least,
 * the ALPN protocol "dot" offered, the server's certificate verified
 * against a CA bundle (the system's default store without one), and the
 * name it must carry (auth-domain-name) set for each connection
 * (apex_tls_session_new_client()).  A client certificate is sent when one
 * is configured (mutual TLS).  Reference counted like every SSL_CTX
 * (server_context.h).
 */
#ifndef APEX_TLS_CLIENT_CONTEXT_H
#define APEX_TLS_CLIENT_CONTEXT_H

#include <stddef.h>

#include <openssl/ssl.h>

typedef struct apex_tls_client_options {
	const char *ca_file;      /* tls-cert-bundle (PEM), or NULL: the system's default store */
	const char *cert_file;    /* client-cert (PEM chain), or NULL: no client certificate */
	const char *key_file;     /* client-key (PEM), with cert_file */
	const char *key_password; /* client-key-pw, or NULL: the key is not encrypted */
} apex_tls_client_options_t;

/* A new client context from o into *out (one reference, the caller's:
 * SSL_CTX_free()).  Returns APEX_OK, or an error with the reason in err. */
int apex_tls_client_context_new(const apex_tls_client_options_t *o, SSL_CTX **out, char *err,
				size_t err_size);

#endif
