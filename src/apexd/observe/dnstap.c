/* SPDX-License-Identifier: BSD-3-Clause */
/* dnstap: the workers' rings and the writer thread (libfstrm). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: PACKAGE_VERSION, _GNU_SOURCE */
#endif
#include "observe/dnstap.h"

#include <fstrm.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dnstap/message.h"
#include "dnstap/ring.h"
#include "process/quiet_thread.h"
#include "util/error.h"
#include "util/log.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* A frame: the largest message and its framing. */
#define SCRATCH_SIZE (65535 + 1024)
/* Frames written at once, and the writer's pause when every ring is empty. */
#define WRITE_BATCH 64
#define IDLE_NS 1000000L

/* One worker's side: written by that worker only (the ring's head too). */
typedef struct dnstap_worker {
	_Alignas(64) apex_dnstap_ring_t ring;
	uint8_t *scratch; /* SCRATCH_SIZE bytes, owned */
	apex_worker_stats_t *stats;
	const struct apex_dnstap *tap;
} dnstap_worker_t;

struct apex_dnstap {
	dnstap_worker_t *workers;
	unsigned count;
	bool log_queries, log_responses;
	char identity[256], version[256];
	struct fstrm_writer *writer; /* the writer thread's */
	bool connected;
	char *socket_path;
	pthread_t thread;
	bool thread_started;
	atomic_bool stopping;
	atomic_uint_least64_t written, lost; /* by the writer thread */
};

int apex_dnstap_open(apex_dnstap_t **out, const apex_config_t *cfg, unsigned workers,
		     apex_worker_stats_t *const *stats, char *err, size_t err_size)
{
	apex_dnstap_t *tap = calloc(1, sizeof(*tap));

	*out = NULL;
	if (tap == NULL || (tap->workers = calloc(workers, sizeof(*tap->workers))) == NULL) {
		free(tap);
		return apex_fail(err, err_size, APEX_ENOMEM, "dnstap: out of memory");
	}
	tap->count = workers;
	tap->log_queries = cfg->dnstap.log_queries;
	tap->log_responses = cfg->dnstap.log_responses;
	if (cfg->dnstap.identity != NULL)
		snprintf(tap->identity, sizeof(tap->identity), "%s", cfg->dnstap.identity);
	else if (gethostname(tap->identity, sizeof(tap->identity) - 1) < 0)
		tap->identity[0] = '\0';
	snprintf(tap->version, sizeof(tap->version), "%s",
		 cfg->dnstap.version != NULL ? cfg->dnstap.version : "apexd " PACKAGE_VERSION);
	atomic_init(&tap->stopping, false);
	atomic_init(&tap->written, 0);
	atomic_init(&tap->lost, 0);
	for (unsigned w = 0; w < workers; w++) {
		dnstap_worker_t *dw = &tap->workers[w];

		dw->stats = stats[w];
		dw->tap = tap;
		if (apex_dnstap_ring_init(&dw->ring, APEX_DNSTAP_RING_SIZE) != APEX_OK ||
		    (dw->scratch = malloc(SCRATCH_SIZE)) == NULL) {
			apex_dnstap_stop(tap);
			return apex_fail(err, err_size, APEX_ENOMEM, "dnstap: out of memory");
		}
	}
	*out = tap;
	return APEX_OK;
}

void *apex_dnstap_worker(apex_dnstap_t *tap, unsigned w)
{
	return &tap->workers[w];
}

/* Encode ev into the worker's scratch buffer and push it into its ring. */
static void push_frame(dnstap_worker_t *dw, apex_dnstap_event_t *ev)
{
	ev->identity = dw->tap->identity[0] != '\0' ? dw->tap->identity : NULL;
	ev->version = dw->tap->version;
	size_t size = apex_dnstap_encode(ev, dw->scratch, SCRATCH_SIZE);
	if (size > 0 && apex_dnstap_ring_push(&dw->ring, dw->scratch, size))
		APEX_STAT_ADD(dw->stats->dnstap_frames, 1);
	else
		APEX_STAT_ADD(dw->stats->dnstap_dropped, 1);
}

void apex_dnstap_log(void *worker_ctx, apex_transport_t transport,
		     const struct sockaddr_storage *peer, const uint8_t *query, size_t query_size,
		     const uint8_t *response, size_t response_size)
{
	dnstap_worker_t *dw = worker_ctx;
	static const apex_dnstap_protocol_t protocols[] = {
		[APEX_TRANSPORT_UDP] = APEX_DNSTAP_UDP,
		[APEX_TRANSPORT_TCP] = APEX_DNSTAP_TCP,
		[APEX_TRANSPORT_TLS] = APEX_DNSTAP_DOT,
	};
	apex_dnstap_event_t ev = { .protocol = protocols[transport] };
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now); /* the vDSO: no system call */
	if (peer->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)peer;
		ev.client_addr = sin6->sin6_addr.s6_addr;
		ev.client_addr_size = 16;
		ev.client_port = ntohs(sin6->sin6_port);
	} else {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)peer;
		ev.client_addr = (const uint8_t *)&sin->sin_addr;
		ev.client_addr_size = 4;
		ev.client_port = ntohs(sin->sin_port);
	}
	ev.query_sec = ev.response_sec = (uint64_t)now.tv_sec;
	ev.query_nsec = ev.response_nsec = (uint32_t)now.tv_nsec;
	if (dw->tap->log_queries) {
		ev.message = query;
		ev.message_size = query_size;
		push_frame(dw, &ev);
	}
	if (dw->tap->log_responses && response_size > 0) {
		ev.response = true;
		ev.message = response;
		ev.message_size = response_size;
		push_frame(dw, &ev);
	}
}

