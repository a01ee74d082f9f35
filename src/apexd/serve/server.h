/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The apexd server: the served zones, the worker threads and their
 * statistics.
 *
 * Each worker is one thread running one libuv loop that owns, for every
 * listen address, its own SO_REUSEPORT UDP socket and its own
 * SO_REUSEPORT TCP listener.  The kernel spreads UDP flows and new TCP
 * connections over the workers, so a query is received, answered and
 * sent by one thread with no hand-off, no lock and no shared write.
 * UDP sockets are watched with uv_poll and drained with recvmmsg/
 * sendmmsg in batches (udp.c); TCP connections are libuv streams
 * (tcp.c).  One loop per worker rather than separate UDP and TCP threads
 * keeps the thread count at one per CPU and lets a single uv_async stop
 * a worker at once, where a blocking recvmmsg would need a timeout.
 */
#ifndef APEXD_SERVER_H
#define APEXD_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <netinet/in.h>
#include <uv.h>

#include "config/daemon_config.h"
#include "query/answer.h"
#include "observe/stats.h"
#include "process/loop_wakeup.h"
#include "serve/tcp.h"
#include "serve/tls_service.h"
#include "serve/udp.h"
#include "serve/worker.h"
#include "serve/xdp.h"
#include "zone/zoneset.h"

struct apex_server;

/* One worker thread: its loop, its sockets, and its answer path. */
typedef struct apex_worker_thread {
	apex_worker_t worker; /* the answer path (worker.h); cache-line aligned */
	struct apex_server *server;
	pthread_t thread;
	bool thread_started;
	bool loop_ready;
	bool async_ready;

	uv_loop_t loop;
	uv_async_t stop_async;
	/* Sent after a publish so that an idle worker lets go of the old
	 * zoneset at once (a busy one picks it up at its next batch). */
	apex_loop_wakeup_t wake; /* not a uv_async_t: see loop_wakeup.h */

	apex_udp_worker_t udp;
	apex_tcp_worker_t tcp;
	apex_xdp_worker_t xdp; /* its AF_XDP socket, with xdp-interface: */
} apex_worker_thread_t;

typedef struct apex_server {
	const apex_config_t *config;
	apex_answer_config_t answer_config;
	apex_zonetable_t zonetable;
	bool zonetable_ready;

	unsigned worker_count;
	apex_worker_thread_t *workers; /* 64-byte aligned array */

	struct timespec started;      /* CLOCK_MONOTONIC at init, for uptime */
	struct timespec started_wall; /* CLOCK_REALTIME at init */

	apex_tcp_shared_t tcp;  /* what the workers' TCP services share */
	apex_xdp_service_t xdp; /* the XDP program, with xdp-interface: */
	apex_tls_service_t tls; /* the TLS listeners' contexts (tcp.tls points here) */
	bool tls_ready;
	/* The UDP sockets' buffer sizes, as the kernel reports them (twice
	 * what it was asked: it counts its bookkeeping). */
	size_t udp_receive_buffer, udp_send_buffer;
	uint8_t cookie_secret[16]; /* answer_config.cookie_secret points here */
} apex_server_t;

/* Prepare a server for cfg (which must outlive it); no zone, no socket yet. */
int apex_server_init(apex_server_t *server, const apex_config_t *cfg, unsigned workers);

/* Open and bind every worker's UDP and TCP sockets; errors are logged. */
int apex_server_open_sockets(apex_server_t *server);

/* The TLS listeners' certificates and contexts, read while apexd is still
 * privileged (the key is often root's alone); nothing without a TLS
 * listener.  APEX_OK, or an error logged with its reason. */
int apex_server_open_tls(apex_server_t *server);

/*
 * With xdp-interface: attach the XDP program and open the AF_XDP socket
 * of each worker that has a queue; when XDP cannot be set up, say why and
 * serve on the sockets alone.  After any fork: the frames of an AF_XDP
 * socket are pinned memory, which a forked child does not share.
 */
void apex_server_open_xdp(apex_server_t *server);

/* Start the worker threads (sockets must be open). */
int apex_server_start(apex_server_t *server);

/* Ask every worker to stop and wait for the threads to end. */
void apex_server_stop(apex_server_t *server);

/* Close what is left and release the zones. */
void apex_server_destroy(apex_server_t *server);

/*
 * Ask every running worker to pick up the current zoneset now (after a
 * publish), so that the old one is released even by an idle worker.
 * Safe from any thread.
 */
void apex_server_wake_workers(apex_server_t *server);

/* How long a publisher waits for the workers to let go of an old version
 * before leaving it to the last of them to free. */
#define APEX_SERVER_RELEASE_WAIT_MS 5000

/*
 * Drop a publisher's reference to a replaced version (NULL: nothing),
 * after waiting (bounded) for the workers to release it when they run,
 * so that it is freed on the publisher's thread rather than on a worker.
 * The caller must hold no other reference to it; one still held by
 * someone else after APEX_SERVER_RELEASE_WAIT_MS is logged as a warning.
 */
void apex_server_retire(apex_server_t *server, apex_zone_t *old, bool workers_run);

/* A reference to the version of origin served now (the caller's), or NULL. */
apex_zone_t *apex_server_served_version(apex_server_t *server, const uint8_t *origin);

/*
 * Snapshot of every worker's counters (per_worker: worker_count entries,
 * may be NULL) and their sum.
 */
void apex_server_stats(const apex_server_t *server, apex_stats_totals_t *per_worker,
		       apex_stats_totals_t *total);

/* Log the totals (at shutdown). */
void apex_server_log_stats(const apex_server_t *server);

/* Seconds since apex_server_init(). */
double apex_server_uptime(const apex_server_t *server);

#endif
