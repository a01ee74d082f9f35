/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/changes and xfr/diff: the change set between two versions of a
 * zone holds exactly the records that changed, in IXFR order, and
 * applying it to the old version's records gives the new version's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "xfr/changes.h"
#include "xfr/diff.h"
#include "xfr/ixfr_apply.h"
#include "zone/load.h"
#include "zone/zone.h"
#include "zone_records.h"

/* ------------------------------------------------------------ helpers */

/* The removals and additions of a change set, and its two SOAs. */
static void change_records(const apex_changes_t *c, text_set_t *removed, text_set_t *added,
			   char **old_soa, char **new_soa)
{
	apex_changes_reader_t r;
	apex_rr_t rr;
	apex_change_kind_t kind;
	int rc;

	apex_changes_reader_init(&r, c->data, c->size);
	while ((rc = apex_changes_next(&r, &rr, &kind)) == APEX_OK) {
		assert_int_equal(rr.rclass, APEX_CLASS_IN);
		char *text = record_text(rr.owner, rr.type, rr.ttl, rr.rdata, rr.rdlength);
		switch (kind) {
		case APEX_CHANGE_OLD_SOA: *old_soa = text; break;
		case APEX_CHANGE_REMOVE: set_add(removed, text); break;
		case APEX_CHANGE_NEW_SOA: *new_soa = text; break;
		case APEX_CHANGE_ADD: set_add(added, text); break;
		}
	}
	assert_int_equal(rc, APEX_ENOENT);
	assert_int_equal(removed->count, c->removed);
	assert_int_equal(added->count, c->added);
	set_sort(removed);
	set_sort(added);
}

/*
 * The property that makes a change set right: the removals are in the
 * old version and not in the new, the additions the other way round, and
 * old - removals + additions = new, SOA aside.
 */
static void check_diff(const apex_zone_t *from, const apex_zone_t *to, size_t *removed_count,
		       size_t *added_count)
{
	apex_changes_t c;
	text_set_t old_set = { 0 }, new_set = { 0 }, removed = { 0 }, added = { 0 };
	char *old_soa = NULL, *new_soa = NULL;

	apex_changes_init(&c);
	assert_int_equal(apex_xfr_diff(from, to, &c), APEX_OK);
	assert_true(apex_changes_complete(&c));
	assert_int_equal(c.serial_from, from->serial);
	assert_int_equal(c.serial_to, to->serial);
	zone_records(from, &old_set);
	zone_records(to, &new_set);
	/* the feature zones sign no glue: every record is there */
	assert_int_equal(old_set.count, from->record_count);
	assert_int_equal(new_set.count, to->record_count);
	change_records(&c, &removed, &added, &old_soa, &new_soa);
	assert_true(set_has(&old_set, old_soa));
	assert_true(set_has(&new_set, new_soa));

	for (size_t i = 0; i < removed.count; i++) {
		assert_true(set_has(&old_set, removed.items[i]));
		assert_false(set_has(&new_set, removed.items[i]));
	}
	for (size_t i = 0; i < added.count; i++) {
		assert_true(set_has(&new_set, added.items[i]));
		assert_false(set_has(&old_set, added.items[i]));
	}
	/* Every old record not removed is in the new version, and every new
	 * record not added was in the old one (the SOAs excepted). */
	for (size_t i = 0; i < old_set.count; i++)
		if (strcmp(old_set.items[i], old_soa) != 0 && !set_has(&removed, old_set.items[i]))
			assert_true(set_has(&new_set, old_set.items[i]));
	for (size_t i = 0; i < new_set.count; i++)
		if (strcmp(new_set.items[i], new_soa) != 0 && !set_has(&added, new_set.items[i]))
			assert_true(set_has(&old_set, new_set.items[i]));
	*removed_count = removed.count;
	*added_count = added.count;
	free(old_soa);
	free(new_soa);
	set_free(&old_set);
	set_free(&new_set);
	set_free(&removed);
	set_free(&added);
	apex_changes_free(&c);
}

