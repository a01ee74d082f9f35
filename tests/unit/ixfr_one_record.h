/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * For unit tests that derive chains of versions: the version after a
 * given one with records removed and added (one record more, most
 * often), by an IXFR of one change set (the SOA's serial one up),
 * precomputed.  Include after cmocka.h.
 */
#ifndef APEX_TESTS_IXFR_ONE_RECORD_H
#define APEX_TESTS_IXFR_ONE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/precompute.h"
#include "util/error.h"
#include "xfr/changes.h"
#include "xfr/ixfr_apply.h"
#include "zone/zone.h"

/* zone's SOA RDATA with serial in rdata (room for it); its size. */
static inline uint16_t soa_at(const apex_zone_t *zone, uint32_t serial, uint8_t *rdata)
{
	uint16_t size = apex_read_u16(zone->soa->rdata);

	memcpy(rdata, zone->soa->rdata + 2, size);
	apex_write_u32(rdata + size - 20, serial);
	return size;
}

/* The version after old with removed[0..n_removed) taken out and
 * added[0..n_added) put in, by one change set (the SOA's serial one up),
 * precomputed (one reference, the caller's); *in_place: derived in place
 * rather than built whole. */
static inline apex_zone_t *records_changed(apex_zone_t *old, const apex_rr_t *removed,
					   size_t n_removed, const apex_rr_t *added, size_t n_added,
					   bool *in_place)
{
	uint8_t old_soa[512], new_soa[512];
	char err[256];
	apex_changes_t set;
	apex_zone_t *zone = NULL;

	apex_changes_init(&set);
	apex_rr_t rr = { old->origin,
			 APEX_TYPE_SOA,
			 APEX_CLASS_IN,
			 old->soa->ttl,
			 soa_at(old, old->serial, old_soa),
			 old_soa };
	assert_int_equal(apex_changes_append(&set, APEX_CHANGE_OLD_SOA, &rr), APEX_OK);
	for (size_t i = 0; i < n_removed; i++)
		assert_int_equal(apex_changes_append(&set, APEX_CHANGE_REMOVE, &removed[i]),
				 APEX_OK);
	rr.rdlength = soa_at(old, old->serial + 1, new_soa);
	rr.rdata = new_soa;
	assert_int_equal(apex_changes_append(&set, APEX_CHANGE_NEW_SOA, &rr), APEX_OK);
	for (size_t i = 0; i < n_added; i++)
		assert_int_equal(apex_changes_append(&set, APEX_CHANGE_ADD, &added[i]), APEX_OK);
	if (apex_ixfr_version(old, &set, 1, "test", &zone, in_place, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	assert_int_equal(apex_precompute(zone), APEX_OK);
	apex_changes_free(&set);
	return zone;
}

/* The version after old with *added more (one reference, the caller's);
 * *in_place: derived in place rather than built whole. */
static inline apex_zone_t *one_record_more(apex_zone_t *old, const apex_rr_t *added, bool *in_place)
{
	return records_changed(old, NULL, 0, added, 1, in_place);
}

#endif
