/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DNS over TCP (RFC 7766) for one worker, on its libuv loop: one
 * SO_REUSEPORT listener per listen address, 2-byte length-prefixed
 * messages, every query of a connection answered in order (pipelining),
 * an idle timeout and a server-wide maximum of open connections (beyond
 * it a new connection is closed at once).
 *
 * Memory: an open connection holds its libuv handles (the socket, its
 * timer, a write request) and its own state, under 1 KiB, and over TLS
 * its session.  Its buffers come from the worker's pools (buffer_pool.h)
 * while they are used: the input when a read is about to happen, kept
 * while a message is half received or waits to be answered (a write is
 * under way); the output when answers are gathered, kept until the
 * socket has taken them all.  So an idle connection holds no buffer, and
 * nothing is allocated per query once the pools hold what the load
 * needs at once.
 *
 * A listener of the tls-port or the tls-auth-port (config/daemon_config.h)
 * serves the same messages through TLS (tcp_tls.h), with the same limits
 * and timeouts; its handshake must be done within tcp-io-timeout.
 */
#ifndef APEXD_TCP_H
#define APEXD_TCP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "serve/buffer_pool.h"
#include "serve/conn_list.h"
#include "serve/tls_service.h"
#include "config/daemon_config.h"
#include "dns/wire.h"
#include "util/siphash.h"

struct apex_worker;
struct apex_tcp_conn;
struct apex_tcp_worker;
struct apex_tls_service;
struct apex_tls_session;

/* How a transfer request came (xfr_take): the listener's transport and,
 * over TLS, the connection's session, which becomes the callee's when it
 * takes the request (it has the handshake done, and any output not sent
 * yet goes first). */
typedef struct apex_tcp_handoff {
	apex_listen_transport_t transport;
	struct apex_tls_session *tls; /* NULL: plain TCP */
} apex_tcp_handoff_t;

/*
 * Open TCP connections per client address (tcp-max-connections-per-client):
 * a fixed table of counters indexed by a keyed hash of the address.  Two
 * clients whose addresses share a slot share its limit; the key is
 * random, so nobody can aim at another client's slot.
 */
#define APEX_TCP_CLIENT_SLOTS 65536

/* What the TCP services of all workers share: connection counts, changed
 * per connection, never per query. */
typedef struct apex_tcp_shared {
	_Alignas(64) atomic_uint connections; /* open, of all workers */
	atomic_uint *clients;                 /* APEX_TCP_CLIENT_SLOTS, owned */
	uint8_t client_key[APEX_SIPHASH_KEY_SIZE];
	const apex_config_t *config; /* limits and timeouts */
	/* Where an AXFR or IXFR request goes, with a duplicate of the
	 * connection's descriptor that becomes the callee's (xfr_out.h);
	 * false: it could not be taken.  NULL: the engine refuses them.  Set
	 * before the workers start. */
	bool (*xfr_take)(void *ctx, int fd, const struct sockaddr_storage *peer, const uint8_t *msg,
			 size_t size, const apex_tcp_handoff_t *how);
	void *xfr_ctx;
	/* The TLS listeners' contexts (tls_service.h); NULL: none.  Set before
	 * the workers start. */
	struct apex_tls_service *tls;
} apex_tcp_shared_t;

typedef struct apex_tcp_listener {
	uv_tcp_t handle;
	int fd;                            /* ours until uv_tcp_open() succeeds, then libuv's */
	bool opened;                       /* handle initialised and owns fd */
	apex_listen_transport_t transport; /* plain TCP, or TLS of either kind */
	bool proxy; /* a proxy-protocol-port's: connections begin with a PROXY v2 header */
	struct apex_tcp_worker *owner;
} apex_tcp_listener_t;

/* A connection's input holds at least one whole message: its 2-byte
 * length and up to 65535 bytes. */
#define APEX_TCP_IN_CAPACITY (2 + APEX_MAX_MESSAGE)
/* Answers of pipelined queries are gathered up to APEX_TCP_FLUSH_AT bytes
 * and written together; the output always has room for one more answer
 * of the largest size before that. */
#define APEX_TCP_FLUSH_AT 16384
#define APEX_TCP_OUT_CAPACITY (APEX_TCP_FLUSH_AT + 2 + APEX_MAX_MESSAGE)
/* Free buffers each pool keeps whatever the load, and how often the
 * others, unused since the time before, are freed. */
#define APEX_TCP_POOL_KEEP 4
#define APEX_TCP_POOL_TRIM_MS 2000

/* The buffers a worker's connections take while they use them. */
typedef struct apex_tcp_buffers {
	apex_buffer_pool_t in;      /* plaintext input, APEX_TCP_IN_CAPACITY */
	apex_buffer_pool_t out;     /* answers gathered, APEX_TCP_OUT_CAPACITY */
	apex_buffer_pool_t tls_in;  /* ciphertext of one read, APEX_TCP_TLS_IN */
	apex_buffer_pool_t tls_out; /* ciphertext of one write, APEX_TCP_TLS_OUT */
	uv_timer_t trim;            /* apex_buffer_pool_trim() every APEX_TCP_POOL_TRIM_MS */
	bool trim_ready;            /* the timer is initialised (close it) */
} apex_tcp_buffers_t;

typedef struct apex_tcp_worker {
	struct apex_worker *worker; /* the answer path (worker.h) */
	apex_tcp_shared_t *shared;
	apex_tcp_listener_t *listeners; /* one per listen address */
	size_t count;
	apex_conn_list_t conns; /* open connections */
	bool stopping;
	apex_tls_worker_contexts_t tls; /* the worker's references to the TLS contexts */
	apex_tcp_buffers_t buffers;     /* taken and given back on this loop only */
} apex_tcp_worker_t;

/* The shared counts for cfg (which must outlive them), with a random
 * key. Returns 0 or an apex code; free with apex_tcp_shared_free(). */
int apex_tcp_shared_init(apex_tcp_shared_t *shared, const apex_config_t *cfg);
void apex_tcp_shared_free(apex_tcp_shared_t *shared);

/*
 * A new non-blocking TCP socket bound to listen with SO_REUSEADDR,
 * SO_REUSEPORT (and IPV6_V6ONLY for IPv6), already listening.
 * Returns the fd, or a negative APEX_E* code with the reason in err.
 */
int apex_tcp_socket_open(const apex_listen_t *listen, char *err, size_t err_size);

/* Take over count listening fds (closed by apex_tcp_worker_free() even on
 * failure), each serving listens[i] (its transport, and whether it is
 * a proxy-protocol-port's), answering through worker, counting in shared
 * (both must outlive it). */
int apex_tcp_worker_init(apex_tcp_worker_t *tcp, struct apex_worker *worker,
			 apex_tcp_shared_t *shared, const int *fds, const apex_listen_t *listens,
			 size_t count);

/* Register the listeners with the worker's loop. */
int apex_tcp_worker_start(apex_tcp_worker_t *tcp, uv_loop_t *loop);

/* Close the listeners and every connection (on the worker's loop thread). */
void apex_tcp_worker_stop(apex_tcp_worker_t *tcp);

/* Close fds never handed to libuv and free the rest (after the loop ended). */
void apex_tcp_worker_free(apex_tcp_worker_t *tcp);

#endif
