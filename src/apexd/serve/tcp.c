/* SPDX-License-Identifier: BSD-3-Clause */
/* DNS over TCP (RFC 7766) for one worker, on its libuv loop. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "serve/tcp.h"
#include "serve/tcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dns/rrtype.h"
#include "dns/stream.h"
#include "dns/wire.h"
#include "serve/listen_socket.h"
#include "serve/tcp_tls.h"
#include "serve/tls_service.h"
#include "serve/worker.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/xfr_serve.h"

/* Input holds at least one whole message: 2-byte length + up to 65535. */
#define IN_CAPACITY (2 + APEX_MAX_MESSAGE)
/* Answers of pipelined queries are gathered up to FLUSH_AT bytes and
 * written together; the output always has room for one more answer of
 * the largest size before that. */
#define FLUSH_AT 16384
#define OUT_CAPACITY (FLUSH_AT + 2 + APEX_MAX_MESSAGE)

typedef struct apex_tcp_conn {
	apex_conn_link_t link; /* first: in tcp->conns, the link is the connection */
	uv_tcp_t handle;
	uv_timer_t timer;
	uv_write_t write_req;
	apex_tcp_worker_t *tcp;
	uint8_t *in; /* IN_CAPACITY bytes, owned by the connection */
	size_t in_used;
	uint8_t *out; /* OUT_CAPACITY bytes, owned by the connection */
	size_t out_used;
	int open_handles;             /* libuv handles still to be closed before free */
	bool counted;                 /* holds one of tcp->shared->connections */
	atomic_uint *client_slot;     /* holds one count of it (per-client limit), or NULL */
	struct sockaddr_storage peer; /* the client, for server cookies */
	uint64_t partial_since; /* uv_now() when the unfinished input message began; 0: none */
	uint64_t write_since;   /* uv_now() when the write in flight began */
	bool linked;
	bool reading;
	bool writing;
	bool eof;
	bool closing;
	bool is_tls;        /* DNS over TLS: every byte goes through tls */
	apex_tcp_tls_t tls; /* its session and ciphertext buffers */
} apex_tcp_conn_t;

/* ---------------------------------------------------------------- connections */

static void conn_close(apex_tcp_conn_t *conn);
static void conn_process(apex_tcp_conn_t *conn);

/* TLS: close_notify and whatever output is left, written if the socket
 * takes it at once (a connection that closes waits for nothing). */
static void conn_tls_goodbye(apex_tcp_conn_t *conn)
{
	size_t n;

	if (conn->tls.session == NULL)
		return;
	apex_tcp_tls_close(&conn->tls);
	while ((n = apex_tcp_tls_output(&conn->tls)) > 0) {
		uv_buf_t buf = uv_buf_init((char *)conn->tls.out, (unsigned)n);

		if (uv_try_write((uv_stream_t *)&conn->handle, &buf, 1) != (int)n)
			break;
	}
}

static void on_handle_closed(uv_handle_t *handle)
{
	apex_tcp_conn_t *conn = handle->data;

	if (--conn->open_handles > 0)
		return;
	if (conn->is_tls)
		apex_tcp_tls_free(&conn->tls);
	free(conn->in);
	free(conn->out);
	free(conn);
}

static void conn_unlink(apex_tcp_conn_t *conn)
{
	apex_tcp_worker_t *tcp = conn->tcp;

	if (!conn->linked)
		return;
	apex_conn_list_remove(&tcp->conns, &conn->link);
	conn->linked = false;
}

/* Close the connection; its memory is freed once libuv has closed its handles. */
static void conn_close(apex_tcp_conn_t *conn)
{
	if (conn->closing)
		return;
	conn->closing = true;
	conn_unlink(conn);
	if (conn->counted) {
		atomic_fetch_sub_explicit(&conn->tcp->shared->connections, 1, memory_order_relaxed);
		conn->counted = false;
	}
	if (conn->client_slot != NULL) {
		atomic_fetch_sub_explicit(conn->client_slot, 1, memory_order_relaxed);
		conn->client_slot = NULL;
	}
	if (conn->is_tls && !conn->writing)
		conn_tls_goodbye(conn);
	/* A pending write is cancelled (its callback runs first, with UV_ECANCELED). */
	uv_close((uv_handle_t *)&conn->handle, on_handle_closed);
	if (conn->open_handles > 1)
		uv_close((uv_handle_t *)&conn->timer, on_handle_closed);
}