/* ------------------------------------------------------------ tests */

static const char old_zone[] = "$ORIGIN example.\n$TTL 3600\n"
			       "@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n"
			       "@ NS ns1\n@ NS ns2\n"
			       "ns1 A 192.0.2.1\nns2 A 192.0.2.2\n"
			       "www A 192.0.2.10\nwww A 192.0.2.11\n"
			       "mail MX 10 www\n"
			       "old TXT \"gone\"\n"
			       "sub NS ns.sub\nns.sub A 192.0.2.53\n"
			       "ttl A 192.0.2.20\n";

static const char new_zone[] = "$ORIGIN example.\n$TTL 3600\n"
			       "@ SOA ns1 hostmaster 2 7200 3600 1209600 300\n"
			       "@ NS ns1\n@ NS ns2\n"
			       "ns1 A 192.0.2.1\nns2 A 192.0.2.3\n"
			       "WWW A 192.0.2.10\nwww A 192.0.2.12\n"
			       "mail MX 10 www\n"
			       "new TXT \"here\"\n"
			       "sub NS ns.sub\nns.sub A 192.0.2.54\n"
			       "ttl 60 A 192.0.2.20\n";

static char *a_text(const char *owner, uint32_t ttl, uint8_t last)
{
	uint8_t name[APEX_NAME_MAX], addr[4] = { 192, 0, 2, last };
	assert_true(apex_name_from_str(owner, name) > 0);
	return record_text(name, APEX_TYPE_A, ttl, addr, 4);
}

static void exact_changes(void **state)
{
	(void)state;
	apex_zone_t *from = load_text(old_zone, "example."), *to = load_text(new_zone, "example.");
	apex_changes_t c;
	text_set_t removed = { 0 }, added = { 0 };
	char *old_soa = NULL, *new_soa = NULL;

	apex_changes_init(&c);
	assert_int_equal(apex_xfr_diff(from, to, &c), APEX_OK);
	assert_int_equal(c.serial_from, 1);
	assert_int_equal(c.serial_to, 2);
	change_records(&c, &removed, &added, &old_soa, &new_soa);
	assert_int_equal(removed.count, 5);
	assert_int_equal(added.count, 5);

	const char *want_removed[] = { "ns2.example.", "www.example.", "ns.sub.example.",
				       "ttl.example." };
	const uint8_t removed_last[] = { 2, 11, 53, 20 };
	const char *want_added[] = { "ns2.example.", "www.example.", "ns.sub.example.",
				     "ttl.example." };
	const uint8_t added_last[] = { 3, 12, 54, 20 };
	const uint32_t added_ttl[] = { 3600, 3600, 3600, 60 };
	for (int i = 0; i < 4; i++) {
		char *r = a_text(want_removed[i], 3600, removed_last[i]);
		char *a = a_text(want_added[i], added_ttl[i], added_last[i]);
		assert_true(set_has(&removed, r));
		assert_true(set_has(&added, a));
		free(r);
		free(a);
	}
	/* TXT "gone" out, TXT "here" in: 16 is TXT, 04 the string length. */
	assert_true(set_has(&removed, "old.example. 16 3600 04676f6e65"));
	assert_true(set_has(&added, "new.example. 16 3600 0468657265"));
	free(old_soa);
	free(new_soa);
	set_free(&removed);
	set_free(&added);
	apex_changes_free(&c);

	size_t nr, na;
	check_diff(from, to, &nr, &na);
	check_diff(to, from, &nr, &na);
	assert_int_equal(nr, 5);
	apex_zone_unref(from);
	apex_zone_unref(to);
}

static void same_version_has_no_changes(void **state)
{
	(void)state;
	const char *files[] = { "example.zone", "example.nsec.zone", "example.nsec3.zone" };
	for (int i = 0; i < 3; i++) {
		apex_zone_t *zone = load_file(files[i], "example.");
		size_t removed, added;
		check_diff(zone, zone, &removed, &added);
		assert_int_equal(removed, 0);
		assert_int_equal(added, 0);
		apex_zone_unref(zone);
	}
}

