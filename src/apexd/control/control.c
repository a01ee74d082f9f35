/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket, on its own libuv loop and thread. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "control/control.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include "ctl/reply.h"
#include "ctl/request.h"
#include "serve/conn_list.h"
#include "process/loop_wakeup.h"
#include "process/quiet_thread.h"
#include "util/error.h"
#include "util/log.h"

typedef enum {
	CONN_READING,  /* waiting for the request line */
	CONN_WAITING,  /* a reload or reconfig waits for its loads */
	CONN_WRITING,  /* the reply is being written */
	CONN_DRAINING, /* reply sent: reading what the client still sends, until EOF */
} conn_state_t;

/* How long a client may take to close after its reply. */
#define DRAIN_TIMEOUT_MS 2000

typedef struct control_conn {
	apex_conn_link_t link; /* first: the link is the connection */
	uv_pipe_t pipe;
	uv_timer_t timer;
	uv_write_t write_req;
	uv_shutdown_t shutdown_req;
	struct apex_control *ctl;
	conn_state_t state;
	uint8_t in[APEX_CTL_REQUEST_MAX];
	size_t in_used;
	apex_ctl_request_t request;
	apex_command_pending_t pending;
	apex_ctl_buf_t out;
	bool stop_after_write; /* `stop`: signal the main thread once the reply is out */
	bool closing;
	int open_handles;
} control_conn_t;

struct apex_control {
	uv_loop_t loop;
	uv_pipe_t listener;
	apex_loop_wakeup_t wake; /* a load finished, or stop (loop_wakeup.h) */
	pthread_t thread;
	bool thread_started;
	atomic_bool stopping;
	char *path;
	apex_command_context_t ctx;
	apex_conn_list_t conns;
};

/* ---------------------------------------------------------------- connections */

static void on_conn_closed(uv_handle_t *handle)
{
	control_conn_t *conn = handle->data;

	if (--conn->open_handles > 0)
		return;
	apex_command_pending_free(&conn->pending);
	apex_ctl_buf_free(&conn->out);
	free(conn);
}

static void conn_close(control_conn_t *conn)
{
	struct apex_control *ctl = conn->ctl;

	if (conn->closing)
		return;
	conn->closing = true;
	apex_conn_list_remove(&ctl->conns, &conn->link);
	uv_close((uv_handle_t *)&conn->timer, on_conn_closed);
	uv_close((uv_handle_t *)&conn->pipe, on_conn_closed);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf);

static void conn_close_timer(uv_timer_t *timer)
{
	conn_close(timer->data);
}

/* Whatever the client sends after its reply is discarded, until it closes. */
static void on_drain(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	control_conn_t *conn = stream->data;

	(void)buf;
	if (nread < 0)
		conn_close(conn);
	else
		conn->in_used = 0;
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
	control_conn_t *conn = req->data;

	if (conn->closing)
		return;
	/* Closing a Unix socket with unread input resets it, and the client
	 * could lose its reply: read to the end (bounded by the timer) first. */
	conn->state = CONN_DRAINING;
	conn->in_used = 0;
	if (status < 0 || uv_read_start((uv_stream_t *)&conn->pipe, on_alloc, on_drain) < 0) {
		conn_close(conn);
		return;
	}
	uv_timer_start(&conn->timer, conn_close_timer, DRAIN_TIMEOUT_MS, 0);
}

static void on_written(uv_write_t *req, int status)
{
	control_conn_t *conn = req->data;

	if (conn->stop_after_write) {
		/* the main thread waits for SIGTERM in sigwait(): the usual way out */
		apex_info("stop requested on the control socket");
		kill(getpid(), SIGTERM);
	}
	if (status < 0 || conn->closing) {
		/* a client that went away misses its reply: nothing else to do */
		conn_close(conn);
		return;
	}
	conn->shutdown_req.data = conn;
	if (uv_shutdown(&conn->shutdown_req, (uv_stream_t *)&conn->pipe, on_shutdown) < 0)
		conn_close(conn);
}

/* Send conn->out (a complete reply), then close. */
static void conn_reply(control_conn_t *conn)
{
	uv_buf_t buf;
	int rc;

	conn->state = CONN_WRITING;
	uv_timer_stop(&conn->timer);
	if (conn->out.failed) {
		apex_ctl_buf_reset(&conn->out);
		apex_ctl_reply_status(&conn->out, false, "reply too large or out of memory");
	}
	buf = uv_buf_init(conn->out.data, (unsigned)conn->out.size);
	conn->write_req.data = conn;
	rc = uv_write(&conn->write_req, (uv_stream_t *)&conn->pipe, &buf, 1, on_written);
	if (rc < 0)
		conn_close(conn);
}

static void conn_error(control_conn_t *conn, const char *message)
{
	apex_ctl_buf_reset(&conn->out);
	apex_ctl_reply_status(&conn->out, false, message);
	conn_reply(conn);
}

