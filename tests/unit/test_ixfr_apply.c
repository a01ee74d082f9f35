/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An incoming IXFR applied (lib/xfr/ixfr_apply.c): the change sets between
 * versions of the feature zone (unsigned, NSEC, NSEC3: nearly every record
 * changes between them), applied to the old version and built, give a
 * version with exactly the new one's records; chained sets are folded; a
 * single set, read in place, gives what its condensed form gives when it
 * names a record twice; a set that removes a record the old version lacks
 * is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dns/name.h"
#include "util/arena.h"
#include "util/error.h"
#include "xfr/condense.h"
#include "xfr/diff.h"
#include "xfr/ixfr_apply.h"
#include "xfr/version_records.h"
#include "zone/derive.h"
#include "zone/load.h"
#include "zone/zone_from_wire.h"
#include "ixfr_one_record.h"
#include "zone_records.h"

static int add_to_builder(void *ctx, const apex_rr_t *rr)
{
	return apex_zone_from_wire_add(ctx, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
}

/* old with sets applied, built; NULL (and err) when they do not apply. */
static apex_zone_t *apply(const apex_zone_t *old, const apex_changes_t *sets, size_t count,
			  char *err, size_t err_size)
{
	apex_zone_from_wire_t *w;
	apex_zone_t *zone = NULL;

	assert_int_equal(apex_zone_from_wire_begin(&w, old->origin, "test", err, err_size),
			 APEX_OK);
	if (apex_ixfr_apply(old, sets, count, add_to_builder, w, err, err_size) != APEX_OK) {
		apex_zone_from_wire_abort(w);
		return NULL;
	}
	if (apex_zone_from_wire_finish(w, &zone) != APEX_OK)
		fail_msg("%s", err);
	return zone;
}

static const char *const files[] = { "example.zone", "example.nsec.zone", "example.nsec3.zone" };

/* Every pair of versions, one set each way. */
static void one_set(void **state)
{
	(void)state;
	for (size_t i = 0; i < 3; i++) {
		for (size_t j = 0; j < 3; j++) {
			apex_zone_t *from = load_file(files[i], "example."),
				    *to = load_file(files[j], "example.");
			apex_changes_t set;
			char err[256];

			apex_changes_init(&set);
			assert_int_equal(apex_xfr_diff(from, to, &set), APEX_OK);
			apex_zone_t *got = apply(from, &set, 1, err, sizeof(err));
			if (got == NULL)
				fail_msg("%s -> %s: %s", files[i], files[j], err);
			assert_same_version(got, to);
			apex_zone_unref(got);
			apex_changes_free(&set);
			apex_zone_unref(from);
			apex_zone_unref(to);
		}
	}
}

/* Two chained sets (unsigned -> NSEC -> NSEC3, and back through NSEC):
 * records added by the first and removed by the second never appear. */
static void chained_sets(void **state)
{
	(void)state;
	static const int orders[][3] = { { 0, 1, 2 }, { 2, 1, 0 }, { 1, 0, 1 } };

	for (size_t o = 0; o < 3; o++) {
		apex_zone_t *v[3];
		apex_changes_t sets[2];
		char err[256];

		for (int k = 0; k < 3; k++)
			v[k] = load_file(files[orders[o][k]], "example.");
		for (int k = 0; k < 2; k++) {
			apex_changes_init(&sets[k]);
			assert_int_equal(apex_xfr_diff(v[k], v[k + 1], &sets[k]), APEX_OK);
		}
		apex_zone_t *got = apply(v[0], sets, 2, err, sizeof(err));
		if (got == NULL)
			fail_msg("order %zu: %s", o, err);
		assert_same_version(got, v[2]);
		apex_zone_unref(got);
		for (int k = 0; k < 2; k++)
			apex_changes_free(&sets[k]);
		for (int k = 0; k < 3; k++)
			apex_zone_unref(v[k]);
	}
}

/* set with every removal twice and every addition twice, the second
 * with another TTL, into out. */
static void doubled(const apex_changes_t *set, apex_changes_t *out)
{
	apex_changes_reader_t r;
	apex_change_kind_t kind;
	apex_rr_t rr;
	int rc;

	apex_changes_init(out);
	apex_changes_reader_init(&r, set->data, set->size);
	while ((rc = apex_changes_next(&r, &rr, &kind)) == APEX_OK) {
		assert_int_equal(apex_changes_append(out, kind, &rr), APEX_OK);
		if (kind == APEX_CHANGE_ADD)
			rr.ttl += 7;
		if (kind == APEX_CHANGE_REMOVE || kind == APEX_CHANGE_ADD)
			assert_int_equal(apex_changes_append(out, kind, &rr), APEX_OK);
	}
	assert_int_equal(rc, APEX_ENOENT);
}

/* One set naming records twice, read in place, gives the records its
 * condensed form gives (the last addition of a record counts), applied
 * or derived. */
static void one_set_twice(void **state)
{
	(void)state;
	for (size_t i = 0; i < 3; i++) {
		for (size_t j = 0; j < 3; j++) {
			apex_zone_t *from = load_file(files[i], "example."),
				    *to = load_file(files[j], "example.");
			apex_changes_t set, twice, condensed;
			apex_zone_t *derived = NULL;
			bool in_place;
			char err[256];

			apex_changes_init(&set);
			assert_int_equal(apex_xfr_diff(from, to, &set), APEX_OK);
			doubled(&set, &twice);
			assert_int_equal(apex_changes_condense(&twice, 1, &condensed), APEX_OK);
			apex_zone_t *got = apply(from, &twice, 1, err, sizeof(err));
			apex_zone_t *want = apply(from, &condensed, 1, err, sizeof(err));
			if (got == NULL || want == NULL)
				fail_msg("%s -> %s: %s", files[i], files[j], err);
			assert_same_version(got, want);
			assert_int_equal(apex_ixfr_version(from, &twice, 1, "test", &derived,
							   &in_place, err, sizeof(err)),
					 APEX_OK);
			assert_same_version(derived, want);
			apex_zone_unref(derived);
			apex_zone_unref(got);
			apex_zone_unref(want);
			apex_changes_free(&set);
			apex_changes_free(&twice);
			apex_changes_free(&condensed);
			apex_zone_unref(from);
			apex_zone_unref(to);
		}
	}
}

/* A set made for another version does not apply: a removal misses. */
static void set_for_another_version(void **state)
{
	(void)state;
	apex_zone_t *plain = load_file("example.zone", "example."),
		    *nsec = load_file("example.nsec.zone", "example.");
	apex_zone_t *nsec3 = load_file("example.nsec3.zone", "example.");
	apex_changes_t set;
	char err[256] = "";

	apex_changes_init(&set);
	assert_int_equal(apex_xfr_diff(nsec, nsec3, &set), APEX_OK); /* removes NSEC records */
	assert_null(apply(plain, &set, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "do not apply"));
	apex_changes_free(&set);
	apex_zone_unref(plain);
	apex_zone_unref(nsec);
	apex_zone_unref(nsec3);
}

/* The guard of apex_ixfr_version_guarded(): its refusal, or its count. */
static int guard_calls;

static int refuse_whole(void *ctx, char *err, size_t err_size)
{
	guard_calls++;
	snprintf(err, err_size, "%s", (const char *)ctx);
	return APEX_EMEMLIMIT;
}

static int allow_whole(void *ctx, char *err, size_t err_size)
{
	(void)ctx;
	(void)err;
	(void)err_size;
	guard_calls++;
	return APEX_OK;
}

/* The guard is asked before a whole build, and only then: a refusal ends
 * the application with its code and reason. */
static void guarded_whole_build(void **state)
{
	apex_zone_t *plain = load_file("example.zone", "example."),
		    *nsec = load_file("example.nsec.zone", "example."),
		    *again = load_file("example.zone", "example.");
	apex_ixfr_guard_t refuse = { refuse_whole, "no room", NULL },
			  allow = { allow_whole, NULL, NULL };
	apex_changes_t set, none;
	apex_zone_t *out = NULL;
	bool in_place = true;
	char err[256] = "";

	(void)state;
	apex_changes_init(&set);
	apex_changes_init(&none);
	/* NSEC records appearing at existing names: built whole */
	assert_int_equal(apex_xfr_diff(plain, nsec, &set), APEX_OK);
	guard_calls = 0;
	assert_int_equal(apex_ixfr_version_guarded(plain, &set, 1, "test", &refuse, &out, &in_place,
						   err, sizeof(err)),
			 APEX_EMEMLIMIT);
	assert_null(out);
	assert_false(in_place);
	assert_string_equal(err, "no room");
	assert_int_equal(guard_calls, 1);
	assert_int_equal(apex_ixfr_version_guarded(plain, &set, 1, "test", &allow, &out, &in_place,
						   err, sizeof(err)),
			 APEX_OK);
	assert_false(in_place);
	assert_int_equal(guard_calls, 2);
	assert_same_version(out, nsec);
	apex_zone_unref(out);
	/* nothing but the SOA changes: derived in place, the guard not asked */
	assert_int_equal(apex_xfr_diff(plain, again, &none), APEX_OK);
	assert_int_equal(apex_ixfr_version_guarded(plain, &none, 1, "test", &refuse, &out,
						   &in_place, err, sizeof(err)),
			 APEX_OK);
	assert_true(in_place);
	assert_int_equal(guard_calls, 2);
	apex_zone_unref(out);
	apex_changes_free(&set);
	apex_changes_free(&none);
	apex_zone_unref(plain);
	apex_zone_unref(nsec);
	apex_zone_unref(again);
}

/* apex_ixfr_guard_t's sets_read, as apexd's reload of a large change
 * uses it: the set freed (under ASan, a read of it after would fail). */
static int sets_read_calls;

static void free_set(void *ctx)
{
	sets_read_calls++;
	apex_changes_free(ctx);
}

/* A guard told when the sets are read is told once, before the version
 * is built, which then reads nothing of them; the journal's difference
 * of the two versions (one derived from the other) is sized exactly and
 * holds the same records.  A change the derivation turns down once the
 * sets are released comes back APEX_ENOTSUP, not built whole from sets
 * that are gone. */
static void sets_released_once_read(void **state)
{
	apex_zone_t *plain = load_file("example.zone", "example."),
		    *nsec = load_file("example.nsec.zone", "example.");
	uint8_t name[APEX_NAME_MAX], txt[] = { 4, 'm', 'o', 'r', 'e' };
	apex_changes_t set, again;
	apex_ixfr_guard_t tell = { allow_whole, &set, free_set };
	apex_zone_t *out = NULL;
	bool in_place = false;
	char err[256] = "";

	(void)state;
	assert_true(apex_name_from_str("new-name.example.", name) > 0);
	apex_rr_t rr = { name, APEX_TYPE_TXT, APEX_CLASS_IN, 300, sizeof(txt), txt };
	apex_zone_t *expected = one_record_more(plain, &rr, &in_place);
	assert_true(in_place);
	apex_changes_init(&set);
	apex_changes_init(&again);
	assert_int_equal(apex_xfr_diff(plain, expected, &set), APEX_OK);
	assert_int_equal(set.capacity, set.size); /* sized first: derived from plain */
	assert_int_equal(set.added, 1);
	uint8_t bytes[1024];
	size_t size = set.size;
	assert_true(size <= sizeof(bytes));
	memcpy(bytes, set.data, size);

	guard_calls = sets_read_calls = 0;
	in_place = false;
	assert_int_equal(apex_ixfr_version_guarded(plain, &set, 1, "test", &tell, &out, &in_place,
						   err, sizeof(err)),
			 APEX_OK);
	assert_true(in_place);
	assert_int_equal(sets_read_calls, 1);
	assert_int_equal(guard_calls, 0);
	assert_null(set.data);
	assert_same_version(out, expected);
	assert_int_equal(apex_xfr_diff(plain, out, &again), APEX_OK);
	assert_int_equal(again.capacity, again.size);
	assert_int_equal(again.size, size);
	assert_memory_equal(again.data, bytes, size);
	apex_zone_unref(out);
	out = NULL;

	/* NSEC records at existing names: the derivation reads the set,
	 * then turns the change down (a whole build makes it) */
	apex_changes_free(&again);
	assert_int_equal(apex_xfr_diff(plain, nsec, &set), APEX_OK);
	assert_int_equal(apex_ixfr_version_guarded(plain, &set, 1, "test", &tell, &out, &in_place,
						   err, sizeof(err)),
			 APEX_ENOTSUP);
	assert_null(out);
	assert_false(in_place);
	assert_int_equal(sets_read_calls, 2);
	assert_int_equal(guard_calls, 0);
	assert_string_equal(err, "");
	apex_changes_free(&set);
	apex_zone_unref(expected);
	apex_zone_unref(plain);
	apex_zone_unref(nsec);
}

/* A version derived in place keeps the time of its derivation's steps
 * (zone/derive_profile.h), which apexd logs; a whole build has none. */
static void derivation_steps_timed(void **state)
{
	apex_zone_t *plain = load_file("example.zone", "example.");
	uint8_t name[APEX_NAME_MAX], txt[] = { 4, 'm', 'o', 'r', 'e' };
	bool in_place = false;

	(void)state;
	for (int i = 0; i < APEX_DERIVE_STEPS; i++)
		assert_true(plain->derive_ms[i] == 0.0f);
	assert_true(apex_name_from_str("new-name.example.", name) > 0);
	apex_rr_t rr = { name, APEX_TYPE_TXT, APEX_CLASS_IN, 300, sizeof(txt), txt };
	/* a new name: every step runs, the name index copied among them */
	apex_zone_t *next = one_record_more(plain, &rr, &in_place);
	assert_true(in_place);
	for (int i = 0; i < APEX_DERIVE_STEPS; i++)
		assert_true(next->derive_ms[i] > 0.0f);
	char text[200];
	apex_derive_profile_text(next->derive_ms, text, sizeof(text));
	assert_non_null(strstr(text, "name index copied "));
	apex_zone_unref(next);
	apex_zone_unref(plain);
}

/* The name, key and size of the node of name (text) in zone. */
static void assert_node_named(const apex_zone_t *zone, const char *text)
{
	uint8_t name[APEX_NAME_MAX], key[APEX_KEY_MAX];
	int size = apex_name_from_str(text, name);
	size_t key_size = apex_name_key(name, key, NULL);

	assert_true(size > 0);
	const apex_node_t *node = apex_zone_find_owner(zone, name, NULL);
	if (node == NULL)
		fail_msg("%s: no node", text);
	assert_int_equal(node->name_size, size);
	assert_memory_equal(node->name, name, (size_t)size);
	assert_int_equal(node->key_size, key_size);
	assert_memory_equal(apex_node_key(node), key, key_size);
}

/* A derivation leaves a changed owner that old has its name where old
 * keeps it, and gives a new name and the empty non-terminals made above
 * it a copy of their own: the sort's copies of the owners' names are
 * freed within the derivation (zone/build.h, names_apart), which the
 * sanitizer build would see read afterwards. */
static void derived_names(void **state)
{
	apex_zone_t *plain = load_file("example.zone", "example.");
	uint8_t www[APEX_NAME_MAX], deep[APEX_NAME_MAX], txt[] = { 4, 'm', 'o', 'r', 'e' };
	bool in_place = false;

	(void)state;
	assert_true(apex_name_from_str("www.example.", www) > 0);
	apex_rr_t rr = { www, APEX_TYPE_TXT, APEX_CLASS_IN, 300, sizeof(txt), txt };
	apex_zone_t *next = one_record_more(plain, &rr, &in_place);
	assert_true(in_place);
	const apex_node_t *was = apex_zone_find_owner(plain, www, NULL);
	const apex_node_t *now = apex_zone_find_owner(next, www, NULL);
	assert_non_null(was);
	assert_non_null(now);
	/* a changed owner: its RRsets the new version's; its node copied
	 * only if their number changed, else shared (zone.h: rrset_pages) */
	assert_ptr_not_equal(apex_node_rrsets(next, now), apex_node_rrsets(plain, was));
	if (now->rrset_count == was->rrset_count)
		assert_ptr_equal(now, was);
	else
		assert_ptr_not_equal(now, was);
	assert_ptr_equal(now->name, was->name);
	assert_non_null(apex_node_rrset(next, now, APEX_TYPE_TXT));

	assert_true(apex_name_from_str("a.b.new.example.", deep) > 0);
	rr.owner = deep;
	apex_zone_t *third = one_record_more(next, &rr, &in_place);
	assert_true(in_place);
	apex_zone_unref(next);
	assert_node_named(third, "a.b.new.example.");
	assert_node_named(third, "b.new.example.");
	assert_node_named(third, "new.example.");
	assert_node_named(third, "www.example.");
	apex_zone_unref(third);
	apex_zone_unref(plain);
}

/* The i-th of many long names under example. (197 bytes). */
static void long_name(unsigned i, uint8_t *name)
{
	size_t at = 0;

	name[at++] = 4;
	at += (size_t)snprintf((char *)name + at, 5, "n%03u", i);
	for (int l = 0; l < 3; l++) {
		name[at++] = 60;
		memset(name + at, 'x', 60);
		at += 60;
	}
	memcpy(name + at, "\7example", 9);
	name[at + 9] = 0;
}

/* A change to names the version has takes no copy of their names: the
 * derived version's memory stays below what the names alone would take
 * (each name and its key, 394 bytes a name here). */
static void derived_names_not_copied(void **state)
{
	enum { NAMES = 400 };
	uint8_t origin[APEX_NAME_MAX], name[APEX_NAME_MAX], soa[64],
		txt[] = { 4, 'm', 'o', 'r', 'e' };
	uint8_t a[] = { 192, 0, 2, 1 };
	apex_zone_from_wire_t *w;
	apex_zone_t *old = NULL, *next = NULL;
	char err[256];
	bool in_place = false;

	(void)state;
	assert_true(apex_name_from_str("example.", origin) > 0);
	assert_int_equal(apex_zone_from_wire_begin(&w, origin, "test", err, sizeof(err)), APEX_OK);
	static const uint8_t soa_names[] = "\2ns\7example\0\4host\7example";
	size_t names = sizeof(soa_names) - 1 + 1;
	memcpy(soa, soa_names, names);
	memset(soa + names, 0, 20);
	soa[names + 3] = 1; /* serial 1 */
	assert_int_equal(
		apex_zone_from_wire_add(w, origin, APEX_TYPE_SOA, 300, soa, (uint16_t)(names + 20)),
		APEX_OK);
	for (unsigned i = 0; i < NAMES; i++) {
		long_name(i, name);
		assert_int_equal(apex_zone_from_wire_add(w, name, APEX_TYPE_A, 300, a, sizeof(a)),
				 APEX_OK);
	}
	assert_int_equal(apex_zone_from_wire_finish(w, &old), APEX_OK);

	uint8_t old_soa[512], new_soa[512];
	apex_changes_t set;
	apex_changes_init(&set);
	apex_rr_t rr = {
		origin, APEX_TYPE_SOA, APEX_CLASS_IN, 300, soa_at(old, 1, old_soa), old_soa
	};
	assert_int_equal(apex_changes_append(&set, APEX_CHANGE_OLD_SOA, &rr), APEX_OK);
	rr.rdlength = soa_at(old, 2, new_soa);
	rr.rdata = new_soa;
	assert_int_equal(apex_changes_append(&set, APEX_CHANGE_NEW_SOA, &rr), APEX_OK);
	for (unsigned i = 0; i < NAMES; i++) {
		apex_rr_t add = { name, APEX_TYPE_TXT, APEX_CLASS_IN, 300, sizeof(txt), txt };
		long_name(i, name);
		assert_int_equal(apex_changes_append(&set, APEX_CHANGE_ADD, &add), APEX_OK);
	}
	assert_int_equal(
		apex_ixfr_version(old, &set, 1, "test", &next, &in_place, err, sizeof(err)),
		APEX_OK);
	assert_true(in_place);
	uint8_t key[APEX_KEY_MAX];
	long_name(0, name);
	size_t name_bytes = NAMES * (apex_name_size(name) + apex_name_key(name, key, NULL));
	if (apex_arena_footprint(next->arena) >= name_bytes)
		fail_msg("derived version's arena %zu bytes, the names %zu",
			 apex_arena_footprint(next->arena), name_bytes);
	apex_changes_free(&set);
	apex_zone_unref(next);
	apex_zone_unref(old);
}

/* What apex_version_records() gives: the owners' keys in order. */
typedef struct owner_walk {
	uint8_t last[APEX_KEY_MAX];
	size_t last_size, records, out_of_order, nsec3_before_others;
	bool seen_nsec3;
} owner_walk_t;

static int walk_owner(void *ctx, const apex_rr_t *rr)
{
	owner_walk_t *w = ctx;
	uint8_t key[APEX_KEY_MAX];
	size_t size = apex_name_key(rr->owner, key, NULL);

	if (w->records > 0 && apex_key_compare(w->last, w->last_size, key, size) > 0)
		w->out_of_order++;
	if (rr->type == APEX_TYPE_NSEC3)
		w->seen_nsec3 = true;
	else if (w->seen_nsec3 && rr->type != APEX_TYPE_RRSIG)
		w->nsec3_before_others++;
	memcpy(w->last, key, size);
	w->last_size = size;
	w->records++;
	return APEX_OK;
}

/* Every record but the SOA, the owners in canonical order: the owners of
 * NSEC3 records among the others, not after them (a copy or a compact
 * version built from them keeps its records where they are,
 * zone/build_sort.c). */
static void records_in_canonical_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < 3; i++) {
		apex_zone_t *zone = load_file(files[i], "example.");
		owner_walk_t w = { .records = 0 };

		assert_int_equal(apex_version_records(zone, walk_owner, &w), APEX_OK);
		assert_int_equal(w.records, zone->record_count - 1);
		assert_int_equal(w.out_of_order, 0);
		if (zone->dnssec == APEX_DNSSEC_NSEC3) {
			assert_true(zone->nsec3_owner_count > 0);
			assert_true(w.nsec3_before_others > 0); /* interleaved */
		}
		apex_zone_unref(zone);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_set),
		cmocka_unit_test(chained_sets),
		cmocka_unit_test(one_set_twice),
		cmocka_unit_test(set_for_another_version),
		cmocka_unit_test(guarded_whole_build),
		cmocka_unit_test(sets_released_once_read),
		cmocka_unit_test(derivation_steps_timed),
		cmocka_unit_test(derived_names),
		cmocka_unit_test(derived_names_not_copied),
		cmocka_unit_test(records_in_canonical_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
