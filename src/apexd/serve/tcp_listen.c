/* SPDX-License-Identifier: BSD-3-Clause */
/* A worker's TCP listeners and what all the workers' TCP services share
 * (tcp.h); the connections they accept are tcp.c's. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "serve/tcp.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/listen_socket.h"
#include "serve/tcp_internal.h"
#include "serve/tcp_tls.h"
#include "serve/worker.h"
#include "util/error.h"
#include "util/log.h"

#define TCP_BACKLOG 1024

int apex_tcp_socket_open(const apex_listen_t *listen_addr, char *err, size_t err_size)
{
	int fd = apex_listen_socket_open(listen_addr, SOCK_STREAM, err, err_size);

	/* listen now so that a failure shows at start-up; uv_listen() repeats it */
	if (fd >= 0 && listen(fd, TCP_BACKLOG) < 0) {
		int failure = apex_errno();
		snprintf(err, err_size, "tcp %s: listen: %s", listen_addr->text,
			 apex_strerror(failure));
		close(fd);
		return failure;
	}
	return fd;
}

static void on_connection(uv_stream_t *listener, int status)
{
	apex_tcp_listener_t *l = listener->data;

	if (status < 0) {
		apex_warning("worker %u: tcp accept: %s", l->owner->worker->index,
			     apex_strerror(status));
		return;
	}
	apex_tcp_accept(l);
}

/* ---------------------------------------------------------------- buffers */

static void buffers_init(apex_tcp_buffers_t *b)
{
	apex_buffer_pool_init(&b->in, APEX_TCP_IN_CAPACITY, APEX_TCP_POOL_KEEP);
	apex_buffer_pool_init(&b->out, APEX_TCP_OUT_CAPACITY, APEX_TCP_POOL_KEEP);
	apex_buffer_pool_init(&b->tls_in, APEX_TCP_TLS_IN, APEX_TCP_POOL_KEEP);
	apex_buffer_pool_init(&b->tls_out, APEX_TCP_TLS_OUT, APEX_TCP_POOL_KEEP);
}

/* The buffers a burst left in the pools, unused since the last time, freed. */
static void on_trim(uv_timer_t *timer)
{
	apex_tcp_buffers_t *b = timer->data;

	apex_buffer_pool_trim(&b->in);
	apex_buffer_pool_trim(&b->out);
	apex_buffer_pool_trim(&b->tls_in);
	apex_buffer_pool_trim(&b->tls_out);
}

static int buffers_start(apex_tcp_buffers_t *b, uv_loop_t *loop)
{
	int rc = uv_timer_init(loop, &b->trim);

	if (rc < 0)
		return rc;
	b->trim_ready = true;
	b->trim.data = b;
	return uv_timer_start(&b->trim, on_trim, APEX_TCP_POOL_TRIM_MS, APEX_TCP_POOL_TRIM_MS);
}

/* After the loop ended: every connection gave its buffers back. */
static void buffers_free(apex_tcp_buffers_t *b)
{
	apex_buffer_pool_free(&b->in);
	apex_buffer_pool_free(&b->out);
	apex_buffer_pool_free(&b->tls_in);
	apex_buffer_pool_free(&b->tls_out);
}

/* ---------------------------------------------------------------- worker */

int apex_tcp_shared_init(apex_tcp_shared_t *shared, const apex_config_t *cfg)
{
	memset(shared, 0, sizeof(*shared));
	atomic_init(&shared->connections, 0);
	shared->config = cfg;
	int rc = apex_random_bytes(shared->client_key, sizeof(shared->client_key));
	if (rc < 0)
		return rc;
	shared->clients = calloc(APEX_TCP_CLIENT_SLOTS, sizeof(*shared->clients));
	return shared->clients != NULL ? APEX_OK : APEX_ENOMEM;
}

void apex_tcp_shared_free(apex_tcp_shared_t *shared)
{
	free(shared->clients);
	shared->clients = NULL;
}

int apex_tcp_worker_init(apex_tcp_worker_t *tcp, struct apex_worker *worker,
			 apex_tcp_shared_t *shared, const int *fds, const apex_listen_t *listens,
			 size_t count)
{
	memset(tcp, 0, sizeof(*tcp));
	tcp->worker = worker;
	tcp->shared = shared;
	buffers_init(&tcp->buffers);
	tcp->listeners = calloc(count, sizeof(*tcp->listeners));
	if (tcp->listeners == NULL) {
		for (size_t i = 0; i < count; i++)
			close(fds[i]);
		return APEX_ENOMEM;
	}
	tcp->count = count;
	for (size_t i = 0; i < count; i++) {
		tcp->listeners[i].fd = fds[i];
		tcp->listeners[i].owner = tcp;
		tcp->listeners[i].transport = listens[i].transport;
		tcp->listeners[i].proxy = listens[i].proxy;
	}
	return APEX_OK;
}

int apex_tcp_worker_start(apex_tcp_worker_t *tcp, uv_loop_t *loop)
{
	int rc = buffers_start(&tcp->buffers, loop);

	if (rc < 0) {
		apex_error("tcp buffers: %s", apex_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < tcp->count; i++) {
		apex_tcp_listener_t *l = &tcp->listeners[i];

		rc = uv_tcp_init(loop, &l->handle);
		if (rc < 0) {
			apex_error("tcp listener: %s", apex_strerror(rc));
			return rc;
		}
		l->handle.data = l;
		rc = uv_tcp_open(&l->handle, l->fd);
		if (rc < 0) {
			/* the handle exists but does not own the fd */
			uv_close((uv_handle_t *)&l->handle, NULL);
			apex_error("tcp listener: %s", apex_strerror(rc));
			return rc;
		}
		l->opened = true;
		rc = uv_listen((uv_stream_t *)&l->handle, TCP_BACKLOG, on_connection);
		if (rc < 0) {
			apex_error("tcp listen: %s", apex_strerror(rc));
			return rc;
		}
	}
	return APEX_OK;
}

void apex_tcp_worker_stop(apex_tcp_worker_t *tcp)
{
	tcp->stopping = true;
	for (size_t i = 0; i < tcp->count; i++) {
		apex_tcp_listener_t *l = &tcp->listeners[i];

		if (l->opened && !uv_is_closing((uv_handle_t *)&l->handle))
			uv_close((uv_handle_t *)&l->handle, NULL);
	}
	if (tcp->buffers.trim_ready && !uv_is_closing((uv_handle_t *)&tcp->buffers.trim))
		uv_close((uv_handle_t *)&tcp->buffers.trim, NULL);
	apex_tcp_close_all(tcp);
}

void apex_tcp_worker_free(apex_tcp_worker_t *tcp)
{
	for (size_t i = 0; i < tcp->count; i++) {
		if (!tcp->listeners[i].opened && tcp->listeners[i].fd >= 0)
			close(tcp->listeners[i].fd);
	}
	free(tcp->listeners);
	buffers_free(&tcp->buffers);
	apex_tls_worker_contexts_free(&tcp->tls);
	memset(tcp, 0, sizeof(*tcp));
}