/* The request line is in conn->in[0..size): run it. */
static void conn_request(control_conn_t *conn, size_t size)
{
	const char *reason = NULL;
	bool stop = false;
	int rc;

	uv_read_stop((uv_stream_t *)&conn->pipe);
	if (apex_ctl_request_parse(conn->in, size, &conn->request, &reason) < 0) {
		conn_error(conn, reason);
		return;
	}
	apex_debug("control: %s", apex_ctl_command_name(conn->request.command));
	rc = apex_command_run(&conn->ctl->ctx, &conn->request, &conn->out, &conn->pending, &stop);
	conn->stop_after_write = stop;
	if (rc == APEX_COMMAND_PENDING) {
		conn->state = CONN_WAITING;
		uv_timer_stop(&conn->timer);
		/* the loads may all be done already (or there are none) */
		if (apex_command_poll(&conn->ctl->ctx, &conn->pending, &conn->out))
			conn_reply(conn);
		return;
	}
	conn_reply(conn);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
	control_conn_t *conn = handle->data;

	(void)suggested;
	*buf = uv_buf_init((char *)conn->in + conn->in_used,
			   (unsigned)(sizeof(conn->in) - conn->in_used));
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	control_conn_t *conn = stream->data;
	uint8_t *nl;

	(void)buf;
	if (conn->state != CONN_READING)
		return;
	if (nread < 0) {
		/* EOF without a newline: the client shut its side; take what came */
		if (nread == UV_EOF && conn->in_used > 0)
			conn_request(conn, conn->in_used);
		else
			conn_close(conn);
		return;
	}
	conn->in_used += (size_t)nread;
	nl = memchr(conn->in, '\n', conn->in_used);
	if (nl != NULL) {
		if ((size_t)(nl - conn->in) + 1 < conn->in_used) {
			conn_error(conn, "one request per connection");
			return;
		}
		conn_request(conn, conn->in_used);
	} else if (conn->in_used == sizeof(conn->in)) {
		uv_read_stop(stream);
		conn_error(conn, "request too long");
	}
}

static void on_timeout(uv_timer_t *timer)
{
	control_conn_t *conn = timer->data;

	if (conn->state == CONN_READING) {
		uv_read_stop((uv_stream_t *)&conn->pipe);
		conn_error(conn, "no request line received in time");
	}
}

static void on_connection(uv_stream_t *server, int status)
{
	struct apex_control *ctl = server->data;
	control_conn_t *conn;

	if (status < 0) {
		apex_warning("control socket: %s", apex_strerror(status));
		return;
	}
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL) {
		apex_warning("control socket: out of memory");
		return;
	}
	uv_pipe_init(&ctl->loop, &conn->pipe, 0);
	conn->ctl = ctl;
	conn->pipe.data = conn;
	conn->timer.data = conn;
	conn->open_handles = 2;
	apex_ctl_buf_init(&conn->out, APEX_CTL_REPLY_MAX);
	uv_timer_init(&ctl->loop, &conn->timer);
	apex_conn_list_add(&ctl->conns, &conn->link);
	if (uv_accept(server, (uv_stream_t *)&conn->pipe) < 0) {
		conn_close(conn);
		return;
	}
	if (ctl->conns.count > APEX_CONTROL_MAX_CONNECTIONS) {
		conn_error(conn, "too many control connections");
		return;
	}
	uv_timer_start(&conn->timer, on_timeout, APEX_CONTROL_READ_TIMEOUT * 1000, 0);
	if (uv_read_start((uv_stream_t *)&conn->pipe, on_alloc, on_read) < 0)
		conn_close(conn);
}

/* ---------------------------------------------------------------- the loop */

static void on_wake(apex_loop_wakeup_t *wake)
{
	struct apex_control *ctl = wake->data;

	if (atomic_load(&ctl->stopping)) {
		/* each connection leaves the list as it is closed */
		while (ctl->conns.first != NULL)
			conn_close((control_conn_t *)ctl->conns.first);
		uv_close((uv_handle_t *)&ctl->listener, NULL);
		apex_loop_wakeup_close(&ctl->wake);
		return;
	}
	/* a load finished: reply to every request whose loads are all done */
	for (apex_conn_link_t *link = ctl->conns.first, *next; link != NULL; link = next) {
		control_conn_t *conn = (control_conn_t *)link;

		next = link->next;
		if (conn->state == CONN_WAITING &&
		    apex_command_poll(&ctl->ctx, &conn->pending, &conn->out))
			conn_reply(conn);
	}
}

static void *control_main(void *arg)
{
	struct apex_control *ctl = arg;

	uv_run(&ctl->loop, UV_RUN_DEFAULT);
	return NULL;
}

void apex_control_notify(void *arg)
{
	struct apex_control *ctl = arg;

	apex_loop_wakeup_send(&ctl->wake);
}

