/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/journal_diff: the difference of two versions appended to a journal
 * is the entry apex_xfr_diff()'s set would be, whether it is written in
 * pieces (a version derived from the other; several pieces for a set of
 * more than APEX_XFR_DIFF_PIECE) or whole (a version built whole); past
 * the journal's bound it empties the journal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/name.h"
#include "util/error.h"
#include "xfr/changes.h"
#include "xfr/diff.h"
#include "xfr/ixfr_apply.h"
#include "xfr/journal_diff.h"
#include "zone/load.h"
#include "zone/zone.h"
#include "zone_records.h"

#define HEAD                                                                         \
	"$ORIGIN example.\n$TTL 3600\n@ NS ns1\nns1 A 192.0.2.1\nwww A 192.0.2.10\n" \
	"mail MX 10 www\nold TXT \"gone\"\n"

/* The zone at serial, with names delegations more than HEAD's records
 * (about 60 bytes of change set each), and old's TXT when serial is 1. */
static char *zone_text(uint32_t serial, size_t names)
{
	size_t size = 256 + sizeof(HEAD) + names * 64;
	char *text = malloc(size), *p = text;
	assert_non_null(text);
	p += sprintf(p, "%s@ SOA ns1 hostmaster %u 7200 3600 1209600 300\n", HEAD, serial);
	if (serial > 1)
		p += sprintf(p, "new TXT \"here\"\n");
	for (size_t i = 0; i < names; i++)
		p += sprintf(p, "d%zu NS ns.d%zu.example.net.\n", i, i);
	return text;
}

/* A journal in a file of its own, bounded by max bytes. */
static void journal_open(apex_journal_t *j, char *path, uint64_t max)
{
	uint8_t origin[APEX_NAME_MAX];
	char err[512];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_true(apex_name_from_str("example.", origin) > 0);
	if (apex_journal_open(j, path, origin, max, false, NULL, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
}

/* Append the difference from from to to: it is apex_xfr_diff()'s set. */
static void check_appended(const apex_zone_t *from, const apex_zone_t *to)
{
	char path[] = "/tmp/apex-journal-diff-XXXXXX", err[512];
	apex_journal_t j;
	apex_changes_t want;
	size_t removed = 0, added = 0;

	apex_changes_init(&want);
	assert_int_equal(apex_xfr_diff(from, to, &want), APEX_OK);
	journal_open(&j, path, 64u << 20);
	if (apex_journal_append_diff(&j, from, to, &removed, &added, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	assert_int_equal(j.count, 1);
	assert_int_equal(j.entries[0].serial_from, from->serial);
	assert_int_equal(j.entries[0].serial_to, to->serial);
	assert_int_equal(j.entries[0].size, want.size);
	assert_int_equal(removed, want.removed);
	assert_int_equal(added, want.added);
	uint8_t *got = malloc(want.size);
	assert_non_null(got);
	assert_int_equal(apex_journal_read(&j, 0, got, want.size), APEX_OK);
	assert_memory_equal(got, want.data, want.size);
	free(got);
	apex_journal_close(&j);
	unlink(path);
	apex_changes_free(&want);
}

static void difference_in_pieces_and_whole(void **state)
{
	(void)state;
	char *a = zone_text(1, 10), *b = zone_text(2, 12000);
	apex_zone_t *from = load_text(a, "example."), *to = load_text(b, "example.");
	apex_zone_t *derived = derive_in_place(from, to);
	apex_changes_t set;

	/* more than two pieces of change set */
	apex_changes_init(&set);
	assert_int_equal(apex_xfr_diff(from, derived, &set), APEX_OK);
	assert_true(set.size > 2 * APEX_XFR_DIFF_PIECE);
	apex_changes_free(&set);
	check_appended(from, derived); /* in pieces */
	check_appended(from, to);      /* whole */
	apex_zone_unref(derived);
	apex_zone_unref(from);
	apex_zone_unref(to);
	free(a);
	free(b);
}

/* Past the bound: APEX_ESPACE and the journal emptied, in pieces or whole. */
static void past_the_bound_empties(void **state)
{
	(void)state;
	char *a = zone_text(1, 10), *b = zone_text(2, 200), *c = zone_text(3, 201);
	apex_zone_t *v1 = load_text(a, "example."), *v2 = load_text(b, "example."),
		    *v3 = load_text(c, "example.");
	apex_zone_t *derived = derive_in_place(v1, v2);
	char path[] = "/tmp/apex-journal-diff-XXXXXX", err[512];
	apex_journal_t j;
	size_t removed, added;

	journal_open(&j, path, 4096);
	/* a small change first, that the large one then takes with it */
	if (apex_journal_append_diff(&j, v2, v3, &removed, &added, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	assert_int_equal(j.count, 1);
	assert_int_equal(apex_journal_clear(&j, err, sizeof(err)), APEX_OK);
	assert_int_equal(
		apex_journal_append_diff(&j, v1, derived, &removed, &added, err, sizeof(err)),
		APEX_ESPACE);
	assert_int_equal(j.count, 0);
	assert_int_equal(apex_journal_append_diff(&j, v1, v2, &removed, &added, err, sizeof(err)),
			 APEX_ESPACE);
	assert_int_equal(j.count, 0);
	apex_journal_close(&j);
	unlink(path);
	apex_zone_unref(derived);
	apex_zone_unref(v1);
	apex_zone_unref(v2);
	apex_zone_unref(v3);
	free(a);
	free(b);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(difference_in_pieces_and_whole),
		cmocka_unit_test(past_the_bound_empties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
