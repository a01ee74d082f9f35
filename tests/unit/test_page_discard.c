/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node pages kept or given back once no version reads them
 * (zone/page_discard.h): after a version derived by an IXFR replaces a
 * released one, the pages it copied are kept from the one before for the
 * next derivation's copies, which takes them, or given back beyond the
 * number a chain keeps; the derived versions read every record as before,
 * a derivation that fails keeps again what it took, and nothing is kept
 * or given back while another version could still read the pages: the
 * one before not released, a second version derived from it, or an
 * earlier version of the chain not released.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/precompute.h"
#include "util/error.h"
#include "xfr/ixfr_apply.h"
#include "xfr/version_compact.h"
#include "zone/node_slots.h"
#include "zone/page_discard.h"
#include "ixfr_one_record.h"
#include "zone_records.h"

/* The version after old with a record of the private type 65280 + k at
 * the apex (node id 0), a type it lacks: its number of RRsets changes, so
 * its node page is copied. */
static apex_zone_t *apex_type_more(apex_zone_t *old, unsigned k)
{
	uint8_t data[] = { 1, 2, 3 };
	bool in_place = false;
	apex_rr_t rr = {
		old->origin, (uint16_t)(65280 + k), APEX_CLASS_IN, 3600, sizeof(data), data
	};
	apex_zone_t *zone = one_record_more(old, &rr, &in_place);

	assert_true(in_place);
	return zone;
}

/* The version after old with a TXT record "k" more at the apex, which
 * has a TXT RRset after the first: only the apex's RRsets pointer
 * changes, so its page of RRsets pointers is copied, not its node page
 * (zone.h: rrset_pages). */
static apex_zone_t *apex_txt_more(apex_zone_t *old, unsigned k)
{
	uint8_t txt[8];
	bool in_place = false;

	txt[0] = (uint8_t)snprintf((char *)txt + 1, sizeof(txt) - 1, "%u", k);
	apex_rr_t rr = { old->origin, APEX_TYPE_TXT,          APEX_CLASS_IN,
			 3600,        (uint16_t)(1 + txt[0]), txt };
	apex_zone_t *zone = one_record_more(old, &rr, &in_place);
	assert_true(in_place);
	return zone;
}

/* The version after old with a TXT record at a new name below the apex:
 * names change, so the derived version has a name index and hash table
 * of its own (zone/derive.h). */
static apex_zone_t *apex_new_name(apex_zone_t *old, const char *name_text)
{
	uint8_t name[APEX_NAME_MAX], txt[] = { 3, 'n', 'e', 'w' };
	bool in_place = false;

	assert_true(apex_name_from_str(name_text, name) > 0);
	apex_rr_t rr = { name, APEX_TYPE_TXT, APEX_CLASS_IN, 3600, sizeof(txt), txt };
	apex_zone_t *zone = one_record_more(old, &rr, &in_place);
	assert_true(in_place);
	return zone;
}

/* The first whole system page inside [p, p + size) is all zero. */
static bool first_page_zero(const void *p, size_t size)
{
	uintptr_t from = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;

	assert_true(from + 4096 <= (uintptr_t)p + size);
	for (const uint8_t *b = (const uint8_t *)from; b < (const uint8_t *)from + 4096; b++)
		if (*b != 0)
			return false;
	return true;
}

/* The version built whole from zone's records, to compare zone with
 * once pages are given back. */
