/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logging with a level: to stderr with a timestamp (the default), to a
 * file (appended, opened again on request for logrotate), or to syslog.
 * Thread-safe: one write() per line, or one syslog() call.
 */
#ifndef APEX_UTIL_LOG_H
#define APEX_UTIL_LOG_H

#include <stddef.h>

typedef enum {
	APEX_LOG_ERROR = 0,
	APEX_LOG_WARNING = 1,
	APEX_LOG_INFO = 2,
	APEX_LOG_DEBUG = 3,
} apex_log_level_t;

/* Messages above this level are discarded (default APEX_LOG_INFO). */
void apex_log_set_level(apex_log_level_t level);

/* Lines from now on appended to the file at path (created with mode
 * 0640), timestamped as on stderr.  Returns APEX_OK, or an error with the
 * reason in err (lines then still go where they went). */
int apex_log_to_file(const char *path, char *err, size_t err_size);

/* Lines from now on to syslog (ident "apexd", with the pid) at facility
 * (LOG_DAEMON, LOG_LOCAL0, ... of <syslog.h>), without the timestamp. */
void apex_log_to_syslog(int facility);

/* The log file opened again at its path (after logrotate moved it away).
 * Nothing for stderr or syslog.  Returns APEX_OK, or an error with the
 * reason in err (lines then go on to the file open before). */
int apex_log_reopen(char *err, size_t err_size);

/* Replace the log file's path by rebase(base, path) (a suffix of path),
 * e.g. its path inside a chroot, for apex_log_reopen(). */
void apex_log_rebase(const char *(*rebase)(const char *base, const char *path), const char *base);

/* For a command-line tool: lines "program: LEVEL: text" on stderr, no
 * timestamp (program must outlive the logging). */
void apex_log_set_program(const char *program);

/* How many messages of level were logged (or discarded by the level) so far. */
unsigned long apex_log_count(apex_log_level_t level);

void apex_log(apex_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define apex_error(...) apex_log(APEX_LOG_ERROR, __VA_ARGS__)
#define apex_warning(...) apex_log(APEX_LOG_WARNING, __VA_ARGS__)
#define apex_info(...) apex_log(APEX_LOG_INFO, __VA_ARGS__)
#define apex_debug(...) apex_log(APEX_LOG_DEBUG, __VA_ARGS__)

#endif
