/* SPDX-License-Identifier: BSD-3-Clause */
/* Appending EDNS options to the OPT record just written. */
#include "query/opt.h"

#include <string.h>

#include "dns/wire.h"
#include "util/error.h"

int apex_writer_opt_append(apex_writer_t *w, size_t opt_pos, uint16_t code, const uint8_t *data,
			   uint16_t size)
{
	uint8_t *rdlen_at = w->buf + opt_pos + 9; /* root owner, type, class, TTL */
	size_t rdlen;

	if (opt_pos + 11 > w->pos || w->pos + 4 + (size_t)size > w->capacity)
		return APEX_ESPACE;
	rdlen = apex_read_u16(rdlen_at) + 4 + (size_t)size;
	if (rdlen > 0xFFFF)
		return APEX_ESPACE;
	apex_write_u16(w->buf + w->pos, code);
	apex_write_u16(w->buf + w->pos + 2, size);
	memcpy(w->buf + w->pos + 4, data, size);
	w->pos += 4 + (size_t)size;
	apex_write_u16(rdlen_at, (uint16_t)rdlen);
	return APEX_OK;
}
