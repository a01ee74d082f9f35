/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The name index's block kept for the chain's next derivation
 * (zone/index_block.h): a version derived with a name added has its index
 * in a block of its own; once the version is released, its chain keeps
 * the block, and the next derivation with a name added writes its index
 * there; the versions read every record as a whole build of theirs does;
 * a block is not kept twice, one dropped is kept no more, and one kept
 * goes with the chain; a large one is aligned to a huge page; one made
 * ahead of a derivation is taken by it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "query/precompute.h"
#include "util/error.h"
#include "util/huge_map.h"
#include "xfr/version_compact.h"
#include "zone/index_block.h"
#include "ixfr_one_record.h"
#include "zone_records.h"

/* The version after old with a TXT record at the new name "index-k." (a
 * name added: the index is copied), derived in place. */
static apex_zone_t *name_more(apex_zone_t *old, unsigned k)
{
	char text[32];
	uint8_t name[APEX_NAME_MAX], txt[] = { 1, 'x' };
	bool in_place = false;

	snprintf(text, sizeof(text), "index-%u.", k);
	assert_true(apex_name_from_str(text, name) > 0);
	apex_rr_t rr = { name, APEX_TYPE_TXT, APEX_CLASS_IN, 3600, sizeof(txt), txt };
	apex_zone_t *zone = one_record_more(old, &rr, &in_place);
	assert_true(in_place);
	assert_ptr_not_equal(zone->order, old->order);
	return zone;
}

/* zone's index block (the derivation made its index: not shared). */
static void *block_of(const apex_zone_t *zone)
{
	const apex_index_mem_t *mem = atomic_load(&zone->index_mem);

	assert_non_null(mem);
	assert_non_null(mem->block);
	assert_true((const uint8_t *)zone->key_prefixes >= (const uint8_t *)mem->block);
	assert_true((const uint8_t *)zone->key_prefixes <
		    (const uint8_t *)mem->block + mem->block_size);
	return mem->block;
}

