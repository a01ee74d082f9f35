/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A version built again part by part (xfr/version_part.h): after each
 * part the version holds the same records, structure and answers as the
 * version it was made from, and once every part is built no owner's
 * RRsets lie in that version's memory any more, while their RDATA is
 * still the RDATA that version holds, borrowed rather than copied.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/arena.h"
#include "xfr/version_part.h"
#include "xfr/version_records.h"
#include "zone/chain_sweep.h"
#include "zone/derive.h"
#include "zone/load.h"
#include "zone/page_discard.h"

#include "equivalence.h"
#include "give_way_asker.h"

static const struct {
	const char *file, *origin;
} zones[] = {
	{ "example.zone", "example." },
	{ "example.nsec.zone", "example." },
	{ "example.nsec3.zone", "example." },
	{ "fj.zone", "fj." },
};

/* A zone with an owner the build only warns of (sl.zone: DS records at
 * names without NS) is not derived (zone/derive.h): a part of it is
 * refused, and the caller builds it whole instead. */
static void part_refused(void **state)
{
	apex_zone_t *zone = load_file("sl.zone", "sl."), *next = NULL;
	char err[128];

	(void)state;
	assert_int_equal(apex_version_rebuild_part(zone, 0, 1, "test", &next, err, sizeof(err)),
			 APEX_ENOTSUP);
	assert_null(next);
	apex_zone_unref(zone);
}

/* Whether any RRset of node lies in arena; the RRsets (RRSIGs among
 * them) whose RDATA does counted in *borrowed, the others in *copied and
 * their RDATA's bytes in *copied_bytes. */
static bool rrsets_in(const apex_zone_t *zone, const apex_node_t *node, const apex_arena_t *arena,
		      size_t *borrowed, size_t *copied, size_t *copied_bytes)
{
	bool in = false;

	for (uint16_t i = 0; i < node->rrset_count; i++) {
		const apex_rrset_t *rs = &apex_node_rrsets(zone, node)[i];

		for (const apex_rrset_t *r = rs; r != NULL; r = r == rs ? rs->rrsig : NULL) {
			in |= apex_arena_holds(arena, r);
			bool lent = apex_arena_holds(arena, r->rdata);
			(*(lent ? borrowed : copied))++;
			*copied_bytes += lent ? 0 : r->rdata_size;
		}
	}
	return in;
}

static void in_parts(const char *file, const char *origin, unsigned parts)
{
	apex_zone_t *whole = load_file(file, origin), *zone = whole;
	char what[160], err[256];
	change_t none = { 0 };
	tally_t t = { 0 };

	assert_int_equal(apex_precompute(whole), APEX_OK);
	apex_zone_ref(whole);
	for (unsigned part = 0; part < parts; part++) {
		apex_zone_t *next = NULL;
		int rc = apex_version_rebuild_part(zone, part, parts, "test", &next, err,
						   sizeof(err));

		snprintf(what, sizeof(what), "%s, part %u of %u", file, part + 1, parts);
		if (rc != APEX_OK)
			fail_msg("%s: %s (%d)", what, err, rc);
		assert_int_equal(apex_precompute(next), APEX_OK);
		assert_ptr_equal(next->base, zone);
		assert_int_equal(next->derived_depth, part + 1);
		assert_same_records(next, whole, what);
		assert_same_structure(next, whole, what);
		compare_answers(next, whole, &none, what, &t);
		apex_zone_unref(zone); /* next holds it */
		zone = next;
	}
	/* every owner's RRsets are the parts' copies, their RDATA the whole
	 * build's (version_part.c, add_record()) but where the build reads a
	 * type through ldns (zone_from_wire.h) */
	size_t borrowed = 0, copied = 0, copied_bytes = 0;
	for (size_t i = 0; i < zone->node_count; i++)
		if (rrsets_in(zone, apex_zone_node_at(zone, i), whole->arena, &borrowed, &copied,
			      &copied_bytes))
			fail_msg("%s in %u parts: %s's RRsets still in the whole build's", file,
				 parts, (const char *)apex_zone_node_at(zone, i)->name);
	for (size_t i = 0; i < zone->nsec3_owner_count; i++)
		assert_false(rrsets_in(zone, apex_zone_nsec3_owner_at(zone, i), whole->arena,
				       &borrowed, &copied, &copied_bytes));
	printf("%s in %u parts: RDATA of %zu RRsets borrowed, of %zu copied\n", file, parts,
	       borrowed, copied);
	assert_true(borrowed > 10 * copied);
	/* the whole build's RDATA read but what was copied, and no more
	 * than it holds */
	size_t bytes = apex_version_rdata_borrowed(zone);
	assert_true(bytes > 0);
	assert_int_equal(bytes + copied_bytes, apex_version_rdata_borrowed(whole));
	assert_int_equal(apex_version_rdata_borrowed(whole), whole->rdata_bytes);
	assert_true(t.queries > 0);
	apex_zone_unref(zone);
	apex_zone_unref(whole);
}

