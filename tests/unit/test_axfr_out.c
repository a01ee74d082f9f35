/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/axfr_out: an outgoing AXFR carries every record of the version once,
 * the SOA first and last, in messages ldns decodes and apex's own reader
 * of incoming transfers (xfr/xfr_in) accepts as one whole zone, whatever
 * the message size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include <ldns/ldns.h>

#include "util/error.h"
#include "xfr/axfr_out.h"
#include "xfr/xfr_in.h"
#include "zone/load.h"
#include "zone_records.h"

static int on_record(void *ctx, const apex_rr_t *rr)
{
	set_add(ctx, record_text(rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength));
	return APEX_OK;
}

static int on_changes(void *ctx, apex_changes_t *set)
{
	(void)ctx;
	(void)set;
	fail_msg("an AXFR read as change sets");
	return APEX_EINVAL;
}

/* Transfer zone in messages of at most capacity bytes; returns how many. */
static unsigned transfer(const apex_zone_t *zone, size_t capacity)
{
	static uint8_t buf[65535];
	apex_axfr_out_t out;
	apex_xfr_in_t in;
	text_set_t got = { 0 }, want = { 0 };
	apex_xfr_in_handler_t handler = { &got, on_record, on_changes, NULL };
	size_t size;
	unsigned messages = 0;

	apex_axfr_out_init(&out, zone, 0x5151, zone->origin);
	assert_int_equal(
		apex_xfr_in_init(&in, zone->origin, 0x5151, APEX_TYPE_AXFR, 0, &handler, NULL),
		APEX_OK);
	for (;;) {
		assert_int_equal(apex_axfr_out_next(&out, buf, capacity, &size), APEX_OK);
		if (size == 0)
			break;
		assert_true(size <= capacity);
		messages++;
		ldns_pkt *pkt = NULL;
		assert_int_equal(ldns_wire2pkt(&pkt, buf, size), LDNS_STATUS_OK);
		assert_int_equal(ldns_pkt_qdcount(pkt), messages == 1 ? 1 : 0);
		assert_true(ldns_pkt_aa(pkt));
		ldns_pkt_free(pkt);
		if (apex_xfr_in_message(&in, buf, size) != APEX_OK)
			fail_msg("message %u refused: %s", messages, in.err);
	}
	assert_true(apex_xfr_in_done(&in));
	assert_int_equal(in.style, APEX_XFR_STYLE_AXFR);
	assert_int_equal(in.serial, zone->serial);
	assert_int_equal(in.out_of_zone, 0);
	apex_xfr_in_free(&in);
	/* once complete, nothing more */
	assert_int_equal(apex_axfr_out_next(&out, buf, capacity, &size), APEX_OK);
	assert_int_equal(size, 0);

	/* exactly the version's records: the SOA once (the closing copy is
	 * the stream's end, not a record), every other record once */
	zone_records(zone, &want);
	assert_int_equal(want.count, zone->record_count); /* every record of the file */
	assert_int_equal(got.count, want.count);
	set_sort(&got);
	for (size_t i = 0; i < want.count; i++)
		assert_string_equal(got.items[i], want.items[i]);
	set_free(&got);
	set_free(&want);
	return messages;
}

static void whole_zones(void **state)
{
	(void)state;
	static const char *const zones[][2] = {
		{ "example.zone", "example." },
		{ "example.nsec.zone", "example." },
		{ "example.nsec3.zone", "example." },
		{ "fj.zone", "fj." },
		{ "root.zone", "." },
	};
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		apex_zone_t *zone = load_file(zones[i][0], zones[i][1]);
		unsigned big = transfer(zone, 65535);
		unsigned small = transfer(zone, 2048);
		text_set_t held = { 0 };
		zone_records(zone, &held);
		print_message("%s: %zu records held (%zu in the file), %u messages of 64 KiB, "
			      "%u of 2 KiB\n",
			      zones[i][0], held.count, zone->record_count, big, small);
		set_free(&held);
		assert_true(small >= big);
		if (zone->record_count > 10000)
			assert_true(big > 1);
		apex_zone_unref(zone);
	}
}

/* zones/FILE with more lines after it, loaded from a file of its own. */
static apex_zone_t *load_with(const char *file, const char *origin, const char *more)
{
	char src[512], path[] = "/tmp/apex-test-zone-XXXXXX", err[512];
	uint8_t name[APEX_NAME_MAX];
	apex_zone_t *zone = NULL;
	int fd = mkstemp(path);
	FILE *in, *out;
	int c;

	assert_true(fd >= 0);
	snprintf(src, sizeof(src), "%s/zones/%s", APEX_SRCDIR, file);
	in = fopen(src, "r");
	out = fdopen(fd, "w");
	assert_non_null(in);
	assert_non_null(out);
	while ((c = fgetc(in)) != EOF)
		fputc(c, out);
	fputs(more, out);
	fclose(in);
	fclose(out);
	assert_true(apex_name_from_str(origin, name) > 0);
	if (apex_zone_load(path, name, &zone, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	unlink(path);
	return zone;
}

/* NSEC3 records that no answer uses are records of the zone all the
 * same: a second chain (another salt, as while a signer changes it) and
 * NSEC3 records in a zone without NSEC3PARAM go out with the rest. */
static void nsec3_records_outside_the_chain(void **state)
{
	(void)state;
	static const char *const cases[][3] = {
		{ "example.nsec3.zone",
		  "2vptu5timamqttgl4luu9kg21e0aor3s.example. 300 IN NSEC3 1 1 5 "
		  "abcd 41KO8FNLP46PDIRG9LA9A6VRFHDPSMT2 A RRSIG\n" },
		{ "example.zone", "2vptu5timamqttgl4luu9kg21e0aor3s.example. 300 IN NSEC3 1 0 0 - "
				  "41KO8FNLP46PDIRG9LA9A6VRFHDPSMT2 A\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		apex_zone_t *base = load_file(cases[i][0], "example.");
		apex_zone_t *zone = load_with(cases[i][0], "example.", cases[i][1]);
		text_set_t a = { 0 }, b = { 0 };

		zone_records(base, &a);
		zone_records(zone, &b);
		assert_int_equal(zone->record_count, base->record_count + 1);
		assert_int_equal(b.count, a.count + 1);
		transfer(zone, 65535); /* carries exactly b */
		set_free(&a);
		set_free(&b);
		apex_zone_unref(zone);
		apex_zone_unref(base);
	}
}

/* An RRset larger than the messages allowed: the transfer cannot go on. */
static void rrset_larger_than_a_message(void **state)
{
	(void)state;
	static uint8_t buf[65535];
	apex_zone_t *zone = load_file("root.zone", ".");
	apex_axfr_out_t out;
	size_t size;
	int rc = APEX_OK;

	apex_axfr_out_init(&out, zone, 1, zone->origin);
	for (int i = 0; i < 100000 && rc == APEX_OK; i++) {
		rc = apex_axfr_out_next(&out, buf, 200, &size);
		if (rc == APEX_OK && size == 0)
			break;
	}
	assert_int_equal(rc, APEX_ESPACE); /* the root's DNSKEY RRset is over 200 bytes */
	apex_zone_unref(zone);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_zones),
		cmocka_unit_test(nsec3_records_outside_the_chain),
		cmocka_unit_test(rrset_larger_than_a_message),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
