/* SPDX-License-Identifier: BSD-3-Clause */
/* Blocking DNS-over-TCP I/O for transfer threads (tcp_stream.h). */
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

int apex_tcp_stream_send(apex_tcp_stream_t *s, const uint8_t *buf, size_t size)
{
	while (size > 0) {
		ssize_t n = send(s->fd, buf, size, MSG_NOSIGNAL | MSG_DONTWAIT);

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

int apex_tcp_stream_send_message(apex_tcp_stream_t *s, const uint8_t *msg, size_t size)
{
	uint8_t prefix[2];
	int rc;

	apex_write_u16(prefix, (uint16_t)size);
	rc = apex_tcp_stream_send(s, prefix, 2);
	return rc < 0 ? rc : apex_tcp_stream_send(s, msg, size);
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
		if (n == 0 && message_start && size == wanted)
			return fail(s, APEX_EMALFORMED,
				    "%s: connection closed before the answer was complete",
				    s->peer);
		if (n == 0)
			return fail(s, APEX_EMALFORMED,
				    "%s: connection closed in the middle of a message", s->peer);
		buf += n;
		size -= (size_t)n;
	}
	return APEX_OK;
}

int apex_tcp_stream_recv_message(apex_tcp_stream_t *s, uint8_t *buf, size_t *size)
{
	uint8_t prefix[2];
	int rc = recv_all(s, prefix, 2, true);

	if (rc < 0)
		return rc;
	*size = apex_read_u16(prefix);
	return recv_all(s, buf, *size, false);
}
