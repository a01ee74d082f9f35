/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The metrics endpoint (metrics: ADDR@PORT): HTTP/1.x on TCP, served on
 * a libuv loop and a thread of its own, never on a worker.  GET or HEAD
 * of /metrics gets the Prometheus text format (metrics.h), rendered from
 * the workers' counters when asked; any other path 404, any other method
 * 405, a malformed request 400, a head over 8 KiB 431.  One request per
 * connection (the reply says Connection: close); a request head must
 * arrive within APEX_METRICS_READ_TIMEOUT seconds.
 */
#ifndef APEXD_METRICS_SERVER_H
#define APEXD_METRICS_SERVER_H

#include <stddef.h>

#include "control/commands.h"
#include "config/daemon_config.h"

#define APEX_METRICS_READ_TIMEOUT 10 /* seconds */
#define APEX_METRICS_MAX_CONNECTIONS 16

typedef struct apex_metrics_server apex_metrics_server_t;

/*
 * Bind and listen on addr (before the privilege drop), without a thread
 * yet; ctx is copied.  Returns APEX_OK with the new server in *out, or
 * a negative APEX_E* code with the reason in err.
 */
int apex_metrics_server_open(apex_metrics_server_t **out, const apex_listen_t *addr,
			     const apex_command_context_t *ctx, char *err, size_t err_size);

/* "http://ADDR:PORT/metrics", for the log (owned by srv). */
const char *apex_metrics_server_url(const apex_metrics_server_t *srv);

/* Start serving on the server's own thread. */
int apex_metrics_server_run(apex_metrics_server_t *srv, char *err, size_t err_size);

/* Stop the thread (if running), close every connection and free srv (NULL: nothing). */
void apex_metrics_server_stop(apex_metrics_server_t *srv);

#endif
