/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helper without test framework (the unit tests and the fuzz targets
 * use it): a query message for a name in wire form.
 */
#ifndef APEX_TESTS_UNIT_QUERY_WIRE_H
#define APEX_TESTS_UNIT_QUERY_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"

/* A query for name (wire form)/type into buf (at least 512 + 10 bytes
 * more than the name): with EDNS (4096, DO as asked) or without. */
static inline size_t query_for(uint8_t *buf, const uint8_t *name, uint16_t type, bool edns,
			       bool dnssec_ok)
{
	size_t pos = APEX_HEADER_SIZE, size = apex_name_size(name);

	memset(buf, 0, APEX_HEADER_SIZE);
	apex_write_u16(buf + APEX_HDR_ID, 0x1234);
	apex_write_u16(buf + APEX_HDR_QDCOUNT, 1);
	memcpy(buf + pos, name, size);
	pos += size;
	apex_write_u16(buf + pos, type);
	apex_write_u16(buf + pos + 2, APEX_CLASS_IN);
	pos += 4;
	if (edns) {
		apex_write_u16(buf + APEX_HDR_ARCOUNT, 1);
		buf[pos++] = 0;
		apex_write_u16(buf + pos, APEX_TYPE_OPT);
		apex_write_u16(buf + pos + 2, 4096);
		buf[pos + 4] = 0;
		buf[pos + 5] = 0;
		apex_write_u16(buf + pos + 6, dnssec_ok ? 0x8000 : 0);
		apex_write_u16(buf + pos + 8, 0);
		pos += 10;
	}
	return pos;
}

#endif