/* Whether a message is half received or half sent (tcp-io-timeout applies). */
static bool conn_in_io(const apex_tcp_conn_t *conn)
{
	return conn->partial_since != 0 || conn->writing;
}

static void on_idle(uv_timer_t *timer)
{
	apex_tcp_conn_t *conn = timer->data;

	if (conn->is_tls && conn->tls.session != NULL && apex_tcp_tls_handshaking(&conn->tls))
		apex_tcp_tls_count_timeout(&conn->tls, &conn->tcp->worker->stats);
	if (conn_in_io(conn))
		APEX_STAT_ADD(conn->tcp->worker->stats.tcp_io_timeouts, 1);
	else
		APEX_STAT_ADD(conn->tcp->worker->stats.tcp_timeouts, 1);
	conn_close(conn);
}

/*
 * (Re)start the connection's one timer.  Idle (no message under way):
 * tcp-idle-timeout from now, the last activity (RFC 7766 section 6.2.3).
 * A message half received or an answer half sent must be finished
 * within tcp-io-timeout of its start, however the bytes trickle in or
 * out: a slow client (slowloris) cannot hold a connection by sending or
 * reading one byte now and then.
 */
static void conn_touch(apex_tcp_conn_t *conn)
{
	const apex_config_t *cfg = conn->tcp->shared->config;
	uint64_t now = uv_now(conn->handle.loop);
	uint64_t deadline = now + (uint64_t)cfg->tcp_idle_timeout * 1000;
	uint64_t io = (uint64_t)cfg->tcp_io_timeout * 1000;

	if (conn->partial_since != 0 && conn->partial_since + io < deadline)
		deadline = conn->partial_since + io;
	if (conn->writing && conn->write_since + io < deadline)
		deadline = conn->write_since + io;
	uv_timer_start(&conn->timer, on_idle, deadline > now ? deadline - now : 0, 0);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
	apex_tcp_conn_t *conn = handle->data;

	(void)suggested;
	if (conn->is_tls) {
		*buf = uv_buf_init((char *)conn->tls.in, APEX_TCP_TLS_IN);
		return;
	}
	/* 0 bytes makes libuv report UV_ENOBUFS; cannot happen, as a full
	 * input always holds a whole message that is answered first. */
	*buf = uv_buf_init((char *)conn->in + conn->in_used,
			   (unsigned)(IN_CAPACITY - conn->in_used));
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

static void conn_reading(apex_tcp_conn_t *conn, bool on)
{
	if (on == conn->reading || conn->closing)
		return;
	if (on) {
		int rc = uv_read_start((uv_stream_t *)&conn->handle, on_alloc, on_read);

		if (rc < 0) {
			conn_close(conn);
			return;
		}
	} else {
		uv_read_stop((uv_stream_t *)&conn->handle);
	}
	conn->reading = on;
}

static void conn_write(apex_tcp_conn_t *conn, uint8_t *data, size_t size);

static void on_written(uv_write_t *req, int status)
{
	apex_tcp_conn_t *conn = req->data;

	conn->writing = false;
	if (conn->closing)
		return;
	if (status < 0) {
		conn_close(conn);
		return;
	}
	conn->out_used = 0;
	/* TLS: the rest of the output before anything else */
	size_t n = conn->is_tls && conn->tls.session != NULL ? apex_tcp_tls_output(&conn->tls) : 0;
	if (n > 0) {
		conn_write(conn, conn->tls.out, n);
		return;
	}
	if (conn->is_tls && apex_tcp_tls_ended(&conn->tls)) {
		conn_close(conn); /* a failure's alert, or our answer to close_notify, is sent */
		return;
	}
	conn_process(conn);
}

/* The answers gathered in the output written out: as they are over plain
 * TCP, through the session over TLS (with the handshake's messages and
 * alerts it has to send, also when no answer is gathered). */
static void conn_flush(apex_tcp_conn_t *conn)
{
	if (!conn->is_tls) {
		conn_write(conn, conn->out, conn->out_used);
		return;
	}
	if (conn->out_used > 0 && apex_tcp_tls_encrypt(&conn->tls, conn->out, conn->out_used) < 0) {
		conn_close(conn);
		return;
	}
	conn->out_used = 0;
	size_t n = apex_tcp_tls_output(&conn->tls);
	if (n > 0)
		conn_write(conn, conn->tls.out, n);
}

static void conn_write(apex_tcp_conn_t *conn, uint8_t *data, size_t size)
{
	uv_buf_t buf = uv_buf_init((char *)data, (unsigned)size);
	int rc;

	conn->write_req.data = conn;
	rc = uv_write(&conn->write_req, (uv_stream_t *)&conn->handle, &buf, 1, on_written);
	if (rc < 0) {
		conn_close(conn);
		return;
	}
	conn->writing = true;
	conn->write_since = uv_now(conn->handle.loop);
	if (conn->write_since == 0)
		conn->write_since = 1;
}

/*
 * Hand the connection over to an outgoing transfer (tcp.h): a duplicate of
 * its descriptor goes with the request, and this side closes.  False when
 * it could not be taken (the engine then answers the request).
 */
static bool conn_hand_off(apex_tcp_conn_t *conn, const uint8_t *msg, size_t size)
{
	apex_tcp_shared_t *shared = conn->tcp->shared;
	uv_os_fd_t fd;
	int dup_fd;

	apex_tcp_handoff_t how = { .transport = APEX_LISTEN_PLAIN };

	if (uv_fileno((uv_handle_t *)&conn->handle, &fd) != 0)
		return false;
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return false;
	if (conn->is_tls) {
		how.transport = conn->tls.transport;
		how.tls = conn->tls.session;
	}
	if (!shared->xfr_take(shared->xfr_ctx, dup_fd, &conn->peer, msg, size, &how)) {
		close(dup_fd);
		return false;
	}
	if (conn->is_tls)
		apex_tcp_tls_take(&conn->tls); /* the transfer thread's now */
	conn_close(conn);
	return true;
}

/* Whether msg is an AXFR or IXFR request for the transfer threads. */
static bool is_transfer(const apex_tcp_conn_t *conn, const uint8_t *msg, size_t size)
{
	uint16_t qtype;

	if (conn->tcp->shared->xfr_take == NULL)
		return false;
	qtype = apex_xfr_request_type(msg, size);
	return qtype == APEX_TYPE_AXFR || qtype == APEX_TYPE_IXFR;
}

/*
 * TLS: the plaintext decrypted so far appended to the input, after the
 * messages before *pos are moved out of the way (several messages may
 * come in one record, and one read may hold several records: all of it
 * is read out, RFC 7766's pipelining over TLS).  A session that failed
 * sends its alert, then the connection closes.
 */
static int conn_tls_fill(apex_tcp_conn_t *conn, size_t *pos)
{
	size_t got;
	int rc;

	if (*pos > 0) {
		memmove(conn->in, conn->in + *pos, conn->in_used - *pos);
		conn->in_used -= *pos;
		*pos = 0;
		conn->partial_since = 0;
	}
	do {
		rc = apex_tcp_tls_plaintext(&conn->tls, &conn->tcp->worker->stats,
					    conn->in + conn->in_used, IN_CAPACITY - conn->in_used,
					    &got);
		conn->in_used += got;
	} while (rc == APEX_OK && got > 0 && conn->in_used < IN_CAPACITY);
	if (rc < 0) {
		conn->out_used = 0;
		if (apex_tcp_tls_output_pending(&conn->tls))
			conn_flush(conn); /* the alert; on_written closes */
		else
			conn_close(conn);
	}
	return rc;
}

/*
 * Answer every whole message in the input, in order, gathering the
 * answers in the output; write them out.  While a write is in flight
 * reading stops, so a client that does not read its answers cannot make
 * the server buffer more than one output's worth.
 */
static void conn_process(apex_tcp_conn_t *conn)
{
	apex_worker_t *worker = conn->tcp->worker;
	apex_transport_t transport = conn->is_tls ? APEX_TRANSPORT_TLS : APEX_TRANSPORT_TCP;
	size_t pos = 0;

	/* the messages received together are one batch */
	apex_worker_batch(worker, false);
	while (!conn->writing && !conn->closing) {
		apex_stream_msg_t msg;
		apex_stream_status_t framed;
		size_t size;

		if (conn->in_used - pos < 2 + APEX_MAX_MESSAGE && conn->is_tls &&
		    conn_tls_fill(conn, &pos) < 0)
			return;
		framed = apex_stream_next(conn->in, conn->in_used, pos, &msg);
		if (framed == APEX_STREAM_MALFORMED) {
			/* no DNS message is empty: the stream is out of step */
			conn_close(conn);
			return;
		}
		if (framed == APEX_STREAM_MORE)
			break;
		if (OUT_CAPACITY - conn->out_used < 2 + APEX_MAX_MESSAGE) {
			conn_flush(conn);
			break;
		}
		bool transfer = is_transfer(conn, msg.data, msg.size);

		/* the answers to the queries before a transfer go out first */
		if (transfer && conn->out_used > 0) {
			conn_flush(conn);
			break;
		}
		APEX_STAT_ADD(worker->stats.tcp_queries, 1);
		if (conn->is_tls)
			APEX_STAT_ADD(worker->stats.tls_queries, 1);
		if (transfer && conn_hand_off(conn, msg.data, msg.size))
			return;
		size = apex_worker_answer(worker, transport, &conn->peer, msg.data, msg.size,
					  conn->out + conn->out_used + 2, APEX_MAX_MESSAGE, NULL);
		if (size > 0) {
			apex_write_u16(conn->out + conn->out_used, (uint16_t)size);
			conn->out_used += 2 + size;
		}
		pos = msg.next;
		if (conn->out_used >= FLUSH_AT)
			conn_flush(conn);
	}
	if (conn->closing)
		return;
	if (pos > 0) {
		memmove(conn->in, conn->in + pos, conn->in_used - pos);
		conn->in_used -= pos;
		conn->partial_since = 0; /* what is left is a new message */
	}
	/* a TLS handshake under way is a message half received */
	bool handshaking = conn->is_tls && apex_tcp_tls_handshaking(&conn->tls);
	if (conn->in_used == 0 && !handshaking)
		conn->partial_since = 0;
	else if (conn->partial_since == 0)
		conn->partial_since = uv_now(conn->handle.loop) | 1; /* never 0 */
	if (!conn->writing &&
	    (conn->out_used > 0 || (conn->is_tls && apex_tcp_tls_output_pending(&conn->tls))))
		conn_flush(conn);
	if (conn->closing)
		return;
	conn_touch(conn);
	if (conn->writing) {
		conn_reading(conn, false);
	} else if (conn->eof || (conn->is_tls && apex_tcp_tls_ended(&conn->tls))) {
		/* the client has sent all it will and everything is answered */
		conn_close(conn);
	} else {
		conn_reading(conn, true);
	}
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	apex_tcp_conn_t *conn = stream->data;

	(void)buf;
	if (conn->closing)
		return;
	if (nread > 0 && conn->is_tls) {
		if (apex_tcp_tls_received(&conn->tls, (size_t)nread) < 0) {
			conn_close(conn); /* more than a session takes unread: not a DNS client */
			return;
		}
		conn_process(conn);
	} else if (nread > 0) {
		conn->in_used += (size_t)nread;
		conn_process(conn);
	} else if (nread == UV_EOF) {
		/* answer what was received, then close (conn_process does) */
		conn->eof = true;
		conn_reading(conn, false);
		conn_process(conn);
	} else if (nread < 0) {
		conn_close(conn);
	}
}

/* The per-client counter of a client address. */
static atomic_uint *client_slot(apex_tcp_shared_t *shared, const struct sockaddr_storage *peer)
{
	uint64_t h;

	if (peer->ss_family == AF_INET6)
		h = apex_siphash24(shared->client_key,
				   ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr, 16);
	else
		h = apex_siphash24(shared->client_key,
				   &((const struct sockaddr_in *)peer)->sin_addr, 4);
	return &shared->clients[h % APEX_TCP_CLIENT_SLOTS];
}

/* A connection to a TLS listener: its session, from the context in force
 * now; the handshake is bounded by tcp-io-timeout (conn_touch()). */
static int conn_tls_start(apex_tcp_conn_t *conn, apex_listen_transport_t transport)
{
	apex_tls_service_t *svc = conn->tcp->shared->tls;
	SSL_CTX *ctx =
		svc != NULL ? apex_tls_worker_context(svc, &conn->tcp->tls, transport) : NULL;
	int rc;

	if (ctx == NULL)
		return APEX_EINVAL;
	apex_tls_service_tick(svc, uv_now(conn->handle.loop));
	conn->is_tls = true;
	rc = apex_tcp_tls_start(&conn->tls, ctx, transport); /* the session takes a reference */
	conn->partial_since = uv_now(conn->handle.loop) | 1;
	return rc;
}

void apex_tcp_accept(apex_tcp_listener_t *l)
{
	uv_stream_t *listener = (uv_stream_t *)&l->handle;
	apex_tcp_worker_t *tcp = l->owner;
	apex_worker_t *worker = tcp->worker;
	apex_tcp_shared_t *shared = tcp->shared;
	apex_tcp_conn_t *conn;
	unsigned open;
	int rc;

	conn = calloc(1, sizeof(*conn));
	if (conn == NULL) {
		apex_error("worker %u: tcp accept: out of memory", worker->index);
		return;
	}
	conn->tcp = tcp;
	conn->handle.data = conn;
	conn->timer.data = conn;
	rc = uv_tcp_init(listener->loop, &conn->handle);
	if (rc < 0) {
		apex_error("worker %u: tcp accept: %s", worker->index, apex_strerror(rc));
		free(conn);
		return;
	}
	conn->open_handles = 1;
	rc = uv_accept(listener, (uv_stream_t *)&conn->handle);
	if (rc < 0) {
		apex_warning("worker %u: tcp accept: %s", worker->index, apex_strerror(rc));
		conn_close(conn);
		return;
	}

	/* tcp-max-connections: one shared counter, touched per connection only */
	open = atomic_fetch_add_explicit(&shared->connections, 1, memory_order_relaxed);
	conn->counted = true;
	if (open >= shared->config->tcp_max_connections || tcp->stopping) {
		APEX_STAT_ADD(worker->stats.tcp_rejected, 1);
		conn_close(conn);
		return;
	}
	/* tcp-max-connections-per-client */
	{
		int len = sizeof(conn->peer);

		if (uv_tcp_getpeername(&conn->handle, (struct sockaddr *)&conn->peer, &len) < 0) {
			conn_close(conn);
			return;
		}
	}
	if (shared->config->tcp_max_per_client > 0) {
		atomic_uint *slot = client_slot(shared, &conn->peer);

		open = atomic_fetch_add_explicit(slot, 1, memory_order_relaxed);
		conn->client_slot = slot;
		if (open >= shared->config->tcp_max_per_client) {
			APEX_STAT_ADD(worker->stats.tcp_rejected_per_client, 1);
			conn_close(conn);
			return;
		}
	}

	conn->in = malloc(IN_CAPACITY);
	conn->out = malloc(OUT_CAPACITY);
	rc = uv_timer_init(listener->loop, &conn->timer);
	if (rc == 0)
		conn->open_handles = 2;
	if (conn->in == NULL || conn->out == NULL || rc < 0) {
		apex_error("worker %u: tcp connection: out of memory", worker->index);
		conn_close(conn);
		return;
	}
	if (l->transport != APEX_LISTEN_PLAIN && conn_tls_start(conn, l->transport) < 0) {
		conn_close(conn);
		return;
	}
	APEX_STAT_ADD(worker->stats.tcp_connections, 1);
	uv_tcp_nodelay(&conn->handle, 1); /* pipelined answers must not wait for ACKs */

	apex_conn_list_add(&tcp->conns, &conn->link);
	conn->linked = true;

	conn_touch(conn);
	conn_reading(conn, true);
}

void apex_tcp_close_all(apex_tcp_worker_t *tcp)
{
	while (tcp->conns.first != NULL)
		conn_close((apex_tcp_conn_t *)tcp->conns.first); /* unlinks it */
}