/* Signing a zone, or switching it from NSEC to NSEC3, changes most of it:
 * the property holds both ways, signatures and NSEC3 owners included.
 * Signing adds records, and changes one RRset: ttls.example. A, whose
 * records' TTLs differ in the unsigned file (600 then 300; apex serves
 * the lowest), to which the signer gave the first TTL: its two records
 * differ by TTL. */
static void signing_changes(void **state)
{
	(void)state;
	apex_zone_t *plain = load_file("example.zone", "example.");
	apex_zone_t *nsec = load_file("example.nsec.zone", "example.");
	apex_zone_t *nsec3 = load_file("example.nsec3.zone", "example.");
	size_t removed, added;

	check_diff(plain, nsec, &removed, &added);
	assert_int_equal(removed, 2);
	assert_true(added > 50);
	check_diff(nsec, plain, &removed, &added);
	assert_true(removed > 50);
	assert_int_equal(added, 2);
	check_diff(nsec, nsec3, &removed, &added);
	assert_true(removed > 0 && added > 0);
	check_diff(nsec3, nsec, &removed, &added);
	apex_zone_unref(plain);
	apex_zone_unref(nsec);
	apex_zone_unref(nsec3);
}

static void other_zone_is_refused(void **state)
{
	(void)state;
	apex_zone_t *example = load_file("example.zone", "example.");
	apex_zone_t *sl = load_file("sl.zone", "sl.");
	apex_changes_t c;

	apex_changes_init(&c);
	assert_int_equal(apex_xfr_diff(example, sl, &c), APEX_EINVAL);
	apex_changes_free(&c);
	apex_zone_unref(example);
	apex_zone_unref(sl);
}

/* A set within the bound is the set apex_xfr_diff() makes, byte for
 * byte; one byte less is APEX_ESPACE.  Where to is derived from from,
 * the set past the bound is never allocated. */
static void check_bound(const apex_zone_t *from, const apex_zone_t *to, bool derived)
{
	apex_changes_t whole, within, past;

	apex_changes_init(&whole);
	assert_int_equal(apex_xfr_diff(from, to, &whole), APEX_OK);
	assert_true(whole.size > 0);
	apex_changes_init(&within);
	assert_int_equal(apex_xfr_diff_within(from, to, whole.size, &within), APEX_OK);
	assert_int_equal(within.size, whole.size);
	assert_memory_equal(within.data, whole.data, whole.size);
	assert_int_equal(within.removed, whole.removed);
	assert_int_equal(within.added, whole.added);
	apex_changes_init(&past);
	assert_int_equal(apex_xfr_diff_within(from, to, whole.size - 1, &past), APEX_ESPACE);
	if (derived)
		assert_int_equal(past.capacity, 0);
	apex_changes_free(&past);
	apex_changes_init(&past);
	assert_int_equal(apex_xfr_diff_within(from, to, 10, &past), APEX_ESPACE); /* < the SOAs */
	assert_int_equal(past.capacity, 0);
	apex_changes_free(&past);
	apex_changes_free(&within);
	apex_changes_free(&whole);
}

static void bound_refuses_a_larger_set(void **state)
{
	(void)state;
	apex_zone_t *from = load_text(old_zone, "example."), *to = load_text(new_zone, "example.");
	check_bound(from, to, false);
	apex_zone_t *derived = derive_in_place(from, to);
	check_bound(from, derived, true);
	apex_zone_unref(derived);
	apex_zone_unref(from);
	apex_zone_unref(to);
}

/* The writer keeps IXFR order; the reader refuses what is not one change
 * set. */
