/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/zone_copy_batch: copies wait, their files untouched, until the
 * batch is full (settled by the adding thread), due, asked for by path or
 * freed; then each is renamed over its file and told.  A copy that failed
 * is told at once, its old file kept.  A copy dropped is never renamed.
 * Threads adding at once lose no copy and overfill no batch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "xfr/zone_copy_batch.h"

#define OLD_COPY "; the old copy\n"
#define FILES 200

typedef struct fixture {
	char dir[64];
	pthread_mutex_t lock;
	size_t told, failed;
	char last_name[64];
	int last_rc;
	char last_err[512];
} fixture_t;

static fixture_t *fx;

static void settled(void *arg, const char *name, const char *path, uint32_t serial, int rc,
		    const char *err)
{
	fixture_t *f = arg;

	(void)path;
	(void)serial;
	pthread_mutex_lock(&f->lock);
	f->told++;
	f->failed += rc != APEX_OK;
	snprintf(f->last_name, sizeof(f->last_name), "%s", name);
	f->last_rc = rc;
	snprintf(f->last_err, sizeof(f->last_err), "%s", err);
	pthread_mutex_unlock(&f->lock);
}

static void file_of(char *out, size_t size, int i)
{
	snprintf(out, size, "%s/z%03d.zone", fx->dir, i);
}

