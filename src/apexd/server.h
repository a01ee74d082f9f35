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
#include <time.h>
#include <netinet/in.h>
#include <uv.h>

#include "config.h"
#include "query/cookie.h"
#include "stats.h"
#include "query/answer.h"
#include "rrl/rrl.h"
#include "tcp.h"
#include "udp.h"
#include "zone/zoneset.h"

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
	/* Sent after a publish so that an idle worker lets go of the old
	 * zoneset at once (a busy one picks it up at its next batch). */
	uv_async_t wake_async;
	bool wake_ready;

	/* The zoneset this worker answers from, and the table generation it
	 * was acquired at (checked between batches: apex_worker_zones()). */
	apex_zoneset_t *zones;
	unsigned long long generation;

	apex_udp_worker_t udp;
	apex_tcp_worker_t tcp;
	/* This worker's own response rate limiting table (rrl/rrl.h). */
	apex_rrl_t rrl;
} apex_worker_t;

/*
 * Open TCP connections per client address (tcp-max-connections-per-client):
 * a fixed table of counters indexed by a keyed hash of the address.  Two
 * clients whose addresses share a slot share its limit; the key is
 * random, so nobody can aim at another client's slot.
 */
#define APEX_TCP_CLIENT_SLOTS 65536

typedef struct apex_server {
	const apex_config_t *config;
	apex_answer_config_t answer_config;
	apex_zonetable_t zonetable;
	bool zonetable_ready;

	unsigned worker_count;
	apex_worker_t *workers;   /* 64-byte aligned array */

	struct timespec started;  /* CLOCK_MONOTONIC at init, for uptime */
	struct timespec started_wall;  /* CLOCK_REALTIME at init */

	/* Open TCP connections of all workers (changed per connection, never per query). */
	_Alignas(64) atomic_uint tcp_connections;
	/* Per-client counts (changed per connection, never per query). */
	atomic_uint *tcp_clients;  /* APEX_TCP_CLIENT_SLOTS, owned */
	uint8_t tcp_client_key[APEX_SIPHASH_KEY_SIZE];
	uint8_t cookie_secret[16]; /* answer_config.cookie_secret points here */
} apex_server_t;

/* Prepare a server for cfg (which must outlive it); no zone, no socket yet. */
int apex_server_init(apex_server_t *server, const apex_config_t *cfg, unsigned workers);

/* Open and bind every worker's UDP and TCP sockets; errors are logged. */
int apex_server_open_sockets(apex_server_t *server);

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

/*
 * The zoneset a worker answers from, picked up again if the table was
 * published since (one relaxed-cost read of the generation per batch).
 */
static inline const apex_zoneset_t *apex_worker_zones(apex_worker_t *worker)
{
	apex_zonetable_t *table = &worker->server->zonetable;

	if (apex_zonetable_generation(table) != worker->generation) {
		apex_zoneset_t *old = worker->zones;
		struct timespec t0, t1;

		/* only here, on a generation change, is the rwlock taken: time it */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		worker->zones = apex_zonetable_acquire(table, &worker->generation);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		APEX_STAT_ADD(worker->stats.lock_wait_ns,
			      (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)));
		APEX_STAT_ADD(worker->stats.zone_pickups, 1);
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
	APEX_STAT_ADD(s->qtype[apex_stats_qtype_index(info->qtype)], 1);
	if (info->truncated)
		APEX_STAT_ADD(s->truncated, 1);
	switch (info->cookie) {
	case APEX_COOKIE_CLIENT_ONLY:
		APEX_STAT_ADD(s->cookie_client, 1);
		break;
	case APEX_COOKIE_VALID:
		APEX_STAT_ADD(s->cookie_valid, 1);
		break;
	case APEX_COOKIE_INVALID:
		APEX_STAT_ADD(s->cookie_invalid, 1);
		break;
	default:
		break;
	}
}

/*
 * The source address of a query as the answer engine wants it (for
 * server cookies): points into addr.  now: wall-clock seconds.
 */
static inline void apex_answer_client_set(apex_answer_client_t *client,
					  const struct sockaddr_storage *addr, uint32_t now)
{
	if (addr->ss_family == AF_INET6) {
		client->addr = ((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr;
		client->addr_size = 16;
	} else {
		client->addr = (const uint8_t *)&((const struct sockaddr_in *)addr)->sin_addr;
		client->addr_size = 4;
	}
	client->now = now;
}

#endif
