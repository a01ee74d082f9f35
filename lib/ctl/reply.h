/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control protocol replies (doc/control-protocol.md): a status line,
 * "ok\n" or "error MESSAGE\n", then the body in the requested format
 * until the server closes the connection.  A reply is at most
 * APEX_CTL_REPLY_MAX bytes.
 */
#ifndef APEX_CTL_REPLY_H
#define APEX_CTL_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/buf.h"

#define APEX_CTL_REPLY_MAX (64u << 20) /* bytes */
#define APEX_CTL_MESSAGE_MAX 1024      /* bytes of an error message */

typedef struct apex_ctl_reply {
	bool ok;
	const char *message; /* error message (not NUL-terminated), points into the input */
	size_t message_size; /* 0 when ok */
	const uint8_t *body; /* points into the input */
	size_t body_size;
} apex_ctl_reply_t;

/*
 * Write the status line into buf (which should be empty): "ok\n", or
 * "error " and message on one line: control bytes and non-ASCII become
 * '?', and it is cut at APEX_CTL_MESSAGE_MAX bytes.
 */
void apex_ctl_reply_status(apex_ctl_buf_t *buf, bool ok, const char *message);

/*
 * Split a complete reply data[0..size) into status and body.  Pure: no
 * allocation, reads nothing past size.  Returns APEX_OK, or
 * APEX_EMALFORMED if the status line is missing, too long or neither
 * "ok" nor "error MESSAGE".
 */
int apex_ctl_reply_parse(const uint8_t *data, size_t size, apex_ctl_reply_t *reply);

#endif
