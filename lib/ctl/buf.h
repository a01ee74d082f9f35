/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A growable text buffer for building control protocol replies.
 *
 * Appending never fails loudly: an allocation failure or growing past
 * the buffer's limit sets `failed`, and every later append is ignored,
 * so a builder checks once at the end.  The buffer owns data; free it
 * with apex_ctl_buf_free().  data is always NUL-terminated when not NULL.
 */
#ifndef APEX_CTL_BUF_H
#define APEX_CTL_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct apex_ctl_buf {
	char *data;
	size_t size;     /* bytes used, without the NUL */
	size_t capacity; /* bytes allocated */
	size_t limit;    /* largest size allowed */
	bool failed;     /* out of memory or over the limit */
} apex_ctl_buf_t;

/* An empty buffer that may grow up to limit bytes. */
void apex_ctl_buf_init(apex_ctl_buf_t *buf, size_t limit);

void apex_ctl_buf_free(apex_ctl_buf_t *buf);

/* Forget the contents (and a failure), keep the memory. */
void apex_ctl_buf_reset(apex_ctl_buf_t *buf);

void apex_ctl_buf_append(apex_ctl_buf_t *buf, const void *data, size_t size);

void apex_ctl_buf_puts(apex_ctl_buf_t *buf, const char *str);

void apex_ctl_buf_printf(apex_ctl_buf_t *buf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
