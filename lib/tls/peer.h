/* SPDX-License-Identifier: BSD-3-Clause */
/* What the peer of a completed handshake presented: the name in its
 * certificate, the ALPN protocol agreed. */
#ifndef APEX_TLS_PEER_H
#define APEX_TLS_PEER_H

#include <stdbool.h>

#include <openssl/ssl.h>

/* Whether the peer's certificate, verified, carries name (a host name,
 * with or without its final dot; a configured auth-domain-name): its
 * subjectAltName dNSNames, or its subject's CN when it has none
 * (X509_check_host(), no partial wildcards).  False without a verified
 * certificate. */
bool apex_tls_peer_name_matches(const SSL *ssl, const char *name);

/* Whether the ALPN protocol agreed is "dot" (false when none was). */
bool apex_tls_alpn_is_dot(const SSL *ssl);

#endif
