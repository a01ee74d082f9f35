/* SPDX-License-Identifier: BSD-3-Clause */
/* Blocking DNS-over-TCP I/O for transfer threads, plain or through TLS
 * (tcp_stream.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/tcp_stream.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "dns/wire.h"
#include "util/clock.h"
#include "util/error.h"

/* Ciphertext moves in pieces of a record's size; a reason from lib/tls is
 * one line. */
#define TLS_CHUNK 16384
#define TLS_REASON 256

static int fail(apex_tcp_stream_t *s, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(apex_tcp_stream_t *s, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, s->err_size, fmt, ap);
	va_end(ap);
	return rc;
}

void apex_tcp_stream_init(apex_tcp_stream_t *s, int fd, const apex_xfr_timeouts_t *t,
			  const char *peer, char *err, size_t err_size)
{
	s->fd = fd;
	s->deadline = apex_monotonic_ms() + t->total_ms;
	s->idle_ms = t->idle_ms;
	s->cancel_fd = t->cancel_fd;
	s->peer = peer;
	s->err = err;
	s->err_size = err_size;
	s->tls = NULL;
}

int apex_tcp_stream_wait(apex_tcp_stream_t *s, short events, const char *what)
{
	uint64_t now = apex_monotonic_ms();
	uint64_t left = s->deadline > now ? s->deadline - now : 0;
	struct pollfd pfd[2] = { { .fd = s->fd, .events = events },
				 { .fd = s->cancel_fd, .events = POLLIN } };
	int n;

	if (left > s->idle_ms)
		left = s->idle_ms;
	do {
		n = poll(pfd, s->cancel_fd >= 0 ? 2 : 1, (int)left);
	} while (n < 0 && errno == EINTR);
	if (n > 0 && s->cancel_fd >= 0 && (pfd[1].revents & POLLIN))
		return fail(s, -ECANCELED, "%s: %s: abandoned (stopping)", s->peer, what);
	if (n < 0)
		return fail(s, apex_errno(), "%s: %s: %s", s->peer, what, strerror(errno));
	if (n == 0)
		return fail(s, -ETIMEDOUT, "%s: %s: timed out", s->peer, what);
	return APEX_OK;
}

/* All of buf sent, with more (0 or MSG_MORE: more follows at once). */
static int send_plain(apex_tcp_stream_t *s, const uint8_t *buf, size_t size, int more)
{
	while (size > 0) {
		ssize_t n = send(s->fd, buf, size, MSG_NOSIGNAL | MSG_DONTWAIT | more);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			int rc = apex_tcp_stream_wait(s, POLLOUT, "sending");
			if (rc < 0)
				return rc;
			continue;
		}
		if (n < 0)
			return fail(s, apex_errno(), "%s: send: %s", s->peer, strerror(errno));
		buf += n;
		size -= (size_t)n;
	}
	return APEX_OK;
}

/* The session's output (records, alerts, tickets) sent. */
static int flush_tls(apex_tcp_stream_t *s)
{
	uint8_t chunk[TLS_CHUNK];
	size_t n;

	while ((n = apex_tls_session_take_output(s->tls, chunk, sizeof chunk)) > 0) {
		int rc = send_plain(s, chunk, n, 0);
		if (rc < 0)
			return rc;
	}
	return APEX_OK;
}

/* A TLS call's failure (its reason) before a failure to send its output
 * (an alert telling the peer why). */
static int tls_result(apex_tcp_stream_t *s, int rc, const char *reason)
{
	int sent = flush_tls(s);

	if (rc < 0)
		return fail(s, rc, "%s: %s", s->peer, reason);
	return sent;
}

static int send_tls(apex_tcp_stream_t *s, const uint8_t *buf, size_t size)
{
	char reason[TLS_REASON];
	int rc = apex_tls_session_write(s->tls, buf, size, reason, sizeof reason);

	return tls_result(s, rc, reason);
}

int apex_tcp_stream_send(apex_tcp_stream_t *s, const uint8_t *buf, size_t size)
{
	return s->tls != NULL ? send_tls(s, buf, size) : send_plain(s, buf, size, 0);
}

/* Through TLS, the length goes in one record with the start of the
 * message (a record of its own would cost 20 bytes and more for 2). */
static int send_message_tls(apex_tcp_stream_t *s, const uint8_t *msg, size_t size)
{
	uint8_t first[TLS_CHUNK];
	size_t head = size < sizeof first - 2 ? size : sizeof first - 2;
	char reason[TLS_REASON];
	int rc;

	apex_write_u16(first, (uint16_t)size);
	memcpy(first + 2, msg, head);
	rc = apex_tls_session_write(s->tls, first, head + 2, reason, sizeof reason);
	if (rc == APEX_OK && head < size)
		rc = apex_tls_session_write(s->tls, msg + head, size - head, reason, sizeof reason);
	return tls_result(s, rc, reason);
}

int apex_tcp_stream_send_message(apex_tcp_stream_t *s, const uint8_t *msg, size_t size)
{
	uint8_t prefix[2];
	int rc;

	if (s->tls != NULL)
		return send_message_tls(s, msg, size);
	/* the length held back (MSG_MORE) to leave with the message: sent
	 * alone, the message would wait behind it for the peer's delayed
	 * acknowledgement (Nagle's algorithm: 40 ms a request on a connection
	 * used again) */
	apex_write_u16(prefix, (uint16_t)size);
	rc = send_plain(s, prefix, 2, MSG_MORE);
	return rc < 0 ? rc : send_plain(s, msg, size, 0);
}

static int closed_early(apex_tcp_stream_t *s, bool before_message)
{
	if (before_message)
		return fail(s, APEX_EMALFORMED,
			    "%s: connection closed before the answer was complete", s->peer);
	return fail(s, APEX_EMALFORMED, "%s: connection closed in the middle of a message",
		    s->peer);
}

