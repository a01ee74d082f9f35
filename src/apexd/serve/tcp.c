/* SPDX-License-Identifier: BSD-3-Clause */
/* DNS over TCP (RFC 7766) for one worker, on its libuv loop: a
 * connection's reads, answers and writes (its life is tcp_conn.c's). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "serve/tcp.h"
#include "serve/tcp_internal.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "dns/rrtype.h"
#include "dns/stream.h"
#include "dns/wire.h"
#include "proxy/proxy_v2.h"
#include "serve/tcp_tls.h"
#include "serve/worker.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/xfr_serve.h"

/* ---------------------------------------------------------------- connections */

static void conn_process(apex_tcp_conn_t *conn);

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
	apex_tcp_conn_close(conn);
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

/*
 * A read is about to happen: a buffer for it from the worker's pools.
 * Plain TCP reads into the input, after what it holds; TLS reads
 * ciphertext into a buffer of its own, which on_read() gives back at
 * once (the session keeps a copy).  0 bytes makes libuv report
 * UV_ENOBUFS (on_read() closes): out of memory, as a full input always
 * holds a whole message that is answered first.
 */
static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
	apex_tcp_conn_t *conn = handle->data;
	apex_tcp_buffers_t *b = &conn->tcp->buffers;
	uint8_t *tls_in = NULL;

	(void)suggested;
	if (conn->is_tls) {
		apex_tcp_conn_take(conn, &b->tls_in, &tls_in);
		*buf = uv_buf_init((char *)tls_in, tls_in != NULL ? APEX_TCP_TLS_IN : 0);
	} else if (apex_tcp_conn_take(conn, &b->in, &conn->in) != NULL) {
		*buf = uv_buf_init((char *)conn->in + conn->in_used,
				   (unsigned)(APEX_TCP_IN_CAPACITY - conn->in_used));
	} else {
		*buf = uv_buf_init(NULL, 0);
	}
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

static void conn_reading(apex_tcp_conn_t *conn, bool on)
{
	if (on == conn->reading || conn->closing)
		return;
	if (on) {
		int rc = uv_read_start((uv_stream_t *)&conn->handle, on_alloc, on_read);

		if (rc < 0) {
			apex_tcp_conn_close(conn);
			return;
		}
	} else {
		uv_read_stop((uv_stream_t *)&conn->handle);
	}
	conn->reading = on;
}

static void conn_write(apex_tcp_conn_t *conn, uint8_t *data, size_t size);

/* TLS: the next part of the session's output written, from a buffer of
 * the pool.  False when no output waits. */
static bool conn_tls_send(apex_tcp_conn_t *conn)
{
	size_t n;

	if (!apex_tcp_tls_output_pending(&conn->tls))
		return false;
	if (apex_tcp_conn_take(conn, &conn->tcp->buffers.tls_out, &conn->tls_out) == NULL) {
		apex_tcp_conn_close(conn);
		return true;
	}
	n = apex_tcp_tls_output(&conn->tls, conn->tls_out, APEX_TCP_TLS_OUT);
	if (n == 0)
		return false;
	conn_write(conn, conn->tls_out, n);
	return true;
}

static void on_written(uv_write_t *req, int status)
{
	apex_tcp_conn_t *conn = req->data;

	conn->writing = false;
	conn->sending = NULL; /* its buffer goes back with the next release, or the close */
	if (conn->closing)
		return;
	if (status < 0) {
		apex_tcp_conn_close(conn);
		return;
	}
	/* TLS: the rest of the output before anything else */
	if (conn->is_tls && conn_tls_send(conn))
		return;
	if (conn->is_tls && apex_tcp_tls_ended(&conn->tls)) {
		/* a failure's alert, or our answer to close_notify, is sent */
		apex_tcp_conn_close(conn);
		return;
	}
	conn_process(conn);
}

/* The answers gathered in the output written out: as they are over plain
 * TCP, through the session over TLS (with the handshake's messages and
 * alerts it has to send, also when no answer is gathered). */
static void conn_flush(apex_tcp_conn_t *conn)
{
	size_t n = conn->out_used;

	conn->out_used = 0; /* the write's, or the session's, now */
	if (!conn->is_tls) {
		conn_write(conn, conn->out, n);
		return;
	}
	if (n > 0 && apex_tcp_tls_encrypt(&conn->tls, conn->out, n) < 0) {
		apex_tcp_conn_close(conn);
		return;
	}
	conn_tls_send(conn);
}

