/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TLS of one of a worker's TCP connections (tcp.c): its session over
 * memory BIOs (lib/tls/session.h) and the ciphertext buffers between the
 * session and the socket.  tcp.c keeps the DNS framing and the plaintext
 * buffers, as for plain TCP: the socket's bytes go through
 * apex_tcp_tls_received() and apex_tcp_tls_plaintext() on their way in,
 * the answers through apex_tcp_tls_encrypt() and apex_tcp_tls_output() on
 * their way out.  Nothing here blocks or takes a lock.
 *
 * Memory: the session's, about 15 KiB open and idle (more while a record
 * is read or written), from when the connection is accepted until it
 * closes or is handed to a transfer thread.  The ciphertext buffers are
 * the caller's: tcp.c takes them from its worker's pools for a read
 * (APEX_TCP_TLS_IN) and for a write (APEX_TCP_TLS_OUT) only, so an idle
 * connection holds none.
 */
#ifndef APEXD_SERVE_TCP_TLS_H
#define APEXD_SERVE_TCP_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "config/daemon_config.h"
#include "observe/stats.h"
#include "tls/session.h"

#define APEX_TCP_TLS_IN 16384  /* one read from the socket */
#define APEX_TCP_TLS_OUT 32768 /* one write to it */

typedef struct apex_tcp_tls {
	apex_tls_session_t *session;       /* owned; NULL once handed over */
	apex_listen_transport_t transport; /* the listener's: TLS or TLS_AUTH */
	bool counted;                      /* its handshake is in the statistics */
} apex_tcp_tls_t;

/* A server session from ctx (the caller keeps its reference).  Returns
 * APEX_OK or APEX_ENOMEM (and the like); free with apex_tcp_tls_free()
 * either way. */
int apex_tcp_tls_start(apex_tcp_tls_t *t, SSL_CTX *ctx, apex_listen_transport_t transport);

/* The session freed (no close_notify: apex_tcp_tls_close()). */
void apex_tcp_tls_free(apex_tcp_tls_t *t);

/* data[0..n), read from the socket, fed to the session (which copies it:
 * the buffer is free again on return).  APEX_OK, or a failure (the
 * connection is to be closed once its output is sent). */
int apex_tcp_tls_received(apex_tcp_tls_t *t, const uint8_t *data, size_t n);

/* The plaintext decrypted so far into buf[0..capacity): *got bytes (0:
 * none yet, or the peer closed).  Counts the handshake in stats once it is
 * done, or its failure.  APEX_OK or a failure. */
int apex_tcp_tls_plaintext(apex_tcp_tls_t *t, apex_worker_stats_t *stats, uint8_t *buf,
			   size_t capacity, size_t *got);

/* The handshake is not done yet (tcp-io-timeout bounds it). */
bool apex_tcp_tls_handshaking(const apex_tcp_tls_t *t);

/* The peer sent close_notify, or the session failed: nothing more to read. */
bool apex_tcp_tls_ended(const apex_tcp_tls_t *t);

/* The answers data[0..size) encrypted into the session's output. */
int apex_tcp_tls_encrypt(apex_tcp_tls_t *t, const uint8_t *data, size_t size);

/* The next part of the output, up to capacity bytes, moved into buf: its
 * size (0: none). */
size_t apex_tcp_tls_output(apex_tcp_tls_t *t, uint8_t *buf, size_t capacity);

/* Whether output waits to be sent. */
bool apex_tcp_tls_output_pending(const apex_tcp_tls_t *t);

/* close_notify into the output, if the handshake is done. */
void apex_tcp_tls_close(apex_tcp_tls_t *t);

/* The session, taken away from t (a transfer thread goes on with it). */
apex_tls_session_t *apex_tcp_tls_take(apex_tcp_tls_t *t);

/* Count a handshake that ran out of time (tcp-io-timeout). */
void apex_tcp_tls_count_timeout(apex_tcp_tls_t *t, apex_worker_stats_t *stats);

#endif
