/* SPDX-License-Identifier: BSD-3-Clause */
/* The TLS of one of a worker's TCP connections (tcp_tls.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "serve/tcp_tls.h"

#include <string.h>

#include <openssl/x509.h>

#include "util/error.h"
#include "util/log.h"

int apex_tcp_tls_start(apex_tcp_tls_t *t, SSL_CTX *ctx, apex_listen_transport_t transport)
{
	char err[256];

	memset(t, 0, sizeof(*t));
	t->transport = transport;
	int rc = apex_tls_session_new_server(ctx, &t->session, err, sizeof(err));
	if (rc < 0)
		apex_warning("tls: %s", err);
	return rc;
}

void apex_tcp_tls_free(apex_tcp_tls_t *t)
{
	apex_tls_session_free(t->session);
	memset(t, 0, sizeof(*t));
}

int apex_tcp_tls_received(apex_tcp_tls_t *t, const uint8_t *data, size_t n)
{
	char err[256];

	return apex_tls_session_feed(t->session, data, n, err, sizeof(err));
}

/* Why a handshake failed (reason: its text), for the statistics: on the
 * tls-auth-port a client certificate that did not verify, or none sent
 * when asked for; else the rest. */
static apex_stats_tls_failure_t failure_of(const apex_tcp_tls_t *t, const char *reason)
{
	SSL *ssl = apex_tls_session_ssl(t->session);

	if (t->transport != APEX_LISTEN_TLS_AUTH)
		return APEX_STATS_TLS_PROTOCOL;
	if (SSL_get_verify_result(ssl) != X509_V_OK ||
	    strstr(reason, "did not return a certificate") != NULL)
		return APEX_STATS_TLS_CERTIFICATE;
	return APEX_STATS_TLS_PROTOCOL;
}

int apex_tcp_tls_plaintext(apex_tcp_tls_t *t, apex_worker_stats_t *stats, uint8_t *buf,
			   size_t capacity, size_t *got)
{
	char err[256];
	int rc = apex_tls_session_read(t->session, buf, capacity, got, err, sizeof(err));

	if (t->counted)
		return rc;
	if (rc < 0) {
		t->counted = true;
		APEX_STAT_ADD(stats->tls_failed[failure_of(t, err)], 1);
		apex_debug("tls: %s", err);
	} else if (apex_tls_session_state(t->session) != APEX_TLS_HANDSHAKE) {
		t->counted = true;
		APEX_STAT_ADD(stats->tls_handshakes, 1);
		if (apex_tls_session_resumed(t->session))
			APEX_STAT_ADD(stats->tls_resumed, 1);
	}
	return rc;
}

bool apex_tcp_tls_handshaking(const apex_tcp_tls_t *t)
{
	return apex_tls_session_state(t->session) == APEX_TLS_HANDSHAKE;
}

bool apex_tcp_tls_ended(const apex_tcp_tls_t *t)
{
	apex_tls_state_t state = apex_tls_session_state(t->session);

	return state == APEX_TLS_CLOSED || state == APEX_TLS_FAILED;
}

int apex_tcp_tls_encrypt(apex_tcp_tls_t *t, const uint8_t *data, size_t size)
{
	char err[256];

	return apex_tls_session_write(t->session, data, size, err, sizeof(err));
}

size_t apex_tcp_tls_output(apex_tcp_tls_t *t, uint8_t *buf, size_t capacity)
{
	return apex_tls_session_take_output(t->session, buf, capacity);
}

bool apex_tcp_tls_output_pending(const apex_tcp_tls_t *t)
{
	return t->session != NULL && apex_tls_session_output_pending(t->session) > 0;
}

void apex_tcp_tls_close(apex_tcp_tls_t *t)
{
	char err[256];

	if (apex_tls_session_state(t->session) == APEX_TLS_OPEN)
		apex_tls_session_close(t->session, err, sizeof(err));
}

apex_tls_session_t *apex_tcp_tls_take(apex_tcp_tls_t *t)
{
	apex_tls_session_t *s = t->session;

	t->session = NULL;
	return s;
}

void apex_tcp_tls_count_timeout(apex_tcp_tls_t *t, apex_worker_stats_t *stats)
{
	if (t->counted)
		return;
	t->counted = true;
	APEX_STAT_ADD(stats->tls_failed[APEX_STATS_TLS_TIMEOUT], 1);
}
