/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/journal_replay: a journal ahead of the version loaded from a file
 * gives the change sets from the loaded serial to its newest version,
 * which applied as an IXFR's are give exactly that version's records;
 * nothing when the journal ends at the loaded serial or does not reach
 * it; for a primary's file only when the journal starts at its serial; a
 * torn last entry is cut when the journal is opened and the sets before
 * it are replayed; an entry damaged after the open is refused whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "xfr/diff.h"
#include "xfr/ixfr_apply.h"
#include "xfr/journal_replay.h"
#include "zone/load.h"
#include "zone_records.h"

#define VERSIONS 4

typedef struct fixture {
	char dir[64];
	char path[96];
	uint8_t origin[APEX_NAME_MAX];
	apex_zone_t *v[VERSIONS + 1]; /* v[1..4]: serials 1 to 4 */
	char err[512];
} fixture_t;

/* The zone at serial: each version adds, removes and changes records. */
static void write_version(const char *path, uint32_t serial)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f,
		"$ORIGIN replay.test.\n$TTL 300\n"
		"@ SOA ns1 hostmaster %u 3600 600 86400 60\n"
		"@ NS ns1\nns1 A 192.0.2.1\n"
		"www TXT \"serial %u\"\n",
		serial, serial);
	for (uint32_t i = serial; i < serial + 3; i++)
		fprintf(f, "r%u A 198.51.100.%u\n", i, i);
	fprintf(f, "sub NS ns.sub\nns.sub A 192.0.2.%u\n", 50 + serial);
	if (serial % 2 == 0)
		fprintf(f, "even MX 10 mx%u\n", serial);
	fclose(f);
}

