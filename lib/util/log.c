/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

static atomic_int log_level = APEX_LOG_INFO;

static const char *const level_names[] = { "error", "warning", "info", "debug" };

void apex_log_set_level(apex_log_level_t level)
{
	atomic_store(&log_level, level);
}

void apex_log(apex_log_level_t level, const char *fmt, ...)
{
	if ((int)level > atomic_load_explicit(&log_level, memory_order_relaxed))
		return;

	char line[1024];
	struct timespec now;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	int n = snprintf(line, sizeof(line),
			 "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ apexd %s: ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 now.tv_nsec / 1000000, level_names[level]);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	/* One write() per line keeps lines from different threads whole. */
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
}
