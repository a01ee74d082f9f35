/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The zone table: publishing, replacing and removing versions, finding
 * the closest enclosing zone, reference counting, and readers picking
 * up versions while a writer publishes (also run under ThreadSanitizer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/name_hash.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/zoneset.h"

/* Load a tiny zone for origin with the given serial; caller owns the reference. */
static apex_zone_t *make_zone(const char *origin, unsigned serial)
{
	char path[] = "/tmp/apex-zoneset-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "$ORIGIN %s\n$TTL 60\n@ SOA ns hostmaster %u 1 1 1 1\n@ NS ns\nns A 192.0.2.1\n",
		origin, serial);
	fclose(f);

	uint8_t wire[APEX_NAME_MAX];
	assert_true(apex_name_from_str(origin, wire) > 0);
	apex_zone_t *zone = NULL;
	char err[256];
	int rc = apex_zone_load(path, wire, &zone, err, sizeof(err));
	unlink(path);
	if (rc != APEX_OK)
		fail_msg("%s", err);
	return zone;
}

static const apex_zone_t *find(const apex_zoneset_t *set, const char *name)
{
	uint8_t wire[APEX_NAME_MAX];
	assert_true(apex_name_from_str(name, wire) > 0);
	apex_lookup_name_t ln;
	apex_lookup_name_init(&ln, wire);
	return apex_zoneset_find_name(set, &ln, ln.labels);
}

static void test_publish_find_remove(void **state)
{
	apex_zonetable_t table;
	assert_int_equal(apex_zonetable_init(&table), APEX_OK);

	unsigned long long gen0;
	apex_zoneset_t *empty = apex_zonetable_acquire(&table, &gen0);
	assert_int_equal(empty->count, 0);
	assert_null(find(empty, "www.example."));

	assert_int_equal(apex_zonetable_publish(&table, make_zone("example.", 1)), APEX_OK);
	assert_int_equal(apex_zonetable_publish(&table, make_zone("sub.example.", 1)), APEX_OK);
	assert_int_equal(apex_zonetable_publish(&table, make_zone(".", 1)), APEX_OK);
	assert_true(apex_zonetable_generation(&table) == gen0 + 3);

	unsigned long long gen;
	apex_zoneset_t *set = apex_zonetable_acquire(&table, &gen);
	assert_int_equal(set->count, 3);
	assert_true(gen == gen0 + 3);
	/* Closest enclosing zone wins; case does not matter. */
	assert_ptr_equal(find(set, "a.b.SUB.example."),
			 apex_zoneset_get(set, (const uint8_t *)"\3sub\7example"));
	assert_int_equal(find(set, "www.Example.")->origin_labels, 1);
	assert_int_equal(find(set, "org.")->origin_labels, 0);
	assert_int_equal(find(set, "sub.example.")->origin_labels, 2);
	/* The empty set acquired earlier is still valid and still empty. */
	assert_int_equal(empty->count, 0);
	apex_zoneset_release(empty);

	/* Replacing a version: readers holding the old set keep the old version. */
	apex_zone_t *old = apex_zoneset_get(set, (const uint8_t *)"\7example");
	assert_int_equal(old->serial, 1);
	assert_int_equal(apex_zonetable_publish(&table, make_zone("example.", 2)), APEX_OK);
	apex_zoneset_t *set2 = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set2->count, 3);
	assert_int_equal(apex_zoneset_get(set2, (const uint8_t *)"\7example")->serial, 2);
	assert_int_equal(old->serial, 1);
	/* old is held by `set` alone now. */
	assert_int_equal(atomic_load(&old->refcount), 1);
	apex_zoneset_release(set);

	/* Removal. */
	assert_int_equal(apex_zonetable_remove(&table, (const uint8_t *)"\3sub\7example"), APEX_OK);
	assert_int_equal(apex_zonetable_remove(&table, (const uint8_t *)"\3sub\7example"),
			 APEX_ENOENT);
	apex_zoneset_t *set3 = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set3->count, 2);
	assert_int_equal(find(set3, "a.sub.example.")->origin_labels, 1);
	/* The set acquired before the removal still has it. */
	assert_int_equal(find(set2, "a.sub.example.")->origin_labels, 2);
	apex_zoneset_release(set2);
	apex_zoneset_release(set3);
	apex_zonetable_destroy(&table);
}

