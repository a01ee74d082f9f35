/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A reload derived from the version served answers exactly as a whole
 * load of the same file.
 *
 * For every test zone (unsigned, NSEC, NSEC3 with opt-out, .fj and .sl),
 * the zone file is edited at random by the generator of the IXFR
 * equivalence test (equivalence.h: records and whole names removed,
 * records added of every kind that changes what the build derives, TTLs
 * and RDATA changed, delegations with glue registered and deleted, NSEC
 * and NSEC3 records) and written out whole, as an operator's edited file.
 * The reload's way (the file compared with the version served,
 * xfr/file_diff.h, and the change applied as an IXFR's,
 * xfr/ixfr_apply.h) and a whole load of the file must both build or both
 * refuse; when they build, the same records, names and answers, byte for
 * byte, over every name the edit touched and a sample of the others.
 *
 * Also: a file written back unchanged is found the same (no version to
 * build), a serial bumped alone is a change of the SOA only, and a file
 * that does not parse is refused with FILE:LINE.
 *
 * APEX_TEST_SEED sets the generator's seed; APEX_TEST_ROUNDS scales the
 * edits per zone.
 */
#include <unistd.h>

#include "util/log.h"
#include "xfr/file_diff.h"
#include "xfr/ixfr_apply.h"
#include "xfr/zone_copy.h"
#include "zone/load.h"
#include "zone/load_tuning.h"

#include "equivalence.h"

static char dir[512];

static void make_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "%s/apex-reload-eq-XXXXXX",
			 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
		assert_non_null(mkdtemp(dir));
	}
}

static void add_rr(apex_zone_copy_t *copy, const record_t *r)
{
	apex_rr_t rr = { r->owner, r->type, APEX_CLASS_IN, r->ttl, r->rdlength, r->rdata };

	assert_int_equal(apex_zone_copy_add(copy, &rr), APEX_OK);
}

/* The zone file of old's records `all` edited by c, with the next serial,
 * written to path. */
