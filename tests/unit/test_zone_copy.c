/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/zone_copy: a secondary's copy written to FILE.xfr and renamed over
 * FILE only when every byte reached the disk.  A full disk (FILE.xfr a
 * link to /dev/full, whose writes fail with ENOSPC) or a file that cannot
 * be created gives the copy up: the commit returns the system's errno
 * (not a generic I/O error) with the file in its message, FILE keeps the
 * old copy whole and FILE.xfr is gone.  A version's copy that gives way
 * (to a transfer) is given up the same way, at its start or part way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "xfr/zone_copy.h"
#include "zone/load.h"

#define OLD_COPY "; the old copy\n"

typedef struct fixture {
	char dir[64];
	char path[96]; /* FILE */
	char tmp[128]; /* FILE.xfr */
	uint8_t owner[APEX_NAME_MAX];
	char err[512];
} fixture_t;

static int setup(void **state)
{
	fixture_t *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	strcpy(f->dir, "/tmp/apex-zone-copy-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/example.zone", f->dir);
	snprintf(f->tmp, sizeof(f->tmp), "%s.xfr", f->path);
	assert_true(apex_name_from_str("host.example.", f->owner) > 0);
	FILE *fp = fopen(f->path, "w");
	assert_non_null(fp);
	fputs(OLD_COPY, fp);
	assert_int_equal(fclose(fp), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture_t *f = *state;

	unlink(f->path);
	unlink(f->tmp);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The whole content of path ("" when it cannot be read), owned. */
static char *content(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *text = calloc(1, 1 << 20);
	assert_non_null(text);
	if (fp != NULL) {
		size_t n = fread(text, 1, (1 << 20) - 1, fp);
		text[n] = '\0';
		fclose(fp);
	}
	return text;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* count A records (the common types' writer), then a CAA record (ldns's). */
static int add_records(fixture_t *f, apex_zone_copy_t *c, size_t count)
{
	static const uint8_t caa[] = { 0, 5, 'i', 's', 's', 'u', 'e', 'c', 'a', '.' };
	uint8_t a[4] = { 192, 0, 2, 0 };
	apex_rr_t rr = { f->owner, APEX_TYPE_A, APEX_CLASS_IN, 300, 4, a };
	int rc = APEX_OK;

	for (size_t i = 0; i < count && rc == APEX_OK; i++) {
		a[3] = (uint8_t)i;
		rc = apex_zone_copy_add(c, &rr);
	}
	apex_rr_t caa_rr = { f->owner, 257, APEX_CLASS_IN, 300, sizeof(caa), caa };
	int caa_rc = apex_zone_copy_add(c, &caa_rr);
	return rc < 0 ? rc : caa_rc;
}

static void assert_old_copy_kept(fixture_t *f)
{
	char *text = content(f->path);
	assert_string_equal(text, OLD_COPY);
	free(text);
	assert_false(exists(f->tmp));
}

static void written_and_renamed(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_t c;

	assert_int_equal(apex_zone_copy_begin(&c, f->path, "test", f->err, sizeof(f->err)),
			 APEX_OK);
	assert_int_equal(add_records(f, &c, 3), APEX_OK);
	assert_int_equal(apex_zone_copy_commit(&c, f->err, sizeof(f->err)), APEX_OK);
	char *text = content(f->path);
	assert_non_null(strstr(text, "; test\n"));
	assert_non_null(strstr(text, "host.example.\t300\tIN\tA\t192.0.2.2\n"));
	assert_non_null(strstr(text, "CAA"));
	free(text);
	assert_false(exists(f->tmp));
}

/* The disk fills while records are added (more than stdio's buffer). */
static void full_disk_while_adding(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_t c;

	assert_int_equal(symlink("/dev/full", f->tmp), 0);
	assert_int_equal(apex_zone_copy_begin(&c, f->path, "test", f->err, sizeof(f->err)),
			 APEX_OK);
	assert_int_equal(add_records(f, &c, 5000), -ENOSPC);
	assert_false(exists(f->tmp)); /* given up at once, its space freed */
	assert_int_equal(add_records(f, &c, 1), -ENOSPC);
	assert_int_equal(apex_zone_copy_commit(&c, f->err, sizeof(f->err)), -ENOSPC);
	assert_non_null(strstr(f->err, f->tmp));
	assert_non_null(strstr(f->err, "No space left on device"));
	assert_old_copy_kept(f);
}

/* The disk fills with the last bytes, written by the commit's flush. */
static void full_disk_at_commit(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_t c;

	assert_int_equal(symlink("/dev/full", f->tmp), 0);
	assert_int_equal(apex_zone_copy_begin(&c, f->path, "test", f->err, sizeof(f->err)),
			 APEX_OK);
	assert_int_equal(add_records(f, &c, 2), APEX_OK);
	assert_int_equal(apex_zone_copy_commit(&c, f->err, sizeof(f->err)), -ENOSPC);
	assert_non_null(strstr(f->err, f->tmp));
	assert_non_null(strstr(f->err, "No space left on device"));
	assert_old_copy_kept(f);
}

/* FILE.xfr cannot be created: the cause is kept, told at the commit. */
static void cannot_create(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_t c;
	char path[160], tmp[170];

	snprintf(path, sizeof(path), "%s/missing/example.zone", f->dir);
	snprintf(tmp, sizeof(tmp), "%s.xfr", path);
	assert_int_equal(apex_zone_copy_begin(&c, path, "test", f->err, sizeof(f->err)), -ENOENT);
	assert_non_null(strstr(f->err, tmp));
	assert_non_null(strstr(f->err, apex_strerror(-ENOENT)));
	assert_int_equal(add_records(f, &c, 2), -ENOENT);
	f->err[0] = '\0';
	assert_int_equal(apex_zone_copy_commit(&c, f->err, sizeof(f->err)), -ENOENT);
	assert_non_null(strstr(f->err, tmp));
	assert_non_null(strstr(f->err, apex_strerror(-ENOENT)));
	assert_old_copy_kept(f);
}

/* A copy given up for another reason (a transfer that failed). */
static void abort_removes_the_partial_file(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_t c;

	assert_int_equal(apex_zone_copy_begin(&c, f->path, "test", f->err, sizeof(f->err)),
			 APEX_OK);
	assert_int_equal(add_records(f, &c, 3), APEX_OK);
	apex_zone_copy_abort(&c);
	assert_old_copy_kept(f);
	apex_zone_copy_abort(&c); /* a released copy: nothing */
}

/* A zone of names records (A records at h0 .. h(names - 2), the apex's
 * SOA and NS), loaded from a file written in f's directory; owned. */
static apex_zone_t *zone_of(fixture_t *f, int names)
{
	char file[128], err[512];
	uint8_t origin[APEX_NAME_MAX];
	apex_zone_t *zone = NULL;

	snprintf(file, sizeof(file), "%s/source.zone", f->dir);
	FILE *fp = fopen(file, "w");
	assert_non_null(fp);
	fprintf(fp, "$ORIGIN example.\n$TTL 60\n@ SOA ns1 hostmaster 1 2 3 4 5\n@ NS ns1\n");
	for (int i = 0; i < names - 2; i++)
		fprintf(fp, "h%d A 192.0.2.%d\n", i, i % 250);
	assert_int_equal(fclose(fp), 0);
	assert_true(apex_name_from_str("example.", origin) > 0);
	if (apex_zone_load(file, origin, &zone, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	unlink(file);
	return zone;
}

/* Says to give way at its yes-th question (0: never), counting them. */
typedef struct asked {
	int questions, yes;
} asked_t;

static bool give_way_at(void *ctx)
{
	asked_t *a = ctx;
	return ++a->questions == a->yes;
}

/* The copy of a version asks whether to give way before its first record
 * and every APEX_ZONE_COPY_GIVE_WAY_EVERY records: told to, it is given up
 * with APEX_ECANCELED there, FILE kept and FILE.xfr gone; never told to,
 * it is written whole. */
static void version_gives_way(void **state)
{
	fixture_t *f = *state;
	enum { RECORDS = 3 * APEX_ZONE_COPY_GIVE_WAY_EVERY };
	apex_zone_t *zone = zone_of(f, RECORDS);
	apex_zone_copy_t c;

	assert_int_equal(zone->record_count, RECORDS);
	for (int yes = 1; yes <= 3; yes++) {
		asked_t a = { 0, yes };
		assert_int_equal(apex_zone_copy_begin(&c, f->path, "test", f->err, sizeof(f->err)),
				 APEX_OK);
		assert_int_equal(apex_zone_copy_version_or_give_way(&c, zone, give_way_at, &a),
				 APEX_ECANCELED);
		assert_int_equal(a.questions, yes); /* none asked after it gave way */
		assert_int_equal(c.records, (uint64_t)(yes - 1) * APEX_ZONE_COPY_GIVE_WAY_EVERY);
		assert_int_equal(apex_zone_copy_commit(&c, f->err, sizeof(f->err)), APEX_ECANCELED);
		assert_old_copy_kept(f);
	}
	asked_t never = { 0, 0 };
	assert_int_equal(apex_zone_copy_begin(&c, f->path, "test", f->err, sizeof(f->err)),
			 APEX_OK);
	assert_int_equal(apex_zone_copy_version_or_give_way(&c, zone, give_way_at, &never),
			 APEX_OK);
	/* before the SOA, then at records 4096 and 8192 */
	assert_int_equal(never.questions, 3);
	assert_int_equal(c.records, RECORDS);
	assert_int_equal(apex_zone_copy_commit(&c, f->err, sizeof(f->err)), APEX_OK);
	char *text = content(f->path);
	assert_non_null(strstr(text, "h12285.example.\t60\tIN\tA\t192.0.2.35\n"));
	free(text);
	assert_false(exists(f->tmp));
	apex_zone_unref(zone);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(written_and_renamed, setup, teardown),
		cmocka_unit_test_setup_teardown(full_disk_while_adding, setup, teardown),
		cmocka_unit_test_setup_teardown(full_disk_at_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(cannot_create, setup, teardown),
		cmocka_unit_test_setup_teardown(abort_removes_the_partial_file, setup, teardown),
		cmocka_unit_test_setup_teardown(version_gives_way, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