/* Connect to the collector (the writer thread); logs the first failure of a series. */
static void writer_connect(apex_dnstap_t *tap, bool *warned)
{
	if (fstrm_writer_open(tap->writer) == fstrm_res_success) {
		tap->connected = true;
		*warned = false;
		apex_info("dnstap: connected to %s", tap->socket_path);
		return;
	}
	if (!*warned)
		apex_warning("dnstap: cannot connect to %s: frames are dropped until it can",
			     tap->socket_path);
	*warned = true;
}

/* Take up to WRITE_BATCH frames of one ring and write them; returns how many. */
static unsigned write_ring(apex_dnstap_t *tap, apex_dnstap_ring_t *ring, bool *warned)
{
	struct iovec iov[WRITE_BATCH];
	size_t at = apex_dnstap_ring_tail(ring), size;
	const uint8_t *frame;
	unsigned n = 0;

	while (n < WRITE_BATCH && (frame = apex_dnstap_ring_next(ring, &at, &size)) != NULL)
		iov[n++] = (struct iovec){ (void *)frame, size };
	if (n == 0)
		return 0;
	if (tap->connected && fstrm_writer_writev(tap->writer, iov, (int)n) == fstrm_res_success) {
		atomic_fetch_add_explicit(&tap->written, n, memory_order_relaxed);
	} else {
		if (tap->connected) {
			apex_warning("dnstap: writing to %s failed: connecting again",
				     tap->socket_path);
			fstrm_writer_close(tap->writer);
			tap->connected = false;
			*warned = true;
		}
		atomic_fetch_add_explicit(&tap->lost, n, memory_order_relaxed);
	}
	apex_dnstap_ring_release(ring, at);
	return n;
}

static void *writer_main(void *arg)
{
	apex_dnstap_t *tap = arg;
	struct timespec last_try = { 0 }, now, idle = { 0, IDLE_NS };
	bool warned = false;

	for (;;) {
		bool stopping = atomic_load(&tap->stopping);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!tap->connected && now.tv_sec != last_try.tv_sec) {
			last_try = now;
			writer_connect(tap, &warned);
		}
		unsigned moved = 0;
		for (unsigned w = 0; w < tap->count; w++)
			moved += write_ring(tap, &tap->workers[w].ring, &warned);
		if (moved == 0 && stopping)
			break; /* every ring written: the workers have stopped */
		if (moved == 0)
			nanosleep(&idle, NULL);
	}
	if (tap->connected)
		fstrm_writer_close(tap->writer);
	return NULL;
}

int apex_dnstap_run(apex_dnstap_t *tap, const char *socket_path, char *err, size_t err_size)
{
	struct fstrm_writer_options *wopt = fstrm_writer_options_init();
	struct fstrm_unix_writer_options *uwopt = fstrm_unix_writer_options_init();
	int rc;

	if ((tap->socket_path = strdup(socket_path)) == NULL || wopt == NULL || uwopt == NULL) {
		rc = apex_fail(err, err_size, APEX_ENOMEM, "dnstap: out of memory");
		goto done;
	}
	fstrm_writer_options_add_content_type(wopt, APEX_DNSTAP_CONTENT_TYPE,
					      strlen(APEX_DNSTAP_CONTENT_TYPE));
	fstrm_unix_writer_options_set_socket_path(uwopt, socket_path);
	if ((tap->writer = fstrm_unix_writer_init(uwopt, wopt)) == NULL) {
		rc = apex_fail(err, err_size, APEX_ENOMEM, "dnstap: cannot create the writer");
		goto done;
	}
	if ((rc = apex_quiet_thread_start(&tap->thread, writer_main, tap)) < 0) {
		rc = apex_fail(err, err_size, rc, "dnstap thread: %s", apex_strerror(rc));
		goto done;
	}
	tap->thread_started = true;
	rc = APEX_OK;
done:
	if (wopt != NULL)
		fstrm_writer_options_destroy(&wopt);
	if (uwopt != NULL)
		fstrm_unix_writer_options_destroy(&uwopt);
	return rc;
}

void apex_dnstap_stop(apex_dnstap_t *tap)
{
	if (tap == NULL)
		return;
	atomic_store(&tap->stopping, true);
	if (tap->thread_started) {
		/* a collector that stopped reading holds the writer in a write:
		 * wait for it a while, then leave the thread and its memory */
		struct timespec limit;
		clock_gettime(CLOCK_REALTIME, &limit);
		limit.tv_sec += 5;
		if (pthread_timedjoin_np(tap->thread, NULL, &limit) != 0) {
			apex_warning(
				"dnstap: the collector at %s does not read: not waiting for it",
				tap->socket_path);
			return;
		}
	}
	if (tap->writer != NULL)
		fstrm_writer_destroy(&tap->writer);
	for (unsigned w = 0; w < tap->count; w++) {
		apex_dnstap_ring_free(&tap->workers[w].ring);
		free(tap->workers[w].scratch);
	}
	free(tap->workers);
	free(tap->socket_path);
	free(tap);
}

void apex_dnstap_totals(const apex_dnstap_t *tap, uint64_t *written, uint64_t *lost)
{
	*written = tap != NULL ? atomic_load(&tap->written) : 0;
	*lost = tap != NULL ? atomic_load(&tap->lost) : 0;
}
