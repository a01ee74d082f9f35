/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * zone/zone_from_wire: a zone sent by AXFR (xfr/axfr_out), read back
 * (xfr/xfr_in) and built from its records in wire form holds exactly the
 * records of the version it came from; records the zone cannot hold are
 * refused with the record's number.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/error.h"
#include "xfr/axfr_out.h"
#include "xfr/xfr_in.h"
#include "zone/load.h"
#include "zone/zone_from_wire.h"
#include "zone_records.h"

static int on_record(void *ctx, const apex_rr_t *rr)
{
	return apex_zone_from_wire_add(ctx, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
}

static int on_changes(void *ctx, apex_changes_t *set)
{
	(void)ctx;
	(void)set;
	return APEX_EINVAL;
}

/* The zone through AXFR into a new version. */
static apex_zone_t *through_axfr(const apex_zone_t *zone)
{
	static uint8_t buf[65535];
	char err[512] = "";
	apex_zone_from_wire_t *w;
	apex_axfr_out_t out;
	apex_xfr_in_t in;
	size_t size;

	assert_int_equal(apex_zone_from_wire_begin(&w, zone->origin, "transfer", err, sizeof(err)),
			 APEX_OK);
	apex_xfr_in_handler_t handler = { w, on_record, on_changes, NULL };
	apex_axfr_out_init(&out, zone, 9, zone->origin);
	assert_int_equal(apex_xfr_in_init(&in, zone->origin, 9, APEX_TYPE_AXFR, 0, &handler, NULL),
			 APEX_OK);
	do {
		assert_int_equal(apex_axfr_out_next(&out, buf, sizeof(buf), &size), APEX_OK);
		if (size > 0 && apex_xfr_in_message(&in, buf, size) != APEX_OK)
			fail_msg("%s / %s", in.err, err);
	} while (size > 0);
	assert_true(apex_xfr_in_done(&in));
	apex_xfr_in_free(&in);
	apex_zone_t *copy = NULL;
	if (apex_zone_from_wire_finish(w, &copy) != APEX_OK)
		fail_msg("%s", err);
	return copy;
}

static void same_records_as_the_file(void **state)
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
		apex_zone_t *copy = through_axfr(zone);
		text_set_t a = { 0 }, b = { 0 };
		zone_records(zone, &a);
		zone_records(copy, &b);
		set_sort(&a);
		set_sort(&b);
		assert_int_equal(a.count, b.count);
		for (size_t k = 0; k < a.count; k++)
			assert_string_equal(a.items[k], b.items[k]);
		assert_int_equal(copy->serial, zone->serial);
		assert_int_equal(copy->dnssec, zone->dnssec);
		assert_int_equal(copy->node_count, zone->node_count);
		assert_int_equal(copy->nsec3_count, zone->nsec3_count);
		/* the same records in the same order: canonical forms alike */
		size_t size_a, size_b;
		uint8_t *xa = axfr_bytes(zone, &size_a), *xb = axfr_bytes(copy, &size_b);
		assert_int_equal(size_a, size_b);
		assert_memory_equal(xa, xb, size_a);
		free(xa);
		free(xb);
		set_free(&a);
		set_free(&b);
		apex_zone_unref(copy);
		apex_zone_unref(zone);
	}
}

/* Records of an RRset are in canonical order (RFC 4034 section 6.3), in
 * which embedded names compare in lower case: "a.example." before
 * "B.example." although 'B' < 'a' in ASCII. */