/* Whether name is in an unserved zone deeper than the served zone found for it. */
static bool unserved(const apex_zoneset_t *set, const char *name)
{
	uint8_t wire[APEX_NAME_MAX];
	assert_true(apex_name_from_str(name, wire) > 0);
	apex_lookup_name_t ln;
	apex_lookup_name_init(&ln, wire);
	const apex_zone_t *zone = apex_zoneset_find_name(set, &ln, ln.labels);
	return set->unserved_count != 0 &&
	       apex_zoneset_unserved(set, &ln, ln.labels, zone != NULL ? zone->origin_labels : -1);
}

/*
 * Configured zones not served: known to the set until a version of them
 * is published or they are removed; a served zone is never listed, and
 * a served parent does not hide an unserved child.
 */
static void test_unserved(void **state)
{
	(void)state;
	apex_zonetable_t table;
	assert_int_equal(apex_zonetable_init(&table), APEX_OK);
	const uint8_t *example = (const uint8_t *)"\7example";
	const uint8_t *sub = (const uint8_t *)"\3sub\7example";

	assert_int_equal(apex_zonetable_configure(&table, example), APEX_OK);
	assert_int_equal(apex_zonetable_configure(&table, example), APEX_OK); /* once */
	assert_int_equal(apex_zonetable_configure(&table, sub), APEX_OK);
	apex_zoneset_t *set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count, 0);
	assert_int_equal(set->unserved_count, 2);
	assert_true(unserved(set, "www.example."));
	assert_true(unserved(set, "EXAMPLE."));
	assert_true(unserved(set, "a.sub.example."));
	assert_false(unserved(set, "org."));
	assert_false(unserved(set, "xexample."));
	apex_zoneset_release(set);

	/* example. served: sub.example. still is not, and stays deeper */
	assert_int_equal(apex_zonetable_publish(&table, make_zone("example.", 1)), APEX_OK);
	set = apex_zonetable_acquire(&table, NULL);
	assert_false(unserved(set, "www.example."));
	assert_false(unserved(set, "example."));
	assert_true(unserved(set, "a.sub.example."));
	size_t listed = set->unserved_count; /* may still list example. */
	apex_zoneset_release(set);

	/* configuring a served zone changes nothing */
	assert_int_equal(apex_zonetable_configure(&table, example), APEX_OK);
	set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count, 1);
	assert_int_equal(set->unserved_count, listed);
	assert_false(unserved(set, "www.example."));
	apex_zoneset_release(set);

	/* removing an unserved zone: gone; removing it again: not found */
	assert_int_equal(apex_zonetable_remove(&table, sub), APEX_OK);
	assert_int_equal(apex_zonetable_remove(&table, sub), APEX_ENOENT);
	set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count, 1);
	assert_int_equal(set->unserved_count, 0);
	assert_false(unserved(set, "a.sub.example."));
	apex_zoneset_release(set);

	/* a served zone removed is not unserved: nothing of it remains */
	assert_int_equal(apex_zonetable_remove(&table, example), APEX_OK);
	set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count + set->unserved_count, 0);
	apex_zoneset_release(set);
	apex_zonetable_destroy(&table);
}

/* The slot of origin in the current set. */
static uint32_t slot_of(apex_zonetable_t *table, const char *origin)
{
	apex_zoneset_t *set = apex_zonetable_acquire(table, NULL);
	const apex_zone_t *zone = find(set, origin);
	assert_non_null(zone);
	uint32_t slot = zone->stats_slot;
	apex_zoneset_release(set);
	return slot;
}

/*
 * Statistics slots: one per origin, the same for every version of it,
 * given back to a zone removed and added again, and each slot's origin
 * readable.
 */
