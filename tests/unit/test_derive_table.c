/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hash table of a derived version (lib/zone/derive_table.c): old's
 * pages shared, copies of those the new and removed names reach.  Names
 * are chosen whose first slot is the last of a page, so that their run
 * goes on into the next page: the insertions write across the boundary,
 * and a removal moves the names after it back across it.  Each version
 * finds every name it has and none it lacks, and the version it came
 * from is left as it was, slot for slot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/name_hash.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "zone/node_slots.h"
#include "zone/page_discard.h"
#include "ixfr_one_record.h"
#include "zone_records.h"

enum { RUN = 4 };

static const uint8_t TXT[] = { 3, 'r', 'u', 'n' };

/* Names below the root zone's apex whose first slot in zone's table is
 * the last of a page, a free one, all the same (RUN of them, into names,
 * each APEX_NAME_MAX bytes). */
static void names_at_page_end(const apex_zone_t *zone, uint8_t names[RUN][APEX_NAME_MAX])
{
	uint32_t target = UINT32_MAX;
	unsigned found = 0;
	char text[64];

	for (unsigned i = 0; found < RUN && i < 50000000; i++) {
		snprintf(text, sizeof(text), "pageend%u.", i);
		uint8_t *name = names[found];
		assert_true(apex_name_from_str(text, name) > 0);
		uint32_t first = apex_node_table_first(apex_name_hash(name), zone->node_table_size);
		/* a free slot there: the first name's copy goes to that page,
		 * the others' to the next */
		if ((first & (APEX_NODE_TABLE_PAGE - 1)) != APEX_NODE_TABLE_PAGE - 1 ||
		    (target != UINT32_MAX && first != target) ||
		    apex_node_table_get(zone->node_table_pages, first) != 0 ||
		    first + RUN + 1 >= zone->node_table_size)
			continue;
		target = first;
		found++;
	}
	assert_int_equal(found, RUN);
}

/* The version after old with a TXT record added at each of add[0..n_add)
 * and removed from each of del[0..n_del) (one change set), derived in
 * place. */
static apex_zone_t *changed(apex_zone_t *old, uint8_t (*add)[APEX_NAME_MAX], size_t n_add,
			    uint8_t (*del)[APEX_NAME_MAX], size_t n_del)
{
	apex_rr_t added[RUN], removed[RUN];
	bool in_place = false;

	assert_true(n_add <= RUN && n_del <= RUN);
	for (size_t i = 0; i < n_add; i++)
		added[i] =
			(apex_rr_t){ add[i], APEX_TYPE_TXT, APEX_CLASS_IN, 3600, sizeof(TXT), TXT };
	for (size_t i = 0; i < n_del; i++)
		removed[i] =
			(apex_rr_t){ del[i], APEX_TYPE_TXT, APEX_CLASS_IN, 3600, sizeof(TXT), TXT };
	apex_zone_t *zone = records_changed(old, removed, n_del, added, n_add, &in_place);
	assert_true(in_place);
	return zone;
}

/* zone finds name by its hash and key (the table's way) or not. */
static bool finds(const apex_zone_t *zone, const uint8_t *name)
{
	uint8_t key[APEX_NAME_MAX];
	size_t key_size = apex_name_key(name, key, NULL);
	const apex_node_t *node = apex_zone_find_hashed(zone, apex_name_hash(name), key, key_size);

	if (node == NULL)
		return false;
	assert_int_equal(node->hash, apex_name_hash(name));
	return true;
}

/* Every name of zone's index is found by the table. */
static void finds_every_name(const apex_zone_t *zone)
{
	for (size_t r = 0; r < zone->node_count; r++) {
		const apex_node_t *node = apex_zone_node_at(zone, r);
		assert_ptr_equal(apex_zone_find_hashed(zone, node->hash, apex_node_key(node),
						       node->key_size),
				 node);
	}
}

/* zone's slots, in one malloc'd array (the caller frees it). */
static uint32_t *table_snapshot(const apex_zone_t *zone)
{
	uint32_t *slots = malloc(zone->node_table_length * sizeof(*slots));

	assert_non_null(slots);
	for (uint32_t i = 0; i < zone->node_table_length; i++)
		slots[i] = apex_node_table_get(zone->node_table_pages, i);
	return slots;
}

static void same_slots(const apex_zone_t *zone, const uint32_t *slots)
{
	for (uint32_t i = 0; i < zone->node_table_length; i++)
		assert_int_equal(apex_node_table_get(zone->node_table_pages, i), slots[i]);
}