static void canonical_order_of_embedded_names(void **state)
{
	(void)state;
	static const struct {
		uint16_t type;
		size_t skip; /* bytes before the name */
	} types[] = { { APEX_TYPE_NS, 0 }, { APEX_TYPE_MX, 2 }, { APEX_TYPE_SRV, 6 } };
	char err[512] = "";
	uint8_t origin[APEX_NAME_MAX], soa[128], names[2][APEX_NAME_MAX];
	apex_zone_from_wire_t *w;
	apex_zone_t *zone = NULL;
	size_t soa_size;

	assert_true(apex_name_from_str("example.", origin) > 0);
	assert_true(apex_name_from_str("B.example.", names[0]) > 0);
	assert_true(apex_name_from_str("a.example.", names[1]) > 0);
	soa_size = apex_name_size(origin);
	memcpy(soa, origin, soa_size);
	memcpy(soa + soa_size, origin, soa_size);
	memset(soa + 2 * soa_size, 0, 20);
	soa[2 * soa_size + 3] = 1; /* serial 1 */
	assert_int_equal(apex_zone_from_wire_begin(&w, origin, "test", err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_zone_from_wire_add(w, origin, APEX_TYPE_SOA, 60, soa,
						 (uint16_t)(2 * soa_size + 20)),
			 APEX_OK);
	for (size_t t = 0; t < 3; t++) {
		for (int k = 0; k < 2; k++) {
			uint8_t rdata[6 + APEX_NAME_MAX] = { 0 };
			size_t size = apex_name_size(names[k]);

			memcpy(rdata + types[t].skip, names[k], size);
			assert_int_equal(apex_zone_from_wire_add(w, origin, types[t].type, 60,
								 rdata,
								 (uint16_t)(types[t].skip + size)),
					 APEX_OK);
		}
	}
	assert_int_equal(apex_zone_from_wire_finish(w, &zone), APEX_OK);
	for (size_t t = 0; t < 3; t++) {
		const apex_rrset_t *rs = apex_node_rrset(zone, zone->apex, types[t].type);

		assert_non_null(rs);
		assert_int_equal(rs->count, 2);
		/* the first record's name, after its length and the fixed bytes */
		assert_true(apex_name_equal(rs->rdata + 2 + types[t].skip, names[1]));
		assert_memory_equal(rs->rdata + 2 + types[t].skip, names[1], names[1][0] + 1);
	}
	apex_zone_unref(zone);
}

static void refused_records(void **state)
{
	(void)state;
	char err[512] = "";
	uint8_t origin[APEX_NAME_MAX], outside[APEX_NAME_MAX];
	const uint8_t addr[4] = { 192, 0, 2, 1 };
	apex_zone_from_wire_t *w;

	assert_true(apex_name_from_str("example.", origin) > 0);
	assert_true(apex_name_from_str("www.example.org.", outside) > 0);
	assert_int_equal(
		apex_zone_from_wire_begin(&w, origin, "transfer from 192.0.2.53", err, sizeof(err)),
		APEX_OK);
	assert_int_equal(apex_zone_from_wire_add(w, origin, APEX_TYPE_A, 60, addr, 4), APEX_OK);
	assert_int_equal(apex_zone_from_wire_add(w, outside, APEX_TYPE_A, 60, addr, 4), APEX_ELOAD);
	assert_non_null(strstr(err, "transfer from 192.0.2.53:2: "));
	assert_non_null(strstr(err, "outside the zone"));
	assert_int_equal(apex_zone_from_wire_add(w, origin, APEX_TYPE_A, 60, addr, 3), APEX_ELOAD);
	assert_non_null(strstr(err, ":3: "));
	/* RDATA of the wrong shape for its type: empty where a name must be,
	 * a name or a string that runs past the RDATA */
	static const struct {
		uint16_t type;
		uint8_t size;
		uint8_t rdata[8];
	} bad[] = {
		{ APEX_TYPE_NS, 0, { 0 } },
		{ APEX_TYPE_CNAME, 3, { 3, 'a', 'b' } },
		{ APEX_TYPE_MX, 2, { 0, 10 } },
		{ APEX_TYPE_TXT, 3, { 5, 'a', 'b' } },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (apex_zone_from_wire_add(w, origin, bad[i].type, 60, bad[i].rdata,
					    bad[i].size) != APEX_ELOAD)
			fail_msg("type %u, %u bytes of RDATA: taken", bad[i].type, bad[i].size);
		assert_non_null(strstr(err, "type"));
	}
	/* no SOA: the build refuses the zone */
	apex_zone_t *zone = NULL;
	assert_int_equal(apex_zone_from_wire_finish(w, &zone), APEX_ELOAD);
	assert_null(zone);
	assert_non_null(strstr(err, "SOA"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_records_as_the_file),
		cmocka_unit_test(canonical_order_of_embedded_names),
		cmocka_unit_test(refused_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
