/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queries read ahead of their answers (query/answer_ahead.h,
 * zone/lookup_ahead.h): in a zone whose name table is too large for the
 * caches, a batch of queries read ahead as a worker's UDP batch reads
 * them is answered byte for byte as each query alone; the lookahead
 * reaches the nodes the lookups find, and with DO in an NSEC3 zone the
 * proofs' records; a zoneset reads ahead only when it holds such a zone;
 * a message whose name cannot be read ahead (compressed, cut short, no
 * question) is answered as without it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/answer_ahead.h"
#include "query/precompute.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/lookup_ahead.h"
#include "zone/zoneset.h"

/* Delegations of the large zone: with their glue names and the rest, a
 * name table above APEX_LOOKUP_AHEAD_MIN_SLOTS. */
#define DELEGATIONS 140000
#define QUERIES 20000
#define QUERY_ROOM 512

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint32_t rng(uint32_t bound)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % bound);
}

/* A zone file written to a temporary path for origin, by write. */
static apex_zone_t *load_written(const char *origin, void (*write)(FILE *))
{
	const char *tmp = getenv("TMPDIR");
	char path[300];
	uint8_t o[APEX_NAME_MAX];
	char err[512];
	apex_zone_t *zone = NULL;

	snprintf(path, sizeof(path), "%s/apex-ahead-XXXXXX", tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *fp = fdopen(fd, "w");
	assert_non_null(fp);
	write(fp);
	assert_int_equal(fclose(fp), 0);
	assert_true(apex_name_from_str(origin, o) > 0);
	int rc = apex_zone_load(path, o, &zone, err, sizeof(err));
	unlink(path);
	if (rc != APEX_OK)
		fail_msg("%s", err);
	assert_int_equal(apex_precompute(zone), APEX_OK);
	return zone;
}

/* The NSEC3 hashes of the large zone's names (no salt, no iterations). */
typedef struct hashes {
	uint8_t (*h)[20];
	size_t count;
} hashes_t;

static void hash_name(hashes_t *hs, const char *fmt, unsigned k)
{
	char text[64];
	uint8_t name[APEX_NAME_MAX];

	snprintf(text, sizeof(text), fmt, k);
	assert_true(apex_name_from_str(text, name) > 0);
	assert_int_equal(apex_nsec3_hash(1, NULL, 0, 0, name, hs->h[hs->count++]), 20);
}

static int by_hash(const void *a, const void *b)
{
	return memcmp(a, b, 20);
}

/* The large zone is signed with NSEC3 (its chain without RRSIGs: nothing
 * here checks them), so that queries with DO fetch the proofs' records
 * ahead too (apex_lookup_ahead_t.proofs): an NSEC3 for every name that is
 * not glue. */
static void write_nsec3_chain(FILE *fp)
{
	hashes_t hs = { malloc((DELEGATIONS + DELEGATIONS / 10 + DELEGATIONS / 50 + 8) * 20), 0 };
	char owner[40], next[40];

	assert_non_null(hs.h);
	hash_name(&hs, "big.", 0);
	hash_name(&hs, "ns.big.", 0);
	hash_name(&hs, "w.big.", 0);
	hash_name(&hs, "*.w.big.", 0);
	for (unsigned k = 0; k < DELEGATIONS; k++) {
		hash_name(&hs, "d%u.big.", k);
		if (k % 10 == 0)
			hash_name(&hs, "h%u.big.", k);
		if (k % 50 == 0)
			hash_name(&hs, "c%u.big.", k);
	}
	qsort(hs.h, hs.count, 20, by_hash);
	fputs("@ NSEC3PARAM 1 0 0 -\n", fp);
	for (size_t i = 0; i < hs.count; i++) {
		owner[apex_base32hex_encode(hs.h[i], 20, owner)] = '\0';
		next[apex_base32hex_encode(hs.h[(i + 1) % hs.count], 20, next)] = '\0';
		fprintf(fp, "%s NSEC3 1 0 0 - %s A\n", owner, next);
	}
	free(hs.h);
}

static void write_large(FILE *fp)
{
	fputs("$ORIGIN big.\n$TTL 3600\n"
	      "@ SOA ns.big. host.big. 1 3600 600 86400 300\n"
	      "@ NS ns.big.\nns A 192.0.2.1\n*.w TXT \"wild\"\n",
	      fp);
	for (unsigned k = 0; k < DELEGATIONS; k++) {
		fprintf(fp, "d%u NS ns.other.example.\n", k);
		if (k % 3 == 0)
			fprintf(fp, "d%u NS ns.d%u\nns.d%u A 192.0.2.%u\n", k, k, k, k % 250 + 1);
		if (k % 4 == 1)
			fprintf(fp,
				"d%u DS 12345 13 2 "
				"49FD46E6C4B45C55D4AC69CBD3CD34AC1AFE51DE18EC9A3A0B8D1C8E0B5E22FD"
				"\n",
				k);
		if (k % 10 == 0)
			fprintf(fp, "h%u A 198.51.100.%u\nh%u MX 10 ns\n", k, k % 250 + 1, k);
		if (k % 50 == 0)
			fprintf(fp, "c%u CNAME h%u\n", k, (k + 10) % DELEGATIONS);
	}
	write_nsec3_chain(fp);
}

static void write_small(FILE *fp)
{
	fputs("$ORIGIN small.\n$TTL 3600\n"
	      "@ SOA ns.small. host.small. 1 3600 600 86400 300\n"
	      "@ NS ns.small.\nns A 192.0.2.2\nwww A 192.0.2.3\n"
	      "sub NS ns.sub\nns.sub A 192.0.2.4\n",
	      fp);
}

/* A query for the presentation name text and type, with EDNS (DO when
 * dnssec_ok) or without; its size. */
static size_t make_query(uint8_t *q, const char *text, uint16_t type, bool edns, bool dnssec_ok)
{
	uint8_t name[APEX_NAME_MAX];
	int name_size = apex_name_from_str(text, name);
	assert_true(name_size > 0);
	memset(q, 0, APEX_HEADER_SIZE);
	q[0] = (uint8_t)rng(256);
	q[2] = 0x01; /* RD */
	q[5] = 1;    /* QDCOUNT */
	size_t pos = APEX_HEADER_SIZE;
	memcpy(q + pos, name, (size_t)name_size);
	pos += (size_t)name_size;
	q[pos++] = (uint8_t)(type >> 8);
	q[pos++] = (uint8_t)type;
	q[pos++] = 0;
	q[pos++] = 1; /* IN */
	if (edns) {
		q[11] = 1; /* ARCOUNT */
		const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, dnssec_ok ? 0x80 : 0, 0, 0, 0 };
		memcpy(q + pos, opt, sizeof(opt));
		pos += sizeof(opt);
	}
	return pos;
}

