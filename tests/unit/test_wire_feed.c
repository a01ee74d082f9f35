/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * zone/wire_feed: a zone sent by AXFR (xfr/axfr_out) in many small
 * messages, read back (xfr/xfr_in) and handed to the builder on the
 * feed's thread in batches, holds exactly the records of the version it
 * came from; a record the builder refuses, many batches in, ends the feed
 * with the builder's reason and the record's number; a feed given up
 * half way leaves nothing behind; a zone that fits in one batch is added
 * without a thread, its errors told the same way.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/error.h"
#include "xfr/axfr_out.h"
#include "xfr/xfr_in.h"
#include "zone/load.h"
#include "zone/wire_feed.h"
#include "zone_records.h"

#define SMALL_MESSAGE 700 /* bytes: hundreds of messages for root.zone */

static int on_record(void *ctx, const apex_rr_t *rr)
{
	return apex_wire_feed_add(ctx, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
}

static int on_changes(void *ctx, apex_changes_t *set)
{
	(void)ctx;
	(void)set;
	return APEX_EINVAL;
}

/* The zone through AXFR, in messages of at most `message` bytes, into the
 * feed f: the number of messages. */
static size_t send_zone(const apex_zone_t *zone, apex_wire_feed_t *f, size_t message)
{
	static uint8_t buf[65535];
	apex_axfr_out_t out;
	apex_xfr_in_t in;
	size_t size, messages = 0;

	apex_xfr_in_handler_t handler = { f, on_record, on_changes, NULL };
	apex_axfr_out_init(&out, zone, 9, zone->origin);
	assert_int_equal(apex_xfr_in_init(&in, zone->origin, 9, APEX_TYPE_AXFR, 0, &handler, NULL),
			 APEX_OK);
	do {
		assert_int_equal(apex_axfr_out_next(&out, buf, message, &size), APEX_OK);
		if (size > 0 && apex_xfr_in_message(&in, buf, size) != APEX_OK)
			fail_msg("%s", in.err);
		messages += size > 0;
	} while (size > 0);
	assert_true(apex_xfr_in_done(&in));
	apex_xfr_in_free(&in);
	return messages;
}

static void same_records_as_the_file(void **state)
{
	(void)state;
	static const char *const zones[][2] = {
		{ "example.nsec3.zone", "example." },
		{ "fj.zone", "fj." },
		{ "root.zone", "." },
	};
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		apex_zone_t *zone = load_file(zones[i][0], zones[i][1]);
		char err[512] = "";
		apex_wire_feed_t *f;
		apex_zone_from_wire_t *w;
		apex_zone_t *copy = NULL;

		assert_int_equal(
			apex_wire_feed_begin(&f, zone->origin, "transfer", err, sizeof(err)),
			APEX_OK);
		size_t messages = send_zone(zone, f, SMALL_MESSAGE);
		assert_int_equal(apex_wire_feed_end(f, &w), APEX_OK);
		if (apex_zone_from_wire_finish(w, &copy) != APEX_OK)
			fail_msg("%s", err);
		if (i == 2) /* root.zone: far more than the batches in flight */
			assert_true(messages > 1000);
		text_set_t a = { 0 }, b = { 0 };
		zone_records(zone, &a);
		zone_records(copy, &b);
		set_sort(&a);
		set_sort(&b);
		assert_int_equal(a.count, b.count);
		for (size_t k = 0; k < a.count; k++)
			assert_string_equal(a.items[k], b.items[k]);
		set_free(&a);
		set_free(&b);
		apex_zone_unref(copy);
		apex_zone_unref(zone);
	}
}

/* Records of the zone "example." at most 3 MB in all: www-N A, a bad one
 * (an A of 3 bytes) as the bad-th when bad is not 0. */
