/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/condense: consecutive change sets as one (RFC 1995 section 4):
 * what each record's history across the sets comes to, and on the
 * feature zones (unsigned, NSEC, NSEC3) that two chained sets condensed
 * hold exactly the difference from the first version to the last, up to
 * records removed and added back unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "util/error.h"
#include "xfr/condense.h"
#include "xfr/diff.h"
#include "zone_records.h"

static const uint8_t ORIGIN[] = "\007example\000";
static const uint8_t HOST_A[] = "\001a\007example\000";
static const uint8_t HOST_B[] = "\001B\007example\000"; /* case is no difference */
static const uint8_t HOST_B_LOWER[] = "\001b\007example\000";

/* An SOA record of ORIGIN with serial. */
static apex_rr_t soa(uint32_t serial, uint8_t *rdata)
{
	memset(rdata, 0, 22);
	apex_write_u32(rdata + 2, serial); /* after two root names */
	return (apex_rr_t){ ORIGIN, APEX_TYPE_SOA, APEX_CLASS_IN, 300, 22, rdata };
}

static apex_rr_t a_record(const uint8_t *owner, uint32_t ttl, const uint8_t *address)
{
	return (apex_rr_t){ owner, APEX_TYPE_A, APEX_CLASS_IN, ttl, 4, address };
}

static void append(apex_changes_t *c, apex_change_kind_t kind, apex_rr_t rr)
{
	assert_int_equal(apex_changes_append(c, kind, &rr), APEX_OK);
}

/* The set's records as text, by kind; the SOAs' serials. */
static void read_set(const apex_changes_t *c, text_set_t *removed, text_set_t *added,
		     uint32_t *from, uint32_t *to)
{
	apex_changes_reader_t r;
	apex_change_kind_t kind;
	apex_rr_t rr;
	int rc;

	apex_changes_reader_init(&r, c->data, c->size);
	while ((rc = apex_changes_next(&r, &rr, &kind)) == APEX_OK) {
		if (kind == APEX_CHANGE_OLD_SOA || kind == APEX_CHANGE_NEW_SOA)
			assert_true(apex_changes_soa_serial(
				rr.rdata, rr.rdlength, kind == APEX_CHANGE_OLD_SOA ? from : to));
		else
			set_add(kind == APEX_CHANGE_REMOVE ? removed : added,
				record_text(rr.owner, rr.type, rr.ttl, rr.rdata, rr.rdlength));
	}
	assert_int_equal(rc, APEX_ENOENT);
	set_sort(removed);
	set_sort(added);
}

/* Each record's history: removed and added back, added and removed again,
 * added at one TTL and again at another. */
static void record_histories(void **state)
{
	(void)state;
	static const uint8_t addr1[4] = { 192, 0, 2, 1 }, addr2[4] = { 192, 0, 2, 2 };
	uint8_t s1[22], s2[22], s2b[22], s3[22];
	apex_changes_t sets[2], out;
	text_set_t removed = { 0 }, added = { 0 };
	uint32_t from = 0, to = 0;

	for (int i = 0; i < 2; i++)
		apex_changes_init(&sets[i]);
	append(&sets[0], APEX_CHANGE_OLD_SOA, soa(1, s1));
	append(&sets[0], APEX_CHANGE_REMOVE, a_record(HOST_A, 300, addr1));
	append(&sets[0], APEX_CHANGE_NEW_SOA, soa(2, s2));
	append(&sets[0], APEX_CHANGE_ADD, a_record(HOST_B, 300, addr1));
	append(&sets[0], APEX_CHANGE_ADD, a_record(HOST_A, 300, addr2));
	append(&sets[1], APEX_CHANGE_OLD_SOA, soa(2, s2b));
	append(&sets[1], APEX_CHANGE_REMOVE, a_record(HOST_B_LOWER, 300, addr1));
	append(&sets[1], APEX_CHANGE_REMOVE, a_record(HOST_A, 300, addr2));
	append(&sets[1], APEX_CHANGE_NEW_SOA, soa(3, s3));
	append(&sets[1], APEX_CHANGE_ADD, a_record(HOST_A, 600, addr2));
	append(&sets[1], APEX_CHANGE_ADD, a_record(HOST_A, 300, addr1));

	assert_int_equal(apex_changes_condense(sets, 2, &out), APEX_OK);
	read_set(&out, &removed, &added, &from, &to);
	assert_int_equal(from, 1);
	assert_int_equal(to, 3);
	/* a.example/192.0.2.1 removed and added back: kept as both */
	assert_int_equal(removed.count, 1);
	assert_string_equal(removed.items[0], "a.example. 1 300 c0000201");
	/* B added then removed: gone; a.example/192.0.2.2 at its last TTL */
	assert_int_equal(added.count, 2);
	assert_string_equal(added.items[0], "a.example. 1 300 c0000201");
	assert_string_equal(added.items[1], "a.example. 1 600 c0000202");
	assert_int_equal(out.removed, 1);
	assert_int_equal(out.added, 2);
	set_free(&removed);
	set_free(&added);
	apex_changes_free(&out);

	/* sets that do not follow each other are refused */
	assert_int_equal(apex_changes_condense(&sets[1], 1, &out), APEX_OK);
	apex_changes_free(&out);
	apex_changes_t reversed[2] = { sets[1], sets[0] };
	assert_int_equal(apex_changes_condense(reversed, 2, &out), APEX_EMALFORMED);
	assert_int_equal(apex_changes_condense(sets, 0, &out), APEX_EMALFORMED);
	for (int i = 0; i < 2; i++)
		apex_changes_free(&sets[i]);
}