static int setup(void **state)
{
	fixture_t *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	strcpy(f->dir, "/tmp/apex-copy-batch-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	pthread_mutex_init(&f->lock, NULL);
	fx = f;
	for (int i = 0; i < FILES; i++) {
		char path[128];
		file_of(path, sizeof(path), i);
		FILE *fp = fopen(path, "w");
		assert_non_null(fp);
		fputs(OLD_COPY, fp);
		assert_int_equal(fclose(fp), 0);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture_t *f = *state;
	char path[160];

	for (int i = 0; i < FILES; i++) {
		file_of(path, sizeof(path), i);
		unlink(path);
		strcat(path, ".xfr");
		unlink(path);
	}
	rmdir(f->dir);
	pthread_mutex_destroy(&f->lock);
	free(f);
	return 0;
}

static char *content(const char *path)
{
	static __thread char text[4096];
	FILE *fp = fopen(path, "r");

	text[0] = '\0';
	if (fp != NULL) {
		size_t n = fread(text, 1, sizeof(text) - 1, fp);
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

/* Copy i written (one A record), not committed. */
static void write_copy(apex_zone_copy_t *c, int i)
{
	char path[128], err[512];
	uint8_t owner[APEX_NAME_MAX], a[4] = { 192, 0, 2, (uint8_t)i };

	file_of(path, sizeof(path), i);
	assert_true(apex_name_from_str("host.example.", owner) > 0);
	assert_int_equal(apex_zone_copy_begin(c, path, "new", err, sizeof(err)), APEX_OK);
	apex_rr_t rr = { owner, APEX_TYPE_A, APEX_CLASS_IN, 300, 4, a };
	assert_int_equal(apex_zone_copy_add(c, &rr), APEX_OK);
}

static void add(apex_zone_copy_batch_t *b, int i, uint64_t now)
{
	apex_zone_copy_t c;
	char name[32];

	write_copy(&c, i);
	snprintf(name, sizeof(name), "z%03d.", i);
	apex_zone_copy_batch_add(b, &c, name, 7, now);
}

/* Whether copy i is the new one, renamed, or still the old one. */
static bool is_new(int i)
{
	char path[160], want[64];

	file_of(path, sizeof(path), i);
	snprintf(want, sizeof(want), "A\t192.0.2.%d\n", i & 0xff);
	bool renamed = strstr(content(path), want) != NULL;
	strcat(path, ".xfr");
	return renamed && !exists(path);
}

static bool is_old(int i)
{
	char path[128];

	file_of(path, sizeof(path), i);
	return strcmp(content(path), OLD_COPY) == 0;
}

static void waits_until_asked(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_batch_t *b = apex_zone_copy_batch_new(3, 200, settled, f);
	char path[128];

	assert_non_null(b);
	assert_int_equal(apex_zone_copy_batch_due(b), 0);
	add(b, 0, 1000);
	add(b, 1, 1100);
	assert_int_equal(apex_zone_copy_batch_due(b), 1200); /* the oldest's time */
	assert_int_equal(f->told, 0);
	assert_true(is_old(0) && is_old(1));
	file_of(path, sizeof(path), 2);
	apex_zone_copy_batch_settle(b, path); /* none of that path waits */
	assert_int_equal(f->told, 0);
	file_of(path, sizeof(path), 1);
	apex_zone_copy_batch_settle(b, path); /* one does: all settled */
	assert_int_equal(f->told, 2);
	assert_int_equal(f->failed, 0);
	assert_true(is_new(0) && is_new(1));
	assert_int_equal(apex_zone_copy_batch_due(b), 0);

	add(b, 2, 2000);
	apex_zone_copy_batch_settle(b, NULL);
	assert_int_equal(f->told, 3);
	assert_string_equal(f->last_name, "z002.");
	assert_true(is_new(2));

	add(b, 3, 3000); /* the free settles it */
	apex_zone_copy_batch_free(b);
	assert_int_equal(f->told, 4);
	assert_true(is_new(3));
}

static void full_batch_settled_by_the_adder(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_batch_t *b = apex_zone_copy_batch_new(2, 60000, settled, f);

	assert_non_null(b);
	add(b, 0, 1);
	assert_int_equal(f->told, 0);
	add(b, 1, 2);
	assert_int_equal(f->told, 2);
	assert_true(is_new(0) && is_new(1));
	assert_int_equal(apex_zone_copy_batch_due(b), 0);
	apex_zone_copy_batch_free(b);
	assert_int_equal(f->told, 2);
}

/* A copy whose flush fails (FILE.xfr a link to /dev/full) is told at
 * once, its file kept; the others wait. */
static void failed_copy_told_at_once(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_batch_t *b = apex_zone_copy_batch_new(4, 60000, settled, f);
	char path[128], tmp[160];

	assert_non_null(b);
	add(b, 0, 1);
	file_of(path, sizeof(path), 1);
	snprintf(tmp, sizeof(tmp), "%s.xfr", path);
	assert_int_equal(symlink("/dev/full", tmp), 0);
	add(b, 1, 2);
	assert_int_equal(f->told, 1);
	assert_int_equal(f->last_rc, -ENOSPC);
	assert_string_equal(f->last_name, "z001.");
	assert_non_null(strstr(f->last_err, tmp));
	assert_true(is_old(1));
	assert_false(exists(tmp));
	assert_true(is_old(0)); /* still waiting */
	apex_zone_copy_batch_free(b);
	assert_int_equal(f->told, 2);
	assert_int_equal(f->failed, 1);
	assert_true(is_new(0));
}

/* A dropped copy (its zone gone, its files being removed) is not renamed
 * over its file, nor told, and its FILE.xfr is gone; the others still
 * wait and are settled. */
static void dropped_copy_never_renamed(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_batch_t *b = apex_zone_copy_batch_new(4, 60000, settled, f);
	char path[128], tmp[160];

	assert_non_null(b);
	add(b, 0, 1000);
	add(b, 1, 1001);
	add(b, 2, 1002);
	file_of(path, sizeof(path), 1);
	snprintf(tmp, sizeof(tmp), "%s.xfr", path);
	assert_true(exists(tmp));
	assert_int_equal(apex_zone_copy_batch_drop(b, path), 1);
	assert_false(exists(tmp));
	assert_int_equal(apex_zone_copy_batch_drop(b, path), 0);
	assert_int_equal(f->told, 0);
	assert_int_equal(apex_zone_copy_batch_due(b), 61000); /* the others wait */
	assert_int_equal(unlink(path), 0);                    /* the zone's files removed */
	apex_zone_copy_batch_settle(b, NULL);
	assert_int_equal(f->told, 2);
	assert_int_equal(f->failed, 0);
	assert_true(is_new(0) && is_new(2));
	assert_false(exists(path));
	assert_false(exists(tmp));

	/* the last one waiting dropped: nothing is due any more */
	add(b, 3, 2000);
	file_of(path, sizeof(path), 3);
	assert_int_equal(apex_zone_copy_batch_drop(b, path), 1);
	assert_int_equal(apex_zone_copy_batch_due(b), 0);
	assert_true(is_old(3));
	apex_zone_copy_batch_free(b);
	assert_int_equal(f->told, 2);
}

#define ADDERS 4

static void *adder_main(void *arg)
{
	apex_zone_copy_batch_t *b = arg;
	static atomic_int next;

	for (int i; (i = atomic_fetch_add(&next, 1)) < FILES;)
		add(b, i, (uint64_t)i);
	return NULL;
}

static void threads_adding_at_once(void **state)
{
	fixture_t *f = *state;
	apex_zone_copy_batch_t *b = apex_zone_copy_batch_new(8, 60000, settled, f);
	pthread_t threads[ADDERS];

	assert_non_null(b);
	for (int t = 0; t < ADDERS; t++)
		assert_int_equal(pthread_create(&threads[t], NULL, adder_main, b), 0);
	for (int t = 0; t < ADDERS; t++)
		pthread_join(threads[t], NULL);
	assert_true(f->told >= FILES - 8); /* only the last batch may wait */
	apex_zone_copy_batch_free(b);
	assert_int_equal(f->told, FILES);
	assert_int_equal(f->failed, 0);
	for (int i = 0; i < FILES; i++)
		assert_true(is_new(i));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(waits_until_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(full_batch_settled_by_the_adder, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_copy_told_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(threads_adding_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(dropped_copy_never_renamed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
