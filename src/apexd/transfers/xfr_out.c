/* SPDX-License-Identifier: BSD-3-Clause */
/* Outgoing zone transfers on threads of their own (xfr_out.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/xfr_out.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dns/rrtype.h"
#include "process/thread_priority.h"
#include "tls/peer.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "util/siphash.h"
#include "xfr/xfr_serve.h"

#define STOP_WAIT_MS 10000
#define LOG_INTERVAL 60 /* seconds between two log lines of one refusal */

/* One request handed over by a worker. */
typedef struct job {
	apex_xfr_out_t *x;
	int fd;
	struct sockaddr_storage peer;
	apex_listen_transport_t transport; /* the listener's */
	apex_tls_session_t *tls;           /* over TLS, the session (owned); NULL: plain TCP */
	size_t size;
	uint8_t msg[]; /* the request */
} job_t;

int apex_xfr_out_init(apex_xfr_out_t *x, apex_server_t *server, apex_settings_holder_t *settings,
		      unsigned max)
{
	memset(x, 0, sizeof(*x));
	x->server = server;
	x->settings = settings;
	x->max = max;
	pthread_mutex_init(&x->log_lock, NULL);
	x->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return x->stop_fd < 0 ? apex_errno() : APEX_OK;
}

void apex_xfr_out_stop(apex_xfr_out_t *x)
{
	uint64_t one = 1;

	if (x->stop_fd < 0)
		return;
	if (write(x->stop_fd, &one, sizeof(one)) < 0)
		apex_warning("outgoing transfers: stop eventfd: %s", strerror(errno));
	for (int ms = 0; ms < STOP_WAIT_MS && atomic_load(&x->running) > 0; ms++)
		usleep(1000);
	if (atomic_load(&x->running) > 0)
		apex_warning("outgoing transfers: %u still running at exit",
			     atomic_load(&x->running));
}

void apex_xfr_out_free(apex_xfr_out_t *x)
{
	if (x->stop_fd >= 0)
		close(x->stop_fd);
	x->stop_fd = -1;
	pthread_mutex_destroy(&x->log_lock);
}

/* What one transfer works with: the settings it began with. */
typedef struct transfer_ctx {
	apex_xfr_out_t *x;
	const apex_config_t *cfg;
} transfer_ctx_t;

/* The served version of zone and its provide-xfr list (xfr_serve.h). */
static bool zone_of(void *ctx, const uint8_t *zone, apex_zone_t **version,
		    const apex_acl_entry_t **acl, size_t *acl_count)
{
	const transfer_ctx_t *tc = ctx;
	apex_xfr_out_t *x = tc->x;

	for (size_t i = 0; i < tc->cfg->zone_count; i++) {
		const apex_zone_config_t *zc = &tc->cfg->zones[i];

		if (!apex_name_equal(zc->origin, zone))
			continue;
		*version = apex_server_served_version(x->server, zone);
		*acl = zc->provide_xfr;
		*acl_count = zc->provide_xfr_count;
		if (*version != NULL && atomic_load(&(*version)->expired)) {
			apex_zone_unref(*version); /* expired: not ours to hand on */
			*version = NULL;
		}
		return *version != NULL;
	}
	return false;
}

static void peer_text(const struct sockaddr_storage *peer, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (peer->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)peer;
		inet_ntop(AF_INET6, &sin6->sin6_addr, addr, sizeof(addr));
		port = ntohs(sin6->sin6_port);
	} else {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)peer;
		inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr));
		port = ntohs(sin->sin_port);
	}
	snprintf(buf, size, "%s#%u", addr, port);
}

/* Whether a refusal of zone to peer's address is to be logged now. */
static bool log_refusal_now(apex_xfr_out_t *x, const struct sockaddr_storage *peer,
			    const uint8_t *zone)
{
	static const uint8_t key[APEX_SIPHASH_KEY_SIZE] = { 0 };
	uint8_t data[16 + APEX_NAME_MAX];
	size_t n;
	time_t now = time(NULL);
	bool log;

	if (peer->ss_family == AF_INET6) {
		memcpy(data, &((const struct sockaddr_in6 *)peer)->sin6_addr, 16);
		n = 16;
	} else {
		memcpy(data, &((const struct sockaddr_in *)peer)->sin_addr, 4);
		n = 4;
	}
	memcpy(data + n, zone, apex_name_size(zone));
	n += apex_name_size(zone);
	uint64_t hash = apex_siphash24(key, data, n);
	size_t slot = hash % APEX_XFR_OUT_LOG_SLOTS;

	pthread_mutex_lock(&x->log_lock);
	log = x->logged[slot].hash != hash || now - x->logged[slot].at >= LOG_INTERVAL;
	if (log) {
		x->logged[slot].hash = hash;
		x->logged[slot].at = now;
	}
	pthread_mutex_unlock(&x->log_lock);
	return log;
}

