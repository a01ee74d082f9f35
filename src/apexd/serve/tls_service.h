/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The server's TLS for the workers' TCP listeners (NSD's keys): DNS over
 * TLS on the tls-port (RFC 7858), and on the tls-auth-port TLS that asks
 * for a client certificate signed by tls-cert-bundle's CAs (zone transfers
 * over mutual TLS, RFC 9103 section 9.3.3).
 *
 * The certificate files are read by apex_tls_service_init(), while apexd
 * still runs as root and before any chroot; apex_tls_service_reload()
 * (apexctl reconfig) reads them again for the connections accepted from
 * then on, the open ones keeping their context.  Each worker keeps its own
 * reference to the contexts in force (apex_tls_worker_contexts_t) and
 * takes the slots' lock only when a reload made new ones, so an accepted
 * connection costs no lock.  Session tickets' keys
 * rotate once an hour (apex_tls_service_tick(), from the accepting
 * workers: a rotation is a few random bytes under a mutex no handshake
 * takes), so a ticket resumes for one to two hours.
 */
#ifndef APEXD_SERVE_TLS_SERVICE_H
#define APEXD_SERVE_TLS_SERVICE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "config/daemon_config.h"
#include "tls/context_slot.h"
#include "tls/ticket_keys.h"

#define APEX_TLS_TICKET_ROTATION_MS (3600u * 1000u)

typedef struct apex_tls_service {
	apex_tls_context_slot_t dot;  /* the tls-port's: no client certificate */
	apex_tls_context_slot_t auth; /* the tls-auth-port's: a client certificate required */
	apex_tls_ticket_keys_t *tickets;
	_Alignas(64) atomic_uint_least64_t rotated_ms; /* CLOCK_MONOTONIC ms of the last rotation */
	atomic_uint generation; /* of the contexts in the slots: one more per reload */
	bool has_dot, has_auth; /* which listeners there are */
} apex_tls_service_t;

/* Whether cfg has a listener that serves TLS (the service is needed). */
bool apex_tls_service_wanted(const apex_config_t *cfg);

/* The contexts of cfg's TLS listeners, from its certificate files.
 * Returns APEX_OK, or an error with a one-line reason in err (naming the
 * file).  Free with apex_tls_service_free() either way. */
int apex_tls_service_init(apex_tls_service_t *svc, const apex_config_t *cfg, char *err,
			  size_t err_size);

/* The certificate files read again (renewed on disk): new connections get
 * the new contexts.  On failure (reason in err) the old ones stay. */
int apex_tls_service_reload(apex_tls_service_t *svc, const apex_config_t *cfg, char *err,
			    size_t err_size);

/* The context for a listener of transport (TLS or TLS_AUTH), with a
 * reference for the caller (SSL_CTX_free() once the session is made), or
 * NULL. */
SSL_CTX *apex_tls_service_context(apex_tls_service_t *svc, apex_listen_transport_t transport);

/* A worker's references to the contexts in force. */
typedef struct apex_tls_worker_contexts {
	SSL_CTX *dot, *auth; /* owned references; NULL: none yet */
	unsigned generation;
	bool taken;
} apex_tls_worker_contexts_t;

/* The context for a listener of transport, borrowed from the worker's own
 * references (valid until the next call or apex_tls_worker_contexts_free()),
 * or NULL.  The slots are read only when a reload made new contexts. */
SSL_CTX *apex_tls_worker_context(apex_tls_service_t *svc, apex_tls_worker_contexts_t *mine,
				 apex_listen_transport_t transport);

void apex_tls_worker_contexts_free(apex_tls_worker_contexts_t *mine);

/* Rotate the tickets' keys if the last rotation is an hour old (now_ms:
 * CLOCK_MONOTONIC ms).  Any thread. */
void apex_tls_service_tick(apex_tls_service_t *svc, uint64_t now_ms);

void apex_tls_service_free(apex_tls_service_t *svc);

#endif