/* The kinds of messages in the mix, each answered both ways. */
static size_t make_mixed(uint8_t *q)
{
	char text[300];
	unsigned k = rng(DELEGATIONS);
	bool edns = rng(8) != 0, dnssec_ok = rng(2) != 0;
	uint16_t type = APEX_TYPE_A;

	switch (rng(16)) {
	case 0: snprintf(text, sizeof(text), "www%u.d%u.big.", k % 7, k); break;
	case 1: snprintf(text, sizeof(text), "d%u.big.", k), type = APEX_TYPE_NS; break;
	case 2: snprintf(text, sizeof(text), "d%u.big.", k), type = APEX_TYPE_DS; break;
	case 3: snprintf(text, sizeof(text), "ns.d%u.big.", k - k % 3); break;
	case 4: snprintf(text, sizeof(text), "h%u.big.", k - k % 10), type = APEX_TYPE_MX; break;
	case 5: snprintf(text, sizeof(text), "h%u.big.", k - k % 10), type = APEX_TYPE_AAAA; break;
	case 6: snprintf(text, sizeof(text), "c%u.big.", k - k % 50); break;
	case 7: snprintf(text, sizeof(text), "nx%u.big.", k); break;
	case 8: snprintf(text, sizeof(text), "x%u.y.nope.big.", k); break;
	case 9: snprintf(text, sizeof(text), "a%u.w.big.", k), type = APEX_TYPE_TXT; break;
	case 10:
		snprintf(text, sizeof(text), "big.");
		type = rng(2) ? APEX_TYPE_SOA : APEX_TYPE_NS;
		break;
	case 11: snprintf(text, sizeof(text), "WWW.D%u.BIG.", k); break;
	case 12:
		snprintf(text, sizeof(text), "%s", rng(2) ? "www.small." : "a.b.sub.small.");
		break;
	case 13: snprintf(text, sizeof(text), "host%u.example.org.", k); break;
	default: {
		/* what cannot be read ahead, or is no query */
		size_t size = make_query(q, "d1.big.", APEX_TYPE_A, edns, dnssec_ok);
		switch (rng(4)) {
		case 0: /* the name compressed: a pointer to itself */
			q[APEX_HEADER_SIZE] = 0xc0;
			q[APEX_HEADER_SIZE + 1] = APEX_HEADER_SIZE;
			return size;
		case 1: return APEX_HEADER_SIZE + 3;              /* cut inside the name */
		case 2: q[5] = 0; return size;                    /* no question */
		default: q[APEX_HEADER_SIZE] = 0x45; return size; /* a label of 69 bytes */
		}
	}
	}
	return make_query(q, text, type, edns, dnssec_ok);
}

