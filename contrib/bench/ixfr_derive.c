/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cost of deriving a version from an IXFR alone, in one process: no
 * primary, no network, no journal (doc/performance.md section 9).
 *
 *   contrib/bench/ixfr_derive ZONEFILE ORIGIN [CHANGES [ROUNDS [mixed|glue] [cold [prepared]]
 *                                                [sorted]]]
 *
 * Loads the zone, then applies ROUNDS (default 6) change sets in a chain,
 * as a secondary receives them: each removes the CHANGES (default 100)
 * delegations the one before added and adds as many new ones, each with
 * an NSEC when the zone is signed with NSEC.  With "mixed", the change
 * sets of contrib/bench/secondaries.py instead: half of the CHANGES give
 * an existing delegation, spread over the zone, a new name server in
 * place of its own, half add a new delegation (kept by the rounds
 * after).  With "glue", the addresses of CHANGES names below zone cuts
 * spread over the zone changed instead (glue, to which the delegations'
 * additional data is linked again).  Each round's old version is
 * released as apexd's retire step does, the node pages its successor
 * replaced given back.  With "cold",
 * the allocator's free pages, the page pool's empty regions and the
 * chain's kept name index go back to the system after each round, as
 * apexd gives them back after a whole build or a few seconds after the
 * last IXFR, so that the next round's copies touch fresh memory; with
 * "prepared" too, before each round what apexd makes ahead once it has
 * asked for an IXFR: the name index's block and the page pool's regions
 * the last purge gave back (apex_index_block_prepare(),
 * apex_page_pool_prepare()).  With "sorted", the new delegations are
 * named so that each part of the change (removals, additions) comes in
 * the zone's order, as a primary sends an IXFR ("bench-ROUND-000042" in
 * place of "bench-ROUND-42").  Printed: the zone's load time, and per
 * round the time of apex_ixfr_version() (and its page faults: memory new
 * to the process, getrusage()) and of the precomputed answers,
 * whether it was derived in place, and a derivation's steps
 * (zone/derive_profile.h); then the median, and what the chain
 * holds and gave back.
 */
#include <config.h> /* HAVE_JEMALLOC */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#ifdef HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#else
#include <malloc.h>
#endif

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/precompute.h"
#include "util/error.h"
#include "util/log.h"
#include "util/page_pool.h"
#include "xfr/changes.h"
#include "xfr/ixfr_apply.h"
#include "xfr/version_compact.h"
#include "zone/derive_profile.h"
#include "zone/index_block.h"
#include "zone/load.h"
#include "zone/page_discard.h"
#include "zone/zone.h"

#define ROUNDS_MAX 100
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The zone's SOA with serial, as a change set's record of kind. */
static int append_soa(apex_changes_t *c, const apex_zone_t *z, apex_change_kind_t kind,
		      uint32_t serial)
{
	uint8_t rdata[2 * APEX_NAME_MAX + 20];
	uint16_t size = apex_read_u16(z->soa->rdata);

	if (size > sizeof(rdata))
		return APEX_EINVAL;
	memcpy(rdata, z->soa->rdata + 2, size);
	size_t at = apex_name_size(rdata);
	at += apex_name_size(rdata + at);
	apex_write_u32(rdata + at, serial);
	apex_rr_t rr = { z->apex->name, APEX_TYPE_SOA, APEX_CLASS_IN, z->soa->ttl, size, rdata };
	return apex_changes_append(c, kind, &rr);
}

/* The new delegations' numbers written with six digits ("sorted"). */
static bool names_in_order;

/* Delegation number i of round: NS, and an NSEC if nsec (its RDATA the
 * origin and the types NS, RRSIG, NSEC: the links do not read it). */
