/* SPDX-License-Identifier: BSD-3-Clause */
/* A wake-up for a libuv loop that any thread may send (loop_wakeup.h). */
#include "process/loop_wakeup.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/eventfd.h>

static void on_readable(uv_poll_t *poll, int status, int events)
{
	apex_loop_wakeup_t *wakeup = poll->data;
	uint64_t count;

	(void)status;
	(void)events;
	/* one read empties the counter, however many sends came */
	while (read(wakeup->fd, &count, sizeof(count)) < 0 && errno == EINTR)
		;
	wakeup->on_wake(wakeup);
}

int apex_loop_wakeup_init(apex_loop_wakeup_t *wakeup, uv_loop_t *loop, apex_loop_wakeup_cb on_wake,
			  void *data)
{
	int rc;

	wakeup->open = false;
	wakeup->polling = false;
	wakeup->on_wake = on_wake;
	wakeup->data = data;
	wakeup->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (wakeup->fd < 0)
		return -errno;
	wakeup->open = true;
	rc = uv_poll_init(loop, &wakeup->poll, wakeup->fd);
	if (rc < 0)
		return rc;
	wakeup->poll.data = wakeup;
	rc = uv_poll_start(&wakeup->poll, UV_READABLE, on_readable);
	if (rc < 0) {
		/* an initialised handle must be closed by the loop */
		uv_close((uv_handle_t *)&wakeup->poll, NULL);
		return rc;
	}
	wakeup->polling = true;
	return 0;
}

void apex_loop_wakeup_send(apex_loop_wakeup_t *wakeup)
{
	/* EAGAIN only if the counter is full: the loop is woken anyway */
	while (eventfd_write(wakeup->fd, 1) < 0 && errno == EINTR)
		;
}

void apex_loop_wakeup_close(apex_loop_wakeup_t *wakeup)
{
	if (!wakeup->polling)
		return;
	wakeup->polling = false;
	uv_close((uv_handle_t *)&wakeup->poll, NULL);
}

void apex_loop_wakeup_free(apex_loop_wakeup_t *wakeup)
{
	if (wakeup->open)
		close(wakeup->fd);
	wakeup->open = false;
}
