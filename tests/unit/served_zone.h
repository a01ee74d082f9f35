/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helpers: a version served alone through a zone table, and query
 * messages for a name in wire form, to compare the answers of two
 * versions byte for byte.
 */
#ifndef APEX_TESTS_UNIT_SERVED_ZONE_H
#define APEX_TESTS_UNIT_SERVED_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "zone/zoneset.h"

typedef struct served {
	apex_zonetable_t table;
	apex_zoneset_t *set;
} served_t;

/* Serve zone, which stays the caller's (the table takes a reference of
 * its own and drops it when it is destroyed). */
static inline void serve(served_t *s, apex_zone_t *zone)
{
	unsigned long long gen;

	assert_int_equal(apex_zonetable_init(&s->table), APEX_OK);
	apex_zone_ref(zone);
	assert_int_equal(apex_zonetable_publish(&s->table, zone), APEX_OK);
	s->set = apex_zonetable_acquire(&s->table, &gen);
	assert_non_null(s->set);
}

static inline void unserve(served_t *s)
{
	apex_zoneset_release(s->set);
	apex_zonetable_destroy(&s->table);
}

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