/* The parts of file's zone built, each published over the one before
 * as apexd does: the one before released, its replaced pages given back
 * and the chain swept (zone/chain_sweep.h).  Every part answers as the
 * zone loaded anew (under AddressSanitizer the pages given back are
 * poisoned: a read of one fails the test), and the sweeps give back
 * most of the whole build's memory. */
static void swept_parts(const char *file, const char *origin, unsigned parts)
{
	apex_zone_t *reference = load_file(file, origin), *zone = load_file(file, origin);
	size_t whole = zone->memory, swept = 0;
	char what[160], err[256];
	change_t none = { 0 };
	tally_t t = { 0 };

	assert_int_equal(apex_precompute(reference), APEX_OK);
	assert_int_equal(apex_precompute(zone), APEX_OK);
	for (unsigned part = 0; part <= parts; part++) {
		apex_zone_t *next = NULL;
		/* the parts, then the owners they copied in passing */
		int rc = part < parts ? apex_version_rebuild_part(zone, part, parts, "test", &next,
								  err, sizeof(err))
				      : apex_version_rebuild_relinked(zone, parts, "test", &next,
								      err, sizeof(err));

		snprintf(what, sizeof(what), "%s, swept part %u of %u", file, part + 1, parts);
		if (rc != APEX_OK)
			fail_msg("%s: %s (%d)", what, err, rc);
		assert_true(next->sweeps_base);
		assert_int_equal(apex_precompute(next), APEX_OK);
		/* not while the version before is read */
		assert_int_equal(apex_zone_sweep_chain(zone, next, next), 0);
		apex_zone_release_index(zone);
		apex_zone_discard_replaced(zone, next);
		swept += apex_zone_sweep_chain(zone, next, next);
		apex_zone_unref(zone);
		zone = next;
		assert_same_records(zone, reference, what);
		assert_same_structure(zone, reference, what);
		compare_answers(zone, reference, &none, what, &t);
	}
	/* at the end, the whole build keeps its names and little else, and
	 * the chain counts as compact again */
	assert_int_equal(zone->derived_depth, 0);
	if (swept * 2 < whole)
		fail_msg("%s in %u parts: %zu bytes swept of the whole build's %zu", file, parts,
			 swept, whole);
	assert_true(apex_zone_chain_memory(zone) < zone->chain_memory);
	apex_zone_unref(zone);
	apex_zone_unref(reference);
}

static void each_zone_swept(void **state)
{
	(void)state;
	swept_parts("fj.zone", "fj.", 4);
	swept_parts("example.nsec3.zone", "example.", 3);
}

static void each_zone_in_parts(void **state)
{
	(void)state;
	for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
		in_parts(zones[z].file, zones[z].origin, 1);
		in_parts(zones[z].file, zones[z].origin, 4);
		in_parts(zones[z].file, zones[z].origin, 7);
	}
}

static void part_out_of_range(void **state)
{
	apex_zone_t *zone = load_file("example.zone", "example."), *next = NULL;
	char err[128];

	(void)state;
	assert_int_equal(apex_version_rebuild_part(zone, 3, 3, "test", &next, err, sizeof(err)),
			 APEX_EINVAL);
	assert_null(next);
	assert_int_equal(apex_version_rebuild_part(zone, 0, 0, "test", &next, err, sizeof(err)),
			 APEX_EINVAL);
	/* not the last of parts: a whole build */
	assert_int_equal(apex_version_rebuild_relinked(zone, 2, "test", &next, err, sizeof(err)),
			 APEX_EINVAL);
	assert_null(next);
	apex_zone_unref(zone);
}

static int count_record(void *ctx, const apex_rr_t *rr)
{
	(void)rr;
	++*(size_t *)ctx;
	return APEX_OK;
}

/* The records a part of all of zone's owners reads: every name's and
 * every NSEC3 owner's. */
static size_t records_of_all(const apex_zone_t *zone)
{
	size_t n = 0;

	for (size_t i = 0; i < zone->node_count; i++)
		assert_int_equal(
			apex_node_records(zone, apex_zone_node_at(zone, i), count_record, &n),
			APEX_OK);
	for (size_t i = 0; i < zone->nsec3_owner_count; i++)
		assert_int_equal(apex_node_records(zone, apex_zone_nsec3_owner_at(zone, i),
						   count_record, &n),
				 APEX_OK);
	return n;
}

