/* SPDX-License-Identifier: BSD-3-Clause */
/* The metrics endpoint: HTTP/1.x on a libuv loop and thread of its own. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "control/metrics_server.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "control/metrics.h"
#include "metrics/exposition.h"
#include "metrics/http_request.h"
#include "process/quiet_thread.h"
#include "serve/conn_list.h"
#include "util/error.h"
#include "util/log.h"

/* How long a client may take to close after its reply. */
#define DRAIN_TIMEOUT_MS 2000
/* The largest reply: every family with a thousand zones is ~300 KiB. */
#define REPLY_MAX (16u << 20)

typedef struct metrics_conn {
	apex_conn_link_t link; /* first: the link is the connection */
	uv_tcp_t tcp;
	uv_timer_t timer;
	uv_write_t write_req;
	uv_shutdown_t shutdown_req;
	struct apex_metrics_server *srv;
	bool replied; /* the request was read: what comes now is drained */
	bool closing;
	int open_handles;
	uint8_t in[APEX_HTTP_REQUEST_MAX];
	size_t in_used;
	apex_ctl_buf_t out;
} metrics_conn_t;

struct apex_metrics_server {
	uv_loop_t loop;
	uv_tcp_t listener;
	uv_async_t async; /* stop */
	pthread_t thread;
	bool thread_started;
	apex_command_context_t ctx;
	apex_conn_list_t conns;
	char url[96]; /* http://ADDR:PORT/metrics, for the log */
};

static void on_conn_closed(uv_handle_t *handle)
{
	metrics_conn_t *conn = handle->data;

	if (--conn->open_handles > 0)
		return;
	apex_ctl_buf_free(&conn->out);
	free(conn);
}

static void conn_close(metrics_conn_t *conn)
{
	struct apex_metrics_server *srv = conn->srv;

	if (conn->closing)
		return;
	conn->closing = true;
	apex_conn_list_remove(&srv->conns, &conn->link);
	uv_close((uv_handle_t *)&conn->timer, on_conn_closed);
	uv_close((uv_handle_t *)&conn->tcp, on_conn_closed);
}

static void conn_close_timer(uv_timer_t *timer)
{
	conn_close(timer->data);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
	metrics_conn_t *conn = handle->data;

	(void)suggested;
	if (conn->replied)
		conn->in_used = 0; /* draining: the bytes are discarded */
	*buf = uv_buf_init((char *)conn->in + conn->in_used,
			   (unsigned)(sizeof(conn->in) - conn->in_used));
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
	metrics_conn_t *conn = req->data;

	/* Closing a socket with unread input resets it, and the client could
	 * lose its reply: read to its end (bounded by the timer) first. */
	if (status < 0 || conn->closing) {
		conn_close(conn);
		return;
	}
	uv_timer_start(&conn->timer, conn_close_timer, DRAIN_TIMEOUT_MS, 0);
}

static void on_written(uv_write_t *req, int status)
{
	metrics_conn_t *conn = req->data;

	if (status < 0 || conn->closing) {
		conn_close(conn);
		return;
	}
	conn->shutdown_req.data = conn;
	if (uv_shutdown(&conn->shutdown_req, (uv_stream_t *)&conn->tcp, on_shutdown) < 0)
		conn_close(conn);
}

/* Send the reply: status, headers and (unless head_only) body. */
static void conn_reply(metrics_conn_t *conn, const char *status, const char *content_type,
		       const char *body, size_t body_size, bool head_only)
{
	apex_ctl_buf_t *out = &conn->out;
	size_t header_size;

	conn->replied = true;
	uv_timer_stop(&conn->timer);
	apex_ctl_buf_printf(out,
			    "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			    "%sConnection: close\r\n\r\n",
			    status, content_type, body_size,
			    strncmp(status, "405", 3) == 0 ? "Allow: GET, HEAD\r\n" : "");
	header_size = out->size;
	if (!head_only)
		apex_ctl_buf_append(out, body, body_size);
	if (out->failed) {
		conn_close(conn);
		return;
	}
	uv_buf_t buf = uv_buf_init(out->data, (unsigned)(head_only ? header_size : out->size));
	conn->write_req.data = conn;
	if (uv_write(&conn->write_req, (uv_stream_t *)&conn->tcp, &buf, 1, on_written) < 0)
		conn_close(conn);
}

static void conn_error(metrics_conn_t *conn, const char *status)
{
	char body[128];
	int n = snprintf(body, sizeof(body), "%s\n", status);

	conn_reply(conn, status, "text/plain; charset=utf-8", body, (size_t)n, false);
}

/* A complete request head: the metrics, or why not. */
static void conn_request(metrics_conn_t *conn, const apex_http_request_t *req)
{
	apex_ctl_buf_t body;

	if (!req->get && !req->head) {
		conn_error(conn, "405 Method Not Allowed");
		return;
	}
	if (strcmp(req->path, "/metrics") != 0) {
		conn_error(conn, "404 Not Found");
		return;
	}
	apex_ctl_buf_init(&body, REPLY_MAX);
	if (apex_metrics_render(&conn->srv->ctx, &body) != APEX_OK) {
		apex_ctl_buf_free(&body);
		apex_warning("metrics: out of memory rendering the metrics");
		conn_error(conn, "500 Internal Server Error");
		return;
	}
	conn_reply(conn, "200 OK", APEX_METRICS_CONTENT_TYPE, body.data, body.size, req->head);
	apex_ctl_buf_free(&body);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	metrics_conn_t *conn = stream->data;
	apex_http_request_t req;

	(void)buf;
	if (nread < 0) {
		/* the client's EOF: after the reply, the end of the drain */
		conn_close(conn);
		return;
	}
	if (conn->replied)
		return;
	conn->in_used += (size_t)nread;
	switch (apex_http_request_parse(conn->in, conn->in_used, &req)) {
	case APEX_HTTP_INCOMPLETE: return;
	case APEX_HTTP_COMPLETE: conn_request(conn, &req); return;
	case APEX_HTTP_BAD: conn_error(conn, "400 Bad Request"); return;
	case APEX_HTTP_TOO_LARGE: conn_error(conn, "431 Request Header Fields Too Large"); return;
	}
}