static void order_is_enforced(void **state)
{
	(void)state;
	uint8_t owner[APEX_NAME_MAX], soa[64], *p = soa;
	apex_changes_t c;
	apex_changes_reader_t r;
	apex_rr_t rr, got;
	apex_change_kind_t kind;

	assert_true(apex_name_from_str("example.", owner) > 0);
	/* SOA RDATA: ". . 7 0 0 0 0" */
	*p++ = 0;
	*p++ = 0;
	apex_write_u32(p, 7);
	memset(p + 4, 0, 16);
	apex_rr_t soa_rr = { owner, APEX_TYPE_SOA, APEX_CLASS_IN, 60, 22, soa };
	uint8_t addr[4] = { 192, 0, 2, 1 };
	apex_rr_t a = { owner, APEX_TYPE_A, APEX_CLASS_IN, 60, 4, addr };

	apex_changes_init(&c);
	assert_int_equal(apex_changes_append(&c, APEX_CHANGE_REMOVE, &a), APEX_EINVAL);
	assert_int_equal(apex_changes_append(&c, APEX_CHANGE_OLD_SOA, &a), APEX_EINVAL);
	assert_int_equal(apex_changes_append(&c, APEX_CHANGE_OLD_SOA, &soa_rr), APEX_OK);
	assert_int_equal(apex_changes_append(&c, APEX_CHANGE_ADD, &a), APEX_EINVAL);
	assert_int_equal(apex_changes_append(&c, APEX_CHANGE_REMOVE, &soa_rr), APEX_EINVAL);
	assert_int_equal(apex_changes_append(&c, APEX_CHANGE_REMOVE, &a), APEX_OK);
	assert_false(apex_changes_complete(&c));
	apex_write_u32(soa + 2, 8);
	assert_int_equal(apex_changes_append(&c, APEX_CHANGE_NEW_SOA, &soa_rr), APEX_OK);
	assert_int_equal(apex_changes_append(&c, APEX_CHANGE_ADD, &a), APEX_OK);
	assert_true(apex_changes_complete(&c));
	assert_int_equal(c.serial_from, 7);
	assert_int_equal(c.serial_to, 8);

	apex_changes_reader_init(&r, c.data, c.size);
	const apex_change_kind_t kinds[] = { APEX_CHANGE_OLD_SOA, APEX_CHANGE_REMOVE,
					     APEX_CHANGE_NEW_SOA, APEX_CHANGE_ADD };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(apex_changes_next(&r, &got, &kind), APEX_OK);
		assert_int_equal(kind, kinds[i]);
	}
	assert_int_equal(apex_changes_next(&r, &got, &kind), APEX_ENOENT);

	/* Cut anywhere, the set is refused, never over-read. */
	for (size_t cut = 1; cut < c.size; cut++) {
		int rc;
		apex_changes_reader_init(&r, c.data, cut);
		while ((rc = apex_changes_next(&r, &got, &kind)) == APEX_OK)
			;
		/* A cut after the new SOA's end and before the addition's end
		 * leaves a shorter but whole set only at record boundaries. */
		assert_true(rc == APEX_EMALFORMED || rc == APEX_ENOENT);
		if (rc == APEX_ENOENT)
			assert_int_equal(r.pos, cut);
	}
	/* No new SOA: not a change set. */
	apex_changes_reader_init(&r, c.data, 22 + 9 + 10 + 4 + 9 + 10); /* old SOA, one removal */
	assert_int_equal(apex_changes_next(&r, &got, &kind), APEX_OK);
	assert_int_equal(apex_changes_next(&r, &got, &kind), APEX_OK);
	assert_int_equal(apex_changes_next(&r, &got, &kind), APEX_EMALFORMED);
	(void)rr;
	apex_changes_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_changes),     cmocka_unit_test(same_version_has_no_changes),
		cmocka_unit_test(signing_changes),   cmocka_unit_test(other_zone_is_refused),
		cmocka_unit_test(order_is_enforced), cmocka_unit_test(bound_refuses_a_larger_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
