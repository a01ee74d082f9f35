/* SPDX-License-Identifier: BSD-3-Clause */
/* The server's TLS contexts for the workers' listeners (tls_service.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "serve/tls_service.h"

#include <string.h>

#include "tls/server_context.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"

bool apex_tls_service_wanted(const apex_config_t *cfg)
{
	for (size_t i = 0; i < cfg->listen_count; i++)
		if (cfg->listens[i].transport != APEX_LISTEN_PLAIN)
			return true;
	return false;
}

/* One server context from cfg's files; client_ca: the tls-auth-port's. */
static int make_context(apex_tls_service_t *svc, const apex_config_t *cfg, bool client_ca,
			SSL_CTX **out, char *err, size_t err_size)
{
	apex_tls_server_options_t o = {
		.cert_file = cfg->tls.service_pem,
		.key_file = cfg->tls.service_key,
		.client_ca_file = client_ca ? cfg->tls.cert_bundle : NULL,
		.tickets = svc->tickets,
	};

	return apex_tls_server_context_new(&o, out, err, err_size);
}

/* New contexts for the listeners there are, put in their slots only when
 * all could be made. */
static int make_contexts(apex_tls_service_t *svc, const apex_config_t *cfg, char *err,
			 size_t err_size)
{
	SSL_CTX *dot = NULL, *auth = NULL;
	int rc = APEX_OK;

	if (svc->has_dot)
		rc = make_context(svc, cfg, false, &dot, err, err_size);
	if (rc == APEX_OK && svc->has_auth)
		rc = make_context(svc, cfg, true, &auth, err, err_size);
	if (rc < 0) {
		SSL_CTX_free(dot);
		SSL_CTX_free(auth);
		return rc;
	}
	if (svc->has_dot)
		apex_tls_context_slot_set(&svc->dot, dot);
	if (svc->has_auth)
		apex_tls_context_slot_set(&svc->auth, auth);
	/* after the slots: a worker that sees the new generation finds them */
	atomic_fetch_add_explicit(&svc->generation, 1, memory_order_release);
	return APEX_OK;
}

int apex_tls_service_init(apex_tls_service_t *svc, const apex_config_t *cfg, char *err,
			  size_t err_size)
{
	memset(svc, 0, sizeof(*svc));
	apex_tls_context_slot_init(&svc->dot);
	apex_tls_context_slot_init(&svc->auth);
	atomic_init(&svc->rotated_ms, apex_monotonic_ms());
	for (size_t i = 0; i < cfg->listen_count; i++) {
		svc->has_dot |= cfg->listens[i].transport == APEX_LISTEN_TLS;
		svc->has_auth |= cfg->listens[i].transport == APEX_LISTEN_TLS_AUTH;
	}
	int rc = apex_tls_ticket_keys_new(&svc->tickets, err, err_size);

	return rc < 0 ? rc : make_contexts(svc, cfg, err, err_size);
}

int apex_tls_service_reload(apex_tls_service_t *svc, const apex_config_t *cfg, char *err,
			    size_t err_size)
{
	return make_contexts(svc, cfg, err, err_size);
}

SSL_CTX *apex_tls_service_context(apex_tls_service_t *svc, apex_listen_transport_t transport)
{
	if (transport == APEX_LISTEN_TLS_AUTH)
		return apex_tls_context_slot_get(&svc->auth);
	if (transport == APEX_LISTEN_TLS)
		return apex_tls_context_slot_get(&svc->dot);
	return NULL;
}

SSL_CTX *apex_tls_worker_context(apex_tls_service_t *svc, apex_tls_worker_contexts_t *mine,
				 apex_listen_transport_t transport)
{
	unsigned generation = atomic_load_explicit(&svc->generation, memory_order_acquire);

	if (!mine->taken || mine->generation != generation) {
		apex_tls_worker_contexts_free(mine);
		mine->dot = apex_tls_service_context(svc, APEX_LISTEN_TLS);
		mine->auth = apex_tls_service_context(svc, APEX_LISTEN_TLS_AUTH);
		mine->generation = generation;
		mine->taken = true;
	}
	return transport == APEX_LISTEN_TLS_AUTH ? mine->auth
	       : transport == APEX_LISTEN_TLS    ? mine->dot
						 : NULL;
}

void apex_tls_worker_contexts_free(apex_tls_worker_contexts_t *mine)
{
	SSL_CTX_free(mine->dot);
	SSL_CTX_free(mine->auth);
	memset(mine, 0, sizeof(*mine));
}

void apex_tls_service_tick(apex_tls_service_t *svc, uint64_t now_ms)
{
	uint64_t last = atomic_load_explicit(&svc->rotated_ms, memory_order_relaxed);
	char err[256];

	if (now_ms < last + APEX_TLS_TICKET_ROTATION_MS)
		return;
	/* one rotation for all the workers that see the hour pass */
	if (!atomic_compare_exchange_strong(&svc->rotated_ms, &last, now_ms))
		return;
	if (apex_tls_ticket_keys_rotate(svc->tickets, err, sizeof(err)) < 0)
		apex_warning("tls: session ticket keys not rotated: %s", err);
}

void apex_tls_service_free(apex_tls_service_t *svc)
{
	apex_tls_context_slot_destroy(&svc->dot);
	apex_tls_context_slot_destroy(&svc->auth);
	apex_tls_ticket_keys_unref(svc->tickets);
	svc->tickets = NULL;
}