static void test_stats_slots(void **state)
{
	(void)state;
	apex_zonetable_t table;
	uint8_t origin[APEX_NAME_MAX];

	assert_int_equal(apex_zonetable_init(&table), APEX_OK);
	assert_int_equal(apex_zonetable_slot_count(&table), 0);
	assert_false(apex_zonetable_slot_origin(&table, 0, origin));
	assert_int_equal(apex_zonetable_publish(&table, make_zone("example.", 1)), APEX_OK);
	assert_int_equal(apex_zonetable_publish(&table, make_zone("nu.", 1)), APEX_OK);
	assert_int_equal(apex_zonetable_publish(&table, make_zone(".", 1)), APEX_OK);
	uint32_t example = slot_of(&table, "example."), nu = slot_of(&table, "nu.");
	uint32_t root = slot_of(&table, ".");
	assert_true(example != nu && nu != root && example != root);
	assert_int_equal(apex_zonetable_slot_count(&table), 3);
	assert_true(example < 3 && nu < 3 && root < 3);

	/* a new version keeps its slot */
	assert_int_equal(apex_zonetable_publish(&table, make_zone("nu.", 2)), APEX_OK);
	assert_int_equal(slot_of(&table, "nu."), nu);
	/* removed and added again: the same slot, none handed out anew */
	assert_int_equal(apex_zonetable_remove(&table, (const uint8_t *)"nu"), APEX_OK);
	assert_int_equal(apex_zonetable_publish(&table, make_zone("sub.example.", 1)), APEX_OK);
	assert_int_equal(apex_zonetable_publish(&table, make_zone("NU.", 3)), APEX_OK);
	assert_int_equal(slot_of(&table, "nu."), nu);
	assert_int_equal(apex_zonetable_slot_count(&table), 4);
	assert_int_equal(slot_of(&table, "sub.example."), 3);

	assert_true(apex_zonetable_slot_origin(&table, nu, origin));
	assert_true(apex_name_equal(origin, (const uint8_t *)"nu"));
	assert_true(apex_zonetable_slot_origin(&table, root, origin));
	assert_true(apex_name_equal(origin, (const uint8_t *)""));
	assert_false(apex_zonetable_slot_origin(&table, 4, origin));

	/* many origins (the slot index grown several times), removed, then
	 * added again one by one and as a batch: each its own slot again */
	enum { MANY = 300 };
	char name[32];
	uint32_t slots[MANY];
	apex_zone_t *batch[MANY / 2];
	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "m%03d.example.", i);
		assert_int_equal(apex_zonetable_publish(&table, make_zone(name, 1)), APEX_OK);
		slots[i] = slot_of(&table, name);
		assert_int_equal(slots[i], 4 + i);
	}
	for (int i = 0; i < MANY; i++) {
		uint8_t wire[APEX_NAME_MAX];
		snprintf(name, sizeof(name), "m%03d.example.", i);
		assert_true(apex_name_from_str(name, wire) > 0);
		assert_int_equal(apex_zonetable_remove(&table, wire), APEX_OK);
	}
	for (int i = 0; i < MANY / 2; i++) {
		snprintf(name, sizeof(name), "m%03d.example.", MANY - 1 - i); /* from the end */
		assert_int_equal(apex_zonetable_publish(&table, make_zone(name, 2)), APEX_OK);
		snprintf(name, sizeof(name), "m%03d.example.", i);
		batch[i] = make_zone(name, 2);
	}
	assert_int_equal(apex_zonetable_publish_many(&table, batch, MANY / 2), APEX_OK);
	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "m%03d.example.", i);
		assert_int_equal(slot_of(&table, name), slots[i]);
	}
	assert_int_equal(apex_zonetable_slot_count(&table), 4 + MANY);
	apex_zonetable_destroy(&table);
}

/* Concurrent pick-up: readers keep acquiring and reading while versions are published. */
#define READERS 3
#define PUBLISHES 200

static apex_zonetable_t shared_table;
static atomic_bool publishing_done;

static void *reader(void *arg)
{
	unsigned long long seen = 0;
	apex_zoneset_t *set = apex_zonetable_acquire(&shared_table, &seen);
	unsigned last_serial = 0;
	long checks = 0;
	while (!atomic_load(&publishing_done) && checks < 10000000) {
		if (apex_zonetable_generation(&shared_table) != seen) {
			apex_zoneset_release(set);
			set = apex_zonetable_acquire(&shared_table, &seen);
		}
		const apex_zone_t *z = find(set, "www.example.");
		if (z != NULL) {
			/* Serials only go up: a reader never sees an older version. */
			if (z->serial < last_serial)
				fail_msg("serial went back from %u to %u", last_serial, z->serial);
			last_serial = z->serial;
			if (z->soa == NULL || z->apex == NULL)
				fail_msg("half-built version seen");
		}
		checks++;
	}
	apex_zoneset_release(set);
	return NULL;
}

/* Closest enclosing origin of name among the published ones, by comparing names. */
static const char *brute_find(const char *const *origins, size_t count, const char *name)
{
	uint8_t n[APEX_NAME_MAX], o[APEX_NAME_MAX];
	assert_true(apex_name_from_str(name, n) > 0);
	const char *best = NULL;
	int best_labels = -1;
	for (size_t i = 0; i < count; i++) {
		assert_true(apex_name_from_str(origins[i], o) > 0);
		if (apex_name_is_subdomain(n, o) && apex_name_labels(o) > best_labels) {
			best = origins[i];
			best_labels = apex_name_labels(o);
		}
	}
	return best;
}

/* Many zones, nested several deep: every lookup, by hash probes from the
 * deepest origin down, finds what a comparison of names finds. */
