/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Outgoing zone transfers: the AXFR and IXFR requests that workers
 * receive over TCP, answered on threads of their own.
 *
 * A worker that reads an AXFR or IXFR request on a TCP connection hands
 * the connection over (apex_xfr_out_take(): a duplicate of its descriptor
 * and the request) and closes its own side; a transfer thread then checks
 * the request and sends the answer (xfr/xfr_serve.h) from the version
 * served at that moment, which it holds until the last message is sent.
 * So a transfer never holds up a worker and never sees a half-built
 * version.  At most xfr-out-max transfers run at once; beyond that the
 * request stays with the worker, whose engine refuses it.
 */
#ifndef APEXD_XFR_OUT_H
#define APEXD_XFR_OUT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "config/daemon_config.h"
#include "serve/server.h"
#include "zones/settings.h"
#include "xfr/xfr_serve.h"

#define APEX_XFR_OUT_LOG_SLOTS 64

typedef struct apex_xfr_out {
	apex_server_t *server;
	/* the provide-xfr lists and keys in force (a transfer keeps those it
	 * began with); xfr-out-max, read at start, is not one of them */
	apex_settings_holder_t *settings;
	unsigned max;        /* xfr-out-max */
	atomic_uint running; /* transfer threads alive */
	/* the journals IXFR is answered from; set before the workers start */
	const apex_xfr_serve_journal_t *journal;
	int stop_fd; /* eventfd: abandon the transfers under way */
	/* counts, for the statistics */
	atomic_ullong served, refused, failed;
	/* of those served, the IXFRs, and of these the ones answered with the
	 * whole zone (the journal did not hold the secondary's serial) */
	atomic_ullong ixfr, ixfr_whole;
	/* refusals already logged: one line per client address and zone a minute */
	pthread_mutex_t log_lock;
	struct {
		uint64_t hash;
		time_t at;
	} logged[APEX_XFR_OUT_LOG_SLOTS];
} apex_xfr_out_t;

/* For the zones of the settings in force, at most max (xfr-out-max) at
 * once; settings must outlive it.  Returns 0 or an apex code. */
int apex_xfr_out_init(apex_xfr_out_t *x, apex_server_t *server, apex_settings_holder_t *settings,
		      unsigned max);

/* Abandon the transfers under way and wait (bounded) for their threads. */
void apex_xfr_out_stop(apex_xfr_out_t *x);

void apex_xfr_out_free(apex_xfr_out_t *x);

/*
 * A worker's hand-off (tcp.h): fd (a duplicate, now the callee's) carries
 * the request msg[0..size) from peer, over how->transport (over TLS with
 * how->tls, which becomes the callee's too).  False when no transfer can
 * start now (the caller keeps the connection and its session, and closes
 * fd).  Never blocks.
 */
bool apex_xfr_out_take(void *ctx, int fd, const struct sockaddr_storage *peer, const uint8_t *msg,
		       size_t size, const apex_tcp_handoff_t *how);

#endif