/*
 * A socket file already at path: remove it if nothing listens there
 * (left by an apexd that died), refuse if something does.
 */
static int clear_stale(const char *path, char *err, size_t err_size)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? APEX_OK : apex_errno();
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, err_size, "control socket %s: exists and is not a socket", path);
		return APEX_EINVAL;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int failure = apex_errno();
		snprintf(err, err_size, "control socket: socket: %s", apex_strerror(failure));
		return failure;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	if (rc == 0) {
		snprintf(err, err_size, "control socket %s: another apexd is listening there",
			 path);
		return APEX_EINVAL;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		int failure = apex_errno();
		snprintf(err, err_size, "control socket %s: cannot remove the stale socket: %s",
			 path, apex_strerror(failure));
		return failure;
	}
	return APEX_OK;
}

int apex_control_start(apex_control_t **out, const char *path, const apex_command_context_t *ctx,
		       char *err, size_t err_size)
{
	int rc = apex_control_open(out, path, ctx, (uid_t)-1, (gid_t)-1, err, err_size);

	if (rc == APEX_OK && (rc = apex_control_run(*out, err, err_size)) < 0) {
		apex_control_stop(*out);
		*out = NULL;
	}
	return rc;
}

int apex_control_run(apex_control_t *ctl, char *err, size_t err_size)
{
	int rc = apex_quiet_thread_start(&ctl->thread, control_main, ctl);

	if (rc < 0) {
		snprintf(err, err_size, "control thread: %s", apex_strerror(rc));
		return rc;
	}
	ctl->thread_started = true;
	return APEX_OK;
}

int apex_control_open(apex_control_t **out, const char *path, const apex_command_context_t *ctx,
		      uid_t owner, gid_t group, char *err, size_t err_size)
{
	struct apex_control *ctl;
	mode_t mask;
	int rc;

	*out = NULL;
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, err_size, "control socket %s: path too long (at most %zu bytes)",
			 path, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return APEX_EINVAL;
	}
	if ((rc = clear_stale(path, err, err_size)) < 0)
		return rc;
	ctl = calloc(1, sizeof(*ctl));
	if (ctl == NULL || (ctl->path = strdup(path)) == NULL) {
		free(ctl);
		snprintf(err, err_size, "control socket: out of memory");
		return APEX_ENOMEM;
	}
	ctl->ctx = *ctx;
	ctl->ctx.control_path = ctl->path;
	atomic_init(&ctl->stopping, false);
	if ((rc = uv_loop_init(&ctl->loop)) < 0) {
		snprintf(err, err_size, "control socket: loop: %s", apex_strerror(rc));
		free(ctl->path);
		free(ctl);
		return rc;
	}
	uv_pipe_init(&ctl->loop, &ctl->listener, 0);
	ctl->listener.data = ctl;
	if ((rc = apex_loop_wakeup_init(&ctl->wake, &ctl->loop, on_wake, ctl)) < 0) {
		snprintf(err, err_size, "control socket: wake-up: %s", apex_strerror(rc));
		goto fail;
	}
	/* created 0600: only apexd's user may control it (umask covers the
	 * moment between bind and chmod) */
	mask = umask(0177);
	rc = uv_pipe_bind(&ctl->listener, path);
	umask(mask);
	if (rc == 0 && chmod(path, 0600) < 0)
		rc = uv_translate_sys_error(errno);
	/* apexd's own user after the privilege drop (root may use it anyway) */
	if (rc == 0 && (owner != (uid_t)-1 || group != (gid_t)-1) && chown(path, owner, group) < 0)
		rc = uv_translate_sys_error(errno);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&ctl->listener, 16, on_connection);
	if (rc < 0) {
		snprintf(err, err_size, "control socket %s: %s", path, apex_strerror(rc));
		goto fail;
	}
	*out = ctl;
	return APEX_OK;
fail:
	uv_close((uv_handle_t *)&ctl->listener, NULL);
	apex_loop_wakeup_close(&ctl->wake);
	uv_run(&ctl->loop, UV_RUN_DEFAULT);
	uv_loop_close(&ctl->loop);
	apex_loop_wakeup_free(&ctl->wake);
	unlink(path);
	free(ctl->path);
	free(ctl);
	return rc;
}

void apex_control_stop(apex_control_t *ctl)
{
	if (ctl == NULL)
		return;
	atomic_store(&ctl->stopping, true);
	apex_loop_wakeup_send(&ctl->wake);
	if (ctl->thread_started)
		pthread_join(ctl->thread, NULL);
	else
		control_main(ctl); /* never started: let on_wake close everything here */
	if (uv_loop_close(&ctl->loop) != 0)
		apex_warning("control loop still has handles at exit");
	apex_loop_wakeup_free(&ctl->wake);
	if (unlink(ctl->path) < 0 && errno != ENOENT)
		apex_warning("control socket %s: %s", ctl->path, strerror(errno));
	free(ctl->path);
	free(ctl);
}