static void test_many_zones(void **state)
{
	(void)state;
	enum { TOPS = 40, SUBS = 4 };
	static char names[TOPS * (SUBS + 2) + 1][64];
	const char *origins[TOPS * (SUBS + 2) + 1];
	size_t count = 0;
	apex_zonetable_t table;
	assert_int_equal(apex_zonetable_init(&table), APEX_OK);
	for (int t = 0; t < TOPS; t++) {
		snprintf(names[count], sizeof(names[0]), "tld%d.", t);
		origins[count] = names[count];
		count++;
		for (int s = 0; s < SUBS; s++) {
			/* every other TLD has its second-level zones, some a third level */
			if (t % 2 == 1)
				break;
			snprintf(names[count], sizeof(names[0]), "Sub%d.tld%d.", s, t);
			origins[count] = names[count];
			count++;
		}
		if (t % 4 == 0) {
			snprintf(names[count], sizeof(names[0]), "a.b.sub1.tld%d.", t);
			origins[count] = names[count];
			count++;
		}
	}
	for (size_t i = 0; i < count; i++)
		assert_int_equal(apex_zonetable_publish(&table, make_zone(origins[i], 1)), APEX_OK);

	apex_zoneset_t *set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count, count);
	for (int t = 0; t < TOPS + 2; t++) {
		const char *forms[] = { "tld%d.",        "SUB1.TLD%d.",     "x.sub2.tld%d.",
					"b.sub1.tld%d.", "a.b.sub1.tld%d.", "z.A.B.SUB1.tld%d.",
					"q.sub9.tld%d." };
		for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
			char name[80];
			snprintf(name, sizeof(name), forms[f], t);
			const char *want = brute_find(origins, count, name);
			const apex_zone_t *got = find(set, name);
			if (want == NULL) {
				if (got != NULL)
					fail_msg("%s: found a zone, none expected", name);
				continue;
			}
			uint8_t w[APEX_NAME_MAX];
			assert_true(apex_name_from_str(want, w) > 0);
			if (got == NULL || !apex_name_equal(got->origin, w))
				fail_msg("%s: expected zone %s", name, want);
		}
	}
	assert_null(find(set, "."));
	assert_null(find(set, "com."));
	apex_zoneset_release(set);

	/* With the root zone served, everything else falls back to it. */
	assert_int_equal(apex_zonetable_publish(&table, make_zone(".", 1)), APEX_OK);
	set = apex_zonetable_acquire(&table, NULL);
	const apex_zone_t *root = find(set, "com.");
	assert_non_null(root);
	assert_int_equal(root->origin_labels, 0);
	assert_ptr_equal(find(set, "www.example.com."), root);
	assert_ptr_not_equal(find(set, "www.tld3."), root);
	apex_zoneset_release(set);
	apex_zonetable_destroy(&table);
}

/*
 * Many zones configured and published at once (a first load): the same
 * sets as one at a time, each origin no longer unserved once published,
 * replacing what the table holds, keeping the slots given before, and
 * origins configured twice or served already not configured again.
 */
static void test_batches(void **state)
{
	(void)state;
	enum { COUNT = 300 };
	static char names[COUNT][32];
	static uint8_t wires[COUNT][APEX_NAME_MAX];
	const uint8_t *origins[COUNT];
	apex_zone_t *zones[COUNT];
	apex_zonetable_t table;

	assert_int_equal(apex_zonetable_init(&table), APEX_OK);
	for (int i = 0; i < COUNT; i++) {
		snprintf(names[i], sizeof(names[i]), "z%03d.test.", (i * 7919) % COUNT);
		assert_true(apex_name_from_str(names[i], wires[i]) > 0);
		origins[i] = wires[i];
	}
	/* one of them served first, with its slot */
	assert_int_equal(apex_zonetable_publish(&table, make_zone(names[5], 1)), APEX_OK);
	uint32_t slot5 = slot_of(&table, names[5]);
	assert_int_equal(apex_zonetable_configure_many(&table, origins, COUNT), APEX_OK);
	assert_int_equal(apex_zonetable_configure_many(&table, origins, COUNT), APEX_OK);
	apex_zoneset_t *set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count, 1);
	assert_int_equal(set->unserved_count, COUNT - 1); /* once each, not the served one */
	assert_true(unserved(set, "www.z017.test."));
	apex_zoneset_release(set);

	/* all but the last published together, in the order loaded */
	for (int i = 0; i < COUNT; i++)
		zones[i] = make_zone(names[i], 2);
	assert_int_equal(apex_zonetable_publish_many(&table, zones, COUNT - 1), APEX_OK);
	set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count, COUNT - 1);
	assert_int_equal(set->unserved_count, 1);
	for (int i = 0; i < COUNT - 1; i++) {
		char name[48];
		snprintf(name, sizeof(name), "www.%s", names[i]);
		const apex_zone_t *z = find(set, name);
		assert_non_null(z);
		assert_true(apex_name_equal(z->origin, wires[i]));
		assert_int_equal(z->serial, 2);
		assert_false(unserved(set, name));
	}
	char last[48];
	snprintf(last, sizeof(last), "www.%s", names[COUNT - 1]);
	assert_null(find(set, last));
	assert_true(unserved(set, last));
	apex_zoneset_release(set);
	assert_int_equal(slot_of(&table, names[5]), slot5);
	/* distinct slots */
	for (int i = 0; i < COUNT - 1; i++)
		for (int j = i + 1; j < COUNT - 1; j++)
			assert_int_not_equal(slot_of(&table, names[i]), slot_of(&table, names[j]));
	/* the last one alone, as a reload would */
	assert_int_equal(apex_zonetable_publish(&table, zones[COUNT - 1]), APEX_OK);
	set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count, COUNT);
	assert_int_equal(set->unserved_count, 0);
	apex_zoneset_release(set);
	assert_int_equal(apex_zonetable_publish_many(&table, zones, 0), APEX_OK);
	apex_zonetable_destroy(&table);
}

