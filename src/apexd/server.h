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
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "query/answer.h"
#include "tcp.h"
#include "udp.h"
#include "zone/zoneset.h"

/* rcode buckets of the statistics: 0..22 one each, the last for all others. */
#define APEX_STATS_RCODES 24

/*
 * Counters of one worker.  Only that worker writes them (relaxed atomic
 * stores of its own cache lines, plain adds on x86); readers sum them
 * over all workers when they want totals.
 */
typedef struct apex_worker_stats {
	atomic_uint_least64_t udp_queries;
	atomic_uint_least64_t tcp_queries;
	atomic_uint_least64_t rcode[APEX_STATS_RCODES];  /* responses by rcode */
	atomic_uint_least64_t truncated;       /* responses with TC */
	atomic_uint_least64_t dropped;         /* queries not answered */
	atomic_uint_least64_t tcp_connections; /* accepted and served */
	atomic_uint_least64_t tcp_rejected;    /* closed at once: tcp-max-connections */
	atomic_uint_least64_t tcp_timeouts;    /* closed by tcp-idle-timeout */
} apex_worker_stats_t;

/* Plain totals, for reporting. */
typedef struct apex_stats_totals {
	uint64_t udp_queries, tcp_queries;
	uint64_t rcode[APEX_STATS_RCODES];
	uint64_t truncated, dropped;
	uint64_t tcp_connections, tcp_rejected, tcp_timeouts;
} apex_stats_totals_t;

/* Add n to a counter written only by the calling worker. */
#define APEX_STAT_ADD(counter, n)                                                        \
	atomic_store_explicit(&(counter),                                                \
			      atomic_load_explicit(&(counter), memory_order_relaxed) + (n), \
			      memory_order_relaxed)

struct apex_server;

typedef struct apex_worker {
	_Alignas(64) apex_worker_stats_t stats;
	_Alignas(64) struct apex_server *server;
	unsigned index;
	pthread_t thread;
	bool thread_started;
	bool loop_ready;
	bool async_ready;

	uv_loop_t loop;
	uv_async_t stop_async;

	/* The zoneset this worker answers from, and the table generation it
	 * was acquired at (checked between batches: apex_worker_zones()). */
	apex_zoneset_t *zones;
	unsigned long long generation;

	apex_udp_worker_t udp;
	apex_tcp_worker_t tcp;
} apex_worker_t;

typedef struct apex_server {
	const apex_config_t *config;
	apex_answer_config_t answer_config;
	apex_zonetable_t zonetable;
	bool zonetable_ready;

	unsigned worker_count;
	apex_worker_t *workers;   /* 64-byte aligned array */

	/* Open TCP connections of all workers (changed per connection, never per query). */
	_Alignas(64) atomic_uint tcp_connections;
} apex_server_t;

/* Prepare a server for cfg (which must outlive it); no zone, no socket yet. */
int apex_server_init(apex_server_t *server, const apex_config_t *cfg, unsigned workers);

/*
 * Load every configured zone (in parallel threads when there are several)
 * and publish those that load.  A zone that fails is logged as not
 * served.  *loaded receives the number published.
 */
int apex_server_load_zones(apex_server_t *server, size_t *loaded);

/*
 * Load every configured zone anew and publish each one that loads; a
 * zone that fails keeps its current version.  Called on SIGHUP, on a
 * non-worker thread, while the workers run.
 */
void apex_server_reload_zones(apex_server_t *server);

/* Open and bind every worker's UDP and TCP sockets; errors are logged. */
int apex_server_open_sockets(apex_server_t *server);

/* Start the worker threads (sockets must be open). */
int apex_server_start(apex_server_t *server);

/* Ask every worker to stop and wait for the threads to end. */
void apex_server_stop(apex_server_t *server);

/* Close what is left and release the zones. */
void apex_server_destroy(apex_server_t *server);

/* Sum of all workers' counters. */
void apex_server_stats(const apex_server_t *server, apex_stats_totals_t *out);

/* Log the totals (at shutdown). */
void apex_server_log_stats(const apex_server_t *server);

/*
 * The zoneset a worker answers from, picked up again if the table was
 * published since (one relaxed-cost read of the generation per batch).
 */
static inline const apex_zoneset_t *apex_worker_zones(apex_worker_t *worker)
{
	apex_zonetable_t *table = &worker->server->zonetable;

	if (apex_zonetable_generation(table) != worker->generation) {
		apex_zoneset_t *old = worker->zones;

		worker->zones = apex_zonetable_acquire(table, &worker->generation);
		apex_zoneset_release(old);
	}
	return worker->zones;
}

/* Count one answered (or dropped) query in the worker's statistics. */
static inline void apex_worker_count(apex_worker_t *worker, const apex_answer_info_t *info,
				     size_t response_size)
{
	apex_worker_stats_t *s = &worker->stats;

	if (response_size == 0 || info->dropped) {
		APEX_STAT_ADD(s->dropped, 1);
		return;
	}
	APEX_STAT_ADD(s->rcode[info->rcode < APEX_STATS_RCODES - 1 ? info->rcode : APEX_STATS_RCODES - 1], 1);
	if (info->truncated)
		APEX_STAT_ADD(s->truncated, 1);
}

#endif