static int recv_all(apex_tcp_stream_t *s, uint8_t *buf, size_t size, bool message_start)
{
	size_t wanted = size;

	while (size > 0) {
		ssize_t n = recv(s->fd, buf, size, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			int rc = apex_tcp_stream_wait(s, POLLIN, "receiving");
			if (rc < 0)
				return rc;
			continue;
		}
		if (n < 0)
			return fail(s, apex_errno(), "%s: receive: %s", s->peer, strerror(errno));
		if (n == 0)
			return closed_early(s, message_start && size == wanted);
		buf += n;
		size -= (size_t)n;
	}
	return APEX_OK;
}

/* Ciphertext received (waiting for it in the step named what) and fed to
 * the session; *eof when the peer closed the connection instead. */
static int fill_tls(apex_tcp_stream_t *s, const char *what, bool *eof)
{
	uint8_t chunk[TLS_CHUNK];
	char reason[TLS_REASON];

	*eof = false;
	for (;;) {
		ssize_t n = recv(s->fd, chunk, sizeof chunk, MSG_DONTWAIT);
		int rc;

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			rc = apex_tcp_stream_wait(s, POLLIN, what);
			if (rc < 0)
				return rc;
			continue;
		}
		if (n < 0)
			return fail(s, apex_errno(), "%s: receive: %s", s->peer, strerror(errno));
		if (n == 0) {
			*eof = true;
			return APEX_OK;
		}
		rc = apex_tls_session_feed(s->tls, chunk, (size_t)n, reason, sizeof reason);
		return rc < 0 ? fail(s, rc, "%s: %s", s->peer, reason) : APEX_OK;
	}
}

/* size bytes of plaintext: what the session holds, then more received. */
static int recv_tls(apex_tcp_stream_t *s, uint8_t *buf, size_t size, bool message_start)
{
	size_t wanted = size;
	char reason[TLS_REASON];

	while (size > 0) {
		size_t got = 0;
		bool eof = false;
		int rc = apex_tls_session_read(s->tls, buf, size, &got, reason, sizeof reason);

		rc = tls_result(s, rc, reason);
		if (rc < 0)
			return rc;
		buf += got;
		size -= got;
		if (size == 0)
			break;
		if (apex_tls_session_state(s->tls) != APEX_TLS_CLOSED)
			rc = fill_tls(s, "receiving", &eof);
		if (rc < 0)
			return rc;
		if (eof || apex_tls_session_state(s->tls) == APEX_TLS_CLOSED)
			return closed_early(s, message_start && size == wanted);
	}
	return APEX_OK;
}

int apex_tcp_stream_recv_message(apex_tcp_stream_t *s, uint8_t *buf, size_t *size)
{
	uint8_t prefix[2];
	int rc;

	if (s->tls != NULL) {
		rc = recv_tls(s, prefix, 2, true);
		if (rc < 0)
			return rc;
		*size = apex_read_u16(prefix);
		return recv_tls(s, buf, *size, false);
	}
	rc = recv_all(s, prefix, 2, true);

	if (rc < 0)
		return rc;
	*size = apex_read_u16(prefix);
	return recv_all(s, buf, *size, false);
}

/* The handshake: each flight sent, the peer's received, until done. */
static int tls_handshake(apex_tcp_stream_t *s)
{
	char reason[TLS_REASON];

	for (;;) {
		bool eof = false;
		int rc = apex_tls_session_handshake(s->tls, reason, sizeof reason);

		rc = tls_result(s, rc, reason);
		if (rc < 0)
			return rc;
		if (apex_tls_session_state(s->tls) == APEX_TLS_OPEN)
			return APEX_OK;
		rc = fill_tls(s, "TLS handshake", &eof);
		if (rc < 0)
			return rc;
		if (eof)
			return fail(s, APEX_EIO, "%s: TLS handshake: connection closed by the peer",
				    s->peer);
	}
}

/* A session on the stream (a client's when name is set), its handshake
 * done; none left behind on failure. */
static int tls_start(apex_tcp_stream_t *s, SSL_CTX *ctx, const char *name)
{
	char reason[TLS_REASON];
	int rc;

	if (s->tls != NULL)
		return fail(s, APEX_EINVAL, "%s: TLS is on already", s->peer);
	if (name != NULL)
		rc = apex_tls_session_new_client(ctx, name, &s->tls, reason, sizeof reason);
	else
		rc = apex_tls_session_new_server(ctx, &s->tls, reason, sizeof reason);
	if (rc < 0)
		return fail(s, rc, "%s: %s", s->peer, reason);
	rc = tls_handshake(s);
	if (rc < 0) {
		apex_tls_session_free(s->tls);
		s->tls = NULL;
	}
	return rc;
}

int apex_tcp_stream_tls_connect(apex_tcp_stream_t *s, SSL_CTX *ctx, const char *name)
{
	if (name == NULL)
		return fail(s, APEX_EINVAL, "%s: TLS: the server's name is needed", s->peer);
	return tls_start(s, ctx, name);
}

int apex_tcp_stream_tls_accept(apex_tcp_stream_t *s, SSL_CTX *ctx)
{
	return tls_start(s, ctx, NULL);
}

int apex_tcp_stream_tls_end(apex_tcp_stream_t *s, bool notify)
{
	char reason[TLS_REASON];
	int rc = APEX_OK;

	if (s->tls == NULL)
		return APEX_OK;
	if (notify) {
		rc = apex_tls_session_close(s->tls, reason, sizeof reason);
		rc = tls_result(s, rc, reason);
	}
	apex_tls_session_free(s->tls);
	s->tls = NULL;
	return rc;
}
