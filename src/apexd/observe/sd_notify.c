/* SPDX-License-Identifier: BSD-3-Clause */
/* systemd's service notifications (sd_notify.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "observe/sd_notify.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/log.h"

static int notify_fd = -1; /* set before any other thread runs, for the process's life */

/* Reloads under way (SIGHUP on the main thread, apexctl's on the control
 * thread): the first one's start and the last one's end are sent. */
static pthread_mutex_t reload_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned reloads_under_way;

void apexd_sd_notify_open(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t size;

	if (path == NULL || path[0] == '\0')
		return;
	size = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || size >= sizeof(sun.sun_path)) {
		apex_warning("NOTIFY_SOCKET %s: not a socket path: no notifications to systemd",
			     path);
		unsetenv("NOTIFY_SOCKET");
		return;
	}
	memcpy(sun.sun_path, path, size);
	if (path[0] == '@')
		sun.sun_path[0] = '\0'; /* an abstract socket */
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (notify_fd < 0 ||
	    connect(notify_fd, (const struct sockaddr *)&sun,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + size)) < 0) {
		apex_warning("NOTIFY_SOCKET %s: %s: no notifications to systemd", path,
			     strerror(errno));
		if (notify_fd >= 0)
			close(notify_fd);
		notify_fd = -1;
	}
	unsetenv("NOTIFY_SOCKET");
}

void apexd_sd_notify(const char *fmt, ...)
{
	char text[512];
	va_list ap;
	int n;

	if (notify_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(text))
		n = (int)sizeof(text) - 1;
	if (send(notify_fd, text, (size_t)n, MSG_NOSIGNAL) < 0)
		apex_debug("NOTIFY_SOCKET: %s", strerror(errno));
}

void apexd_sd_notify_reload_begin(void)
{
	struct timespec now;

	pthread_mutex_lock(&reload_lock);
	if (reloads_under_way++ == 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		apexd_sd_notify("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
				(unsigned long long)now.tv_sec * 1000000ULL +
					(unsigned long long)now.tv_nsec / 1000ULL);
	}
	pthread_mutex_unlock(&reload_lock);
}

void apexd_sd_notify_reload_end(size_t zones)
{
	pthread_mutex_lock(&reload_lock);
	if (reloads_under_way > 0 && --reloads_under_way == 0)
		apexd_sd_notify("READY=1\nSTATUS=serving %zu zone(s), reloaded", zones);
	pthread_mutex_unlock(&reload_lock);
}

void apexd_sd_notify_close(void)
{
	if (notify_fd >= 0)
		close(notify_fd);
	notify_fd = -1;
}
