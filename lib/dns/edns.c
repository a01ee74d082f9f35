/* SPDX-License-Identifier: BSD-3-Clause */
/* OPT records in messages built or read outside the query engine. */
#include "dns/edns.h"

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"

bool apex_message_has_opt(const uint8_t *m, size_t n)
{
	uint8_t name[APEX_NAME_MAX];
	size_t pos = 12;

	if (n < 12)
		return false;
	unsigned qd = apex_read_u16(m + 4), an = apex_read_u16(m + 6), ns = apex_read_u16(m + 8);
	unsigned ar = apex_read_u16(m + 10);
	for (unsigned i = 0; i < qd; i++) {
		if (apex_name_unpack(m, n, &pos, name) < 0 || n - pos < 4)
			return false;
		pos += 4;
	}
	for (unsigned i = 0; i < an + ns + ar; i++) {
		if (apex_name_unpack(m, n, &pos, name) < 0 || n - pos < 10)
			return false;
		uint16_t type = apex_read_u16(m + pos), rdlength = apex_read_u16(m + pos + 8);
		if (i >= an + ns && type == APEX_TYPE_OPT)
			return true;
		if (n - pos - 10 < rdlength)
			return false;
		pos += 10 + (size_t)rdlength;
	}
	return false;
}

size_t apex_message_add_ede(uint8_t *m, size_t n, size_t capacity, uint16_t code)
{
	/* root owner, type OPT, payload, ttl 0, rdlength; one option:
	 * code 15, length 2, the info code */
	const size_t size = 1 + 10 + 4 + 2;

	if (n < 12 || capacity - n < size)
		return n;
	uint8_t *p = m + n;
	p[0] = 0;
	apex_write_u16(p + 1, APEX_TYPE_OPT);
	apex_write_u16(p + 3, APEX_EDNS_PAYLOAD);
	apex_write_u32(p + 5, 0);
	apex_write_u16(p + 9, 6);
	apex_write_u16(p + 11, APEX_EDNS_EDE);
	apex_write_u16(p + 13, 2);
	apex_write_u16(p + 15, code);
	apex_write_u16(m + 10, (uint16_t)(apex_read_u16(m + 10) + 1));
	return n + size;
}