/* Remove from x and y the items both hold. */
static void cancel_common(text_set_t *x, text_set_t *y)
{
	text_set_t kx = { 0 }, ky = { 0 };

	for (size_t i = 0; i < x->count; i++)
		set_add(&kx, set_has(y, x->items[i]) ? NULL : strdup(x->items[i]));
	for (size_t i = 0; i < y->count; i++)
		set_add(&ky, set_has(x, y->items[i]) ? NULL : strdup(y->items[i]));
	set_free(x);
	set_free(y);
	for (size_t i = 0; i < kx.count; i++)
		if (kx.items[i] != NULL)
			set_add(x, kx.items[i]);
	for (size_t i = 0; i < ky.count; i++)
		if (ky.items[i] != NULL)
			set_add(y, ky.items[i]);
	free(kx.items);
	free(ky.items);
	set_sort(x);
	set_sort(y);
}

static void assert_same_set(const text_set_t *x, const text_set_t *y)
{
	assert_int_equal(x->count, y->count);
	for (size_t i = 0; i < x->count; i++)
		assert_string_equal(x->items[i], y->items[i]);
}

/* The feature zones in several orders: diff(v0, v1) and diff(v1, v2)
 * condensed equal diff(v0, v2) once what is removed and added back is
 * cancelled (nearly every record changes between them: signatures, NSEC,
 * NSEC3). */
static void condensed_feature_zones(void **state)
{
	(void)state;
	static const char *const files[] = { "example.zone", "example.nsec.zone",
					     "example.nsec3.zone" };
	static const int orders[][3] = { { 0, 1, 2 }, { 2, 1, 0 }, { 1, 0, 1 }, { 0, 2, 1 } };

	for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
		apex_zone_t *v[3];
		apex_changes_t sets[2], out, direct;
		text_set_t cr = { 0 }, ca = { 0 }, dr = { 0 }, da = { 0 };
		uint32_t from, to;

		for (int k = 0; k < 3; k++)
			v[k] = load_file(files[orders[o][k]], "example.");
		for (int k = 0; k < 2; k++) {
			apex_changes_init(&sets[k]);
			assert_int_equal(apex_xfr_diff(v[k], v[k + 1], &sets[k]), APEX_OK);
		}
		apex_changes_init(&direct);
		assert_int_equal(apex_xfr_diff(v[0], v[2], &direct), APEX_OK);
		assert_int_equal(apex_changes_condense(sets, 2, &out), APEX_OK);
		assert_true(out.size <= sets[0].size + sets[1].size);
		read_set(&out, &cr, &ca, &from, &to);
		read_set(&direct, &dr, &da, &from, &to);
		cancel_common(&cr, &ca);
		cancel_common(&dr, &da);
		assert_same_set(&cr, &dr);
		assert_same_set(&ca, &da);
		set_free(&cr);
		set_free(&ca);
		set_free(&dr);
		set_free(&da);
		apex_changes_free(&out);
		apex_changes_free(&direct);
		for (int k = 0; k < 2; k++)
			apex_changes_free(&sets[k]);
		for (int k = 0; k < 3; k++)
			apex_zone_unref(v[k]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record_histories),
		cmocka_unit_test(condensed_feature_zones),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
