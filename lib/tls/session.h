/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One TLS connection driven without a socket: the caller feeds the
 * ciphertext it received, reads the plaintext out, writes plaintext in and
 * takes the ciphertext to send.  OpenSSL touches no descriptor and never
 * blocks (two memory BIOs), so a worker's event loop runs any number of
 * sessions on its own thread, and a transfer thread does its blocking I/O
 * around one (lib/xfr/tcp_stream.c).  The caller keeps the DNS framing
 * (the 2-byte lengths): a session only moves bytes.
 *
 * After each feed, read, write or close, send what
 * apex_tls_session_output_pending() says there is: handshake messages,
 * session tickets and alerts are output too, also when a call failed (the
 * alert tells the peer why).  One thread at a time per session.
 *
 * Memory (OpenSSL 3.0, TLS 1.3, counted by tests/unit/test_tls.c): an
 * open server session holds about 15 KiB (the SSL object, its session and
 * keys), idle as after the handshake: the record buffers (about 17 KiB to
 * read, 17 KiB to write) are held only while a record is read or written
 * (SSL_MODE_RELEASE_BUFFERS), and a memory BIO, which keeps its largest
 * size once grown, is replaced by an empty one once drained if it grew
 * beyond 4 KiB.  Beyond that: the ciphertext fed and not read out yet (at
 * most APEX_TLS_INPUT_MAX) and the output not taken yet (which the caller
 * bounds by writing no more while much is pending).  A handshake in
 * progress also holds the buffer of its messages: a session that failed
 * holds about 72 KiB until it is freed, whatever the peer sent, so free it
 * at once (after sending its output, the alert).
 */
#ifndef APEX_TLS_SESSION_H
#define APEX_TLS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

/* The most ciphertext fed and not read out yet: a read of 64 KiB from a
 * socket and the rest of a record (16 KiB and its overhead) before it. */
#define APEX_TLS_INPUT_MAX (96 * 1024)

typedef enum apex_tls_state {
	APEX_TLS_HANDSHAKE, /* the handshake runs: it needs more input */
	APEX_TLS_OPEN,      /* the handshake is done: data both ways */
	APEX_TLS_CLOSED,    /* the peer sent close_notify: nothing more to read */
	APEX_TLS_FAILED,    /* the handshake or a record failed: send the output, then close */
} apex_tls_state_t;

typedef struct apex_tls_session apex_tls_session_t;

/* A server session from ctx (apex_tls_server_context_new(); the session
 * holds a reference to it).  Returns APEX_OK, or an error with the reason
 * in err. */
int apex_tls_session_new_server(SSL_CTX *ctx, apex_tls_session_t **out, char *err, size_t err_size);

/* A client session from ctx (apex_tls_client_context_new()) to a server
 * whose certificate must carry name (a host name, its final dot allowed;
 * also sent as the server name, SNI). */
int apex_tls_session_new_client(SSL_CTX *ctx, const char *name, apex_tls_session_t **out, char *err,
				size_t err_size);

/* s and its SSL freed (no close_notify: apex_tls_session_close() sends
 * it).  NULL is ignored. */
void apex_tls_session_free(apex_tls_session_t *s);

/* Ciphertext received from the peer, kept until read.  APEX_ESPACE when
 * more than APEX_TLS_INPUT_MAX would wait (read first), APEX_EINVAL after
 * a failure; input after the peer's close_notify is dropped. */
int apex_tls_session_feed(apex_tls_session_t *s, const uint8_t *data, size_t size, char *err,
			  size_t err_size);

/* The handshake taken as far as the input fed allows (the state says
 * whether it is done).  Returns APEX_OK, or APEX_EIO with the reason in
 * err: the peer's certificate not verified, no common protocol version or
 * ALPN protocol, an alert from the peer, garbage instead of TLS, ... */
int apex_tls_session_handshake(apex_tls_session_t *s, char *err, size_t err_size);

/* The handshake if it is not done, then the plaintext of every record fed
 * so far into buf, until buf is full (call again while *got == size: the
 * rest waits in the session) or all is read out.  *got may be 0: more
 * input needed, or the peer closed (APEX_TLS_CLOSED).  Returns APEX_OK, or
 * APEX_EIO with the reason in err. */
int apex_tls_session_read(apex_tls_session_t *s, uint8_t *buf, size_t size, size_t *got, char *err,
			  size_t err_size);

/* All of data encrypted into the output (in records of up to 16 KiB).
 * Only once the handshake is done: APEX_EINVAL before. */
int apex_tls_session_write(apex_tls_session_t *s, const uint8_t *data, size_t size, char *err,
			   size_t err_size);

/* close_notify into the output (nothing before the handshake is done):
 * send the output, then close the connection; the peer's close_notify
 * need not be waited for. */
int apex_tls_session_close(apex_tls_session_t *s, char *err, size_t err_size);

/* How many bytes of ciphertext wait to be sent. */
size_t apex_tls_session_output_pending(const apex_tls_session_t *s);

/* Up to size bytes of the output moved into buf; returns how many. */
size_t apex_tls_session_take_output(apex_tls_session_t *s, uint8_t *buf, size_t size);

apex_tls_state_t apex_tls_session_state(const apex_tls_session_t *s);

/* Whether the handshake resumed an earlier session (a ticket). */
bool apex_tls_session_resumed(const apex_tls_session_t *s);

/* The ALPN protocol agreed, its length into *size ("dot" or none: NULL). */
const uint8_t *apex_tls_session_alpn(const apex_tls_session_t *s, size_t *size);

/* The SSL of s, e.g. for apex_tls_peer_name_matches(); owned by s. */
SSL *apex_tls_session_ssl(apex_tls_session_t *s);

#endif