/*
 * Configured zones served one at a time, as a catalog's members are
 * transferred: each is served, not unserved, from its publication on;
 * the others stay unserved; the index, kept from set to set, never holds
 * more served origins than unserved ones, and is empty once all are
 * served; a zone removed while its index still lists it is unknown, not
 * unserved.
 */
static void test_unserved_served_one_at_a_time(void **state)
{
	(void)state;
	enum { COUNT = 257 };
	static char names[COUNT][32];
	static uint8_t wires[COUNT][APEX_NAME_MAX];
	const uint8_t *origins[COUNT];
	apex_zonetable_t table;

	assert_int_equal(apex_zonetable_init(&table), APEX_OK);
	for (int i = 0; i < COUNT; i++) {
		snprintf(names[i], sizeof(names[i]), "m%03d.example.", i);
		assert_true(apex_name_from_str(names[i], wires[i]) > 0);
		origins[i] = wires[i];
	}
	assert_int_equal(apex_zonetable_configure_many(&table, origins, COUNT), APEX_OK);
	bool removed_listed = false;
	for (int i = 0; i < COUNT; i++) {
		assert_int_equal(apex_zonetable_publish(&table, make_zone(names[i], 1)), APEX_OK);
		apex_zoneset_t *set = apex_zonetable_acquire(&table, NULL);
		size_t live = (size_t)(COUNT - 1 - i);
		assert_true(set->unserved_count >= live);
		assert_true(set->unserved_count <= 2 * live);
		char name[48];
		for (int j = 0; j < COUNT; j++) {
			snprintf(name, sizeof(name), "www.%s", names[j]);
			if (unserved(set, name) != (j > i))
				fail_msg("after %d published: %s %s", i + 1, name,
					 j > i ? "not unserved" : "unserved");
		}
		/* the first zone removed while the index lists it still */
		if (!removed_listed && i > 0 && set->unserved_count > live) {
			apex_zoneset_release(set);
			assert_int_equal(apex_zonetable_remove(&table, wires[0]), APEX_OK);
			set = apex_zonetable_acquire(&table, NULL);
			snprintf(name, sizeof(name), "www.%s", names[0]);
			assert_null(find(set, name));
			assert_false(unserved(set, name));
			assert_true(unserved(set, "www.m256.example."));
			removed_listed = true;
		}
		apex_zoneset_release(set);
	}
	assert_true(removed_listed);
	apex_zoneset_t *set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count, COUNT - 1);
	assert_int_equal(set->unserved_count, 0);
	apex_zoneset_release(set);
	apex_zonetable_destroy(&table);
}

/*
 * Many zones removed at once (a reconfig taking out catalog members):
 * served ones and configured ones gone in one set, the others kept with
 * their slots, unknown origins ignored, and APEX_ENOENT when none of the
 * origins is known.
 */
