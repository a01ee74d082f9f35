/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DNS messages in a byte stream (RFC 1035 section 4.2.2, RFC 7766, RFC
 * 7858): each after its length in two bytes, network order.  The framing
 * only, the same over TCP and over TLS (the plaintext a session reads
 * out): the caller keeps the buffer, reads into it, answers what is
 * framed and moves the rest to the front when it likes.  Nothing is
 * copied or allocated.
 */
#ifndef APEX_DNS_STREAM_H
#define APEX_DNS_STREAM_H

#include <stddef.h>
#include <stdint.h>

typedef enum apex_stream_status {
	APEX_STREAM_MESSAGE,   /* a whole message: *msg says where */
	APEX_STREAM_MORE,      /* the next message is not whole yet: read more */
	APEX_STREAM_MALFORMED, /* a length of 0: no DNS message is empty, the
				* stream is out of step (close the connection) */
} apex_stream_status_t;

typedef struct apex_stream_msg {
	const uint8_t *data; /* the message, after its length: inside the buffer */
	size_t size;         /* its length, 1..65535 */
	size_t next;         /* where the message after it starts */
} apex_stream_msg_t;

/*
 * The message that starts at pos in buf[0..used) (pos <= used; a pos
 * past used is treated as pos == used): MORE while fewer than two bytes
 * or fewer than the length they give follow, MALFORMED when the length
 * is 0 (known as soon as its two bytes are), else MESSAGE with *msg set.
 * *msg is left alone unless a message is returned.
 */
apex_stream_status_t apex_stream_next(const uint8_t *buf, size_t used, size_t pos,
				      apex_stream_msg_t *msg);

#endif
