/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Catalog zones (RFC 9432, schema version 2) read from a version loaded
 * from zone text (lib/catalog/catalog_read.h): the members sorted by zone
 * name with their node labels, group and coo properties; a zone without
 * a TXT "2" at version.$CATZ refused; the member nodes that cannot be
 * read skipped, each with its owner and reason told (two PTR records, the
 * root, the catalog or a name below it, a group property that is not one
 * TXT record of one string without whitespace, a zone an earlier member
 * node names); a coo property of two records ignored; names lower-cased,
 * the group's case kept; what the catalog does not define ignored; the
 * look-up of a member by zone name.  And a catalog produced
 * (lib/catalog/catalog_write.h): its member node labels stable and
 * case-blind, its text in a fixed order, read back as written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "catalog/catalog_read.h"
#include "catalog/catalog_write.h"
#include "dns/name.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/zone.h"

#define HEAD                                                   \
	"$ORIGIN catalog.invalid.\n"                           \
	"$TTL 0\n"                                             \
	"@ IN SOA invalid. invalid. 1 3600 600 2147483646 0\n" \
	"@ IN NS invalid.\n"
#define VERSION_2 "version IN TXT \"2\"\n"

#define MAX_SKIPS 8

/* What the skip callback was told. */
typedef struct skips {
	size_t count;
	char owner[MAX_SKIPS][1100];
	char reason[MAX_SKIPS][1400];
} skips_t;

