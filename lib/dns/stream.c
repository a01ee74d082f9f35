/* SPDX-License-Identifier: BSD-3-Clause */
/* DNS messages in a byte stream (stream.h). */
#include "dns/stream.h"

#include "dns/wire.h"

apex_stream_status_t apex_stream_next(const uint8_t *buf, size_t used, size_t pos,
				      apex_stream_msg_t *msg)
{
	size_t avail = pos < used ? used - pos : 0;
	size_t len;

	if (avail < 2)
		return APEX_STREAM_MORE;
	len = apex_read_u16(buf + pos);
	if (len == 0)
		return APEX_STREAM_MALFORMED;
	if (avail - 2 < len)
		return APEX_STREAM_MORE;
	msg->data = buf + pos + 2;
	msg->size = len;
	msg->next = pos + 2 + len;
	return APEX_STREAM_MESSAGE;
}
