/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * query/precompute: a version with precomputed fragments answers byte
 * for byte as one without, and recomputing the fragments of some cuts,
 * or the negative SOA alone (what an IXFR that reaches only those names
 * will do), gives the fragments of the full precomputation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/precompute.h"
#include "query/writer.h"
#include "util/arena.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/zoneset.h"
#include "zone/zone.h"
#include "zone_records.h"

static apex_zone_t *load(const char *file, const char *origin_text)
{
	apex_zone_t *zone = load_file(file, origin_text);

	assert_null(zone->referrals); /* the load alone precomputes nothing */
	assert_null(zone->negative[0]);
	return zone;
}

static void same_fragment(const apex_fragment_t *a, const apex_fragment_t *b)
{
	if (a == NULL || b == NULL) {
		assert_ptr_equal(a, b);
		return;
	}
	assert_ptr_not_equal(a, b); /* recomputed, not the same memory */
	assert_ptr_equal(a->base, b->base);
	assert_int_equal(a->base_size, b->base_size);
	assert_int_equal(a->base_labels, b->base_labels);
	assert_int_equal(a->entries, b->entries);
	assert_int_equal(a->size, b->size);
	assert_memory_equal(a->bytes, b->bytes, a->size);
	assert_memory_equal(a->records, b->records, sizeof(a->records));
	assert_int_equal(a->unit_count, b->unit_count);
	assert_memory_equal(a->units, b->units, a->unit_count * sizeof(*a->units));
	assert_int_equal(a->pointer_count, b->pointer_count);
	assert_memory_equal(a->pointers, b->pointers, a->pointer_count * sizeof(*a->pointers));
	assert_int_equal(a->label_count, b->label_count);
	assert_memory_equal(a->labels, b->labels, a->label_count * sizeof(*a->labels));
	assert_true((a->targets == NULL) == (b->targets == NULL));
	if (a->targets != NULL)
		assert_memory_equal(a->targets, b->targets, a->entries * sizeof(*a->targets));
}

/* Every step-th cut recomputed on its own equals the full result. */
static void check_partial(const char *file, const char *origin, size_t step, size_t min_cuts)
{
	apex_zone_t *zone = load(file, origin);
	size_t memory = zone->memory;

	assert_int_equal(apex_precompute(zone), APEX_OK);
	/* The fragments count: the memory is the arena's once they are in it.
	 * A large zone's add to it; a small zone's may fit in the chunk it
	 * had, whose unused end precompute then gives back (apex_arena_trim()),
	 * so that its memory may even fall. */
	assert_int_equal(zone->memory, apex_arena_footprint(zone->arena) +
					       (zone->base != NULL ? zone->base->memory : 0));
	if (min_cuts >= 1000)
		assert_true(zone->memory > memory);
	assert_true(zone->referral_count >= min_cuts);
	assert_non_null(zone->negative[0]);
	assert_non_null(zone->negative[1]);

	size_t n = 0, recorded = 0;
	apex_referral_t *some = calloc(zone->referral_count + 1, sizeof(*some));
	assert_non_null(some);
	for (size_t i = 0; i < zone->referral_count; i += step)
		some[n++].cut = zone->referrals[i].cut;
	assert_int_equal(apex_precompute_referrals(zone, some, n), APEX_OK);
	for (size_t k = 0; k < n; k++) {
		const apex_referral_t *full = &zone->referrals[k * step];
		assert_ptr_equal(some[k].cut, full->cut);
		same_fragment(some[k].fragment[0], full->fragment[0]);
		same_fragment(some[k].fragment[1], full->fragment[1]);
		recorded += full->fragment[0] != NULL;
	}
	assert_true(recorded > 0);
	free(some);

	const apex_fragment_t *negative[2] = { zone->negative[0], zone->negative[1] };
	assert_int_equal(apex_precompute_negative(zone), APEX_OK);
	same_fragment(zone->negative[0], negative[0]);
	same_fragment(zone->negative[1], negative[1]);
	apex_zone_unref(zone);
}

/* A query for name (wire) and type, with EDNS (a payload of `payload`,
 * none if 0) and the DO bit as asked. */