/* data[0..size) written; on_written() follows in a later turn of the
 * loop.  The buffer is given back at once if the socket took it all. */
static void conn_write(apex_tcp_conn_t *conn, uint8_t *data, size_t size)
{
	uv_stream_t *stream = (uv_stream_t *)&conn->handle;
	uv_buf_t buf = uv_buf_init((char *)data, (unsigned)size);
	int rc;

	conn->write_req.data = conn;
	rc = uv_write(&conn->write_req, stream, &buf, 1, on_written);
	if (rc < 0) {
		apex_tcp_conn_close(conn);
		return;
	}
	conn->writing = true;
	conn->write_since = uv_now(conn->handle.loop);
	if (conn->write_since == 0)
		conn->write_since = 1;
	/* libuv writes at once what the socket takes; the bytes it queued
	 * for later are read from data until on_written() */
	conn->sending = uv_stream_get_write_queue_size(stream) > 0 ? data : NULL;
	apex_tcp_conn_release(conn);
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
	apex_tcp_conn_close(conn);
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

	if (apex_tcp_conn_take(conn, &conn->tcp->buffers.in, &conn->in) == NULL) {
		apex_tcp_conn_close(conn);
		return APEX_ENOMEM;
	}
	if (*pos > 0) {
		memmove(conn->in, conn->in + *pos, conn->in_used - *pos);
		conn->in_used -= *pos;
		*pos = 0;
		conn->partial_since = 0;
	}
	do {
		rc = apex_tcp_tls_plaintext(&conn->tls, &conn->tcp->worker->stats,
					    conn->in + conn->in_used,
					    APEX_TCP_IN_CAPACITY - conn->in_used, &got);
		conn->in_used += got;
	} while (rc == APEX_OK && got > 0 && conn->in_used < APEX_TCP_IN_CAPACITY);
	if (rc < 0) {
		conn->out_used = 0;
		if (apex_tcp_tls_output_pending(&conn->tls))
			conn_flush(conn); /* the alert; on_written closes */
		else
			apex_tcp_conn_close(conn);
	}
	return rc;
}

/* The message msg (a transfer request if transfer) handed to a transfer
 * thread, or answered into the output.  False when the connection went
 * with the request or closed. */
static bool conn_answer(apex_tcp_conn_t *conn, const apex_stream_msg_t *msg, bool transfer)
{
	apex_worker_t *worker = conn->tcp->worker;
	apex_transport_t transport = conn->is_tls ? APEX_TRANSPORT_TLS : APEX_TRANSPORT_TCP;
	size_t size;

	APEX_STAT_ADD(worker->stats.tcp_queries, 1);
	if (conn->is_tls)
		APEX_STAT_ADD(worker->stats.tls_queries, 1);
	if (transfer && conn_hand_off(conn, msg->data, msg->size))
		return false;
	if (apex_tcp_conn_take(conn, &conn->tcp->buffers.out, &conn->out) == NULL) {
		apex_tcp_conn_close(conn);
		return false;
	}
	size = apex_worker_answer(worker, transport, &conn->peer, msg->data, msg->size,
				  conn->out + conn->out_used + 2, APEX_MAX_MESSAGE, NULL);
	if (size > 0) {
		apex_write_u16(conn->out + conn->out_used, (uint16_t)size);
		conn->out_used += 2 + size;
	}
	return true;
}

/*
 * After the messages before pos are answered: the rest moved to the
 * front of the input, the answers written, the buffers not needed given
 * back, the timer set again; reading goes on unless a write is under way,
 * or the connection closes when the client is done.
 */
static void conn_settle(apex_tcp_conn_t *conn, size_t pos)
{
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
	apex_tcp_conn_release(conn);
	conn_touch(conn);
	if (conn->writing) {
		conn_reading(conn, false);
	} else if (conn->eof || (conn->is_tls && apex_tcp_tls_ended(&conn->tls))) {
		/* the client has sent all it will and everything is answered */
		apex_tcp_conn_close(conn);
	} else {
		conn_reading(conn, true);
	}
}

