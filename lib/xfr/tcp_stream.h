/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking DNS-over-TCP I/O for the threads that run zone transfers (never
 * a worker): whole messages with their 2-byte length, within an idle
 * time-out (no progress: a stalled peer), a deadline for the whole
 * exchange, and a descriptor that, once readable, abandons the exchange
 * (apexd stopping).  The socket may be non-blocking; poll() waits.
 *
 * The same messages go through TLS (RFC 9103) once a handshake on the
 * stream succeeded (apex_tcp_stream_tls_connect() or _accept()), under
 * the same time-outs.  OpenSSL never touches the socket: a session over
 * memory BIOs (lib/tls/session.h) encrypts, and the stream sends and
 * receives the ciphertext as it does plain TCP (MSG_NOSIGNAL, poll()).
 */
#ifndef APEX_XFR_TCP_STREAM_H
#define APEX_XFR_TCP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tls/session.h"

typedef struct apex_xfr_timeouts {
	unsigned connect_ms; /* to connect */
	unsigned idle_ms;    /* between two bytes: a stalled stream */
	unsigned total_ms;   /* for the whole exchange */
	int cancel_fd;       /* -1, or a descriptor that becomes readable to abandon it */
} apex_xfr_timeouts_t;

typedef struct apex_tcp_stream {
	int fd;
	uint64_t deadline; /* CLOCK_MONOTONIC ms */
	unsigned idle_ms;
	int cancel_fd;
	const char *peer; /* for messages */
	char *err;        /* the reason of a failure */
	size_t err_size;
	/* NULL: plain TCP; else the TLS session every message goes through,
	 * owned by the stream until apex_tcp_stream_tls_end() */
	apex_tls_session_t *tls;
} apex_tcp_stream_t;

/* Wrap fd (not owned) for an exchange starting now under t (plain TCP). */
void apex_tcp_stream_init(apex_tcp_stream_t *s, int fd, const apex_xfr_timeouts_t *t,
			  const char *peer, char *err, size_t err_size);

/* Wait until fd is ready for events (POLLIN/POLLOUT); what names the step. */
int apex_tcp_stream_wait(apex_tcp_stream_t *s, short events, const char *what);

/* Send all of buf. */
int apex_tcp_stream_send(apex_tcp_stream_t *s, const uint8_t *buf, size_t size);

/* Send one message with its length in front. */
int apex_tcp_stream_send_message(apex_tcp_stream_t *s, const uint8_t *msg, size_t size);

/* Receive the next message (without its length) into buf (65535 bytes). */
int apex_tcp_stream_recv_message(apex_tcp_stream_t *s, uint8_t *buf, size_t *size);

/* TLS on the stream from now on, as the client: the handshake with the
 * server on fd, whose certificate must carry name (the auth-domain-name;
 * ctx from apex_tls_client_context_new()).  Returns APEX_OK, or an error
 * with the reason in err (the stream stays plain TCP then). */
int apex_tcp_stream_tls_connect(apex_tcp_stream_t *s, SSL_CTX *ctx, const char *name);

/* The same as the server, on an accepted connection (ctx from
 * apex_tls_server_context_new()).  A client's certificate name is the
 * caller's to check: apex_tls_peer_name_matches(apex_tls_session_ssl(
 * s->tls), name). */
int apex_tcp_stream_tls_accept(apex_tcp_stream_t *s, SSL_CTX *ctx);

/* The end of TLS on the stream, before fd is closed: close_notify sent
 * first when notify (within the time-outs), then the session freed
 * whatever happened.  Nothing without TLS.  Returns APEX_OK, or the
 * failure to send close_notify. */
int apex_tcp_stream_tls_end(apex_tcp_stream_t *s, bool notify);

#endif