static void test_remove_many(void **state)
{
	(void)state;
	enum { COUNT = 40 };
	static char names[COUNT][32];
	static uint8_t wires[COUNT + 1][APEX_NAME_MAX];
	const uint8_t *origins[COUNT + 1];
	apex_zonetable_t table;

	assert_int_equal(apex_zonetable_init(&table), APEX_OK);
	for (int i = 0; i < COUNT; i++) {
		snprintf(names[i], sizeof(names[i]), "r%02d.test.", i);
		assert_true(apex_name_from_str(names[i], wires[i]) > 0);
		origins[i] = wires[i];
	}
	assert_true(apex_name_from_str("unknown.test.", wires[COUNT]) > 0);
	origins[COUNT] = wires[COUNT];
	assert_int_equal(apex_zonetable_configure_many(&table, origins, COUNT), APEX_OK);
	for (int i = 2; i < COUNT; i += 4) /* 2, 6, 10, ... served */
		assert_int_equal(apex_zonetable_publish(&table, make_zone(names[i], 1)), APEX_OK);
	uint32_t slot38 = slot_of(&table, names[38]);

	/* served ones (2, 10, 18, ...), unserved ones (1, 5, 9, ...) and an
	 * unknown one: fewer served than unserved, so that the index is not
	 * built again for its entries served alone */
	const uint8_t *gone[COUNT + 1];
	size_t count = 0;
	for (int i = 0; i < COUNT; i++)
		if (i % 4 == 1 || i % 8 == 2)
			gone[count++] = origins[i];
	gone[count++] = origins[COUNT];
	assert_int_equal(apex_zonetable_remove_many(&table, gone, count), APEX_OK);
	apex_zoneset_t *set = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(set->count, COUNT / 8);
	for (int i = 0; i < COUNT; i++) {
		char name[48];
		snprintf(name, sizeof(name), "www.%s", names[i]);
		bool removed = i % 4 == 1 || i % 8 == 2;
		bool served = !removed && i % 4 == 2;
		if ((find(set, name) != NULL) != served)
			fail_msg("%s: %s", names[i], served ? "not served" : "served");
		if (unserved(set, name) != (!removed && !served))
			fail_msg("%s: %s", names[i],
				 removed || served ? "unserved" : "not unserved");
	}
	apex_zoneset_release(set);
	assert_int_equal(slot_of(&table, names[38]), slot38);
	assert_int_equal(apex_zonetable_remove_many(&table, gone, count), APEX_ENOENT);
	apex_zonetable_destroy(&table);
}

static unsigned refs(apex_zone_t *zone)
{
	return atomic_load(&zone->refcount);
}

/*
 * The sets' references to their zones (held in bags shared between sets):
 * one for the zones of the table's set, one more for a zone in a set
 * still held and no longer in the table's, none for a zone removed once
 * no set holds it, whether published one at a time or at once.
 */
static void test_references(void **state)
{
	(void)state;
	enum { COUNT = 600 };
	static char names[COUNT][32];
	apex_zone_t *zones[COUNT], *held[COUNT];
	apex_zonetable_t table;

	assert_int_equal(apex_zonetable_init(&table), APEX_OK);
	for (int i = 0; i < COUNT; i++) {
		snprintf(names[i], sizeof(names[i]), "b%03d.test.", i);
		held[i] = zones[i] = make_zone(names[i], 1);
		apex_zone_ref(held[i]); /* the test's own */
	}
	assert_int_equal(apex_zonetable_publish_many(&table, zones, COUNT / 2), APEX_OK);
	for (int i = COUNT / 2; i < COUNT; i++)
		assert_int_equal(apex_zonetable_publish(&table, held[i]), APEX_OK);
	for (int i = 0; i < COUNT; i++)
		assert_int_equal(refs(held[i]), 2);

	/* a new version of b007, the set before held: the old version stays
	 * referenced by it alone */
	apex_zoneset_t *before = apex_zonetable_acquire(&table, NULL);
	apex_zone_t *v2 = make_zone(names[7], 2);
	apex_zone_ref(v2);
	assert_int_equal(apex_zonetable_publish(&table, v2), APEX_OK);
	assert_int_equal(refs(held[7]), 2);
	assert_int_equal(refs(v2), 2);
	apex_zoneset_release(before);
	assert_int_equal(refs(held[7]), 1);
	for (int i = 0; i < COUNT; i++)
		if (i != 7 && refs(held[i]) != 2)
			fail_msg("%s: %u references", names[i], refs(held[i]));

	/* b009 removed, b011 to b030 removed at once */
	uint8_t wires[21][APEX_NAME_MAX];
	const uint8_t *gone[21];
	assert_true(apex_name_from_str(names[9], wires[0]) > 0);
	assert_int_equal(apex_zonetable_remove(&table, wires[0]), APEX_OK);
	for (int i = 0; i < 20; i++) {
		assert_true(apex_name_from_str(names[11 + i], wires[1 + i]) > 0);
		gone[i] = wires[1 + i];
	}
	assert_int_equal(apex_zonetable_remove_many(&table, gone, 20), APEX_OK);
	for (int i = 0; i < COUNT; i++) {
		unsigned want = i == 7 || i == 9 || (i >= 11 && i <= 30) ? 1 : 2;
		if (refs(held[i]) != want)
			fail_msg("%s: %u references, %u expected", names[i], refs(held[i]), want);
	}
	apex_zonetable_destroy(&table);
	for (int i = 0; i < COUNT; i++) {
		assert_int_equal(refs(held[i]), 1);
		apex_zone_unref(held[i]);
	}
	assert_int_equal(refs(v2), 1);
	apex_zone_unref(v2);
}

