/* SPDX-License-Identifier: BSD-3-Clause */
/* OPT records in messages built or read outside the query engine. */
#include "dns/edns.h"

#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"

/* The RDATA of the OPT record of m[0..n) and its length (0 when the
 * record is cut short), or NULL when it has none or cannot be read that
 * far. */
static const uint8_t *opt_rdata(const uint8_t *m, size_t n, uint16_t *rdlen)
{
	uint8_t name[APEX_NAME_MAX];
	size_t pos = 12;

	if (n < 12)
		return NULL;
	unsigned qd = apex_read_u16(m + 4), an = apex_read_u16(m + 6), ns = apex_read_u16(m + 8);
	unsigned ar = apex_read_u16(m + 10);
	for (unsigned i = 0; i < qd; i++) {
		if (apex_name_unpack(m, n, &pos, name) < 0 || n - pos < 4)
			return NULL;
		pos += 4;
	}
	for (unsigned i = 0; i < an + ns + ar; i++) {
		if (apex_name_unpack(m, n, &pos, name) < 0 || n - pos < 10)
			return NULL;
		uint16_t type = apex_read_u16(m + pos), rdlength = apex_read_u16(m + pos + 8);
		bool cut = n - pos - 10 < rdlength;
		if (i >= an + ns && type == APEX_TYPE_OPT) {
			*rdlen = cut ? 0 : rdlength; /* an OPT record cut short holds no option */
			return m + pos + 10;
		}
		if (cut)
			return NULL;
		pos += 10 + (size_t)rdlength;
	}
	return NULL;
}

bool apex_message_has_opt(const uint8_t *m, size_t n)
{
	uint16_t rdlen = 0;

	return opt_rdata(m, n, &rdlen) != NULL;
}

int apex_message_opt_option(const uint8_t *m, size_t n, uint16_t code, const uint8_t **data)
{
	uint16_t rdlen = 0;
	const uint8_t *p = opt_rdata(m, n, &rdlen);

	for (size_t pos = 0; p != NULL && rdlen - pos >= 4;) {
		uint16_t c = apex_read_u16(p + pos), len = apex_read_u16(p + pos + 2);

		if (len > rdlen - pos - 4)
			return -1; /* an option past the RDATA */
		if (c == code) {
			*data = p + pos + 4;
			return len;
		}
		pos += 4 + (size_t)len;
	}
	return -1;
}

size_t apex_message_add_opt(uint8_t *m, size_t n, size_t capacity, uint16_t code,
			    const uint8_t *data, uint16_t len)
{
	/* root owner, type OPT, payload, ttl 0, rdlength, the option */
	const size_t size = 1 + 10 + 4 + (size_t)len;

	if (n < 12 || capacity < n || capacity - n < size)
		return n;
	uint8_t *p = m + n;
	p[0] = 0;
	apex_write_u16(p + 1, APEX_TYPE_OPT);
	apex_write_u16(p + 3, APEX_EDNS_PAYLOAD);
	apex_write_u32(p + 5, 0);
	apex_write_u16(p + 9, (uint16_t)(4 + len));
	apex_write_u16(p + 11, code);
	apex_write_u16(p + 13, len);
	if (len > 0)
		memcpy(p + 15, data, len);
	apex_write_u16(m + 10, (uint16_t)(apex_read_u16(m + 10) + 1));
	return n + size;
}

size_t apex_message_add_ede(uint8_t *m, size_t n, size_t capacity, uint16_t code)
{
	uint8_t info[2];

	apex_write_u16(info, code);
	return apex_message_add_opt(m, n, capacity, APEX_EDNS_EDE, info, sizeof(info));
}