static size_t make_query_payload(uint8_t *q, const uint8_t *name, uint16_t type, bool dnssec_ok,
				 uint16_t payload)
{
	size_t n = apex_name_size(name);
	memset(q, 0, 12);
	apex_write_u16(q, 0x1234);
	apex_write_u16(q + 4, 1);
	apex_write_u16(q + 10, payload != 0 ? 1 : 0);
	memcpy(q + 12, name, n);
	apex_write_u16(q + 12 + n, type);
	apex_write_u16(q + 14 + n, APEX_CLASS_IN);
	if (payload == 0)
		return 16 + n;
	uint8_t *opt = q + 16 + n;
	memset(opt, 0, 11);
	apex_write_u16(opt + 1, APEX_TYPE_OPT);
	apex_write_u16(opt + 3, payload);
	apex_write_u16(opt + 7, dnssec_ok ? 0x8000 : 0);
	return 16 + n + 11;
}

static size_t make_query(uint8_t *q, const uint8_t *name, uint16_t type, bool dnssec_ok)
{
	return make_query_payload(q, name, type, dnssec_ok, 1232);
}

static apex_zoneset_t *serve(apex_zonetable_t *table, apex_zone_t *zone)
{
	unsigned long long generation;
	assert_int_equal(apex_zonetable_init(table), APEX_OK);
	assert_int_equal(apex_zonetable_publish(table, zone), APEX_OK);
	apex_zoneset_t *set = apex_zonetable_acquire(table, &generation);
	assert_non_null(set);
	return set;
}

/*
 * The fragments are right: a version with them answers byte for byte as
 * one without any, whose answers the engine writes record by record.
 * Asked below every cut (a referral) and for a name that does not exist
 * (the negative SOA), with and without DO, over UDP and TCP.
 */
static void fragments_answer_as_the_engine(const char *file, const char *origin)
{
	apex_zone_t *with = load(file, origin), *without = load(file, origin);
	apex_zonetable_t table_with, table_without;
	apex_answer_config_t cfg;
	uint8_t query[512], name[APEX_NAME_MAX + 8], a[65535], b[65535];
	size_t copied = 0;

	assert_int_equal(apex_precompute(with), APEX_OK);
	apex_answer_config_init(&cfg);
	apex_zoneset_t *set_with = serve(&table_with, with);
	apex_zoneset_t *set_without = serve(&table_without, without);
	/* Twice with a referral index: found by it, then by the binary
	 * search that zones of many ids use. */
	bool indexed = with->referral_index != NULL;
again:
	for (size_t i = 0; i <= with->referral_count; i++) {
		/* "zz-none." below the cut, or below the apex for NXDOMAIN */
		const apex_node_t *base =
			i < with->referral_count ? with->referrals[i].cut : with->apex;
		size_t base_size = apex_name_size(base->name);
		if (base_size + 8 > APEX_NAME_MAX)
			continue;
		memcpy(name, "\007zz-none", 8);
		memcpy(name + 8, base->name, base_size);
		copied += i < with->referral_count && with->referrals[i].fragment[0] != NULL;
		for (int k = 0; k < 4; k++) {
			apex_transport_t t = k & 1 ? APEX_TRANSPORT_TCP : APEX_TRANSPORT_UDP;
			size_t qsize = make_query(query, name, APEX_TYPE_A, k & 2);
			size_t na =
				apex_answer(set_with, &cfg, t, query, qsize, a, sizeof(a), NULL);
			size_t nb =
				apex_answer(set_without, &cfg, t, query, qsize, b, sizeof(b), NULL);
			assert_int_equal(na, nb);
			assert_memory_equal(a, b, na);
		}
	}
	assert_true(copied > 0 || with->referral_count == 0);
	if (with->referral_index != NULL) {
		with->referral_index = NULL;
		goto again;
	}
	assert_true(indexed || with->referral_count == 0);
	apex_zoneset_release(set_with);
	apex_zoneset_release(set_without);
	apex_zonetable_destroy(&table_with);
	apex_zonetable_destroy(&table_without);
}

/*
 * One question to both sets, in every variant that changes how much
 * fits or what is written (no EDNS; payloads of 512, 1232 and 4096
 * bytes, without and with DO; UDP and TCP): the answers must be equal.
 * Returns how many of them had the rcode `rcode`.
 */
static unsigned same_answers(apex_zoneset_t *with, apex_zoneset_t *without, const uint8_t *name,
			     uint16_t type, uint8_t rcode)
{
	static const uint16_t payloads[] = { 0, 512, 1232, 4096 };
	uint8_t query[512], a[65535], b[65535];
	apex_answer_config_t cfg;
	unsigned matched = 0;

	apex_answer_config_init(&cfg);
	for (size_t p = 0; p < sizeof(payloads) / sizeof(payloads[0]); p++) {
		for (int k = 0; k < 4; k++) {
			if (payloads[p] == 0 && (k & 2))
				continue; /* DO needs EDNS */
			apex_transport_t t = k & 1 ? APEX_TRANSPORT_TCP : APEX_TRANSPORT_UDP;
			size_t qsize = make_query_payload(query, name, type, k & 2, payloads[p]);
			size_t na = apex_answer(with, &cfg, t, query, qsize, a, sizeof(a), NULL);
			size_t nb = apex_answer(without, &cfg, t, query, qsize, b, sizeof(b), NULL);
			assert_int_equal(na, nb);
			assert_memory_equal(a, b, na);
			matched += na >= 12 && (a[3] & 0x0F) == rcode;
		}
	}
	return matched;
}

