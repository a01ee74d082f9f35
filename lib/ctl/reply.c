/* SPDX-License-Identifier: BSD-3-Clause */
/* Control protocol replies: the status line, written and parsed. */
#include "ctl/reply.h"

#include <string.h>

#include "util/error.h"

void apex_ctl_reply_status(apex_ctl_buf_t *buf, bool ok, const char *message)
{
	size_t n = 0;

	if (ok) {
		apex_ctl_buf_puts(buf, "ok\n");
		return;
	}
	apex_ctl_buf_puts(buf, "error ");
	if (message == NULL || message[0] == '\0')
		message = "failed";
	for (const unsigned char *s = (const unsigned char *)message;
	     *s != '\0' && n < APEX_CTL_MESSAGE_MAX; s++, n++) {
		char c = *s >= 0x20 && *s < 0x7f ? (char)*s : '?';

		apex_ctl_buf_append(buf, &c, 1);
	}
	apex_ctl_buf_puts(buf, "\n");
}

int apex_ctl_reply_parse(const uint8_t *data, size_t size, apex_ctl_reply_t *reply)
{
	/* the longest status line: "error " + message + "\n" */
	size_t max_line = 6 + APEX_CTL_MESSAGE_MAX + 1;
	const uint8_t *nl;

	memset(reply, 0, sizeof(*reply));
	if (data == NULL || size == 0)
		return APEX_EMALFORMED;
	nl = memchr(data, '\n', size < max_line ? size : max_line);
	if (nl == NULL)
		return APEX_EMALFORMED;
	size_t line = (size_t)(nl - data);
	reply->body = nl + 1;
	reply->body_size = size - line - 1;
	if (line == 2 && memcmp(data, "ok", 2) == 0) {
		reply->ok = true;
		return APEX_OK;
	}
	if (line > 6 && memcmp(data, "error ", 6) == 0) {
		reply->ok = false;
		reply->message = (const char *)data + 6;
		reply->message_size = line - 6;
		return APEX_OK;
	}
	memset(reply, 0, sizeof(*reply));
	return APEX_EMALFORMED;
}