static int append_delegation(apex_changes_t *c, apex_change_kind_t kind, const apex_zone_t *z,
			     int round, size_t i, bool nsec)
{
	char text[64];
	uint8_t owner[APEX_NAME_MAX], ns[APEX_NAME_MAX], rdata[APEX_NAME_MAX + 8];
	size_t origin_size = apex_name_size(z->origin);

	/* "bench-ROUND-I" and the origin, in wire form */
	int label = names_in_order ? snprintf(text, sizeof(text), "bench-%d-%06zu", round, i)
				   : snprintf(text, sizeof(text), "bench-%d-%zu", round, i);
	if (label <= 0 || (size_t)label + 1 + origin_size > APEX_NAME_MAX)
		return APEX_EINVAL;
	owner[0] = (uint8_t)label;
	memcpy(owner + 1, text, (size_t)label);
	memcpy(owner + 1 + label, z->origin, origin_size);
	snprintf(text, sizeof(text), "ns%zu.example.net.", i % 4);
	if (apex_name_from_str(text, ns) <= 0)
		return APEX_EINVAL;
	apex_rr_t rr = {
		owner, APEX_TYPE_NS, APEX_CLASS_IN, 86400, (uint16_t)apex_name_size(ns), ns
	};
	int rc = apex_changes_append(c, kind, &rr);
	if (rc != APEX_OK || !nsec)
		return rc;
	static const uint8_t bitmap[] = { 0, 6, 0x20, 0, 0, 0, 0, 0x03 };
	memcpy(rdata, z->origin, origin_size);
	memcpy(rdata + origin_size, bitmap, sizeof(bitmap));
	apex_rr_t sec = { owner,
			  APEX_TYPE_NSEC,
			  APEX_CLASS_IN,
			  3600,
			  (uint16_t)(origin_size + sizeof(bitmap)),
			  rdata };
	return apex_changes_append(c, kind, &sec);
}

/* The change set of round: the delegations of round - 1 removed (none
 * for the first), those of round added. */
static int change_set(apex_changes_t *c, const apex_zone_t *z, int round, size_t changes)
{
	bool nsec = z->dnssec == APEX_DNSSEC_NSEC;
	int rc = append_soa(c, z, APEX_CHANGE_OLD_SOA, z->serial);

	for (size_t i = 0; rc == APEX_OK && round > 1 && i < changes; i++)
		rc = append_delegation(c, APEX_CHANGE_REMOVE, z, round - 1, i, nsec);
	if (rc == APEX_OK)
		rc = append_soa(c, z, APEX_CHANGE_NEW_SOA, z->serial + 1);
	for (size_t i = 0; rc == APEX_OK && i < changes; i++)
		rc = append_delegation(c, APEX_CHANGE_ADD, z, round, i, nsec);
	return rc;
}

/* Every record of set, at owner, as a change of kind. */
static int append_rrset(apex_changes_t *c, apex_change_kind_t kind, const uint8_t *owner,
			const apex_rrset_t *set)
{
	const uint8_t *p = set->rdata;

	for (unsigned r = 0; r < set->count; r++) {
		uint16_t size = apex_read_u16(p);
		apex_rr_t rr = { owner, set->type, APEX_CLASS_IN, set->ttl, size, p + 2 };
		int rc = apex_changes_append(c, kind, &rr);
		if (rc != APEX_OK)
			return rc;
		p += 2 + size;
	}
	return APEX_OK;
}

/* Give the delegation at about rank (or the next one) of z the name
 * server "nsI.bench-ROUND.example.net." in place of its NS records. */
static int append_repoint(apex_changes_t *c, apex_change_kind_t kind, const apex_zone_t *z,
			  size_t rank, int round, size_t i)
{
	char text[80];
	uint8_t ns[APEX_NAME_MAX];

	for (; rank < z->node_count; rank++) {
		const apex_node_t *node = apex_zone_node_at(z, rank);

		if (!(node->flags & APEX_NODE_DELEGATION) || node->cut != node->id ||
		    node == z->apex)
			continue;
		for (unsigned k = 0; k < node->rrset_count; k++) {
			const apex_rrset_t *set = &apex_node_rrsets(z, node)[k];

			if (set->type != APEX_TYPE_NS)
				continue;
			if (kind == APEX_CHANGE_ADD) {
				snprintf(text, sizeof(text), "ns%zu.bench-%d.example.net.", i,
					 round);
				if (apex_name_from_str(text, ns) <= 0)
					return APEX_EINVAL;
				apex_rr_t rr = { node->name,
						 APEX_TYPE_NS,
						 APEX_CLASS_IN,
						 set->ttl,
						 (uint16_t)apex_name_size(ns),
						 ns };
				return apex_changes_append(c, kind, &rr);
			}
			return append_rrset(c, kind, node->name, set);
		}
	}
	return APEX_OK;
}

