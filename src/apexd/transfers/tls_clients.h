/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TLS client contexts of a secondary's primaries (RFC 9103, zone
 * transfers over TLS): one per tls-auth: clause of a configuration, with
 * tls-cert-bundle's CAs (or the system's) to verify the primary and the
 * clause's client certificate for mutual TLS.  Built from files: at start
 * while apexd is privileged, and again by the transfer thread when a
 * reconfig brings new settings (the files must then be readable by the
 * user apexd runs as).  A clause whose files cannot be read has no
 * context: its primaries are not asked, and the reason says why.
 */
#ifndef APEXD_TRANSFERS_TLS_CLIENTS_H
#define APEXD_TRANSFERS_TLS_CLIENTS_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "config/daemon_config.h"

typedef struct apex_tls_clients {
	const apex_tls_auth_t *auths; /* the configuration's clauses (not owned) */
	size_t count;
	SSL_CTX **ctx; /* one per clause, owned; NULL: could not be made */
	char **why;    /* then the reason, owned */
} apex_tls_clients_t;

/* The contexts of cfg's clauses (failures logged and kept as reasons).
 * Returns APEX_OK or APEX_ENOMEM; free with apex_tls_clients_free(). */
int apex_tls_clients_build(apex_tls_clients_t *c, const apex_config_t *cfg);

/* The context of clause auth (borrowed), or NULL with the reason in *why. */
SSL_CTX *apex_tls_clients_get(const apex_tls_clients_t *c, const apex_tls_auth_t *auth,
			      const char **why);

void apex_tls_clients_free(apex_tls_clients_t *c);

#endif