/* zone holds the same records as a whole build of them. */
static void assert_as_whole(const apex_zone_t *zone)
{
	apex_zone_t *copy = NULL;
	char err[256];

	if (apex_version_compact(zone, "test", &copy, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	assert_int_equal(apex_precompute(copy), APEX_OK);
	assert_same_version(copy, zone);
	for (size_t i = 0; i < zone->node_count; i++) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		assert_ptr_equal(apex_zone_find(zone, apex_node_key(node), node->key_size), node);
	}
	apex_zone_unref(copy);
}

static void kept_and_taken_again(void **state)
{
	apex_zone_t *v0 = load_file("root.zone", ".");

	(void)state;
	assert_int_equal(apex_precompute(v0), APEX_OK);
	apex_zone_t *v1 = name_more(v0, 1);
	void *b1 = block_of(v1);
	assert_int_equal(apex_index_block_kept(v1), 0);

	/* v2's index in a block of its own: v1 is still read */
	apex_zone_t *v2 = name_more(v1, 2);
	void *b2 = block_of(v2);
	assert_ptr_not_equal(b2, b1);
	assert_int_equal(apex_index_block_kept(v2), 0);

	/* v1 released: its block is kept by the chain, v2 reads its own */
	size_t b1_size = atomic_load(&v1->index_mem)->block_size;
	apex_zone_release_index(v1);
	assert_int_equal(apex_index_block_kept(v2), b1_size);
	assert_ptr_equal(v0->spare_index, b1);
	assert_as_whole(v2);

	/* the next derivation writes its index into the block kept */
	apex_zone_t *v3 = name_more(v2, 3);
	assert_ptr_equal(block_of(v3), b1);
	assert_int_equal(apex_index_block_kept(v3), 0);
	assert_as_whole(v3);
	assert_as_whole(v2);

	/* one block kept at a time: v2's kept, then v3's freed */
	apex_zone_release_index(v2);
	assert_ptr_equal(v0->spare_index, b2);
	apex_zone_t *v4 = name_more(v3, 4);
	assert_ptr_equal(block_of(v4), b2);
	apex_zone_t *v5 = name_more(v4, 5);
	apex_zone_release_index(v3);
	assert_ptr_equal(v0->spare_index, b1);
	apex_zone_release_index(v4); /* the chain keeps one: b2 is freed */
	assert_ptr_equal(v0->spare_index, b1);
	assert_as_whole(v5);

	/* dropped (apexd: at its purge): nothing kept until a version is
	 * released again */
	apex_index_block_drop(v5);
	assert_int_equal(apex_index_block_kept(v5), 0);
	apex_zone_t *v6 = name_more(v5, 6);
	assert_int_equal(apex_index_block_kept(v6), 0);
	apex_zone_release_index(v5);
	assert_true(apex_index_block_kept(v6) > 0);
	assert_as_whole(v6);

	/* the block kept goes with the chain (ASan's leak check) */
	apex_zone_unref(v1);
	apex_zone_unref(v2);
	apex_zone_unref(v3);
	apex_zone_unref(v4);
	apex_zone_unref(v0);
	apex_zone_unref(v5);
	apex_zone_unref(v6);
}

/* The version after old with one more TXT record at the apex: no name
 * added or removed, the index shared with old. */
static apex_zone_t *apex_text_more(apex_zone_t *old, unsigned k)
{
	uint8_t txt[] = { 1, (uint8_t)('a' + k % 26) };
	bool in_place = false;
	apex_rr_t rr = { old->origin, APEX_TYPE_TXT, APEX_CLASS_IN, 3600, sizeof(txt), txt };
	apex_zone_t *zone = one_record_more(old, &rr, &in_place);

	assert_true(in_place);
	assert_ptr_equal(atomic_load(&zone->index_mem), atomic_load(&old->index_mem));
	return zone;
}

/* A block made ahead (apexd: once an IXFR is asked for) for a version
 * whose names came or went, none for a whole build or a version whose
 * names stayed, never in place of one kept; the next derivation that
 * adds a name writes its index there. */
static void prepared_ahead(void **state)
{
	apex_zone_t *v0 = load_file("root.zone", ".");

	(void)state;
	assert_int_equal(apex_precompute(v0), APEX_OK);
	apex_index_block_prepare(v0); /* a whole build: its next may add no name */
	assert_int_equal(apex_index_block_kept(v0), 0);

	apex_zone_t *v1 = name_more(v0, 1);
	apex_index_block_prepare(v1);
	size_t made = apex_index_block_kept(v1);
	assert_true(made >= apex_index_prefix_bytes(v1->node_count + 1) +
				    apex_index_order_bytes(v1->node_count + 1));
	void *ahead = v0->spare_index;
	assert_non_null(ahead);
	apex_index_block_prepare(v1); /* one kept: left as it is */
	assert_ptr_equal(v0->spare_index, ahead);

	apex_zone_t *v2 = name_more(v1, 2);
	assert_ptr_equal(block_of(v2), ahead);
	assert_int_equal(apex_index_block_kept(v2), 0);
	assert_as_whole(v2);

	/* a version whose names stayed: no block made for its successor */
	apex_zone_t *v3 = apex_text_more(v2, 3);
	apex_index_block_prepare(v3);
	assert_int_equal(apex_index_block_kept(v3), 0);
	assert_as_whole(v3);

	/* made, then dropped as a kept one is */
	apex_index_block_prepare(v2);
	assert_true(apex_index_block_kept(v2) > 0);
	apex_index_block_drop(v2);
	assert_int_equal(apex_index_block_kept(v2), 0);

	apex_zone_unref(v3);
	apex_zone_unref(v2);
	apex_zone_unref(v1);
	apex_zone_unref(v0);
}

/* A block of 2 MiB or more (a zone of about 170,000 names) is a mapping
 * of its own aligned to a huge page, of whole small pages: kept and taken
 * again as the others, freed as it was taken (ASan tells a free() of
 * mapped memory). */
static void large_in_huge_pages(void **state)
{
	const size_t size = (size_t)3 << 20;
	apex_zone_t *v0 = load_file("root.zone", ".");

	(void)state;
	apex_index_mem_t *mem = apex_index_mem_new();
	assert_non_null(mem);
	uint8_t *block = apex_index_block_take(mem, v0, size);
	assert_non_null(block);
	assert_int_equal((uintptr_t)block % APEX_HUGE_PAGE, 0);
	assert_int_equal(mem->block_size % (size_t)sysconf(_SC_PAGESIZE), 0);
	assert_true(mem->block_size >= size + size / 16);
	assert_true(mem->block_size < apex_huge_round(size + size / 16));
	memset(block, 0x5a, mem->block_size);
	size_t block_size = mem->block_size;

	/* let go: kept by the chain, and taken again for a size it fits */
	apex_index_mem_unref(mem);
	assert_int_equal(apex_index_block_kept(v0), block_size);
	mem = apex_index_mem_new();
	assert_non_null(mem);
	assert_ptr_equal(apex_index_block_take(mem, v0, size + 4096), block);
	assert_int_equal(apex_index_block_kept(v0), 0);
	apex_index_mem_unref(mem);

	/* a small one does not take it: the huge block is unmapped, the
	 * small one from the allocator kept in its place */
	mem = apex_index_mem_new();
	assert_non_null(mem);
	uint8_t *small = apex_index_block_take(mem, v0, 4096);
	assert_non_null(small);
	assert_ptr_not_equal(small, block);
	assert_true(mem->block_size < APEX_HUGE_PAGE);
	apex_index_mem_unref(mem);
	assert_int_equal(apex_index_block_kept(v0), 4096 + 4096 / 16);

	/* dropped, and one kept going with the chain */
	apex_index_block_drop(v0);
	assert_int_equal(apex_index_block_kept(v0), 0);
	mem = apex_index_mem_new();
	assert_non_null(mem);
	assert_non_null(apex_index_block_take(mem, v0, size));
	apex_index_mem_unref(mem);
	assert_int_equal(apex_index_block_kept(v0), block_size);
	apex_zone_unref(v0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kept_and_taken_again),
		cmocka_unit_test(large_in_huge_pages),
		cmocka_unit_test(prepared_ahead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