typedef struct fixture {
	apex_zonetable_t table;
	apex_zone_t *large, *small;
} fixture_t;

static int setup(void **state)
{
	fixture_t *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	assert_int_equal(apex_zonetable_init(&f->table), APEX_OK);
	f->large = load_written("big.", write_large);
	f->small = load_written("small.", write_small);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture_t *f = *state;
	apex_zonetable_destroy(&f->table); /* the table took the zones' references */
	free(f);
	return 0;
}

/* A zoneset reads ahead only with a zone whose table is large.  (It
 * publishes the zones, for the tests after it.) */
static void read_ahead_only_with_a_large_table(void **state)
{
	fixture_t *f = *state;
	unsigned long long generation;

	assert_true(apex_lookup_ahead_worth(f->large));
	assert_false(apex_lookup_ahead_worth(f->small));
	assert_int_equal(apex_zonetable_publish(&f->table, f->small), APEX_OK);
	apex_zoneset_t *set = apex_zonetable_acquire(&f->table, &generation);
	assert_false(set->read_ahead);
	apex_zoneset_release(set);
	assert_int_equal(apex_zonetable_publish(&f->table, f->large), APEX_OK);
	set = apex_zonetable_acquire(&f->table, &generation);
	assert_true(set->read_ahead);
	apex_zoneset_release(set);
}

/* The lookahead finds the nodes the lookup finds: the name's own, and for
 * a name below a zone cut, the cut's. */
static void lookahead_reaches_the_nodes(void **state)
{
	fixture_t *f = *state;
	unsigned long long generation;
	uint8_t q[QUERY_ROOM];
	char text[64];
	static apex_answer_ahead_t a;

	apex_zoneset_t *set = apex_zonetable_acquire(&f->table, &generation);
	assert_true(set->read_ahead);
	assert_int_equal(f->large->dnssec, APEX_DNSSEC_NSEC3);
	for (unsigned i = 0; i < 1000; i++) {
		unsigned k = rng(DELEGATIONS);
		/* with DO (its OPT the only additional record), the proofs
		 * too; without DO or without EDNS, not */
		bool edns = i % 3 != 0, dnssec_ok = i % 3 == 1;
		snprintf(text, sizeof(text), "www.d%u.big.", k);
		size_t size = make_query(q, text, APEX_TYPE_A, edns, dnssec_ok);
		apex_answer_ahead_begin(&a, set, q, size);
		assert_true(a.named);
		assert_ptr_equal(a.zone, f->large);
		assert_ptr_equal(a.lookup.zone, f->large);
		assert_int_equal(a.lookup.count, 2);
		assert_int_equal(a.lookup.proofs, dnssec_ok);
		apex_lookup_ahead_nodes(&a.lookup);
		apex_lookup_ahead_data(&a.lookup);
		apex_lookup_ahead_rdata(&a.lookup);

		uint8_t cut[APEX_NAME_MAX], key[APEX_KEY_MAX];
		uint16_t ends[APEX_LABELS_MAX];
		snprintf(text, sizeof(text), "d%u.big.", k);
		assert_true(apex_name_from_str(text, cut) > 0);
		size_t key_size = apex_name_key(cut, key, ends);
		const apex_node_t *node = apex_zone_find(f->large, key, key_size);
		assert_non_null(node);
		/* www.dK has no node: no tag of it, but that of another name
		 * once in about 500 probes */
		if (a.lookup.ids[0] != APEX_NODE_NONE)
			assert_int_not_equal(a.lookup.ids[0], node->id);
		assert_int_equal(a.lookup.ids[1], node->id);
	}
	/* an OPT record cut short: no proofs fetched */
	size_t size = make_query(q, "www.d7.big.", APEX_TYPE_A, true, true);
	apex_answer_ahead_begin(&a, set, q, size - 3);
	assert_true(a.named);
	assert_false(a.lookup.proofs);
	/* outside the large zone nothing is fetched, the name is still read */
	size = make_query(q, "www.small.", APEX_TYPE_A, true, true);
	apex_answer_ahead_begin(&a, set, q, size);
	assert_true(a.named);
	assert_ptr_equal(a.zone, f->small);
	assert_null(a.lookup.zone);
	assert_false(a.lookup.proofs);
	size = make_query(q, "www.example.org.", APEX_TYPE_A, true, false);
	apex_answer_ahead_begin(&a, set, q, size);
	assert_true(a.named);
	assert_null(a.zone);
	assert_null(a.lookup.zone);
	apex_zoneset_release(set);
}

