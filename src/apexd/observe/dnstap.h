/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dnstap: every query a worker answers, and its response, as dnstap
 * frames (lib/dnstap/message.h) to a collector's Unix socket over Frame
 * Streams (libfstrm's writer), as the dnstap: section asks.
 *
 * A worker encodes its frames on its query path into a scratch buffer of
 * its own and pushes them into a ring of its own (lib/dnstap/ring.h): no
 * lock, no allocation, no shared write but the ring's head.  A writer
 * thread takes the frames of every ring and writes them.  When the
 * collector is slow the rings fill and workers drop frames (counted:
 * dnstap_dropped in the statistics), never wait; when it is absent or
 * gone the writer drops what it takes (counted: lost) and connects again
 * every second.
 */
#ifndef APEXD_DNSTAP_H
#define APEXD_DNSTAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config/daemon_config.h"
#include "query/answer.h"
#include "observe/stats.h"

/* Each worker's ring: about 3000 frames of a typical query and response. */
#define APEX_DNSTAP_RING_SIZE (1u << 20)

typedef struct apex_dnstap apex_dnstap_t;

/*
 * The dnstap writer for cfg->dnstap with a ring for each of workers
 * workers, counting into stats[w] (each worker's own block); its thread
 * starts with apex_dnstap_run().  APEX_OK, or an error with the reason in
 * err.
 */
int apex_dnstap_open(apex_dnstap_t **out, const apex_config_t *cfg, unsigned workers,
		     apex_worker_stats_t *const *stats, char *err, size_t err_size);

/* Start the writer thread (after the privilege drop; path as seen then). */
int apex_dnstap_run(apex_dnstap_t *tap, const char *socket_path, char *err, size_t err_size);

/* Write what the rings hold, stop the thread, close the stream and free tap (NULL: nothing). */
void apex_dnstap_stop(apex_dnstap_t *tap);

/* Worker w's context for apex_dnstap_log(). */
void *apex_dnstap_worker(apex_dnstap_t *tap, unsigned w);

/*
 * The worker's hook (worker.h): log the query from peer over transport
 * and, if response_size > 0, its response, as the configuration asks.
 * Runs on the worker's thread only, with its context.
 */
void apex_dnstap_log(void *worker_ctx, apex_transport_t transport,
		     const struct sockaddr_storage *peer, const uint8_t *query, size_t query_size,
		     const uint8_t *response, size_t response_size);

/* Frames written to the collector, and frames taken from the rings but
 * lost (no collector, or a failed write). */
void apex_dnstap_totals(const apex_dnstap_t *tap, uint64_t *written, uint64_t *lost);

#endif