static apex_zone_t *whole_copy(const apex_zone_t *zone)
{
	apex_zone_t *copy = NULL;
	char err[256];

	if (apex_version_compact(zone, "test", &copy, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	assert_int_equal(apex_precompute(copy), APEX_OK);
	return copy;
}

/* Every byte of node id's page slot is zero: its memory was given back. */
static bool node_given_back(const apex_zone_t *zone, uint32_t id)
{
	const uint8_t *p = (const uint8_t *)apex_zone_node_of(zone, id);

	for (size_t i = 0; i < sizeof(apex_node_t); i++)
		if (p[i] != 0)
			return false;
	return true;
}

static void given_back_after_release(void **state)
{
	apex_zone_t *v0 = load_file("root.zone", ".");

	(void)state;
	atomic_store(&apex_spare_pages_max, (size_t)0); /* none kept */
	assert_int_equal(apex_precompute(v0), APEX_OK);
	assert_true(v0->id_count > 2 * APEX_NODE_PAGE); /* more pages than the one copied */
	apex_zone_t *v1 = apex_type_more(v0, 1);
	apex_zone_t *copy = whole_copy(v1);
	assert_ptr_not_equal(v1->node_pages[0], v0->node_pages[0]);
	assert_ptr_equal(v1->node_pages[1], v0->node_pages[1]);

	/* not released: nothing given back */
	assert_int_equal(apex_zone_discard_replaced(v0, v1), 0);
	apex_zone_release_index(v0);
	size_t chain = v1->chain_memory, memory = v1->memory;
	size_t bytes = apex_zone_discard_replaced(v0, v1);
	/* node page 0 of 24 KiB, less at most a partial system page at each
	 * end, and its page of RRsets pointers */
	assert_true(bytes >=
		    APEX_NODE_PAGE * sizeof(apex_node_t) - 2 * 4096 + APEX_RRSETS_PAGE_SIZE);
	assert_true(bytes <= APEX_NODE_PAGE * sizeof(apex_node_t) + APEX_RRSETS_PAGE_SIZE);
	assert_true(node_given_back(v0, APEX_NODE_PAGE / 2));
	assert_false(node_given_back(v0, APEX_NODE_PAGE + APEX_NODE_PAGE / 2)); /* shared */
	assert_int_equal(apex_zone_chain_memory(v1), chain > bytes ? chain - bytes : 0);
	assert_int_equal(apex_zone_memory(v1), memory - bytes);
	/* what v1 serves is intact */
	assert_same_version(copy, v1);

	/* the next in the chain: v1's copy of page 0 given back in turn */
	apex_zone_t *v2 = apex_type_more(v1, 2);
	apex_zone_t *copy2 = whole_copy(v2);
	apex_zone_unref(v0); /* v1 holds it */
	apex_zone_release_index(v1);
	assert_true(apex_zone_discard_replaced(v1, v2) > 0);
	assert_true(node_given_back(v1, APEX_NODE_PAGE / 2));
	assert_same_version(copy2, v2);
	apex_zone_unref(v1);
	apex_zone_unref(v2);
	apex_zone_unref(copy);
	apex_zone_unref(copy2);
}

/* A change that only gives a node other RRsets (a second TXT record in
 * the apex's TXT RRset) copies the page of RRsets pointers, 4 KiB, and
 * shares the node page; the replaced pointers are given back. */
static void rrsets_page_only(void **state)
{
	apex_zone_t *v0 = load_file("root.zone", ".");

	(void)state;
	atomic_store(&apex_spare_pages_max, (size_t)0);
	assert_int_equal(apex_precompute(v0), APEX_OK);
	apex_zone_t *v1 = apex_txt_more(v0, 1); /* a TXT RRset more: node copied */
	assert_ptr_not_equal(v1->node_pages[0], v0->node_pages[0]);
	apex_zone_t *v2 = apex_txt_more(v1, 2); /* the same RRsets, one record more */
	apex_zone_t *copy2 = whole_copy(v2);
	assert_ptr_equal(v2->node_pages[0], v1->node_pages[0]);
	assert_ptr_not_equal(v2->rrset_pages[0], v1->rrset_pages[0]);
	assert_ptr_equal(v2->rrset_pages[1], v1->rrset_pages[1]);
	assert_int_equal(apex_node_rrset(v2, v2->apex, APEX_TYPE_TXT)->count, 2);
	assert_int_equal(apex_node_rrset(v1, v1->apex, APEX_TYPE_TXT)->count, 1);

	apex_zone_release_index(v0);
	assert_true(apex_zone_discard_replaced(v0, v1) > 0);
	apex_zone_release_index(v1);
	/* only v1's page of RRsets pointers: its node page is v2's */
	assert_int_equal(apex_zone_discard_replaced(v1, v2), APEX_RRSETS_PAGE_SIZE);
	assert_false(node_given_back(v2, APEX_NODE_PAGE / 2));
	assert_same_version(copy2, v2);
	apex_zone_unref(v0);
	apex_zone_unref(v1);
	apex_zone_unref(v2);
	apex_zone_unref(copy2);
	atomic_store(&apex_spare_pages_max, (size_t)256);
}

static void kept_while_another_can_read(void **state)
{
	apex_zone_t *v0 = load_file("root.zone", ".");

	(void)state;
	atomic_store(&apex_spare_pages_max, (size_t)0); /* none kept */
	assert_int_equal(apex_precompute(v0), APEX_OK);
	/* two versions derived from v0: the other still reads its pages */
	apex_zone_t *a = apex_type_more(v0, 1), *b = apex_type_more(v0, 2);
	apex_zone_release_index(v0);
	assert_int_equal(apex_zone_discard_replaced(v0, a), 0);
	assert_false(node_given_back(v0, APEX_NODE_PAGE / 2));
	apex_zone_unref(b);
	/* b gone: a is v0's only derived version */
	assert_true(apex_zone_discard_replaced(v0, a) > 0);
	apex_zone_unref(a);
	apex_zone_unref(v0);

	/* a chain v0, v1, v2 whose v1 is released before v0: v1's pages may
	 * be v0's, which v0's users still read */
	v0 = load_file("root.zone", ".");
	assert_int_equal(apex_precompute(v0), APEX_OK);
	apex_zone_t *v1 = apex_type_more(v0, 1);
	apex_zone_t *v2 = apex_type_more(v1, 2);
	apex_zone_release_index(v1);
	assert_int_equal(apex_zone_discard_replaced(v1, v2), 0);
	/* not its successor */
	apex_zone_release_index(v0);
	assert_int_equal(apex_zone_discard_replaced(v0, v2), 0);
	assert_true(apex_zone_discard_replaced(v0, v1) > 0);
	apex_zone_unref(v0);
	apex_zone_unref(v1);
	apex_zone_unref(v2);
}

/* The version after old with a DNAME at the apex: a change a derivation
 * does not make (it changes the apex's kind, derive.c's same_structure())
 * after it has copied the apex's page; built whole instead. */
static apex_zone_t *apex_dname_more(apex_zone_t *old)
{
	static const uint8_t target[] = "\x07"
					"example"
					"\x00";
	bool in_place = true;
	apex_rr_t rr = { old->origin, APEX_TYPE_DNAME,    APEX_CLASS_IN,
			 3600,        sizeof(target) - 1, target };
	apex_zone_t *zone = one_record_more(old, &rr, &in_place);

	assert_false(in_place);
	return zone;
}

static void kept_for_the_next_copy(void **state)
{
	apex_zone_t *v0 = load_file("root.zone", ".");

	(void)state;
	atomic_store(&apex_spare_pages_max, (size_t)256);
	assert_int_equal(apex_precompute(v0), APEX_OK);
	apex_zone_t *v1 = apex_type_more(v0, 1);
	apex_zone_t *copy1 = whole_copy(v1);
	const apex_node_t *replaced = v0->node_pages[0];
	const apex_rrset_t *const *replaced_sets = v0->rrset_pages[0];
	assert_ptr_not_equal(v1->node_pages[0], replaced);
	assert_ptr_not_equal(v1->rrset_pages[0], replaced_sets);

	/* not released: nothing kept */
	assert_int_equal(apex_zone_discard_replaced(v0, v1), 0);
	assert_int_equal(v0->spare_nodes.count, 0);
	apex_zone_release_index(v0);
	size_t chain = v1->chain_memory;
	/* kept, not given back: resident, counted as held; its page of
	 * RRsets pointers too */
	assert_int_equal(apex_zone_discard_replaced(v0, v1), 0);
	assert_int_equal(v0->spare_nodes.count, 1);
	assert_int_equal(v0->spare_small.count, 1);
	assert_false(node_given_back(v0, APEX_NODE_PAGE / 2));
	assert_int_equal(apex_zone_chain_memory(v1), chain);
	assert_int_equal(apex_zone_spare_memory(v1),
			 APEX_NODE_PAGE * sizeof(apex_node_t) + APEX_RRSETS_PAGE_SIZE);

	/* the next derivation copies the apex's page into the one kept, not
	 * into memory of its arena, and v1 (still served) is intact */
	apex_zone_t *v2 = apex_type_more(v1, 2);
	assert_ptr_equal(v2->node_pages[0], replaced);
	assert_ptr_equal(v2->rrset_pages[0], replaced_sets);
	assert_int_equal(v0->spare_nodes.count, 0);
	assert_int_equal(v0->spare_small.count, 0);
	assert_int_equal(apex_zone_spare_memory(v2), 0);
	apex_zone_t *copy2 = whole_copy(v2);
	assert_same_version(copy2, v2);
	assert_same_version(copy1, v1);

	/* v1's copy kept in turn once v1 is let go of */
	apex_zone_release_index(v1);
	assert_int_equal(apex_zone_discard_replaced(v1, v2), 0);
	assert_int_equal(v0->spare_nodes.count, 1);
	assert_ptr_equal(v0->spare_nodes.pages[0], v1->node_pages[0]);
	assert_int_equal(v0->spare_small.count, 1);
	assert_ptr_equal(v0->spare_small.pages[0], v1->rrset_pages[0]);

	/* a derivation that fails after taking them keeps them again */
	apex_zone_t *whole = apex_dname_more(v2);
	assert_null(whole->base);
	assert_int_equal(v0->spare_nodes.count, 1);
	assert_int_equal(v0->spare_small.count, 1);
	assert_same_version(copy2, v2);

	/* beyond the number a chain keeps, given back */
	atomic_store(&apex_spare_pages_max, (size_t)1);
	apex_zone_t *v3 = apex_type_more(v2, 3);
	assert_ptr_equal(v3->node_pages[0], v1->node_pages[0]);
	apex_zone_t *v4 = apex_type_more(v3, 4);
	apex_zone_release_index(v2);
	/* kept: 1 of each */
	assert_int_equal(apex_zone_discard_replaced(v2, v3), 0);
	apex_zone_release_index(v3);
	assert_true(apex_zone_discard_replaced(v3, v4) > 0); /* full: given back */
	assert_true(node_given_back(v3, APEX_NODE_PAGE / 2));
	apex_zone_t *copy4 = whole_copy(v4);
	assert_same_version(copy4, v4);

	apex_zone_unref(v0);
	apex_zone_unref(v1);
	apex_zone_unref(v2);
	apex_zone_unref(v3);
	apex_zone_unref(v4);
	apex_zone_unref(whole);
	apex_zone_unref(copy1);
	apex_zone_unref(copy2);
	apex_zone_unref(copy4);
	atomic_store(&apex_spare_pages_max, (size_t)256);
}

/* The full pages of a's hash table that b replaced (b derived from a, in
 * the same form), and of them those lying in root's own table. */
static size_t table_pages_replaced(const apex_zone_t *a, const apex_zone_t *b,
				   const apex_zone_t *root, size_t *of_root)
{
	size_t count = apex_node_table_page_count(a->node_table_length), replaced = 0;
	const uint32_t *first = root->node_table_pages[0];

	assert_int_equal(b->node_table_length, a->node_table_length);
	*of_root = 0;
	for (size_t p = 0; p < count; p++) {
		if (b->node_table_pages[p] == a->node_table_pages[p] ||
		    apex_node_table_page_slots(a->node_table_length, p) < APEX_NODE_TABLE_PAGE)
			continue;
		replaced++;
		const uint32_t *page = a->node_table_pages[p];
		*of_root += page >= first && page < first + root->node_table_length;
	}
	return replaced;
}

/* Whether every full page of root's table that zone does not share is
 * given back (all zero), and every one it shares is not. */
static bool root_table_given_back_where_replaced(const apex_zone_t *root, const apex_zone_t *zone)
{
	size_t count = apex_node_table_page_count(root->node_table_length);

	for (size_t p = 0; p < count; p++) {
		if (apex_node_table_page_slots(root->node_table_length, p) < APEX_NODE_TABLE_PAGE)
			continue;
		bool shared = zone->node_table_pages[p] == root->node_table_pages[p];
		if (first_page_zero(root->node_table_pages[p], APEX_NODE_TABLE_PAGE_SIZE) == shared)
			return false;
	}
	return true;
}

/* A whole build's name index, which a version derived with new names
 * replaces by a copy of its own, is given back once the whole build is
 * released; not while it can be read, not when the derived version shares
 * it, and counted out of the zone's memory but not of its chain's.  Its
 * hash table's pages are given back one by one (none kept here), as the
 * derived versions replace them, the others shared, and counted out of
 * the chain's memory, as node pages are: the copies are the chain's. */
static void whole_build_arrays_given_back(void **state)
{
	apex_zone_t *v0 = load_file("root.zone", ".");
	size_t of_root;

	(void)state;
	atomic_store(&apex_spare_pages_max, (size_t)0);
	assert_int_equal(apex_precompute(v0), APEX_OK);
	assert_true(apex_node_table_page_count(v0->node_table_length) > 2);
	/* the index shared: nothing of it given back */
	apex_zone_t *v1 = apex_type_more(v0, 1);
	assert_ptr_equal(v1->key_prefixes, v0->key_prefixes);
	assert_ptr_equal(v1->node_table_pages, v0->node_table_pages);
	apex_zone_release_index(v0);
	(void)apex_zone_discard_replaced(v0, v1);
	assert_int_equal(v0->arrays_given_back, 0);
	assert_int_equal(atomic_load(&v0->arrays_discarded), 0);
	assert_false(first_page_zero(v0->node_table_pages[0], APEX_NODE_TABLE_PAGE_SIZE));
	/* a new name: v2 has a copy of the index of its own, and of the
	 * table's page (or two) the name reaches; v0's read by nobody once
	 * v1 is released too */
	apex_zone_t *v2 = apex_new_name(v1, "new-name.");
	apex_zone_t *copy = whole_copy(v2);
	assert_ptr_not_equal(v2->key_prefixes, v0->key_prefixes);
	size_t replaced = table_pages_replaced(v1, v2, v0, &of_root);
	assert_true(replaced >= 1 && replaced <= 2);
	assert_int_equal(of_root, replaced);
	assert_int_equal(apex_zone_discard_replaced(v1, v2), 0); /* v1 not released */
	assert_int_equal(v0->arrays_given_back, 0);
	assert_true(root_table_given_back_where_replaced(v0, v0));
	apex_zone_release_index(v1);
	size_t chain = apex_zone_chain_memory(v2), memory = apex_zone_memory(v2);
	size_t bytes = apex_zone_discard_replaced(v1, v2);
	size_t arrays = atomic_load(&v0->arrays_discarded);
	/* the key prefixes, in the whole build's memory; the table's pages
	 * in the chain's, whose copies replace them */
	assert_true(arrays >= 4096);
	assert_true(bytes >= arrays + replaced * APEX_NODE_TABLE_PAGE_SIZE);
	assert_true(first_page_zero(v0->key_prefixes, (v0->node_count + 1) * sizeof(uint64_t)));
	assert_true(root_table_given_back_where_replaced(v0, v2));
	assert_int_equal(apex_zone_memory(v2), memory - bytes);
	assert_int_equal(apex_zone_chain_memory(v2), chain - (bytes - arrays));
	/* what v2 serves is intact */
	assert_same_version(copy, v2);
	/* the index once only; the table's pages as they are replaced */
	apex_zone_t *v3 = apex_new_name(v2, "newer-name.");
	apex_zone_t *copy3 = whole_copy(v3);
	(void)table_pages_replaced(v2, v3, v0, &of_root);
	apex_zone_release_index(v2);
	size_t pages_before = atomic_load(&v0->pages_discarded);
	(void)apex_zone_discard_replaced(v2, v3);
	assert_int_equal(atomic_load(&v0->arrays_discarded), arrays);
	assert_true(atomic_load(&v0->pages_discarded) >=
		    pages_before + of_root * APEX_NODE_TABLE_PAGE_SIZE);
	assert_true(root_table_given_back_where_replaced(v0, v3));
	assert_same_version(copy3, v3);
	apex_zone_unref(v0);
	apex_zone_unref(v1);
	apex_zone_unref(v2);
	apex_zone_unref(v3);
	apex_zone_unref(copy);
	apex_zone_unref(copy3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(given_back_after_release),
		cmocka_unit_test(rrsets_page_only),
		cmocka_unit_test(kept_while_another_can_read),
		cmocka_unit_test(kept_for_the_next_copy),
		cmocka_unit_test(whole_build_arrays_given_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