static void test_concurrent_publish(void **state)
{
	assert_int_equal(apex_zonetable_init(&shared_table), APEX_OK);
	/* Build every version first so the race window is the publish itself. */
	apex_zone_t **versions = calloc(PUBLISHES, sizeof(*versions));
	assert_non_null(versions);
	for (unsigned i = 0; i < PUBLISHES; i++)
		versions[i] = make_zone("example.", i + 1);

	pthread_t threads[READERS];
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&threads[i], NULL, reader, NULL), 0);
	for (unsigned i = 0; i < PUBLISHES; i++) {
		assert_int_equal(apex_zonetable_publish(&shared_table, versions[i]), APEX_OK);
		if (i % 16 == 0)
			sched_yield();
	}
	atomic_store(&publishing_done, true);
	for (int i = 0; i < READERS; i++)
		pthread_join(threads[i], NULL);

	apex_zoneset_t *set = apex_zonetable_acquire(&shared_table, NULL);
	assert_int_equal(find(set, "www.example.")->serial, PUBLISHES);
	apex_zoneset_release(set);
	apex_zonetable_destroy(&shared_table);
	free(versions);
}

/* The bag of the zone with this origin (zone_bags.h). */
static unsigned bag_of_name(const char *origin)
{
	uint8_t wire[APEX_NAME_MAX];
	assert_true(apex_name_from_str(origin, wire) > 0);
	return apex_zone_bags_bag(apex_zone_bags_spread(apex_name_hash(wire)));
}

/* Whether a and b share every bag but `except` (and differ there), and
 * every shelf of bags but except's. */
static void shares_bags_but(const apex_zoneset_t *a, const apex_zoneset_t *b, unsigned except)
{
	for (unsigned i = 0; i < APEX_ZONE_BAGS; i++) {
		if (i == except)
			assert_ptr_not_equal(a->bags.bag[i], b->bags.bag[i]);
		else
			assert_ptr_equal(a->bags.bag[i], b->bags.bag[i]);
	}
	for (unsigned s = 0; s < APEX_ZONE_SHELVES; s++) {
		if (s == except / APEX_ZONE_SHELF_BAGS)
			assert_ptr_not_equal(a->bags.shelf[s], b->bags.shelf[s]);
		else
			assert_ptr_equal(a->bags.shelf[s], b->bags.shelf[s]);
	}
}

/*
 * A publication does not copy the table of all zones: among 2,000, a new
 * version, a new zone or a removal makes one bag again and shares every
 * other with the set before; every zone is still found, the listing is in
 * canonical order.
 */