/* The change set of round, "mixed": changes / 2 delegations spread over
 * the zone re-pointed, the other half new delegations (those of the
 * rounds before stay, as in contrib/bench/secondaries.py). */
static int mixed_set(apex_changes_t *c, const apex_zone_t *z, int round, size_t changes)
{
	bool nsec = z->dnssec == APEX_DNSSEC_NSEC;
	size_t half = changes / 2, step = z->node_count / (half + 1);
	int rc = append_soa(c, z, APEX_CHANGE_OLD_SOA, z->serial);

	for (size_t i = 0; rc == APEX_OK && i < half; i++)
		rc = append_repoint(c, APEX_CHANGE_REMOVE, z, (i + 1) * step + (size_t)round, round,
				    i);
	if (rc == APEX_OK)
		rc = append_soa(c, z, APEX_CHANGE_NEW_SOA, z->serial + 1);
	for (size_t i = 0; rc == APEX_OK && i < half; i++)
		rc = append_repoint(c, APEX_CHANGE_ADD, z, (i + 1) * step + (size_t)round, round,
				    i);
	for (size_t i = 0; rc == APEX_OK && i < changes - half; i++)
		rc = append_delegation(c, APEX_CHANGE_ADD, z, round, i, nsec);
	return rc;
}

/* Give the name with an address at about rank (or the next one) of z,
 * but the apex's name servers, the address 198.51.100.ROUND in place of
 * its A records. */
static int append_readdress(apex_changes_t *c, apex_change_kind_t kind, const apex_zone_t *z,
			    size_t rank, int round)
{
	for (; rank < z->node_count; rank++) {
		const apex_node_t *node = apex_zone_node_at(z, rank);
		const apex_rrset_t *set = apex_node_rrset(z, node, APEX_TYPE_A);

		if (set == NULL || node == z->apex || node->cut == APEX_NODE_NONE)
			continue;
		if (kind == APEX_CHANGE_ADD) {
			uint8_t a[4] = { 198, 51, 100, (uint8_t)round };
			apex_rr_t rr = { node->name, APEX_TYPE_A, APEX_CLASS_IN, set->ttl, 4, a };
			return apex_changes_append(c, kind, &rr);
		}
		return append_rrset(c, kind, node->name, set);
	}
	return APEX_OK;
}

/* The change set of round, "glue": the addresses of changes glue names
 * (below a zone cut) spread over the zone changed, which every RRset
 * whose additional data they are must be linked to again. */
static int glue_set(apex_changes_t *c, const apex_zone_t *z, int round, size_t changes)
{
	size_t step = z->node_count / (changes + 1);
	int rc = append_soa(c, z, APEX_CHANGE_OLD_SOA, z->serial);

	for (size_t i = 0; rc == APEX_OK && i < changes; i++)
		rc = append_readdress(c, APEX_CHANGE_REMOVE, z, (i + 1) * step, round);
	if (rc == APEX_OK)
		rc = append_soa(c, z, APEX_CHANGE_NEW_SOA, z->serial + 1);
	for (size_t i = 0; rc == APEX_OK && i < changes; i++)
		rc = append_readdress(c, APEX_CHANGE_ADD, z, (i + 1) * step, round);
	return rc;
}

/* What apexd does after a whole build (a compaction, an AXFR), and a few
 * seconds after the last IXFR: the allocator's free pages go back to the
 * system, so that the next round's copies fault fresh ones in (the chain's
 * kept index block is dropped before, zone/index_block.h). */
static void give_back_memory(void)
{
#ifdef HAVE_JEMALLOC
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	mallctl("arena." STRINGIFY(MALLCTL_ARENAS_ALL) ".purge", NULL, NULL, NULL, 0);
#else
	malloc_trim(0);
#endif
}

/* The process's page faults so far that read nothing from disk: a
 * derivation's fresh memory, each one a trip into the kernel (and, on a
 * virtual machine, often into its host). */