static void on_timeout(uv_timer_t *timer)
{
	metrics_conn_t *conn = timer->data;

	if (!conn->replied)
		conn_error(conn, "408 Request Timeout");
}

static void on_connection(uv_stream_t *listener, int status)
{
	struct apex_metrics_server *srv = listener->data;
	metrics_conn_t *conn;

	if (status < 0) {
		apex_warning("metrics: %s", apex_strerror(status));
		return;
	}
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL) {
		apex_warning("metrics: out of memory");
		return;
	}
	uv_tcp_init(&srv->loop, &conn->tcp);
	uv_timer_init(&srv->loop, &conn->timer);
	conn->srv = srv;
	conn->tcp.data = conn;
	conn->timer.data = conn;
	conn->open_handles = 2;
	apex_ctl_buf_init(&conn->out, REPLY_MAX + 1024);
	apex_conn_list_add(&srv->conns, &conn->link);
	if (uv_accept(listener, (uv_stream_t *)&conn->tcp) < 0) {
		conn_close(conn);
		return;
	}
	uv_timer_start(&conn->timer, on_timeout, APEX_METRICS_READ_TIMEOUT * 1000, 0);
	if (uv_read_start((uv_stream_t *)&conn->tcp, on_alloc, on_read) < 0) {
		conn_close(conn);
		return;
	}
	if (srv->conns.count > APEX_METRICS_MAX_CONNECTIONS)
		conn_error(conn, "503 Service Unavailable");
}

static void on_async(uv_async_t *async)
{
	struct apex_metrics_server *srv = async->data;

	/* each connection leaves the list as it is closed */
	while (srv->conns.first != NULL)
		conn_close((metrics_conn_t *)srv->conns.first);
	uv_close((uv_handle_t *)&srv->listener, NULL);
	uv_close((uv_handle_t *)&srv->async, NULL);
}

static void *metrics_main(void *arg)
{
	struct apex_metrics_server *srv = arg;

	uv_run(&srv->loop, UV_RUN_DEFAULT);
	return NULL;
}

int apex_metrics_server_open(apex_metrics_server_t **out, const apex_listen_t *addr,
			     const apex_command_context_t *ctx, char *err, size_t err_size)
{
	struct apex_metrics_server *srv = calloc(1, sizeof(*srv));
	int rc;

	*out = NULL;
	if (srv == NULL) {
		snprintf(err, err_size, "metrics: out of memory");
		return APEX_ENOMEM;
	}
	srv->ctx = *ctx;
	if ((rc = uv_loop_init(&srv->loop)) < 0) {
		snprintf(err, err_size, "metrics: loop: %s", apex_strerror(rc));
		free(srv);
		return rc;
	}
	uv_tcp_init(&srv->loop, &srv->listener);
	srv->listener.data = srv;
	uv_async_init(&srv->loop, &srv->async, on_async);
	srv->async.data = srv;
	rc = uv_tcp_bind(&srv->listener, (const struct sockaddr *)&addr->addr, 0);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&srv->listener, 16, on_connection);
	if (rc < 0) {
		snprintf(err, err_size, "metrics %s: %s", addr->text, apex_strerror(rc));
		on_async(&srv->async);
		uv_run(&srv->loop, UV_RUN_DEFAULT);
		uv_loop_close(&srv->loop);
		free(srv);
		return rc;
	}
	char host[64] = "?";
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&addr->addr;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&addr->addr;
	if (addr->addr.ss_family == AF_INET6) {
		uv_ip6_name(sin6, host, sizeof(host));
		snprintf(srv->url, sizeof(srv->url), "http://[%s]:%u/metrics", host,
			 ntohs(sin6->sin6_port));
	} else {
		uv_ip4_name(sin, host, sizeof(host));
		snprintf(srv->url, sizeof(srv->url), "http://%s:%u/metrics", host,
			 ntohs(sin->sin_port));
	}
	*out = srv;
	return APEX_OK;
}

const char *apex_metrics_server_url(const apex_metrics_server_t *srv)
{
	return srv->url;
}

int apex_metrics_server_run(apex_metrics_server_t *srv, char *err, size_t err_size)
{
	int rc = apex_quiet_thread_start(&srv->thread, metrics_main, srv);

	if (rc < 0) {
		snprintf(err, err_size, "metrics thread: %s", apex_strerror(rc));
		return rc;
	}
	srv->thread_started = true;
	return APEX_OK;
}

void apex_metrics_server_stop(apex_metrics_server_t *srv)
{
	if (srv == NULL)
		return;
	uv_async_send(&srv->async);
	if (srv->thread_started)
		pthread_join(srv->thread, NULL);
	else
		metrics_main(srv); /* never started: on_async closes everything here */
	if (uv_loop_close(&srv->loop) != 0)
		apex_warning("metrics loop still has handles at exit");
	free(srv);
}