/* Pages of b's table that are not a's. */
static size_t pages_not_shared(const apex_zone_t *a, const apex_zone_t *b)
{
	size_t count = 0;

	assert_int_equal(a->node_table_length, b->node_table_length);
	for (size_t p = 0; p < apex_node_table_page_count(a->node_table_length); p++)
		count += a->node_table_pages[p] != b->node_table_pages[p];
	return count;
}

static void runs_across_pages(void **state)
{
	uint8_t names[RUN][APEX_NAME_MAX];
	apex_zone_t *v0 = load_file("root.zone", ".");

	(void)state;
	assert_int_equal(apex_precompute(v0), APEX_OK);
	assert_true(apex_node_table_page_count(v0->node_table_length) > 2);
	names_at_page_end(v0, names);
	uint32_t *slots0 = table_snapshot(v0);

	/* RUN names from the last slot of a page on: the run crosses into
	 * the next page, and only those two pages are copied */
	apex_zone_t *v1 = changed(v0, names, RUN, NULL, 0);
	for (unsigned i = 0; i < RUN; i++) {
		assert_true(finds(v1, names[i]));
		assert_false(finds(v0, names[i]));
	}
	size_t copied = pages_not_shared(v0, v1);
	assert_true(copied == 2);
	same_slots(v0, slots0);
	finds_every_name(v0);
	finds_every_name(v1);

	/* the first removed: those after it move back, across the page's
	 * end; the version before keeps them where they were */
	uint32_t *slots1 = table_snapshot(v1);
	apex_zone_t *v2 = changed(v1, NULL, 0, names, 1);
	assert_false(finds(v2, names[0]));
	for (unsigned i = 1; i < RUN; i++)
		assert_true(finds(v2, names[i]));
	for (unsigned i = 0; i < RUN; i++)
		assert_true(finds(v1, names[i]));
	assert_true(pages_not_shared(v1, v2) <= 2);
	same_slots(v1, slots1);
	finds_every_name(v2);

	/* all removed: v2's table back to v0's slots */
	apex_zone_t *v3 = changed(v2, NULL, 0, names + 1, RUN - 1);
	same_slots(v3, slots0);
	for (unsigned i = 0; i < RUN; i++)
		assert_false(finds(v3, names[i]));
	finds_every_name(v3);
	finds_every_name(v2);

	free(slots0);
	free(slots1);
	apex_zone_unref(v3);
	apex_zone_unref(v2);
	apex_zone_unref(v1);
	apex_zone_unref(v0);
}

/* A page replaced and kept by the chain (page_discard.h) is where the
 * next derivation's copy goes, and the versions still find every name. */
static void kept_page_reused(void **state)
{
	uint8_t names[RUN][APEX_NAME_MAX];
	apex_zone_t *v0 = load_file("root.zone", ".");

	(void)state;
	atomic_store(&apex_spare_pages_max, (size_t)256);
	assert_int_equal(apex_precompute(v0), APEX_OK);
	names_at_page_end(v0, names);
	size_t p = apex_node_table_first(apex_name_hash(names[0]), v0->node_table_size) >>
		   APEX_NODE_TABLE_PAGE_BITS;
	/* v1 and v2 each copy page p (the name added, then removed) */
	apex_zone_t *v1 = changed(v0, names, 1, NULL, 0);
	apex_zone_t *v2 = changed(v1, NULL, 0, names, 1);
	const uint32_t *v1_page = v1->node_table_pages[p];
	assert_ptr_not_equal(v1_page, v0->node_table_pages[p]);
	assert_ptr_not_equal(v2->node_table_pages[p], v1_page);
	/* v0's page and v1's copy, replaced and read by nobody, are kept
	 * (as many as the chain keeps, with its pages of RRsets pointers) */
	apex_zone_release_index(v0);
	(void)apex_zone_discard_replaced(v0, v1);
	apex_zone_release_index(v1);
	(void)apex_zone_discard_replaced(v1, v2);
	const apex_kept_pages_t *kept = &v0->spare_small;
	assert_true(kept->count >= 1);
	void **before = malloc(kept->count * sizeof(*before));
	uint32_t count = kept->count;
	assert_non_null(before);
	memcpy(before, kept->pages, count * sizeof(*before));
	/* v3 copies page p into one of the pages kept */
	apex_zone_t *v3 = changed(v2, names, 1, NULL, 0);
	bool taken = false;
	for (uint32_t i = 0; i < count; i++)
		taken |= before[i] == v3->node_table_pages[p];
	assert_true(taken);
	assert_true(finds(v3, names[0]));
	assert_false(finds(v2, names[0]));
	finds_every_name(v2);
	finds_every_name(v3);
	free(before);
	apex_zone_unref(v3);
	apex_zone_unref(v2);
	apex_zone_unref(v1);
	apex_zone_unref(v0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_across_pages),
		cmocka_unit_test(kept_page_reused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