/* The derivation's questions in a part (zone/derive.h) after its steps:
 * the builder's sort, the owners and their links; a part adds and removes
 * no name, so the name index and new names' steps do not come.  Then one
 * at every APEX_DERIVE_GIVE_WAY_EVERY-th owner whose RRsets are built,
 * and linked, and name of the pass that relinks what the change reaches. */
#define DERIVE_STEP_QUESTIONS 3

/* Part 0 of 1 of zone (all its owners, records of them) built asking
 * whether to give way: told to at each question in turn, it leaves
 * nothing behind (the sanitizers' build checks every way out), says where
 * it stopped, and the version asked of is as it was.  questions: how many
 * it asks when never told to, or 0 when only the walk's and the steps'
 * are known. */
static void part_gives_way_in(apex_zone_t *zone, size_t records, int questions)
{
	int walk = 1 + (int)(records / APEX_VERSION_PART_GIVE_WAY_EVERY);
	apex_zone_t *next = NULL;
	char err[256], what[64];
	change_t none = { 0 };
	tally_t t = { 0 };

	assert_int_equal(apex_precompute(zone), APEX_OK);
	assert_true(records > 2 * APEX_VERSION_PART_GIVE_WAY_EVERY);
	/* never told to: the part it builds without the question */
	asker_t never = { 0, 0 };
	assert_int_equal(apex_version_rebuild_part_or_give_way(zone, 0, 1, "test", give_way_at,
							       &never, &next, err, sizeof(err)),
			 APEX_OK);
	if (questions > 0)
		assert_int_equal(never.asked, questions);
	assert_true(never.asked >= walk + DERIVE_STEP_QUESTIONS);
	assert_int_equal(apex_precompute(next), APEX_OK);
	assert_same_records(next, zone, "never told to give way");
	apex_zone_unref(next);

	for (int yes = 1; yes <= never.asked; yes++) {
		asker_t a = { yes, 0 };

		next = (apex_zone_t *)1;
		err[0] = '\0';
		assert_int_equal(apex_version_rebuild_part_or_give_way(zone, 0, 1, "test",
								       give_way_at, &a, &next, err,
								       sizeof(err)),
				 APEX_ECANCELED);
		assert_null(next);
		assert_int_equal(a.asked, yes);
		if (yes == 1)
			snprintf(what, sizeof(what), "gave way before its first record");
		else if (yes <= walk)
			snprintf(what, sizeof(what), "gave way with %d records read",
				 (yes - 1) * APEX_VERSION_PART_GIVE_WAY_EVERY);
		else
			snprintf(what, sizeof(what), "gave way in its derivation, with %zu records",
				 records);
		if (strstr(err, what) == NULL)
			fail_msg("question %d: \"%s\", not \"%s\"", yes, err, what);
	}
	/* the version asked of still whole, and still derived from */
	assert_int_equal(apex_version_rebuild_part(zone, 0, 1, "test", &next, err, sizeof(err)),
			 APEX_OK);
	assert_int_equal(apex_precompute(next), APEX_OK);
	assert_same_records(next, zone, "after giving way");
	assert_same_structure(next, zone, "after giving way");
	compare_answers(next, zone, &none, "after giving way", &t);
	assert_true(t.queries > 0);
	apex_zone_unref(next);
}

#define HOSTS 10000

static void part_gives_way(void **state)
{
	apex_zone_t *zone;

	(void)state;
	/* a signed TLD: its owners and names counted by its own walk only */
	zone = load_file("fj.zone", "fj.");
	part_gives_way_in(zone, records_of_all(zone), 0);
	apex_zone_unref(zone);

	/* owners, all of them names, each but the apex with an address:
	 * every question known */
	zone = load_hosts("example. 3600 IN NS ns.example.\n"
			  "ns.example. 3600 IN A 192.0.2.1\n",
			  HOSTS);
	size_t owners = HOSTS + 2, records = records_of_all(zone);
	assert_int_equal(records, HOSTS + 2); /* all but the SOA, which comes first */
	assert_int_equal(zone->node_count, owners);
	int questions = 1 + (int)(records / APEX_VERSION_PART_GIVE_WAY_EVERY) +
			DERIVE_STEP_QUESTIONS + 2 * (int)(owners / APEX_DERIVE_GIVE_WAY_EVERY) +
			(int)(zone->node_count / APEX_DERIVE_GIVE_WAY_EVERY);
	part_gives_way_in(zone, records, questions);
	apex_zone_unref(zone);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_zone_in_parts), cmocka_unit_test(each_zone_swept),
		cmocka_unit_test(part_out_of_range),  cmocka_unit_test(part_refused),
		cmocka_unit_test(part_gives_way),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