static int feed_records(apex_wire_feed_t *f, int count, int bad)
{
	uint8_t owner[APEX_NAME_MAX], soa[64] = { 0 }, addr[4] = { 192, 0, 2, 1 };
	char text[64];
	int rc = APEX_OK;

	assert_true(apex_name_from_str("example.", owner) > 0);
	soa[0] = 0; /* mname and rname "." then the five numbers */
	rc = apex_wire_feed_add(f, owner, APEX_TYPE_SOA, 3600, soa, 22);
	for (int i = 1; i < count && rc == APEX_OK; i++) {
		snprintf(text, sizeof(text), "www-%d.example.", i);
		assert_true(apex_name_from_str(text, owner) > 0);
		rc = apex_wire_feed_add(f, owner, APEX_TYPE_A, 3600, addr, i == bad ? 3 : 4);
	}
	return rc;
}

static void refused_record_ends_the_feed(void **state)
{
	(void)state;
	char err[512] = "";
	apex_wire_feed_t *f;
	apex_zone_from_wire_t *w;
	uint8_t origin[APEX_NAME_MAX];

	assert_true(apex_name_from_str("example.", origin) > 0);
	assert_int_equal(apex_wire_feed_begin(&f, origin, "transfer", err, sizeof(err)), APEX_OK);
	/* 100000 records of about 30 bytes: a dozen batches, the 50000th bad */
	int rc = feed_records(f, 100000, 50000);
	int end = apex_wire_feed_end(f, &w);
	assert_int_equal(end, APEX_ELOAD);
	assert_true(rc == APEX_OK || rc == APEX_ELOAD);
	assert_null(w);
	if (strstr(err, "transfer:50001:") == NULL) /* the SOA is record 1 */
		fail_msg("the error does not name the record: %s", err);
}

static void given_up_half_way(void **state)
{
	(void)state;
	char err[512] = "";
	apex_wire_feed_t *f;
	uint8_t origin[APEX_NAME_MAX];

	assert_true(apex_name_from_str("example.", origin) > 0);
	/* given up before any record, and many batches in */
	assert_int_equal(apex_wire_feed_begin(&f, origin, "transfer", err, sizeof(err)), APEX_OK);
	apex_wire_feed_abort(f);
	assert_int_equal(apex_wire_feed_begin(&f, origin, "transfer", err, sizeof(err)), APEX_OK);
	assert_int_equal(feed_records(f, 60000, 0), APEX_OK);
	apex_wire_feed_abort(f);
}

/* The threads of this process. */
static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void small_zone_without_a_thread(void **state)
{
	(void)state;
	char err[512] = "";
	apex_wire_feed_t *f;
	apex_zone_from_wire_t *w;
	apex_zone_t *zone = NULL;
	uint8_t origin[APEX_NAME_MAX];

	assert_true(apex_name_from_str("example.", origin) > 0);
	int before = threads();
	assert_int_equal(apex_wire_feed_begin(&f, origin, "transfer", err, sizeof(err)), APEX_OK);
	assert_int_equal(feed_records(f, 200, 0), APEX_OK);
	assert_int_equal(threads(), before);
	assert_int_equal(apex_wire_feed_end(f, &w), APEX_OK);
	if (apex_zone_from_wire_finish(w, &zone) != APEX_OK)
		fail_msg("%s", err);
	assert_int_equal(zone->record_count, 200);
	apex_zone_unref(zone);

	/* a refused record: told at the end, with its number */
	assert_int_equal(apex_wire_feed_begin(&f, origin, "transfer", err, sizeof(err)), APEX_OK);
	assert_int_equal(feed_records(f, 200, 120), APEX_OK);
	assert_int_equal(apex_wire_feed_end(f, &w), APEX_ELOAD);
	assert_null(w);
	if (strstr(err, "transfer:121:") == NULL)
		fail_msg("the error does not name the record: %s", err);

	/* given up: nothing added, nothing left */
	assert_int_equal(apex_wire_feed_begin(&f, origin, "transfer", err, sizeof(err)), APEX_OK);
	assert_int_equal(feed_records(f, 200, 0), APEX_OK);
	apex_wire_feed_abort(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_records_as_the_file),
		cmocka_unit_test(refused_record_ends_the_feed),
		cmocka_unit_test(given_up_half_way),
		cmocka_unit_test(small_zone_without_a_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
