/* SPDX-License-Identifier: BSD-3-Clause */
/* A growable text buffer with a size limit and a sticky failure flag. */
#include "ctl/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void apex_ctl_buf_init(apex_ctl_buf_t *buf, size_t limit)
{
	memset(buf, 0, sizeof(*buf));
	buf->limit = limit;
}

void apex_ctl_buf_free(apex_ctl_buf_t *buf)
{
	free(buf->data);
	memset(buf, 0, sizeof(*buf));
}

void apex_ctl_buf_reset(apex_ctl_buf_t *buf)
{
	buf->size = 0;
	buf->failed = false;
	if (buf->data != NULL)
		buf->data[0] = '\0';
}

/* Room for `more` bytes and a NUL; false (and failed set) if impossible. */
static bool reserve(apex_ctl_buf_t *buf, size_t more)
{
	size_t need, capacity;
	char *grown;

	if (buf->failed)
		return false;
	if (more > buf->limit || buf->size > buf->limit - more) {
		buf->failed = true;
		return false;
	}
	need = buf->size + more + 1;
	if (need <= buf->capacity)
		return true;
	capacity = buf->capacity > 0 ? buf->capacity : 256;
	while (capacity < need)
		capacity *= 2;
	grown = realloc(buf->data, capacity);
	if (grown == NULL) {
		buf->failed = true;
		return false;
	}
	buf->data = grown;
	buf->capacity = capacity;
	return true;
}

void apex_ctl_buf_append(apex_ctl_buf_t *buf, const void *data, size_t size)
{
	if (!reserve(buf, size))
		return;
	if (size > 0)
		memcpy(buf->data + buf->size, data, size);
	buf->size += size;
	buf->data[buf->size] = '\0';
}

void apex_ctl_buf_puts(apex_ctl_buf_t *buf, const char *str)
{
	apex_ctl_buf_append(buf, str, strlen(str));
}

void apex_ctl_buf_printf(apex_ctl_buf_t *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (buf->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		buf->failed = true;
		return;
	}
	if (!reserve(buf, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(buf->data + buf->size, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf->size += (size_t)n;
}
