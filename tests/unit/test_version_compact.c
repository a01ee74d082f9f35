/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rule that bounds a chain of derived versions (xfr/version_compact.h):
 * a chain of IXFRs of one new name each, derived in place, is not asked
 * to be compacted while its chain holds less than APEX_COMPACT_FLOOR, is
 * asked at the latest after APEX_COMPACT_DEPTH versions in a row, and the
 * compact version has exactly the derived one's records and serial, holds
 * no chain, and is derived from again; a compaction that gives way
 * (compact_gives_way) at any of its questions builds nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/precompute.h"
#include "util/error.h"
#include "xfr/ixfr_apply.h"
#include "xfr/version_compact.h"
#include "zone/page_discard.h"
#include "ixfr_one_record.h"
#include "zone_records.h"
#include "give_way_asker.h"

/* The version after old with one name more, n<k>.example. A 192.0.2.k. */
static apex_zone_t *one_name_more(apex_zone_t *old, unsigned k, bool *in_place)
{
	uint8_t owner[APEX_NAME_MAX], a[4] = { 192, 0, 2, 0 };
	char text[64];

	a[3] = (uint8_t)k;
	snprintf(text, sizeof(text), "n%u.example.", k);
	assert_true(apex_name_from_str(text, owner) > 0);
	apex_rr_t rr = { owner, APEX_TYPE_A, APEX_CLASS_IN, 3600, 4, a };
	return one_record_more(old, &rr, in_place);
}

static void compact_after_depth(void **state)
{
	apex_zone_t *zone = load_file("example.zone", "example."), *compact = NULL;
	char err[256];
	bool in_place;

	(void)state;
	assert_int_equal(apex_precompute(zone), APEX_OK);
	assert_false(apex_version_wants_compact(zone)); /* built whole */
	/* derived until the rule asks for the compact form: at the latest
	 * after APEX_COMPACT_DEPTH versions; in this small zone once the chain
	 * passes APEX_COMPACT_FLOOR (each derived version's arena holds whole
	 * chunks), never before */
	unsigned k = 0;
	do {
		apex_zone_t *next = one_name_more(zone, ++k, &in_place);

		assert_true(in_place);
		apex_zone_unref(zone); /* the chain holds it */
		zone = next;
		assert_int_equal(zone->derived_depth, k);
		assert_true(zone->chain_memory > 0);
		if (zone->chain_memory <= APEX_COMPACT_FLOOR && k < APEX_COMPACT_DEPTH)
			assert_false(apex_version_wants_compact(zone));
	} while (!apex_version_wants_compact(zone));
	assert_true(k <= APEX_COMPACT_DEPTH);
	assert_true(k >= 2); /* one version's chain is under the floor */
	/* what a compaction in parts left (zone->compact_held) is left out of
	 * the rule: not asked for by the chain's memory alone */
	if (zone->derived_depth < APEX_COMPACT_DEPTH) {
		atomic_store(&zone->compact_held, apex_zone_chain_memory(zone));
		assert_false(apex_version_wants_compact(zone));
		atomic_store(&zone->compact_held, (size_t)0);
		assert_true(apex_version_wants_compact(zone));
	}
	/* as a reload's derived version holds its file's (zone/file_digest.h) */
	memset(zone->file_digest.bytes, 0xab, sizeof(zone->file_digest.bytes));
	zone->file_digest.valid = true;
	assert_int_equal(apex_version_compact(zone, "test", &compact, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_precompute(compact), APEX_OK);
	assert_same_version(compact, zone);
	assert_int_equal(compact->loaded_at.tv_sec, zone->loaded_at.tv_sec);
	assert_int_equal(compact->loaded_at.tv_nsec, zone->loaded_at.tv_nsec);
	assert_true(apex_file_digest_equal(&compact->file_digest, &zone->file_digest));
	assert_null(compact->base);
	assert_int_equal(compact->derived_depth, 0);
	assert_int_equal(compact->chain_memory, 0);
	assert_false(apex_version_wants_compact(compact));
	apex_zone_unref(zone);
	/* and the next IXFR derives from it in place again */
	zone = one_name_more(compact, k + 1, &in_place);
	assert_true(in_place);
	assert_int_equal(zone->derived_depth, 1);
	apex_zone_unref(compact);
	apex_zone_unref(zone);
}

/* The build's steps after which it asks (zone/build.c's step_done()):
 * sort, check, layout, fill, index, node table, RDATA links. */
#define BUILD_QUESTIONS 7
#define NAMES 10000

static void compact_gives_way(void **state)
{
	char err[256];
	apex_zone_t *zone, *compact = NULL;

	(void)state;
	zone = load_hosts("example. 3600 IN NS ns.example.\n", NAMES);
	assert_int_equal(zone->record_count, NAMES + 2);

	/* never told to: it asks before the first record, at every
	 * APEX_VERSION_COMPACT_GIVE_WAY_EVERY-th record read and after each
	 * step of the build, and builds the same version */
	asker_t never = { 0, 0 };
	assert_int_equal(apex_version_compact_or_give_way(zone, "test", give_way_at, &never,
							  &compact, err, sizeof(err)),
			 APEX_OK);
	assert_int_equal(never.asked,
			 1 + (NAMES + 2) / APEX_VERSION_COMPACT_GIVE_WAY_EVERY + BUILD_QUESTIONS);
	assert_int_equal(apex_precompute(compact), APEX_OK);
	assert_same_version(compact, zone);
	apex_zone_unref(compact);

	/* told to at each question in turn: nothing built, nothing left
	 * behind (the sanitizers' build checks every step's way out), and
	 * it says where it stopped */
	for (int yes = 1; yes <= never.asked; yes++) {
		asker_t a = { yes, 0 };

		compact = (apex_zone_t *)1;
		err[0] = '\0';
		assert_int_equal(apex_version_compact_or_give_way(zone, "test", give_way_at, &a,
								  &compact, err, sizeof(err)),
				 APEX_ECANCELED);
		assert_null(compact);
		assert_int_equal(a.asked, yes);
		assert_non_null(strstr(err, "gave way"));
		if (yes <= 1 + (NAMES + 2) / APEX_VERSION_COMPACT_GIVE_WAY_EVERY) {
			char read[64];

			snprintf(read, sizeof(read), "with %d of %d records read",
				 (yes - 1) * APEX_VERSION_COMPACT_GIVE_WAY_EVERY, NAMES + 2);
			assert_non_null(strstr(err, read));
		}
	}
	apex_zone_unref(zone);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(compact_after_depth),
		cmocka_unit_test(compact_gives_way),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