static void log_result(apex_xfr_out_t *x, const job_t *job, const char *peer, int rc,
		       const apex_xfr_serve_result_t *res, const char *err, double seconds)
{
	char zone[APEX_NAME_MAX * 4 + 1] = "?";
	const char *asked = res->qtype == APEX_TYPE_IXFR ? "IXFR" : "AXFR";

	if (res->zone[0] != 0 || res->why != NULL)
		apex_name_to_str(res->zone, zone, sizeof(zone));
	if (rc < 0) {
		atomic_fetch_add(&x->failed, 1);
		apex_warning("zone %s: %s to %s failed: %s", zone, asked, peer, err);
	} else if (res->rcode != 0) {
		atomic_fetch_add(&x->refused, 1);
		if (log_refusal_now(x, &job->peer, res->zone))
			apex_warning("zone %s: %s refused to %s (RCODE %u): %s (logged once a "
				     "minute per client and zone)",
				     zone, asked, peer, res->rcode, res->why);
	} else {
		atomic_fetch_add(&x->served, 1);
		if (res->qtype == APEX_TYPE_IXFR)
			atomic_fetch_add(&x->ixfr, 1);
		if (res->whole)
			atomic_fetch_add(&x->ixfr_whole, 1);
		apex_info("zone %s: %s serial %u to %s: %llu messages, %llu bytes, %.3f s", zone,
			  res->how, res->serial, peer, (unsigned long long)res->messages,
			  (unsigned long long)res->bytes, seconds);
	}
}

/* The client certificate of a tls-auth-port connection carries name (it
 * was verified against tls-cert-bundle in the handshake). */
static bool cert_has_name(const void *ctx, const char *name)
{
	return apex_tls_peer_name_matches(ctx, name);
}

/* How the request came, as the access lists and tls-auth-xfr-only see it. */
static void conn_of(const job_t *job, const apex_config_t *cfg, apex_acl_tls_peer_t *tls_peer,
		    apex_xfr_serve_conn_t *conn)
{
	memset(conn, 0, sizeof(*conn));
	conn->fd = job->fd;
	conn->tls = job->tls;
	if (job->transport == APEX_LISTEN_TLS_AUTH && job->tls != NULL) {
		tls_peer->has_name = cert_has_name;
		tls_peer->ctx = apex_tls_session_ssl(job->tls);
		conn->tls_peer = tls_peer;
	}
	if (cfg->tls.auth_xfr_only && job->transport != APEX_LISTEN_TLS_AUTH)
		conn->refuse = "not over the tls-auth-port (tls-auth-xfr-only)";
}

static void *transfer_main(void *arg)
{
	job_t *job = arg;
	apex_xfr_out_t *x = job->x;
	apex_settings_t *settings = apex_settings_get(x->settings);
	const apex_config_t *cfg = settings->cfg;
	transfer_ctx_t tc = { x, cfg };
	apex_tsig_keyring_t ring = { cfg->keys, cfg->key_count };
	apex_xfr_timeouts_t t = { 0, cfg->xfr_idle_timeout * 1000u, cfg->xfr_timeout * 1000u,
				  x->stop_fd };
	apex_xfr_serve_result_t res;
	apex_xfr_serve_conn_t conn;
	apex_acl_tls_peer_t tls_peer;
	char peer[80], err[300] = "";
	uint64_t start = apex_monotonic_ms();

	pthread_setname_np(pthread_self(), "apexd-xfr-out");
	/* below the workers, as reload-priority says: it was created by one */
	apex_thread_lower_priority(NULL, cfg->reload_idle, (int)cfg->reload_nice);
	peer_text(&job->peer, peer, sizeof(peer));
	if (job->tls != NULL)
		strncat(peer,
			job->transport == APEX_LISTEN_TLS_AUTH ? " (TLS, client certificate)"
							       : " (TLS)",
			sizeof(peer) - strlen(peer) - 1);
	conn_of(job, cfg, &tls_peer, &conn);
	/* the session is apex_xfr_serve()'s from here */
	int rc = apex_xfr_serve(&conn, (const struct sockaddr *)&job->peer, peer, job->msg,
				job->size, &ring, zone_of, &tc, x->journal, &t, &res, err,
				sizeof(err));
	log_result(x, job, peer, rc, &res, err, (double)(apex_monotonic_ms() - start) / 1000.0);
	apex_settings_put(settings);
	close(job->fd);
	free(job);
	atomic_fetch_sub(&x->running, 1);
	return NULL;
}

bool apex_xfr_out_take(void *ctx, int fd, const struct sockaddr_storage *peer, const uint8_t *msg,
		       size_t size, const apex_tcp_handoff_t *how)
{
	apex_xfr_out_t *x = ctx;
	pthread_attr_t attr;
	pthread_t thread;
	job_t *job;

	if (atomic_fetch_add(&x->running, 1) >= x->max) {
		atomic_fetch_sub(&x->running, 1);
		return false;
	}
	job = malloc(sizeof(*job) + size);
	if (job == NULL) {
		atomic_fetch_sub(&x->running, 1);
		return false;
	}
	job->x = x;
	job->fd = fd;
	job->peer = *peer;
	job->transport = how->transport;
	job->tls = how->tls;
	job->size = size;
	memcpy(job->msg, msg, size);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int err = pthread_create(&thread, &attr, transfer_main, job);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		free(job);
		atomic_fetch_sub(&x->running, 1);
		return false;
	}
	return true;
}