static void write_edited(const apex_zone_t *old, const records_t *all, const change_t *c,
			 const char *path)
{
	apex_zone_copy_t copy;
	record_t soa;
	char err[512];

	next_soa(old, &soa);
	assert_int_equal(apex_zone_copy_begin(&copy, path, "edited", err, sizeof(err)), APEX_OK);
	add_rr(&copy, &soa);
	for (size_t i = 0; i < all->count; i++) {
		const record_t *r = &all->items[i];

		if (r->type != APEX_TYPE_SOA && !listed(&c->removed, r))
			add_rr(&copy, r);
	}
	for (size_t i = 0; i < c->added.count; i++)
		add_rr(&copy, &c->added.items[i]);
	if (apex_zone_copy_commit(&copy, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
}

/* The version a reload of path makes from old (NULL: refused, why in
 * err), as apexd's reload does it; *in_place whether derived in place. */
static apex_zone_t *reloaded(apex_zone_t *old, const char *path, bool *in_place, char *err,
			     size_t err_size)
{
	apex_changes_t set;
	apex_file_diff_result_t result;
	apex_zone_t *zone = NULL;

	*in_place = false;
	apex_changes_init(&set);
	int rc = apex_file_diff(old, path, &set, &result, NULL, err, err_size);
	if (rc == APEX_OK) {
		/* the generator always changes the file, SOA included */
		assert_int_equal(result, APEX_FILE_DIFF_CHANGED);
		rc = apex_ixfr_version(old, &set, 1, path, &zone, in_place, err, err_size);
	}
	apex_changes_free(&set);
	if (rc == APEX_OK && apex_precompute(zone) != APEX_OK) {
		snprintf(err, err_size, "precompute failed");
		apex_zone_unref(zone);
		return NULL;
	}
	return rc == APEX_OK ? zone : NULL;
}

/* The version a whole load of path makes (NULL: refused, why in err). */
static apex_zone_t *whole(const apex_zone_t *old, const char *path, char *err, size_t err_size)
{
	apex_zone_t *zone = NULL;

	if (apex_zone_load(path, old->origin, &zone, err, err_size) != APEX_OK)
		return NULL;
	assert_int_equal(apex_precompute(zone), APEX_OK);
	return zone;
}

static const struct {
	const char *file, *origin;
	unsigned rounds; /* edits per zone (scaled by APEX_TEST_ROUNDS) */
} zones[] = {
	{ "example.zone", "example.", 30 },
	{ "example.nsec.zone", "example.", 30 },
	{ "example.nsec3.zone", "example.", 30 },
	{ "fj.zone", "fj.", 6 },
	{ "sl.zone", "sl.", 6 },
};

static unsigned rounds_scale(void)
{
	const char *v = getenv("APEX_TEST_ROUNDS");
	return v != NULL && atoi(v) > 0 ? (unsigned)atoi(v) : 1;
}

/* One edit of old's file both ways; returns whether it was reloaded. */
static bool one_edit(apex_zone_t *old, const records_t *all, unsigned round, const char *what,
		     tally_t *t, bool *in_place)
{
	change_t c = { 0 };
	char path[600], err_r[512] = "", err_w[512] = "";

	snprintf(path, sizeof(path), "%s/edited.zone", dir);
	if (round % 3 == 1)
		random_updates(old, all, &c);
	else if (round % 3 == 2)
		random_registrations(old, all, &c);
	else
		random_change(old, all, &c);
	write_edited(old, all, &c, path);
	apex_zone_t *r = reloaded(old, path, in_place, err_r, sizeof(err_r));
	apex_zone_t *w = whole(old, path, err_w, sizeof(err_w));
	if ((r == NULL) != (w == NULL))
		fail_msg("%s: reload %s, whole load %s (APEX_TEST_SEED=%llu)", what,
			 r ? "built" : err_r, w ? "built" : err_w, (unsigned long long)seed_used);
	if (r != NULL) {
		assert_same_records(r, w, what);
		assert_same_structure(r, w, what);
		compare_answers(r, w, &c, what, t);
	}
	apex_zone_unref(r);
	apex_zone_unref(w);
	change_free(&c);
	unlink(path);
	return r != NULL;
}

static void zone_rounds(size_t index, tally_t *t)
{
	apex_zone_t *old = load_file(zones[index].file, zones[index].origin);
	records_t all = { 0 };
	unsigned rounds = zones[index].rounds * rounds_scale();
	size_t applied = 0, in_place = 0;

	assert_int_equal(apex_precompute(old), APEX_OK);
	zone_list(old, &all);
	for (unsigned round = 0; round < rounds; round++) {
		char what[128];
		bool derived_in_place;

		snprintf(what, sizeof(what), "%s, edit %u", zones[index].file, round);
		if (one_edit(old, &all, round, what, t, &derived_in_place)) {
			applied++;
			in_place += derived_in_place;
		}
	}
	/* most edits must reload, and most of those in place, or the
	 * comparisons do not test the derivation */
	if (applied * 4 < rounds * 3)
		fail_msg("%s: only %zu of %u edits reloaded", zones[index].file, applied, rounds);
	if (in_place * 2 < applied)
		fail_msg("%s: only %zu of %zu reloads derived in place", zones[index].file,
			 in_place, applied);
	t->sets_applied += applied;
	t->in_place += in_place;
	free(all.items);
	apex_zone_unref(old);
}

static void start_generator(void)
{
	const char *seed = getenv("APEX_TEST_SEED");

	seed_used = seed != NULL ? strtoull(seed, NULL, 10) : 0x5eed1234abcdULL;
	rng_state = seed_used != 0 ? seed_used : 1;
	apex_log_set_level(APEX_LOG_ERROR);
	make_dir();
}

static void reloads_answer_as_whole_loads(void **state)
{
	tally_t t = { 0 };

	(void)state;
	start_generator();
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
		zone_rounds(i, &t);
	printf("# %zu edits reloaded (%zu in place), %zu queries compared\n", t.sets_applied,
	       t.in_place, t.queries);
}

/* A file written back from the version: found the same, nothing to build. */
static void unchanged_file_is_same(void **state)
{
	apex_zone_t *old = load_file("example.nsec3.zone", "example.");
	apex_zone_copy_t copy;
	apex_changes_t set;
	apex_file_diff_result_t result;
	char path[600], err[512];

	(void)state;
	make_dir();
	snprintf(path, sizeof(path), "%s/same.zone", dir);
	assert_int_equal(apex_zone_copy_begin(&copy, path, "same", err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_zone_copy_version(&copy, old), APEX_OK);
	assert_int_equal(apex_zone_copy_commit(&copy, err, sizeof(err)), APEX_OK);
	apex_changes_init(&set);
	assert_int_equal(apex_file_diff(old, path, &set, &result, NULL, err, sizeof(err)), APEX_OK);
	assert_int_equal(result, APEX_FILE_DIFF_SAME);
	assert_int_equal(set.removed + set.added, 0);
	apex_changes_free(&set);

	/* the serial alone bumped: a change of the SOA only */
	records_t all = { 0 };
	change_t none = { 0 };
	zone_list(old, &all);
	write_edited(old, &all, &none, path);
	apex_changes_init(&set);
	apex_file_digest_t compared, read;
	assert_int_equal(apex_file_diff(old, path, &set, &result, &compared, err, sizeof(err)),
			 APEX_OK);
	assert_int_equal(result, APEX_FILE_DIFF_CHANGED);
	assert_int_equal(set.removed + set.added, 0);
	/* the digest of the file compared, for the version derived to keep */
	assert_int_equal(apex_file_digest_path(path, &read, err, sizeof(err)), APEX_OK);
	assert_true(apex_file_digest_equal(&compared, &read));
	assert_int_equal(set.serial_from, old->serial);
	assert_int_equal(set.serial_to, old->serial + 1);
	apex_changes_free(&set);
	free(all.items);
	unlink(path);
	apex_zone_unref(old);
}

/* A file that does not parse: refused with its FILE:LINE, as a load. */
static void bad_file_says_where(void **state)
{
	apex_zone_t *old = load_file("example.zone", "example.");
	apex_changes_t set;
	apex_file_diff_result_t result;
	char path[600], err[512], expect[640];
	FILE *f;

	(void)state;
	make_dir();
	snprintf(path, sizeof(path), "%s/bad.zone", dir);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "$ORIGIN example.\n$TTL 3600\n"
		   "@ SOA ns1 hostmaster 2 7200 3600 1209600 3600\n"
		   "@ NS ns1\nns1 A 192.0.2.1\n"
		   "www A 192.0.2.300\n");
	fclose(f);
	apex_changes_init(&set);
	assert_int_equal(apex_file_diff(old, path, &set, &result, NULL, err, sizeof(err)),
			 APEX_ELOAD);
	snprintf(expect, sizeof(expect), "%s:6:", path);
	if (strncmp(err, expect, strlen(expect)) != 0)
		fail_msg("expected %s..., got %s", expect, err);
	apex_changes_free(&set);
	unlink(path);
	apex_zone_unref(old);
}

/* Write text to dir/name; the path to path. */
static void write_text(const char *name, const char *text, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/*
 * $TTL 0 (RFC 2308 section 4): a reload reads the file as a whole load
 * does.  The version served was loaded from a file that writes every TTL;
 * the edited file gives the same TTLs by $TTL (0, then 60, then 0 again)
 * with the serial bumped, on one thread and in chunks: the change is of
 * the SOA alone, for records of the fast parser and of ldns alike, and
 * the version derived holds what a whole load of the file holds.
 */
static void ttl_zero_reloads_as_loaded(void **state)
{
	static const char written[] = "$ORIGIN example.\n"
				      "@ 0 SOA ns1 host 1 3600 600 86400 0\n"
				      "@ 0 NS ns1\n"
				      "ns1 0 A 192.0.2.1\n"
				      "ns1 0 AAAA 2001:db8::1\n"
				      "txt 0 TXT \"x\"\n"
				      "naptr 0 NAPTR 100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp\n"
				      "caa 0 CAA 0 issue \"ca.example\"\n"
				      "sixty 60 TXT \"sixty\"\n"
				      "sixty 60 A 192.0.2.4\n"
				      "kept 300 TXT \"explicit\"\n"
				      "zero 0 TXT \"zero\"\n"
				      "zero 0 MX 10 host\n";
	static const char by_default[] = "$ORIGIN example.\n"
					 "$TTL 0\n"
					 "@ SOA ns1 host 2 3600 600 86400 0\n"
					 "@ NS ns1\n"
					 "ns1 A 192.0.2.1\n"
					 "    AAAA 2001:db8::1\n"
					 "txt TXT \"x\"\n"
					 "naptr NAPTR 100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp\n"
					 "caa CAA 0 issue \"ca.example\"\n"
					 "$TTL 60\n"
					 "sixty TXT \"sixty\"\n"
					 "sixty A 192.0.2.4\n"
					 "kept 300 TXT \"explicit\"\n"
					 "$TTL 0\n"
					 "zero TXT \"zero\"\n"
					 "zero MX 10 host\n";
	char old_path[600], path[600], err[512];
	uint8_t origin[APEX_NAME_MAX];
	apex_zone_t *old = NULL;

	(void)state;
	make_dir();
	assert_true(apex_name_from_str("example.", origin) > 0);
	write_text("written.zone", written, old_path, sizeof(old_path));
	if (apex_zone_load(old_path, origin, &old, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	assert_int_equal(old->soa->ttl, 0);
	write_text("by_default.zone", by_default, path, sizeof(path));
	for (int chunked = 0; chunked <= 1; chunked++) {
		apex_changes_t set;
		apex_file_diff_result_t result;
		apex_zone_t *derived = NULL;
		bool in_place;

		atomic_store(&apex_load_threads, chunked ? 4u : 1u);
		atomic_store(&apex_load_chunk_min, chunked ? (size_t)64 : (size_t)8 << 20);
		apex_changes_init(&set);
		int rc = apex_file_diff(old, path, &set, &result, NULL, err, sizeof(err));
		if (rc != APEX_OK)
			fail_msg("%s", err);
		assert_int_equal(result, APEX_FILE_DIFF_CHANGED);
		if (set.removed + set.added != 0)
			fail_msg("%s: %zu records removed and %zu added, not the SOA alone",
				 chunked ? "in chunks" : "one thread", set.removed, set.added);
		assert_int_equal(set.serial_to, 2);
		rc = apex_ixfr_version(old, &set, 1, path, &derived, &in_place, err, sizeof(err));
		apex_changes_free(&set);
		if (rc != APEX_OK)
			fail_msg("%s", err);
		assert_int_equal(apex_precompute(derived), APEX_OK);
		apex_zone_t *w = whole(old, path, err, sizeof(err));
		atomic_store(&apex_load_threads, 0u);
		atomic_store(&apex_load_chunk_min, (size_t)8 << 20);
		if (w == NULL)
			fail_msg("%s", err);
		assert_int_equal(derived->soa->ttl, 0);
		assert_int_equal(w->soa->ttl, 0);
		assert_same_records(derived, w, "$TTL 0 reload");
		apex_zone_unref(derived);
		apex_zone_unref(w);
	}
	unlink(path);
	unlink(old_path);
	apex_zone_unref(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reloads_answer_as_whole_loads),
		cmocka_unit_test(unchanged_file_is_same),
		cmocka_unit_test(bad_file_says_where),
		cmocka_unit_test(ttl_zero_reloads_as_loaded),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	if (dir[0] != '\0')
		rmdir(dir);
	return rc;
}