static char dir[256];
static skips_t skips;

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/apex-test-catalog-XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[300];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The version of text (origin catalog.invalid.), written to a file and loaded. */
static apex_zone_t *load_text(const char *text)
{
	char path[300], err[512];
	uint8_t origin[APEX_NAME_MAX];
	apex_zone_t *zone = NULL;

	snprintf(path, sizeof(path), "%s/zone", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_true(apex_name_from_str("catalog.invalid.", origin) > 0);
	if (apex_zone_load(path, origin, &zone, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	return zone;
}

static void on_skip(void *ctx, const char *owner, const char *reason)
{
	skips_t *s = ctx;
	assert_true(s->count < MAX_SKIPS);
	snprintf(s->owner[s->count], sizeof(s->owner[0]), "%s", owner);
	snprintf(s->reason[s->count], sizeof(s->reason[0]), "%s", reason);
	s->count++;
}

/* Read the catalog of text; the result code, *out filled, the skips in skips. */
static int read_text(const char *text, apex_catalog_t *out, char *err, size_t err_size)
{
	apex_zone_t *zone = load_text(text);
	memset(&skips, 0, sizeof(skips));
	/* garbage, which the read must overwrite */
	out->members = (apex_catalog_member_t *)(uintptr_t)1;
	out->count = 99;
	int rc = apex_catalog_read(zone, out, on_skip, &skips, err, err_size);
	apex_zone_unref(zone);
	return rc;
}

/* Read the catalog of text, which must be one. */
static void read_ok(const char *text, apex_catalog_t *out)
{
	char err[512];
	memset(err, 'x', sizeof(err));
	int rc = read_text(text, out, err, sizeof(err));
	if (rc != APEX_OK)
		fail_msg("apex_catalog_read: %d: %s", rc, err);
	assert_string_equal(err, "");
}

/* name (wire) is the name text, byte for byte. */
static void assert_name(const uint8_t *name, const char *text)
{
	uint8_t wire[APEX_NAME_MAX];
	int size = apex_name_from_str(text, wire);
	assert_true(size > 0);
	assert_int_equal(apex_name_size(name), (size_t)size);
	assert_memory_equal(name, wire, (size_t)size);
}

/* member m is zone, node label id, group (""), coo (NULL: none). */
static void assert_member(const apex_catalog_member_t *m, const char *zone, const char *id,
			  const char *group, const char *coo)
{
	assert_name(m->zone, zone);
	assert_int_equal(m->id[0], strlen(id));
	assert_memory_equal(m->id + 1, id, strlen(id));
	assert_string_equal(m->group, group);
	assert_int_equal(m->coo != NULL, coo != NULL);
	if (coo != NULL)
		assert_name(m->coo, coo);
}

/* The skip i was of owner, with reason holding `part`. */
static void assert_skip(size_t i, const char *owner, const char *part)
{
	assert_true(i < skips.count);
	assert_string_equal(skips.owner[i], owner);
	if (strstr(skips.reason[i], part) == NULL)
		fail_msg("skip %zu of %s: \"%s\" lacks \"%s\"", i, owner, skips.reason[i], part);
}

static void test_three_members(void **state)
{
	apex_catalog_t cat;
	(void)state;
	read_ok(HEAD VERSION_2 "zz.zones IN PTR example.com.\n"
			       "group.zz.zones IN TXT \"sign-with-nsec3\"\n"
			       "m2.zones IN PTR example.net.\n"
			       "coo.m2.zones IN PTR new.catalog.\n"
			       "aa.zones IN PTR a.example.\n",
		&cat);
	assert_int_equal(skips.count, 0);
	assert_int_equal(cat.count, 3);
	/* canonical order: com. < example. < net. */
	assert_member(&cat.members[0], "example.com.", "zz", "sign-with-nsec3", NULL);
	assert_member(&cat.members[1], "a.example.", "aa", "", NULL);
	assert_member(&cat.members[2], "example.net.", "m2", "", "new.catalog.");
	apex_catalog_free(&cat);
	assert_null(cat.members);
	assert_int_equal(cat.count, 0);
}

static void test_no_version(void **state)
{
	apex_catalog_t cat;
	char err[512] = "";
	(void)state;
	assert_int_equal(read_text(HEAD "m1.zones IN PTR example.com.\n", &cat, err, sizeof(err)),
			 APEX_EINVAL);
	assert_null(cat.members);
	assert_int_equal(cat.count, 0);
	assert_string_equal(
		err,
		"no version.catalog.invalid. TXT \"2\": not a catalog zone of schema version 2");
	assert_int_equal(skips.count, 0);
}

static void test_version_1(void **state)
{
	apex_catalog_t cat;
	char err[512] = "";
	(void)state;
	assert_int_equal(read_text(HEAD "version IN TXT \"1\"\n"
					"m1.zones IN PTR example.com.\n",
				   &cat, err, sizeof(err)),
			 APEX_EINVAL);
	assert_null(cat.members);
	assert_int_equal(cat.count, 0);
	assert_non_null(strstr(err, "version.catalog.invalid."));
	/* "2" must be the one string: not "2" "2", not "20", not below version */
	assert_int_equal(read_text(HEAD "version IN TXT \"2\" \"2\"\n"
					"version IN TXT \"20\"\n"
					"x.version IN TXT \"2\"\n",
				   &cat, err, sizeof(err)),
			 APEX_EINVAL);
	/* err may be NULL */
	assert_int_equal(read_text(HEAD "version IN TXT \"1\"\n", &cat, NULL, 0), APEX_EINVAL);
}

static void test_version_1_and_2(void **state)
{
	apex_catalog_t cat;
	(void)state;
	read_ok(HEAD "version IN TXT \"1\"\n"
		     "version IN TXT \"2\"\n"
		     "m1.zones IN PTR example.com.\n",
		&cat);
	assert_int_equal(cat.count, 1);
	assert_member(&cat.members[0], "example.com.", "m1", "", NULL);
	apex_catalog_free(&cat);
}

static void test_two_ptrs(void **state)
{
	apex_catalog_t cat;
	(void)state;
	read_ok(HEAD VERSION_2 "m1.zones IN PTR example.com.\n"
			       "m1.zones IN PTR example.org.\n"
			       "m2.zones IN PTR example.net.\n",
		&cat);
	assert_int_equal(skips.count, 1);
	assert_skip(0, "m1.zones.catalog.invalid.", "2 PTR records");
	assert_int_equal(cat.count, 1);
	assert_member(&cat.members[0], "example.net.", "m2", "", NULL);
	apex_catalog_free(&cat);
}

/* Of two member nodes of one zone, the first in canonical order is kept
 * (whichever comes first in the file, whatever the case of its PTR). */
static void test_duplicate_zone(void **state)
{
	apex_catalog_t cat;
	(void)state;
	read_ok(HEAD VERSION_2 "b.zones IN PTR example.com.\n"
			       "group.b.zones IN TXT \"second\"\n"
			       "a.zones IN PTR EXAMPLE.com.\n"
			       "group.a.zones IN TXT \"first\"\n"
			       "c.zones IN PTR example.com.\n"
			       "d.zones IN PTR example.org.\n",
		&cat);
	assert_int_equal(skips.count, 2);
	assert_skip(0, "b.zones.catalog.invalid.",
		    "member zone example.com. already at member node a.zones.catalog.invalid.");
	assert_skip(1, "c.zones.catalog.invalid.",
		    "member zone example.com. already at member node a.zones.catalog.invalid.");
	assert_int_equal(cat.count, 2);
	assert_member(&cat.members[0], "example.com.", "a", "first", NULL);
	assert_member(&cat.members[1], "example.org.", "d", "", NULL);
	apex_catalog_free(&cat);
}

static void test_member_is_catalog(void **state)
{
	apex_catalog_t cat;
	(void)state;
	read_ok(HEAD VERSION_2 "m1.zones IN PTR catalog.invalid.\n"
			       "m2.zones IN PTR sub.CATALOG.invalid.\n"
			       "m3.zones IN PTR .\n"
			       "m4.zones IN PTR invalid.\n",
		&cat);
	assert_int_equal(skips.count, 3);
	assert_skip(0, "m1.zones.catalog.invalid.",
		    "member zone catalog.invalid. is the catalog zone or below it");
	assert_skip(1, "m2.zones.catalog.invalid.",
		    "member zone sub.catalog.invalid. is the catalog zone or below it");
	assert_skip(2, "m3.zones.catalog.invalid.", "member zone is the root");
	/* the catalog's parent is not the catalog */
	assert_int_equal(cat.count, 1);
	assert_member(&cat.members[0], "invalid.", "m4", "", NULL);
	apex_catalog_free(&cat);
}

/* A group property that cannot be read skips its member; the others stay. */
static void group_skipped(const char *group_records, const char *reason)
{
	apex_catalog_t cat;
	char text[2048];
	snprintf(text, sizeof(text),
		 HEAD VERSION_2 "m1.zones IN PTR example.com.\n%s"
				"m2.zones IN PTR example.net.\n"
				"group.m2.zones IN TXT \"ok\"\n",
		 group_records);
	read_ok(text, &cat);
	assert_int_equal(skips.count, 1);
	assert_skip(0, "m1.zones.catalog.invalid.", reason);
	assert_int_equal(cat.count, 1);
	assert_member(&cat.members[0], "example.net.", "m2", "ok", NULL);
	apex_catalog_free(&cat);
}

static void test_group_whitespace(void **state)
{
	(void)state;
	group_skipped("group.m1.zones IN TXT \"a b\"\n", "group property with whitespace");
	group_skipped("group.m1.zones IN TXT \"a\\009b\"\n", "group property with whitespace");
	group_skipped("group.m1.zones IN TXT \"a\\013\"\n", "group property with whitespace");
	group_skipped("group.m1.zones IN TXT \"\\010a\"\n", "group property with whitespace");
	group_skipped("group.m1.zones IN TXT \"a\\000b\"\n", "group property with a NUL byte");
}

static void test_group_two_records(void **state)
{
	(void)state;
	group_skipped("group.m1.zones IN TXT \"a\"\n"
		      "group.m1.zones IN TXT \"b\"\n",
		      "group property of 2 TXT records, not one");
}

static void test_group_two_strings(void **state)
{
	(void)state;
	group_skipped("group.m1.zones IN TXT \"a\" \"b\"\n",
		      "group property TXT not of one character-string");
}

static void test_group_empty(void **state)
{
	(void)state;
	group_skipped("group.m1.zones IN TXT \"\"\n", "group property empty");
}

/* 255 octets, the most a string holds, with every printable character. */
static void test_group_longest(void **state)
{
	apex_catalog_t cat;
	char value[256], text[1024];
	(void)state;
	for (size_t i = 0; i < 255; i++) {
		char c = (char)('!' + i % 94);
		value[i] = c == '"' || c == '\\' ? 'Q' : c;
	}
	value[255] = '\0';
	snprintf(text, sizeof(text),
		 HEAD VERSION_2 "m1.zones IN PTR example.com.\n"
				"group.m1.zones IN TXT \"%s\"\n",
		 value);
	read_ok(text, &cat);
	assert_int_equal(skips.count, 0);
	assert_int_equal(cat.count, 1);
	assert_member(&cat.members[0], "example.com.", "m1", value, NULL);
	apex_catalog_free(&cat);
}

static void test_coo_two_ptrs(void **state)
{
	apex_catalog_t cat;
	(void)state;
	read_ok(HEAD VERSION_2 "m1.zones IN PTR example.com.\n"
			       "coo.m1.zones IN PTR one.catalog.\n"
			       "coo.m1.zones IN PTR two.catalog.\n",
		&cat);
	assert_int_equal(skips.count, 0);
	assert_int_equal(cat.count, 1);
	assert_member(&cat.members[0], "example.com.", "m1", "", NULL);
	assert_null(cat.members[0].coo);
	apex_catalog_free(&cat);
}

/* Names lower-cased byte for byte (the member zone, the node label, the
 * coo), the group's value kept as it is. */
static void test_uppercase(void **state)
{
	apex_catalog_t cat;
	(void)state;
	read_ok(HEAD VERSION_2 "Mixed-ID.ZONES IN PTR EXAMPLE.Com.\n"
			       "GROUP.Mixed-ID.zones IN TXT \"Case-Kept\"\n"
			       "Coo.mixed-id.zones IN PTR NEW.Catalog.\n",
		&cat);
	assert_int_equal(skips.count, 0);
	assert_int_equal(cat.count, 1);
	const apex_catalog_member_t *m = &cat.members[0];
	assert_memory_equal(m->zone, "\007example\003com\000", 13);
	assert_memory_equal(m->id, "\010mixed-id", 9);
	assert_string_equal(m->group, "Case-Kept");
	assert_non_null(m->coo);
	assert_memory_equal(m->coo, "\003new\007catalog\000", 13);
	apex_catalog_free(&cat);
}

/* A member node label of 63 octets, the longest. */
static void test_longest_label(void **state)
{
	apex_catalog_t cat;
	char label[64], text[1024];
	(void)state;
	memset(label, 'L', 63);
	label[63] = '\0';
	snprintf(text, sizeof(text),
		 HEAD VERSION_2 "%s.zones IN PTR example.com.\n"
				"group.%s.zones IN TXT \"g\"\n",
		 label, label);
	read_ok(text, &cat);
	assert_int_equal(cat.count, 1);
	memset(label, 'l', 63);
	assert_member(&cat.members[0], "example.com.", label, "g", NULL);
	apex_catalog_free(&cat);
}

/* What RFC 9432 does not make a member or a property is ignored. */
static void test_ignored(void **state)
{
	apex_catalog_t cat;
	(void)state;
	read_ok(HEAD VERSION_2 "m1.zones IN PTR example.com.\n"
			       "m1.zones IN TXT \"other type at a member node\"\n"
			       "m1.zones IN A 192.0.2.1\n"
			       "serial.m1.zones IN TYPE65534 \\# 4 00000001\n"
			       "unknown.m1.zones IN TXT \"a b\"\n"
			       "a.b.group.m1.zones IN TXT \"deeper\"\n"
			       "private-extension.m1.zones IN TXT \"x y\"\n"
			       "x.private-extension.m1.zones IN PTR example.net.\n"
			       "nomember.zones IN TXT \"no PTR\"\n"
			       "group.nomember.zones IN TXT \"g\"\n"
			       "coo.nomember.zones IN PTR example.org.\n"
			       "deep.below.zones IN PTR example.org.\n"
			       "zones IN PTR example.org.\n"
			       "other IN PTR example.org.\n"
			       "x.other IN PTR example.org.\n"
			       "zonesx IN PTR example.org.\n"
			       "m.zonesx IN PTR example.org.\n"
			       "group.m1.zones IN A 192.0.2.2\n"
			       "coo.m1.zones IN TXT \"not a PTR\"\n",
		&cat);
	assert_int_equal(skips.count, 0);
	assert_int_equal(cat.count, 1);
	assert_member(&cat.members[0], "example.com.", "m1", "", NULL);
	apex_catalog_free(&cat);
}

static void test_find(void **state)
{
	apex_catalog_t cat;
	uint8_t name[APEX_NAME_MAX];
	(void)state;
	read_ok(HEAD VERSION_2 "m1.zones IN PTR example.com.\n"
			       "m2.zones IN PTR example.net.\n"
			       "m3.zones IN PTR a.example.\n"
			       "m4.zones IN PTR b.example.\n"
			       "m5.zones IN PTR example.org.\n",
		&cat);
	assert_int_equal(cat.count, 5);
	static const char *const hits[] = { "example.com.", "a.example.", "b.example.",
					    "example.net.", "example.org." };
	static const char *const ids[] = { "m1", "m3", "m4", "m2", "m5" };
	for (size_t i = 0; i < 5; i++) {
		assert_true(apex_name_from_str(hits[i], name) > 0);
		const apex_catalog_member_t *m = apex_catalog_find(&cat, name);
		assert_ptr_equal(m, &cat.members[i]);
		assert_member(m, hits[i], ids[i], "", NULL);
	}
	assert_true(apex_name_from_str("B.Example.", name) > 0);
	assert_ptr_equal(apex_catalog_find(&cat, name), &cat.members[2]);
	static const char *const misses[] = { ".",           "com.",        "example.",
					      "c.example.",  "aa.example.", "x.example.com.",
					      "example.zzz." };
	for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); i++) {
		assert_true(apex_name_from_str(misses[i], name) > 0);
		assert_null(apex_catalog_find(&cat, name));
	}
	apex_catalog_free(&cat);
	assert_true(apex_name_from_str("example.com.", name) > 0);
	assert_null(apex_catalog_find(&cat, name));
	assert_null(apex_catalog_find(NULL, name));
}

static void test_empty_catalog(void **state)
{
	apex_catalog_t cat;
	(void)state;
	read_ok(HEAD VERSION_2, &cat);
	assert_int_equal(skips.count, 0);
	assert_int_equal(cat.count, 0);
	assert_null(cat.members);
	apex_catalog_free(&cat);
	/* zones. with names below it but no member node */
	read_ok(HEAD VERSION_2 "x.y.zones IN TXT \"deep\"\n", &cat);
	assert_int_equal(cat.count, 0);
	apex_catalog_free(&cat);
}

/* With no skip callback, the same members. */
static void test_no_callback(void **state)
{
	apex_catalog_t cat;
	(void)state;
	apex_zone_t *zone = load_text(HEAD VERSION_2 "m1.zones IN PTR example.com.\n"
						     "m1.zones IN PTR example.org.\n"
						     "m2.zones IN PTR example.net.\n");
	assert_int_equal(apex_catalog_read(zone, &cat, NULL, NULL, NULL, 0), APEX_OK);
	assert_int_equal(cat.count, 1);
	assert_member(&cat.members[0], "example.net.", "m2", "", NULL);
	apex_catalog_free(&cat);
	apex_zone_unref(zone);
}

/* The member node label: 16 hex digits of the name's SHA-1, the same
 * whatever the case, another for another name. */
static void test_member_id(void **state)
{
	uint8_t a[APEX_NAME_MAX], b[APEX_NAME_MAX], c[APEX_NAME_MAX];
	char ida[APEX_CATALOG_ID_SIZE + 1], idb[APEX_CATALOG_ID_SIZE + 1],
		idc[APEX_CATALOG_ID_SIZE + 1];

	(void)state;
	assert_true(apex_name_from_str("example.com.", a) > 0);
	assert_true(apex_name_from_str("EXAMPLE.Com.", b) > 0);
	assert_true(apex_name_from_str("example.net.", c) > 0);
	apex_catalog_member_id(a, ida);
	apex_catalog_member_id(b, idb);
	apex_catalog_member_id(c, idc);
	/* the first 8 bytes of SHA-1 of 07 example 03 com 00 */
	assert_string_equal(ida, "c5e4b4da1e5a620d");
	assert_string_equal(idb, ida);
	assert_string_not_equal(idc, ida);
	assert_int_equal(strlen(idc), APEX_CATALOG_ID_SIZE);
}

/* A produced catalog: its body in the order of the members' names, and
 * the whole read back by apex_catalog_read() as written. */
static void test_produced_catalog(void **state)
{
	uint8_t zones[3][APEX_NAME_MAX];
	const char *names[3] = { "b.example.", "a.example.", "c.example." };
	apex_catalog_entry_t entries[3];
	char id[3][APEX_CATALOG_ID_SIZE + 1], want[1024], text[2048], *body = NULL;
	apex_catalog_t catalog;
	size_t size = 0;
	apex_zone_t *zone;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		assert_true(apex_name_from_str(names[i], zones[i]) > 0);
		apex_catalog_member_id(zones[i], id[i]);
		entries[i].zone = zones[i];
		entries[i].group = i == 0 ? "blue" : NULL;
	}
	assert_int_equal(apex_catalog_body(entries, 3, &body, &size), APEX_OK);
	snprintf(want, sizeof(want),
		 "@ 0 IN NS invalid.\n"
		 "version 0 IN TXT \"2\"\n"
		 "%s.zones 0 IN PTR a.example.\n"
		 "%s.zones 0 IN PTR b.example.\n"
		 "group.%s.zones 0 IN TXT \"blue\"\n"
		 "%s.zones 0 IN PTR c.example.\n",
		 id[1], id[0], id[0], id[2]);
	assert_string_equal(body, want);
	assert_int_equal(size, strlen(want));

	snprintf(text, sizeof(text), "$ORIGIN catalog.invalid.\n" APEX_CATALOG_SOA_FORMAT "%s", 7u,
		 body);
	free(body);
	zone = load_text(text);
	assert_int_equal(zone->serial, 7);
	assert_int_equal(apex_catalog_read(zone, &catalog, NULL, NULL, NULL, 0), APEX_OK);
	assert_int_equal(catalog.count, 3);
	for (size_t i = 0; i < 3; i++) {
		const apex_catalog_member_t *m = apex_catalog_find(&catalog, zones[i]);

		assert_non_null(m);
		assert_int_equal(m->id[0], APEX_CATALOG_ID_SIZE);
		assert_memory_equal(m->id + 1, id[i], APEX_CATALOG_ID_SIZE);
		assert_string_equal(m->group, i == 0 ? "blue" : "");
		assert_null(m->coo);
	}
	apex_catalog_free(&catalog);
	apex_zone_unref(zone);

	/* no member: a catalog all the same */
	assert_int_equal(apex_catalog_body(NULL, 0, &body, &size), APEX_OK);
	assert_string_equal(body, "@ 0 IN NS invalid.\nversion 0 IN TXT \"2\"\n");
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_members),
		cmocka_unit_test(test_no_version),
		cmocka_unit_test(test_version_1),
		cmocka_unit_test(test_version_1_and_2),
		cmocka_unit_test(test_two_ptrs),
		cmocka_unit_test(test_duplicate_zone),
		cmocka_unit_test(test_member_is_catalog),
		cmocka_unit_test(test_group_whitespace),
		cmocka_unit_test(test_group_two_records),
		cmocka_unit_test(test_group_two_strings),
		cmocka_unit_test(test_group_empty),
		cmocka_unit_test(test_group_longest),
		cmocka_unit_test(test_coo_two_ptrs),
		cmocka_unit_test(test_uppercase),
		cmocka_unit_test(test_longest_label),
		cmocka_unit_test(test_ignored),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_empty_catalog),
		cmocka_unit_test(test_no_callback),
		cmocka_unit_test(test_member_id),
		cmocka_unit_test(test_produced_catalog),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
