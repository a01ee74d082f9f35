/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging (log.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"
#include "util/log.h"

static atomic_int log_level = APEX_LOG_INFO;

/* Where lines go: a descriptor (stderr, or the log file), or syslog.  The
 * file's descriptor number stays the same when it is opened again
 * (dup2()), so a line written meanwhile goes to one file or the other. */
static atomic_int log_fd = STDERR_FILENO;
static atomic_bool log_syslog = false;
static char *log_path; /* the file's, owned; changed only by the thread that opens it */

static const char *const level_names[] = { "error", "warning", "info", "debug" };
static const char *log_program; /* a tool's name: its own line format */
static atomic_ulong log_counts[APEX_LOG_DEBUG + 1];
static const int syslog_priorities[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

void apex_log_set_level(apex_log_level_t level)
{
	atomic_store(&log_level, level);
}

static int open_log_file(const char *path, char *err, size_t err_size)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

	if (fd < 0) {
		int failure = apex_errno();
		snprintf(err, err_size, "log file %s: %s", path, apex_strerror(failure));
		return failure;
	}
	return fd;
}

int apex_log_to_file(const char *path, char *err, size_t err_size)
{
	char *copy = strdup(path);
	int fd = copy != NULL ? open_log_file(path, err, err_size) : APEX_ENOMEM;

	if (fd < 0) {
		if (copy == NULL)
			snprintf(err, err_size, "log file %s: out of memory", path);
		free(copy);
		return fd;
	}
	free(log_path);
	log_path = copy;
	int old = atomic_exchange(&log_fd, fd);
	if (old != STDERR_FILENO)
		close(old);
	atomic_store(&log_syslog, false);
	return APEX_OK;
}

void apex_log_to_syslog(int facility)
{
	openlog("apexd", LOG_PID | LOG_NDELAY, facility);
	atomic_store(&log_syslog, true);
}

void apex_log_rebase(const char *(*rebase)(const char *base, const char *path), const char *base)
{
	const char *inside = log_path != NULL ? rebase(base, log_path) : NULL;

	if (inside != log_path)
		memmove(log_path, inside, strlen(inside) + 1);
}

int apex_log_reopen(char *err, size_t err_size)
{
	int current = atomic_load(&log_fd);

	if (log_path == NULL || current == STDERR_FILENO)
		return APEX_OK;
	int fd = open_log_file(log_path, err, err_size);
	if (fd < 0)
		return fd;
	if (dup2(fd, current) < 0) {
		int failure = apex_errno();
		snprintf(err, err_size, "log file %s: %s", log_path, apex_strerror(failure));
		close(fd);
		return failure;
	}
	close(fd);
	return APEX_OK;
}

void apex_log_set_program(const char *program)
{
	log_program = program;
}

unsigned long apex_log_count(apex_log_level_t level)
{
	return atomic_load(&log_counts[level]);
}

/* The start of a line: "TIMESTAMP apexd ", or a tool's "program: ". */
static int line_start(char *line, size_t size)
{
	struct timespec now;
	struct tm tm;

	if (log_program != NULL)
		return snprintf(line, size, "%s: ", log_program);
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	return snprintf(line, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ apexd ",
			tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			tm.tm_sec, now.tv_nsec / 1000000);
}

void apex_log(apex_log_level_t level, const char *fmt, ...)
{
	atomic_fetch_add_explicit(&log_counts[level], 1, memory_order_relaxed);
	if ((int)level > atomic_load_explicit(&log_level, memory_order_relaxed))
		return;

	char line[1024];
	/* the line's start, then "LEVEL: ": syslog gets the line from LEVEL on */
	int stamp = line_start(line, sizeof(line));
	int n = stamp +
		snprintf(line + stamp, sizeof(line) - (size_t)stamp, "%s: ", level_names[level]);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	if (atomic_load_explicit(&log_syslog, memory_order_relaxed)) {
		/* syslog stamps the time and the name itself: the level and text */
		line[len] = '\0';
		syslog(syslog_priorities[level], "%s", line + stamp);
		return;
	}
	line[len++] = '\n';
	/* One write() per line keeps lines from different threads whole. */
	ssize_t w = write(atomic_load_explicit(&log_fd, memory_order_relaxed), line, len);
	(void)w;
}
