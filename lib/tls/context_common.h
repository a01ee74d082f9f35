/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the server and client contexts share: the protocol floor and
 * options, and a certificate chain with its private key loaded from PEM
 * files (or given in memory).
 */
#ifndef APEX_TLS_CONTEXT_COMMON_H
#define APEX_TLS_CONTEXT_COMMON_H

#include <stddef.h>

#include <openssl/ssl.h>

/* The one ALPN protocol apex speaks: DNS over TLS (RFC 7858, RFC 9103
 * §7.1), in the wire form of a protocol list. */
#define APEX_TLS_ALPN_DOT "\003dot"
#define APEX_TLS_ALPN_DOT_SIZE 4

/* A new context of method with TLS 1.2 at least (1.3 preferred, OpenSSL's
 * highest), no renegotiation, no compression, and the record buffers of
 * an idle connection released (SSL_MODE_RELEASE_BUFFERS).  NULL on failure
 * with the reason in err. */
SSL_CTX *apex_tls_context_base(const SSL_METHOD *method, char *err, size_t err_size);

/* The certificate chain at cert_file (PEM, the leaf first) and the private
 * key at key_file (PEM, encrypted with password unless it is NULL) into
 * ctx, checked to belong together.  The password is used only while the
 * key is read.  The reason of a failure, in err, names the file. */
int apex_tls_context_load_pair(SSL_CTX *ctx, const char *cert_file, const char *key_file,
			       const char *password, char *err, size_t err_size);

/* The same with a certificate and key in memory (a reference to each
 * taken by ctx), checked to belong together. */
int apex_tls_context_use_pair(SSL_CTX *ctx, X509 *cert, EVP_PKEY *key, char *err, size_t err_size);

#endif