/*
 * A proxy-protocol-port's connection: its PROXY v2 header read from the
 * start of the input and taken out of it, its client (unless a LOCAL
 * command's) the connection's peer from now on.  True when done; false
 * when the connection closed (a header missing or malformed, counted) or
 * waits for the rest of it.
 */
static bool conn_proxy_header(apex_tcp_conn_t *conn)
{
	apex_proxy_header_t h;
	/* no input buffer held: nothing received (a connection closed at once) */
	const uint8_t *in = conn->in != NULL ? conn->in : (const uint8_t *)"";
	int rc = apex_proxy_v2_parse(in, conn->in_used, true, &h);

	if (rc == 0 && !conn->eof && conn->in_used < APEX_TCP_IN_CAPACITY) {
		conn_settle(conn, 0); /* more to come: read on */
		return false;
	}
	if (rc <= 0) {
		APEX_STAT_ADD(conn->tcp->worker->stats.proxy_malformed[APEX_STATS_PROXY_TCP], 1);
		apex_tcp_conn_close(conn);
		return false;
	}
	if (!h.local)
		conn->peer = h.source;
	memmove(conn->in, conn->in + h.size, conn->in_used - h.size);
	conn->in_used -= h.size;
	conn->proxy_pending = false;
	return true;
}

/*
 * Answer every whole message in the input, in order, gathering the
 * answers in the output; write them out.  While a write is in flight
 * reading stops, so a client that does not read its answers cannot make
 * the server buffer more than one output's worth.
 */
static void conn_process(apex_tcp_conn_t *conn)
{
	size_t pos = 0;

	if (__builtin_expect(conn->proxy_pending, 0) && !conn_proxy_header(conn))
		return;
	/* the messages received together are one batch */
	apex_worker_batch(conn->tcp->worker, false);
	while (!conn->writing && !conn->closing) {
		apex_stream_msg_t msg;
		apex_stream_status_t framed;

		if (conn->in_used - pos < 2 + APEX_MAX_MESSAGE && conn->is_tls &&
		    conn_tls_fill(conn, &pos) < 0)
			return;
		framed = apex_stream_next(conn->in, conn->in_used, pos, &msg);
		if (framed == APEX_STREAM_MALFORMED) {
			/* no DNS message is empty: the stream is out of step */
			apex_tcp_conn_close(conn);
			return;
		}
		if (framed == APEX_STREAM_MORE)
			break;
		if (APEX_TCP_OUT_CAPACITY - conn->out_used < 2 + APEX_MAX_MESSAGE) {
			conn_flush(conn);
			break;
		}
		bool transfer = is_transfer(conn, msg.data, msg.size);

		/* the answers to the queries before a transfer go out first */
		if (transfer && conn->out_used > 0) {
			conn_flush(conn);
			break;
		}
		if (!conn_answer(conn, &msg, transfer))
			return;
		pos = msg.next;
		if (conn->out_used >= APEX_TCP_FLUSH_AT)
			conn_flush(conn);
	}
	if (!conn->closing)
		conn_settle(conn, pos);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	apex_tcp_conn_t *conn = stream->data;
	int rc = APEX_OK;

	if (conn->is_tls) {
		/* the session keeps a copy: the ciphertext's buffer goes back at once */
		if (nread > 0 && !conn->closing)
			rc = apex_tcp_tls_received(&conn->tls, (const uint8_t *)buf->base,
						   (size_t)nread);
		apex_buffer_pool_give(&conn->tcp->buffers.tls_in, (uint8_t *)buf->base);
	} else if (nread > 0) {
		conn->in_used += (size_t)nread; /* read into the input (on_alloc()) */
	}
	if (conn->closing)
		return;
	if (rc < 0) {
		apex_tcp_conn_close(conn); /* more than a session takes unread: not a DNS client */
	} else if (nread > 0) {
		conn_process(conn);
	} else if (nread == UV_EOF) {
		/* answer what was received, then close (conn_process does) */
		conn->eof = true;
		conn_reading(conn, false);
		conn_process(conn);
	} else if (nread < 0) {
		apex_tcp_conn_close(conn);
	} else {
		apex_tcp_conn_release(conn); /* nothing to read after all */
	}
}

void apex_tcp_conn_start(apex_tcp_conn_t *conn)
{
	conn_touch(conn);
	conn_reading(conn, true);
}
