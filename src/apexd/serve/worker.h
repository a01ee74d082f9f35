/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The answer path of one worker: what a worker thread needs to answer a
 * query, over UDP or TCP alike, and nothing of its sockets or its loop
 * (server.h runs the threads, udp.c and tcp.c own the sockets).
 *
 * A worker answers from the zoneset it picked up at the start of the
 * current batch, with the clock read once for that batch
 * (apex_worker_batch()); per query (apex_worker_answer()) it takes no
 * lock, allocates nothing and writes only its own memory: its
 * statistics block, its rate-limiting table and the caller's buffer.
 * Nothing here calls libuv, so the tests and fuzz targets drive exactly
 * the path a worker runs.
 */
#ifndef APEXD_WORKER_H
#define APEXD_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "query/answer.h"
#include "query/answer_ahead.h"
#include "query/cookie.h"
#include "rrl/rrl.h"
#include "observe/stats.h"
#include "zone/zoneset.h"

/* A notify hook's answer: not for it, the engine answers the message. */
#define APEX_WORKER_NOTIFY_PASS SIZE_MAX

typedef struct apex_worker {
	/* written by this worker only; read by the statistics collector */
	_Alignas(64) apex_worker_stats_t stats;
	_Alignas(64) unsigned index;
	apex_zonetable_t *zonetable;               /* shared: its generation is read per batch */
	const apex_answer_config_t *answer_config; /* shared, read-only */
	/* Where a NOTIFY request (opcode 4) goes instead of the engine
	 * (secondary.h): it answers into out and returns the size to send,
	 * or APEX_WORKER_NOTIFY_PASS to leave it to the engine.  Set before
	 * the worker starts. */
	size_t (*notify)(void *ctx, const struct sockaddr_storage *peer, const uint8_t *msg,
			 size_t size, uint8_t *out, size_t out_capacity);
	void *notify_ctx;
	/* A query signed with TSIG (RFC 8945): the engine's answer is signed
	 * (or replaced by NOTAUTH) here, when TSIG keys are configured. */
	size_t (*tsig_answer)(void *ctx, const uint8_t *query, size_t query_size, uint8_t *out,
			      size_t size, size_t out_capacity);
	void *tsig_ctx;
	/* dnstap (dnstap.h): each message given to the engine and its
	 * response (response_size 0: none sent); NULL when off. */
	void (*tap)(void *ctx, apex_transport_t transport, const struct sockaddr_storage *peer,
		    const uint8_t *query, size_t query_size, const uint8_t *response,
		    size_t response_size);
	void *tap_ctx;
	/* The zoneset answered from, and the table generation it was
	 * acquired at (checked at every batch). */
	apex_zoneset_t *zones;
	unsigned long long generation;
	apex_rrl_t rrl; /* this worker's own rate-limiting table */
	/* The batch clock, read once per batch. */
	uint32_t now;           /* wall-clock seconds (server cookies, RFC 9018) */
	time_t wall_read_at;    /* monotonic second of the last wall-clock read */
	uint64_t now_ms;        /* monotonic milliseconds (RRL) */
	uint64_t last_batch_ns; /* monotonic time of the last batch (stalls) */
} apex_worker_t;

/*
 * Prepare worker number index to answer from table with cfg (both must
 * outlive it), with its share of the rate limit rrl (shares: the number
 * of workers). Acquires the table's current zoneset. Returns 0 or an
 * apex code; free with apex_worker_free() in every case.
 */
int apex_worker_init(apex_worker_t *worker, unsigned index, apex_zonetable_t *table,
		     const apex_answer_config_t *cfg, const apex_rrl_config_t *rrl,
		     unsigned shares);

/* Release the zoneset and the rate-limiting table. */
void apex_worker_free(apex_worker_t *worker);

/*
 * Between batches: pick up a newly published zoneset (the rwlock is
 * taken only when the table's generation changed, and the time it took
 * is counted) and read the clock once for the batch.  backlog: the batch
 * is full (queries were waiting), so the time since the last batch is
 * counted as a stall of the worker (stats.h).
 */
void apex_worker_batch(apex_worker_t *worker, bool backlog);

/* A query dropped before it reached the engine (a truncated datagram). */
static inline void apex_worker_drop(apex_worker_t *worker)
{
	APEX_STAT_ADD(worker->stats.dropped, 1);
}

/* Count one answered (or dropped) query. */
static inline void apex_worker_count(apex_worker_t *worker, const apex_answer_info_t *info,
				     size_t response_size)
{
	apex_worker_stats_t *s = &worker->stats;

	if (response_size == 0 || info->dropped) {
		APEX_STAT_ADD(s->dropped, 1);
		return;
	}
	APEX_STAT_ADD(
		s->rcode[info->rcode < APEX_STATS_RCODES - 1 ? info->rcode : APEX_STATS_RCODES - 1],
		1);
	APEX_STAT_ADD(s->qtype[apex_stats_qtype_index(info->qtype)], 1);
	if (info->edns) {
		APEX_STAT_ADD(s->edns, 1);
		if (info->dnssec_ok)
			APEX_STAT_ADD(s->dnssec_ok, 1);
	}
	if (info->zone_slot != APEX_ANSWER_NO_ZONE)
		APEX_STAT_ADD(s->zone_queries[apex_stats_zone_index(info->zone_slot)], 1);
	if (info->truncated)
		APEX_STAT_ADD(s->truncated, 1);
	switch (info->cookie) {
	case APEX_COOKIE_CLIENT_ONLY: APEX_STAT_ADD(s->cookie_client, 1); break;
	case APEX_COOKIE_VALID: APEX_STAT_ADD(s->cookie_valid, 1); break;
	case APEX_COOKIE_INVALID: APEX_STAT_ADD(s->cookie_invalid, 1); break;
	default: break;
	}
}

