/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/record_text and xfr/zone_copy: every record of the bundled zones
 * (the root zone, fj. with NSEC3, sl., the feature zone unsigned, with
 * NSEC and NSEC3) written as a secondary writes its copy.  Each line the
 * fast writer makes is read back by ldns (as NSD and Knot DNS read zone
 * files) into exactly the record it came from, and the whole copy loads
 * into a version with exactly the records of the original.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "xfr/record_text.h"
#include "xfr/zone_copy.h"
#include "zone_records.h"

typedef struct counts {
	size_t records, fast;
} counts_t;

/* ldns's reading of a line into the record it was written from. */
static void assert_reads_back(const char *line, const apex_rr_t *rr)
{
	ldns_rr *parsed = NULL;
	ldns_status st = ldns_rr_new_frm_str(&parsed, line, 0, NULL, NULL);

	if (st != LDNS_STATUS_OK)
		fail_msg("ldns cannot read '%s': %s", line, ldns_get_errorstr_by_id(st));
	ldns_buffer *wire = ldns_buffer_new(65536);
	assert_int_equal(ldns_rr_rdata2buffer_wire(wire, parsed), LDNS_STATUS_OK);
	if (ldns_buffer_position(wire) != rr->rdlength ||
	    memcmp(ldns_buffer_begin(wire), rr->rdata, rr->rdlength) != 0)
		fail_msg("'%s' reads back into other RDATA", line);
	assert_int_equal(ldns_rr_get_type(parsed), rr->type);
	assert_int_equal(ldns_rr_ttl(parsed), rr->ttl);
	ldns_rdf *owner = ldns_dname_new_frm_data(apex_name_size(rr->owner), rr->owner);
	assert_int_equal(ldns_dname_compare(ldns_rr_owner(parsed), owner), 0);
	ldns_rdf_deep_free(owner);
	ldns_buffer_free(wire);
	ldns_rr_free(parsed);
}

static void copy_rrset(apex_zone_copy_t *c, const uint8_t *owner, uint16_t type,
		       const apex_rrset_t *rs, counts_t *n)
{
	static char line[APEX_RECORD_TEXT_MAX];
	const uint8_t *p = rs->rdata;

	for (uint16_t i = 0; i < rs->count; i++) {
		apex_rr_t rr = { owner, type, APEX_CLASS_IN, rs->ttl, apex_read_u16(p), p + 2 };
		size_t size = apex_record_text(&rr, line);

		p += 2 + rr.rdlength;
		n->records++;
		if (size > 0) {
			assert_int_equal(line[size - 1], '\n');
			line[size - 1] = '\0';
			assert_reads_back(line, &rr);
			n->fast++;
		}
		assert_int_equal(apex_zone_copy_add(c, &rr), APEX_OK);
	}
}

static void copy_node(apex_zone_copy_t *c, const apex_zone_t *zone, const apex_node_t *node,
		      counts_t *n)
{
	for (uint16_t i = 0; i < node->rrset_count; i++) {
		const apex_rrset_t *rs = &apex_node_rrsets(zone, node)[i];
		copy_rrset(c, node->name, rs->type, rs, n);
		if (rs->rrsig != NULL)
			copy_rrset(c, node->name, APEX_TYPE_RRSIG, rs->rrsig, n);
	}
}

static void round_trip(const char *file, const char *origin, size_t min_fast_percent)
{
	apex_zone_t *zone = load_file(file, origin), *back = NULL;
	char path[] = "/tmp/apex-test-record-text-XXXXXX", err[512];
	apex_zone_copy_t c;
	counts_t n = { 0, 0 };
	text_set_t want = { 0 }, got = { 0 };
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(apex_zone_copy_begin(&c, path, "test", err, sizeof(err)), APEX_OK);
	for (size_t i = 0; i < zone->node_count; i++)
		copy_node(&c, zone, apex_zone_node_at(zone, i), &n);
	for (size_t i = 0; i < zone->nsec3_owner_count; i++)
		copy_node(&c, zone, apex_zone_nsec3_owner_at(zone, i), &n);
	for (size_t i = 0; i < zone->stray_rrsig_count; i++)
		copy_rrset(&c, apex_zone_node(zone, zone->stray_rrsigs[i].node)->name,
			   APEX_TYPE_RRSIG, zone->stray_rrsigs[i].sigs, &n);
	assert_int_equal(apex_zone_copy_commit(&c, err, sizeof(err)), APEX_OK);
	if (apex_zone_load(path, zone->origin, &back, err, sizeof(err)) != APEX_OK)
		fail_msg("%s: the copy does not load: %s", file, err);
	zone_records(zone, &want);
	zone_records(back, &got);
	assert_int_equal(want.count, got.count);
	for (size_t i = 0; i < want.count; i++)
		assert_string_equal(want.items[i], got.items[i]);
	if (n.fast * 100 < n.records * min_fast_percent)
		fail_msg("%s: %zu of %zu records written by the fast path", file, n.fast,
			 n.records);
	set_free(&want);
	set_free(&got);
	unlink(path);
	apex_zone_unref(zone);
	apex_zone_unref(back);
}

static void bundled_zones(void **state)
{
	(void)state;
	round_trip("root.zone", ".", 90);
	round_trip("fj.zone", "fj.", 90);
	round_trip("sl.zone", "sl.", 50);
	round_trip("example.zone", "example.", 0);
	round_trip("example.nsec.zone", "example.", 50);
	round_trip("example.nsec3.zone", "example.", 50);
}

/* Odd RDATA is left to the caller: the fast writer says so with 0. */
static void malformed_is_left_to_ldns(void **state)
{
	(void)state;
	static char line[APEX_RECORD_TEXT_MAX];
	static const uint8_t owner[] = "\003www\007example\000";
	static const uint8_t short_a[3] = { 1, 2, 3 }, bad_name[3] = { 5, 'a', 0 };
	static const uint8_t bitmap_gap[] = { 1, 'x', 0, 0, 0 }; /* NSEC: empty window */
	apex_rr_t rr = { owner, APEX_TYPE_A, APEX_CLASS_IN, 60, sizeof(short_a), short_a };

	assert_int_equal(apex_record_text(&rr, line), 0);
	rr = (apex_rr_t){ owner, APEX_TYPE_NS, APEX_CLASS_IN, 60, sizeof(bad_name), bad_name };
	assert_int_equal(apex_record_text(&rr, line), 0);
	rr =
		(apex_rr_t){ owner, APEX_TYPE_NSEC,     APEX_CLASS_IN,
			     60,    sizeof(bitmap_gap), bitmap_gap };
	assert_int_equal(apex_record_text(&rr, line), 0);
	rr = (apex_rr_t){ owner, APEX_TYPE_TXT, APEX_CLASS_IN, 60, 2, (const uint8_t *)"\001a" };
	assert_int_equal(apex_record_text(&rr, line), 0); /* not a type handled here */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bundled_zones),
		cmocka_unit_test(malformed_is_left_to_ldns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
