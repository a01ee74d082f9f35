/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging to stderr with a timestamp and a level. Thread-safe (one write per line). */
#ifndef APEX_UTIL_LOG_H
#define APEX_UTIL_LOG_H

typedef enum {
	APEX_LOG_ERROR = 0,
	APEX_LOG_WARNING = 1,
	APEX_LOG_INFO = 2,
	APEX_LOG_DEBUG = 3,
} apex_log_level_t;

/* Messages above this level are discarded (default APEX_LOG_INFO). */
void apex_log_set_level(apex_log_level_t level);

void apex_log(apex_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define apex_error(...) apex_log(APEX_LOG_ERROR, __VA_ARGS__)
#define apex_warning(...) apex_log(APEX_LOG_WARNING, __VA_ARGS__)
#define apex_info(...) apex_log(APEX_LOG_INFO, __VA_ARGS__)
#define apex_debug(...) apex_log(APEX_LOG_DEBUG, __VA_ARGS__)

#endif
