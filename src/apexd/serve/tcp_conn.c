/* SPDX-License-Identifier: BSD-3-Clause */
/* A worker's TCP connection's life (tcp_internal.h): accepted within the
 * connection limits, its buffers taken from the worker's pools and given
 * back, closed. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "serve/tcp.h"
#include "serve/tcp_internal.h"

#include <netinet/in.h>
#include <stdlib.h>

#include "proxy/proxy_v2.h"
#include "serve/tls_service.h"
#include "serve/worker.h"
#include "util/error.h"
#include "util/log.h"

uint8_t *apex_tcp_conn_take(apex_tcp_conn_t *conn, apex_buffer_pool_t *pool, uint8_t **held)
{
	if (*held == NULL && (*held = apex_buffer_pool_take(pool)) == NULL)
		apex_error("worker %u: tcp connection: out of memory", conn->tcp->worker->index);
	return *held;
}

/*
 * The buffers the connection does not need now given back to the
 * worker's pools: the input once every message in it is answered, the
 * output once nothing is gathered in it, either output once the write in
 * flight no longer reads it (the socket took all of it at once, or it is
 * done).  An idle connection holds none.
 */
void apex_tcp_conn_release(apex_tcp_conn_t *conn)
{
	apex_tcp_buffers_t *b = &conn->tcp->buffers;

	if (conn->in_used == 0)
		apex_buffer_pool_release(&b->in, &conn->in);
	if (conn->out_used == 0 && conn->out != conn->sending)
		apex_buffer_pool_release(&b->out, &conn->out);
	if (conn->tls_out != conn->sending)
		apex_buffer_pool_release(&b->tls_out, &conn->tls_out);
}

/* TLS: close_notify and whatever output is left, written if the socket
 * takes it at once (a connection that closes waits for nothing).  No
 * write is in flight. */
static void conn_tls_goodbye(apex_tcp_conn_t *conn)
{
	size_t n;

	if (conn->tls.session == NULL)
		return;
	apex_tcp_tls_close(&conn->tls);
	/* given back with the others when the connection is freed */
	if (apex_tcp_conn_take(conn, &conn->tcp->buffers.tls_out, &conn->tls_out) == NULL)
		return;
	while ((n = apex_tcp_tls_output(&conn->tls, conn->tls_out, APEX_TCP_TLS_OUT)) > 0) {
		uv_buf_t buf = uv_buf_init((char *)conn->tls_out, (unsigned)n);

		if (uv_try_write((uv_stream_t *)&conn->handle, &buf, 1) != (int)n)
			break;
	}
}

static void on_handle_closed(uv_handle_t *handle)
{
	apex_tcp_conn_t *conn = handle->data;
	apex_tcp_buffers_t *b = &conn->tcp->buffers;

	if (--conn->open_handles > 0)
		return;
	if (conn->is_tls)
		apex_tcp_tls_free(&conn->tls);
	/* a write cancelled by the close has had its callback by now */
	apex_buffer_pool_give(&b->in, conn->in);
	apex_buffer_pool_give(&b->out, conn->out);
	apex_buffer_pool_give(&b->tls_out, conn->tls_out);
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
void apex_tcp_conn_close(apex_tcp_conn_t *conn)
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
		apex_tcp_conn_close(conn);
		return;
	}

	/* tcp-max-connections: one shared counter, touched per connection only */
	open = atomic_fetch_add_explicit(&shared->connections, 1, memory_order_relaxed);
	conn->counted = true;
	if (open >= shared->config->tcp_max_connections || tcp->stopping) {
		APEX_STAT_ADD(worker->stats.tcp_rejected, 1);
		apex_tcp_conn_close(conn);
		return;
	}
	/* tcp-max-connections-per-client */
	{
		int len = sizeof(conn->peer);

		if (uv_tcp_getpeername(&conn->handle, (struct sockaddr *)&conn->peer, &len) < 0) {
			apex_tcp_conn_close(conn);
			return;
		}
	}
	/* allow-proxy: who may send a PROXY v2 header; the per-client limit
	 * below counts the proxy, the address the connection comes from */
	if (l->proxy &&
	    !apex_proxy_allowed(shared->config->allow_proxy, shared->config->allow_proxy_count,
				(const struct sockaddr *)&conn->peer)) {
		APEX_STAT_ADD(worker->stats.proxy_not_allowed[APEX_STATS_PROXY_TCP], 1);
		apex_tcp_conn_close(conn);
		return;
	}
	conn->proxy_pending = l->proxy;
	if (shared->config->tcp_max_per_client > 0) {
		atomic_uint *slot = client_slot(shared, &conn->peer);

		open = atomic_fetch_add_explicit(slot, 1, memory_order_relaxed);
		conn->client_slot = slot;
		if (open >= shared->config->tcp_max_per_client) {
			APEX_STAT_ADD(worker->stats.tcp_rejected_per_client, 1);
			apex_tcp_conn_close(conn);
			return;
		}
	}

	rc = uv_timer_init(listener->loop, &conn->timer);
	if (rc == 0)
		conn->open_handles = 2;
	if (rc < 0) {
		apex_error("worker %u: tcp connection: %s", worker->index, apex_strerror(rc));
		apex_tcp_conn_close(conn);
		return;
	}
	if (l->transport != APEX_LISTEN_PLAIN && conn_tls_start(conn, l->transport) < 0) {
		apex_tcp_conn_close(conn);
		return;
	}
	APEX_STAT_ADD(worker->stats.tcp_connections, 1);
	uv_tcp_nodelay(&conn->handle, 1); /* pipelined answers must not wait for ACKs */

	apex_conn_list_add(&tcp->conns, &conn->link);
	conn->linked = true;

	apex_tcp_conn_start(conn);
}

void apex_tcp_close_all(apex_tcp_worker_t *tcp)
{
	while (tcp->conns.first != NULL)
		apex_tcp_conn_close((apex_tcp_conn_t *)tcp->conns.first); /* unlinks it */
}
