/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helpers: a version served alone through a zone table, and query
 * messages for a name in wire form (query_wire.h), to compare the
 * answers of two versions byte for byte.
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

#include "query_wire.h"

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

#endif