/* Batches of 1 to 64 queries read ahead and answered as a worker's UDP
 * batch does give each query the answer it gets alone. */
static void batches_answer_as_each_query_alone(void **state)
{
	fixture_t *f = *state;
	unsigned long long generation;
	apex_answer_config_t cfg;
	static uint8_t queries[QUERIES][QUERY_ROOM];
	static size_t sizes[QUERIES];
	static apex_answer_ahead_t ring[APEX_AHEAD_RING];
	static uint8_t alone[1232], read_ahead[1232];
	unsigned unnamed = 0, referrals = 0, nxdomain = 0, answers = 0;

	apex_answer_config_init(&cfg);
	apex_zoneset_t *set = apex_zonetable_acquire(&f->table, &generation);
	assert_true(set->read_ahead);
	for (size_t i = 0; i < QUERIES; i++)
		sizes[i] = make_mixed(queries[i]);

	for (size_t first = 0; first < QUERIES;) {
		int n = (int)(1 + rng(64));
		if ((size_t)n > QUERIES - first)
			n = (int)(QUERIES - first);
		for (int i = -APEX_AHEAD_BEGIN; i < n; i++) {
			int j = i + APEX_AHEAD_BEGIN;
			bool in = j >= 0 && j < n;
			apex_answer_ahead_step(ring, set, i, n,
					       in ? queries[first + (size_t)j] : NULL,
					       in ? sizes[first + (size_t)j] : 0);
			if (i < 0)
				continue;
			const uint8_t *q = queries[first + (size_t)i];
			size_t size = sizes[first + (size_t)i];
			apex_answer_ahead_t *a = &ring[i % APEX_AHEAD_RING];
			unnamed += !a->named;
			size_t got = apex_answer_ahead(set, &cfg, APEX_TRANSPORT_UDP, NULL, a, q,
						       size, read_ahead, sizeof(read_ahead), NULL);
			size_t want = apex_answer_from(set, &cfg, APEX_TRANSPORT_UDP, NULL, q, size,
						       alone, sizeof(alone), NULL);
			assert_int_equal(got, want);
			assert_memory_equal(read_ahead, alone, want);
			if (want >= APEX_HEADER_SIZE) {
				uint16_t flags = apex_read_u16(alone + APEX_HDR_FLAGS);
				referrals += (flags & 0x040f) == 0 &&
					     apex_read_u16(alone + APEX_HDR_ANCOUNT) == 0 &&
					     apex_read_u16(alone + APEX_HDR_NSCOUNT) > 0;
				nxdomain += (flags & 0xf) == 3;
				answers += (flags & 0xf) == 0 &&
					   apex_read_u16(alone + APEX_HDR_ANCOUNT) > 0;
			}
		}
		first += (size_t)n;
	}
	apex_zoneset_release(set);
	print_message("%d queries: %u referrals, %u answers, %u NXDOMAIN, %u not read ahead\n",
		      QUERIES, referrals, answers, nxdomain, unnamed);
	assert_true(referrals > QUERIES / 8);
	assert_true(answers > QUERIES / 8);
	assert_true(nxdomain > QUERIES / 20);
	assert_true(unnamed > QUERIES / 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(read_ahead_only_with_a_large_table),
		cmocka_unit_test(lookahead_reaches_the_nodes),
		cmocka_unit_test(batches_answer_as_each_query_alone),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