static long minor_faults(void)
{
	struct rusage u;

	return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	uint8_t origin[APEX_NAME_MAX];
	char err[1024];
	apex_zone_t *zone = NULL;
	double times[ROUNDS_MAX];
	size_t given_back = 0;

	if (argc < 3 || apex_name_from_str(argv[2], origin) <= 0) {
		fprintf(stderr,
			"usage: %s ZONEFILE ORIGIN [CHANGES [ROUNDS [mixed|glue] [cold "
			"[prepared]] [sorted]]]\n",
			argv[0]);
		return 2;
	}
	size_t changes = argc > 3 ? strtoul(argv[3], NULL, 10) : 100;
	int rounds = argc > 4 ? atoi(argv[4]) : 6;
	bool mixed = false, glue = false, cold = false, prepared = false;
	size_t pool_released = 0;
	for (int i = 5; i < argc; i++) {
		mixed = mixed || strcmp(argv[i], "mixed") == 0;
		glue = glue || strcmp(argv[i], "glue") == 0;
		cold = cold || strcmp(argv[i], "cold") == 0;
		prepared = prepared || strcmp(argv[i], "prepared") == 0;
		names_in_order = names_in_order || strcmp(argv[i], "sorted") == 0;
	}
	if (rounds < 1 || rounds > ROUNDS_MAX || changes == 0) {
		fprintf(stderr, "%s: CHANGES > 0 and ROUNDS from 1 to %d\n", argv[0], ROUNDS_MAX);
		return 2;
	}
	apex_log_set_level(APEX_LOG_ERROR);
	double start = seconds();
	if (apex_zone_load(argv[1], origin, &zone, err, sizeof(err)) != APEX_OK ||
	    apex_precompute(zone) != APEX_OK) {
		fprintf(stderr, "%s: %s\n", argv[0], err);
		return 1;
	}
	printf("%s: loaded in %.3f s, %zu records\n", argv[1], seconds() - start,
	       zone->record_count);
	for (int round = 1; round <= rounds; round++) {
		apex_changes_t c;
		apex_zone_t *next = NULL;
		bool in_place = false;

		apex_changes_init(&c);
		int rc = mixed  ? mixed_set(&c, zone, round, changes)
			 : glue ? glue_set(&c, zone, round, changes)
				: change_set(&c, zone, round, changes);
		if (prepared) { /* as apexd does once the IXFR is asked for */
			apex_index_block_prepare(zone);
			(void)apex_page_pool_prepare(pool_released);
		}
		long faults = minor_faults();
		double t0 = seconds();
		if (rc == APEX_OK)
			rc = apex_ixfr_version(zone, &c, 1, "bench", &next, &in_place, err,
					       sizeof(err));
		double t1 = seconds();
		faults = minor_faults() - faults;
		if (rc == APEX_OK)
			rc = apex_precompute(next);
		double t2 = seconds();
		apex_changes_free(&c);
		if (rc != APEX_OK) {
			fprintf(stderr, "%s: round %d: %s\n", argv[0], round, err);
			return 1;
		}
		times[round - 1] = t2 - t0;
		printf("round %d: %zu names %s, %s: version %.2f ms (%ld page faults), precomputed "
		       "answers %.2f ms\n",
		       round, changes, round > 1 ? "replaced" : "added",
		       in_place ? "derived in place" : "built whole", (t1 - t0) * 1e3, faults,
		       (t2 - t1) * 1e3);
		if (in_place) {
			char steps[200];
			apex_derive_profile_text(next->derive_ms, steps, sizeof(steps));
			printf("  derivation: %s ms\n", steps);
		}
		/* as apexd's retire step does once only next holds zone */
		apex_zone_release_index(zone);
		given_back += apex_zone_discard_replaced(zone, next);
		apex_zone_unref(zone);
		zone = next;
		if (cold) {
			apex_index_block_drop(zone);
			give_back_memory();
			pool_released = apex_page_pool_release() / APEX_PAGE_POOL_REGION;
		}
	}
	qsort(times, (size_t)rounds, sizeof(times[0]), by_value);
	printf("median: %.2f ms\n", times[rounds / 2] * 1e3);
	printf("chain: %u versions, %.1f MiB held beyond the whole build, %.1f MiB of replaced "
	       "node pages given back; compaction %s\n",
	       zone->derived_depth, (double)zone->chain_memory / (1 << 20),
	       (double)given_back / (1 << 20),
	       apex_version_wants_compact(zone) ? "due" : "not due");
	apex_zone_unref(zone);
	return 0;
}