/*
 * The answers at the apex (one fragment per type it holds) and the
 * NXDOMAIN proofs of an NSEC zone (the NSEC tails) are the engine's:
 * every type at the apex, and for every name just below the apex a
 * sibling that sorts right after its subtree (covered by the last NSEC
 * of that subtree, or by the name's own), with its label changed from
 * the right to the left (covered elsewhere), under each variant.
 */
static void answers_and_tails_as_the_engine(const char *file, const char *origin)
{
	apex_zone_t *with = load(file, origin), *without = load(file, origin);
	apex_zonetable_t table_with, table_without;
	uint8_t name[APEX_NAME_MAX];
	unsigned nxdomain = 0;

	assert_int_equal(apex_precompute(with), APEX_OK);
	assert_non_null(with->apex_answers[0]);
	assert_non_null(with->apex_answers[1]);
	if (with->dnssec == APEX_DNSSEC_NSEC)
		assert_non_null(with->nsec_tails);
	/* Unsigned: the DO=1 referrals are the DO=0 ones, kept once. */
	for (size_t i = 0; with->dnssec == APEX_DNSSEC_NONE && i < with->referral_count; i++)
		assert_ptr_equal(with->referrals[i].fragment[1], with->referrals[i].fragment[0]);
	apex_zoneset_t *set_with = serve(&table_with, with);
	apex_zoneset_t *set_without = serve(&table_without, without);
	const apex_node_t *apex = with->apex;
	for (unsigned i = 0; i < apex->rrset_count; i++)
		assert_true(same_answers(set_with, set_without, apex->name,
					 apex_node_rrsets(with, apex)[i].type,
					 APEX_RCODE_NOERROR) > 0);
	for (size_t r = 1; r < with->node_count; r++) {
		const apex_node_t *node = apex_zone_node_at(with, r);
		if (node->labels != apex->labels + 1 || node->name[0] >= 63)
			continue;
		/* "<label>0.<apex>", then "<label>" with its last byte raised */
		size_t label = node->name[0];
		name[0] = (uint8_t)(label + 1);
		memcpy(name + 1, node->name + 1, label);
		name[1 + label] = '0';
		memcpy(name + 2 + label, apex->name, apex->name_size);
		nxdomain +=
			same_answers(set_with, set_without, name, APEX_TYPE_A, APEX_RCODE_NXDOMAIN);
		memcpy(name, node->name, node->name_size);
		name[label] = (uint8_t)(name[label] == 'z' ? '~' : name[label] + 1);
		nxdomain += same_answers(set_with, set_without, name, APEX_TYPE_AAAA,
					 APEX_RCODE_NXDOMAIN);
	}
	assert_true(nxdomain > 0);
	apex_zoneset_release(set_with);
	apex_zoneset_release(set_without);
	apex_zonetable_destroy(&table_with);
	apex_zonetable_destroy(&table_without);
}

static void root_zone(void **state)
{
	(void)state;
	check_partial("root.zone", ".", 7, 1000);
	fragments_answer_as_the_engine("root.zone", ".");
	answers_and_tails_as_the_engine("root.zone", ".");
}

static void nsec3_tld(void **state)
{
	(void)state;
	check_partial("fj.zone", "fj.", 1, 5);
	fragments_answer_as_the_engine("fj.zone", "fj.");
	answers_and_tails_as_the_engine("fj.zone", "fj.");
}

static void signed_feature_zone(void **state)
{
	(void)state;
	check_partial("example.nsec3.zone", "example.", 1, 1);
	check_partial("example.nsec.zone", "example.", 1, 1);
	fragments_answer_as_the_engine("example.nsec3.zone", "example.");
	fragments_answer_as_the_engine("example.zone", "example.");
	answers_and_tails_as_the_engine("example.nsec.zone", "example.");
	answers_and_tails_as_the_engine("example.nsec3.zone", "example.");
	answers_and_tails_as_the_engine("example.zone", "example.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(root_zone),
		cmocka_unit_test(nsec3_tld),
		cmocka_unit_test(signed_feature_zone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