/* The client of a query as the engine wants it (for server cookies). */
static inline void apex_worker_client(apex_answer_client_t *client,
				      const struct sockaddr_storage *peer, uint32_t now)
{
	if (peer->ss_family == AF_INET6) {
		client->addr = ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;
		client->addr_size = 16;
	} else {
		client->addr = (const uint8_t *)&((const struct sockaddr_in *)peer)->sin_addr;
		client->addr_size = 4;
	}
	client->now = now;
}

/* apex_worker_answer_ahead() without the traffic counters. */
static inline size_t apex_worker_answer_message(apex_worker_t *worker, apex_transport_t transport,
						const struct sockaddr_storage *peer,
						apex_answer_ahead_t *ahead, const uint8_t *query,
						size_t query_size, uint8_t *out,
						size_t out_capacity, apex_answer_info_t *info)
{
	apex_answer_info_t local = { 0 };
	apex_answer_client_t client;

	if (info == NULL)
		info = &local;
	if (__builtin_expect(
		    worker->notify != NULL && query_size >= 12 && (query[2] & 0xf8) == 0x20, 0)) {
		size_t n = worker->notify(worker->notify_ctx, peer, query, query_size, out,
					  out_capacity);
		if (n != APEX_WORKER_NOTIFY_PASS)
			return n;
	}
	apex_worker_client(&client, peer, worker->now);
	size_t size = ahead != NULL ? apex_answer_ahead(worker->zones, worker->answer_config,
							transport, &client, ahead, query,
							query_size, out, out_capacity, info)
				    : apex_answer_from(worker->zones, worker->answer_config,
						       transport, &client, query, query_size, out,
						       out_capacity, info);
	if (__builtin_expect(info->tsig, 0) && size > 0 && worker->tsig_answer != NULL)
		size = worker->tsig_answer(worker->tsig_ctx, query, query_size, out, size,
					   out_capacity);
	apex_worker_count(worker, info, size);
	/* a valid server cookie proves the source address: not rate limited */
	if (size == 0 || transport != APEX_TRANSPORT_UDP || !apex_rrl_enabled(&worker->rrl) ||
	    info->cookie == APEX_COOKIE_VALID)
		return size;

	apex_rrl_action_t act =
		apex_rrl_account(&worker->rrl, (const struct sockaddr *)peer, worker->now_ms);
	if (act == APEX_RRL_SLIP && info->cookie != APEX_COOKIE_NONE) {
		/* a client with cookies gets a server cookie to come back with */
		size_t n = apex_answer_badcookie(worker->answer_config, &client, query, query_size,
						 out, out_capacity);
		size = n > 0 ? n : apex_rrl_slip_response(out, size);
	} else if (act == APEX_RRL_SLIP) {
		size = apex_rrl_slip_response(out, size);
	}
	if (act == APEX_RRL_DROP || size == 0) {
		APEX_STAT_ADD(worker->stats.rrl_dropped, 1);
		return 0;
	}
	if (act == APEX_RRL_SLIP)
		APEX_STAT_ADD(worker->stats.rrl_slipped, 1);
	return size;
}

/*
 * Answer one query from peer, received over transport, into
 * out[0..out_capacity): the engine (with the client's address for
 * cookies), the statistics, dnstap when on, and over UDP response rate
 * limiting (a limited response is dropped, or slipped as a TC reply, or
 * as BADCOOKIE to a client that sent a cookie; a valid server cookie is
 * never limited). Returns the size to send, 0 to send nothing. info, if
 * not NULL, gets what the engine reported (before rate limiting).
 * ahead: the query as apex_answer_ahead_begin() read it ahead, or NULL.
 * Inline: it is the query path of both transports, called once per
 * query.
 */
static inline size_t apex_worker_answer_ahead(apex_worker_t *worker, apex_transport_t transport,
					      const struct sockaddr_storage *peer,
					      apex_answer_ahead_t *ahead, const uint8_t *query,
					      size_t query_size, uint8_t *out, size_t out_capacity,
					      apex_answer_info_t *info)
{
	apex_worker_stats_t *s = &worker->stats;
	unsigned family = peer->ss_family == AF_INET6;
	unsigned x = transport != APEX_TRANSPORT_UDP; /* RSSAC002 counts DNS over TLS as TCP */

	APEX_STAT_ADD(s->received[x][family], 1);
	APEX_STAT_ADD(s->request_size[x][apex_stats_request_size_index(query_size)], 1);
	APEX_STAT_ADD(s->request_bytes[x], query_size);
	size_t size = apex_worker_answer_message(worker, transport, peer, ahead, query, query_size,
						 out, out_capacity, info);
	if (size > 0) {
		APEX_STAT_ADD(s->sent[x][family], 1);
		APEX_STAT_ADD(s->response_size[x][apex_stats_response_size_index(size)], 1);
		APEX_STAT_ADD(s->response_bytes[x], size);
	}
	if (__builtin_expect(worker->tap != NULL, 0))
		worker->tap(worker->tap_ctx, transport, peer, query, query_size, out, size);
	return size;
}

/* apex_worker_answer_ahead() for a query not read ahead. */
static inline size_t apex_worker_answer(apex_worker_t *worker, apex_transport_t transport,
					const struct sockaddr_storage *peer, const uint8_t *query,
					size_t query_size, uint8_t *out, size_t out_capacity,
					apex_answer_info_t *info)
{
	return apex_worker_answer_ahead(worker, transport, peer, NULL, query, query_size, out,
					out_capacity, info);
}

#endif