static int setup(void **state)
{
	fixture_t *f = calloc(1, sizeof(*f));
	char zone_path[128];

	assert_non_null(f);
	strcpy(f->dir, "/tmp/apex-replay-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/replay.jnl", f->dir);
	snprintf(zone_path, sizeof(zone_path), "%s/replay.zone", f->dir);
	assert_true(apex_name_from_str("replay.test.", f->origin) > 0);
	for (uint32_t s = 1; s <= VERSIONS; s++) {
		write_version(zone_path, s);
		if (apex_zone_load(zone_path, f->origin, &f->v[s], f->err, sizeof(f->err)) !=
		    APEX_OK)
			fail_msg("%s", f->err);
		assert_int_equal(f->v[s]->serial, s);
	}
	unlink(zone_path);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture_t *f = *state;
	char tmp[128];

	for (int s = 1; s <= VERSIONS; s++)
		apex_zone_unref(f->v[s]);
	unlink(f->path);
	snprintf(tmp, sizeof(tmp), "%s.new", f->path);
	unlink(tmp);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void open_ok(fixture_t *f, apex_journal_t *j, apex_journal_recovery_t *rec)
{
	if (apex_journal_open(j, f->path, f->origin, 1 << 20, false, rec, f->err, sizeof(f->err)) !=
	    APEX_OK)
		fail_msg("open: %s", f->err);
}

/* The journal of versions from..to, one entry per serial, as a
 * secondary records an IXFR's sets. */
static void record(fixture_t *f, uint32_t from, uint32_t to)
{
	apex_journal_t j;

	open_ok(f, &j, NULL);
	for (uint32_t s = from; s < to; s++) {
		apex_changes_t set;

		apex_changes_init(&set);
		assert_int_equal(apex_xfr_diff(f->v[s], f->v[s + 1], &set), APEX_OK);
		if (apex_journal_append(&j, s, s + 1, set.data, set.size, f->err, sizeof(f->err)) !=
		    APEX_OK)
			fail_msg("append: %s", f->err);
		apex_changes_free(&set);
	}
	apex_journal_close(&j);
}

/* The sets j has for a version of serial under rule: how many. */
static size_t sets_for(fixture_t *f, apex_journal_t *j, uint32_t serial, apex_replay_rule_t rule)
{
	apex_changes_t *sets;
	size_t count;

	if (apex_journal_replay_sets(j, serial, rule, &sets, &count, f->err, sizeof(f->err)) !=
	    APEX_OK)
		fail_msg("sets: %s", f->err);
	apex_journal_sets_free(sets, count);
	return count;
}

/* The version loaded at serial with the journal's sets applied: the
 * records of version `want`. */
static void replays_to(fixture_t *f, apex_journal_t *j, uint32_t serial, apex_replay_rule_t rule,
		       uint32_t want)
{
	apex_changes_t *sets;
	apex_zone_t *got = NULL;
	size_t count;
	bool in_place = false;

	if (apex_journal_replay_sets(j, serial, rule, &sets, &count, f->err, sizeof(f->err)) !=
	    APEX_OK)
		fail_msg("sets: %s", f->err);
	assert_int_equal(count, want - serial);
	assert_int_equal(sets[0].serial_from, serial);
	assert_int_equal(sets[count - 1].serial_to, want);
	if (apex_ixfr_version(f->v[serial], sets, count, "test", &got, &in_place, f->err,
			      sizeof(f->err)) != APEX_OK)
		fail_msg("apply: %s", f->err);
	assert_same_version(got, f->v[want]);
	apex_zone_unref(got);
	apex_journal_sets_free(sets, count);
}

static void sets_from_the_loaded_serial(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;

	record(f, 1, 4);
	open_ok(f, &j, NULL);
	/* a copy at any serial of the chain */
	replays_to(f, &j, 1, APEX_REPLAY_SECONDARY, 4);
	replays_to(f, &j, 2, APEX_REPLAY_SECONDARY, 4);
	replays_to(f, &j, 3, APEX_REPLAY_SECONDARY, 4);
	/* a primary's file only where the journal begins */
	replays_to(f, &j, 1, APEX_REPLAY_PRIMARY, 4);
	assert_int_equal(sets_for(f, &j, 2, APEX_REPLAY_PRIMARY), 0);
	assert_int_equal(sets_for(f, &j, 3, APEX_REPLAY_PRIMARY), 0);
	/* up to date, newer, older than the journal, unrelated */
	for (int rule = APEX_REPLAY_SECONDARY; rule <= APEX_REPLAY_PRIMARY; rule++) {
		assert_int_equal(sets_for(f, &j, 4, rule), 0);
		assert_int_equal(sets_for(f, &j, 5, rule), 0);
		assert_int_equal(sets_for(f, &j, 0, rule), 0);
		assert_int_equal(sets_for(f, &j, 2000000000, rule), 0);
	}
	apex_journal_close(&j);
}

static void empty_journal_replays_nothing(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;

	open_ok(f, &j, NULL);
	assert_int_equal(sets_for(f, &j, 1, APEX_REPLAY_SECONDARY), 0);
	assert_int_equal(sets_for(f, &j, 1, APEX_REPLAY_PRIMARY), 0);
	apex_journal_close(&j);
}

/* A crash in the middle of the last append, at any byte of the entry:
 * the open cuts it, the sets before it are replayed. */
static void torn_last_entry_is_cut(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_journal_recovery_t rec;

	record(f, 1, 4);
	open_ok(f, &j, NULL);
	uint64_t last = j.entries[2].offset, whole = j.file_size;
	apex_journal_close(&j);
	for (uint64_t cut = last + 1; cut < whole; cut += (whole - last) / 7 + 1) {
		assert_int_equal(truncate(f->path, (off_t)cut), 0);
		open_ok(f, &j, &rec);
		assert_int_equal(rec.entries, 2);
		assert_int_equal(rec.dropped_bytes, cut - last);
		replays_to(f, &j, 1, APEX_REPLAY_SECONDARY, 3);
		apex_journal_close(&j);
		record(f, 3, 4); /* the append again, as the catch-up does */
	}
}

/* An entry whose bytes change after the open: nothing is replayed. */
static void damaged_entry_is_refused(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_changes_t *sets = NULL;
	size_t count = 1;
	uint8_t b;

	record(f, 1, 4);
	open_ok(f, &j, NULL);
	uint64_t at = j.entries[1].offset + APEX_JOURNAL_ENTRY_OVERHEAD;
	int fd = open(f->path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)at), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)at), 1);
	close(fd);
	assert_int_equal(apex_journal_replay_sets(&j, 1, APEX_REPLAY_SECONDARY, &sets, &count,
						  f->err, sizeof(f->err)),
			 APEX_EMALFORMED);
	assert_null(sets);
	assert_int_equal(count, 0);
	assert_non_null(strstr(f->err, "serial 2 to 3"));
	apex_journal_close(&j);
}

/* An entry whose serials are not those of the SOAs in its payload. */
static void set_with_other_serials_is_refused(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_changes_t set, *sets = NULL;
	size_t count = 0;

	apex_changes_init(&set);
	assert_int_equal(apex_xfr_diff(f->v[1], f->v[3], &set), APEX_OK);
	open_ok(f, &j, NULL);
	assert_int_equal(apex_journal_append(&j, 1, 2, set.data, set.size, f->err, sizeof(f->err)),
			 APEX_OK);
	assert_int_equal(apex_journal_replay_sets(&j, 1, APEX_REPLAY_SECONDARY, &sets, &count,
						  f->err, sizeof(f->err)),
			 APEX_EMALFORMED);
	assert_int_equal(count, 0);
	apex_changes_free(&set);
	apex_journal_close(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(sets_from_the_loaded_serial, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_journal_replays_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(torn_last_entry_is_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(damaged_entry_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(set_with_other_serials_is_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