static void test_publication_touches_one_bag(void **state)
{
	(void)state;
	enum { COUNT = 2000 };
	static char names[COUNT][32];
	apex_zone_t *zones[COUNT];
	apex_zonetable_t table;

	assert_int_equal(apex_zonetable_init(&table), APEX_OK);
	for (int i = 0; i < COUNT; i++) {
		snprintf(names[i], sizeof(names[i]), "m%04d.test.", i);
		zones[i] = make_zone(names[i], 1);
	}
	assert_int_equal(apex_zonetable_publish_many(&table, zones, COUNT - 1), APEX_OK);
	apex_zoneset_t *before = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(before->count, COUNT - 1);

	/* a new version of one */
	assert_int_equal(apex_zonetable_publish(&table, make_zone(names[7], 2)), APEX_OK);
	apex_zoneset_t *after = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(after->count, COUNT - 1);
	shares_bags_but(before, after, bag_of_name(names[7]));
	assert_int_equal(find(after, "www.m0007.test.")->serial, 2);
	assert_int_equal(find(before, "www.m0007.test.")->serial, 1);
	apex_zoneset_release(before);

	/* a zone new to the set */
	before = after;
	assert_int_equal(apex_zonetable_publish(&table, zones[COUNT - 1]), APEX_OK);
	after = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(after->count, COUNT);
	shares_bags_but(before, after, bag_of_name(names[COUNT - 1]));
	apex_zoneset_release(before);

	/* a removal */
	uint8_t wire[APEX_NAME_MAX];
	assert_true(apex_name_from_str(names[1234], wire) > 0);
	before = after;
	assert_int_equal(apex_zonetable_remove(&table, wire), APEX_OK);
	after = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(after->count, COUNT - 1);
	shares_bags_but(before, after, bag_of_name(names[1234]));
	assert_null(apex_zoneset_get(after, wire));
	assert_non_null(apex_zoneset_get(before, wire));
	apex_zoneset_release(before);

	/* every other zone found, by origin and below it; listed in order */
	const apex_zone_t **listed = malloc(after->count * sizeof(*listed));
	assert_non_null(listed);
	apex_zoneset_list(after, listed);
	for (int i = 0, n = 0; i < COUNT; i++) {
		char below[48];
		snprintf(below, sizeof(below), "a.b.%s", names[i]);
		assert_true(apex_name_from_str(names[i], wire) > 0);
		if (i == 1234) {
			assert_null(find(after, below));
			continue;
		}
		assert_non_null(apex_zoneset_get(after, wire));
		assert_true(apex_name_equal(find(after, below)->origin, wire));
		assert_true(apex_name_equal(listed[n++]->origin, wire));
	}
	free(listed);
	assert_int_equal(after->max_origin_labels, 2);
	apex_zoneset_release(after);

	/* an origin given twice to remove_many is removed once */
	assert_true(apex_name_from_str(names[5], wire) > 0);
	const uint8_t *twice[2] = { wire, wire };
	assert_int_equal(apex_zonetable_remove_many(&table, twice, 2), APEX_OK);
	after = apex_zonetable_acquire(&table, NULL);
	assert_int_equal(after->count, COUNT - 2);
	assert_null(apex_zoneset_get(after, wire));
	apex_zoneset_release(after);
	apex_zonetable_destroy(&table);
}

/*
 * A publisher that is kept off the CPU while it builds the next set (the
 * reload thread runs at the lowest priority) must not hold up a worker's
 * pick-up: while a publication is under way (its turn taken, publish_lock
 * held), acquiring the current set does not wait, and a worker that sees
 * a new generation finds the rwlock free.
 */
static void *publish_in_thread(void *arg)
{
	apex_zonetable_t *table = arg;
	apex_zone_t *zone = make_zone("example.", 2);
	assert_int_equal(apex_zonetable_publish(table, zone), APEX_OK);
	return NULL;
}

static void test_pickup_never_waits_for_a_publisher(void **state)
{
	(void)state;
	apex_zonetable_t table;
	unsigned long long generation;
	pthread_t publisher;

	assert_int_equal(apex_zonetable_init(&table), APEX_OK);
	assert_int_equal(apex_zonetable_publish(&table, make_zone("example.", 1)), APEX_OK);
	/* a publication in progress: its turn taken, the next set not ready */
	pthread_mutex_lock(&table.publish_lock);
	assert_int_equal(pthread_create(&publisher, NULL, publish_in_thread, &table), 0);
	apex_zoneset_t *set = apex_zonetable_acquire(&table, &generation); /* returns */
	assert_non_null(find(set, "www.example."));
	assert_int_equal(apex_zonetable_generation(&table), generation);
	/* the rwlock is free the whole time: a reader takes it at once */
	assert_int_equal(pthread_rwlock_tryrdlock(&table.lock.lock), 0);
	pthread_rwlock_unlock(&table.lock.lock);
	apex_zoneset_release(set);
	pthread_mutex_unlock(&table.publish_lock);
	pthread_join(publisher, NULL);
	assert_true(apex_zonetable_generation(&table) > generation);
	set = apex_zonetable_acquire(&table, &generation);
	assert_int_equal(find(set, "www.example.")->serial, 2);
	apex_zoneset_release(set);
	apex_zonetable_destroy(&table);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_find_remove),
		cmocka_unit_test(test_stats_slots),
		cmocka_unit_test(test_unserved),
		cmocka_unit_test(test_unserved_served_one_at_a_time),
		cmocka_unit_test(test_remove_many),
		cmocka_unit_test(test_references),
		cmocka_unit_test(test_many_zones),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_concurrent_publish),
		cmocka_unit_test(test_publication_touches_one_bag),
		cmocka_unit_test(test_pickup_never_waits_for_a_publisher),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
