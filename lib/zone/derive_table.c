/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hash table of a version derived with names added or removed
 * (derive_state.h): old's table with the removed names out and the new
 * ones in, written into copies of the pages the changes reach, the other
 * pages shared with old (zone/node_slots.h).  A 100-change IXFR into a
 * 1M-record zone reaches about 50 of its 430 pages, where the table was
 * copied whole before (1.7 of the 4.2 MB the name index's copy wrote
 * into fresh memory).
 *
 * A copied page comes from the pages the chain keeps (page_discard.h),
 * else from a piece of the new version's arena taken for as many pages as
 * the changes' first slots lie on; a short last page is copied as it is.
 * The copies live in the new version's arena, as its node pages do: the
 * versions derived after it share them.
 */
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/error.h"
#include "util/populate.h"
#include "zone/build.h"
#include "zone/derive_state.h"
#include "zone/node_slots.h"
#include "zone/page_discard.h"

static uint32_t slot_at(const apex_derive_t *d, uint32_t i)
{
	return apex_node_table_get((const uint32_t *const *)d->table_pages, i);
}

/* A page for the copy of a page of slots: one the chain kept, one of the
 * pool, or one of its own; *how says which (derive_state.h). */
static uint32_t *page_for_copy(apex_derive_t *d, uint32_t slots, uint8_t *how)
{
	uint32_t *page = NULL;

	*how = COPIED;
	if (slots < APEX_NODE_TABLE_PAGE) /* the short last page */
		return apex_arena_alloc_aligned(d->zone->arena, slots * sizeof(*page), 64);
	page = apex_zone_take_spare_small(d->old);
	if (page != NULL) {
		*how = COPIED_INTO_SPARE;
		return page;
	}
	if (d->table_pool_left > 0) {
		page = d->table_pool;
		d->table_pool += APEX_NODE_TABLE_PAGE;
		d->table_pool_left--;
		return page;
	}
	return apex_arena_alloc_aligned(d->zone->arena, APEX_NODE_TABLE_PAGE_SIZE,
					APEX_NODE_TABLE_PAGE_SIZE);
}

/* Slot i, writable: its page becomes the new version's own the first
 * time.  NULL: out of memory. */
static uint32_t *writable_slot(apex_derive_t *d, uint32_t i)
{
	size_t p = i >> APEX_NODE_TABLE_PAGE_BITS;

	if (!d->table_copied[p]) {
		uint32_t slots = apex_node_table_page_slots(d->old->node_table_length, p);
		uint8_t how;
		uint32_t *page = page_for_copy(d, slots, &how);

		if (page == NULL)
			return NULL;
		memcpy(page, d->table_pages[p], slots * sizeof(*page));
		d->table_pages[p] = page;
		d->table_copied[p] = how;
	}
	return &d->table_pages[p][i & (APEX_NODE_TABLE_PAGE - 1)];
}

/* Remove the entry of id (whose name hash is hash): the entries after it
 * in its run move back, each to the first place at or after its home, so
 * that every lookup still finds them. */
static int table_delete(apex_derive_t *d, uint32_t hash, uint32_t id)
{
	const apex_zone_t *old = d->old;
	uint32_t size = old->node_table_size, mask = old->node_table_mask;
	uint32_t i = apex_node_table_first(hash, size);
	uint32_t *w;

	while (slot_at(d, i) != 0 && apex_node_table_id(slot_at(d, i), mask) != id)
		i++;
	if (slot_at(d, i) == 0)
		return APEX_OK;
	for (uint32_t j = i + 1; slot_at(d, j) != 0; j++) {
		/* a slot keeps only the high bits of its hash: the node has it
		 * (old's: the removals come before the insertions) */
		uint32_t slot = slot_at(d, j);
		const apex_node_t *node = apex_zone_node_of(old, apex_node_table_id(slot, mask));
		if (apex_node_table_first(node->hash, size) <= i) {
			if ((w = writable_slot(d, i)) == NULL)
				return APEX_ENOMEM;
			*w = slot;
			i = j;
		}
	}
	if ((w = writable_slot(d, i)) == NULL)
		return APEX_ENOMEM;
	*w = 0;
	return APEX_OK;
}

/* Insert (hash, id).  APEX_ENOTSUP if its run would take the last slot,
 * which stays free. */
static int table_insert(apex_derive_t *d, uint32_t hash, uint32_t id)
{
	const apex_zone_t *old = d->old;
	uint32_t i = apex_node_table_first(hash, old->node_table_size);
	uint32_t *w;

	while (slot_at(d, i) != 0)
		i++;
	if (i + 1 >= old->node_table_length)
		return APEX_ENOTSUP;
	if ((w = writable_slot(d, i)) == NULL)
		return APEX_ENOMEM;
	*w = apex_node_table_slot(hash, id, old->node_table_mask);
	return APEX_OK;
}

/* Mark the page of hash's first slot in marks. */
static void mark_home(const apex_derive_t *d, uint8_t *marks, uint32_t hash)
{
	marks[apex_node_table_first(hash, d->old->node_table_size) >> APEX_NODE_TABLE_PAGE_BITS] =
		1;
}

/* The pool: a whole page for each page a change's first slot lies on
 * (runs seldom cross a page), less those the chain keeps, in one piece
 * faulted in at once when large (util/populate.h). */
static void fill_table_pool(apex_derive_t *d, size_t page_count)
{
	uint8_t *homes = calloc(page_count, 1);
	size_t count = 0;

	if (homes == NULL)
		return; /* page by page */
	for (size_t i = 0; i < d->removed_count; i++)
		mark_home(d, homes, apex_zone_node_of(d->old, d->removed[i])->hash);
	for (uint32_t r = 0; r < d->bd.b->owner_count; r++)
		if (d->fresh[r] && !d->bd.owner_is_nsec3[r])
			mark_home(d, homes, apex_zone_node_of(d->zone, d->ids[r])->hash);
	for (size_t i = 0; i < d->ent_count; i++)
		mark_home(d, homes, apex_zone_node_of(d->zone, d->ents[i].id)->hash);
	for (size_t p = 0; p < page_count; p++)
		count += homes[p] && apex_node_table_page_slots(d->old->node_table_length, p) ==
					     APEX_NODE_TABLE_PAGE;
	free(homes);
	size_t spare = apex_zone_spare_small_count(d->old);
	count = count > spare ? count - spare : 0;
	if (count == 0)
		return;
	d->table_pool = apex_arena_alloc_aligned(d->zone->arena, count * APEX_NODE_TABLE_PAGE_SIZE,
						 APEX_NODE_TABLE_PAGE_SIZE);
	d->table_pool_left = d->table_pool != NULL ? count : 0;
	if (d->table_pool != NULL && count * APEX_NODE_TABLE_PAGE_SIZE >= APEX_POPULATE_MIN)
		apex_populate_for_write(d->table_pool, count * APEX_NODE_TABLE_PAGE_SIZE);
}

int apex_derive_table(apex_derive_t *d)
{
	apex_zone_t *zone = d->zone;
	const apex_zone_t *old = d->old;
	size_t page_count = apex_node_table_page_count(old->node_table_length);
	int rc = APEX_OK;

	d->table_pages = apex_arena_alloc(zone->arena, page_count * sizeof(*d->table_pages));
	d->table_copied = calloc(page_count, 1);
	if (d->table_pages == NULL || d->table_copied == NULL)
		return APEX_ENOMEM;
	/* (old's pages are not written through these: each is copied first) */
	memcpy(d->table_pages, old->node_table_pages, page_count * sizeof(*d->table_pages));
	fill_table_pool(d, page_count);
	for (size_t i = 0; i < d->removed_count && rc == APEX_OK; i++)
		rc = table_delete(d, apex_zone_node_of(old, d->removed[i])->hash, d->removed[i]);
	for (uint32_t r = 0; r < d->bd.b->owner_count && rc == APEX_OK; r++)
		if (d->fresh[r] && !d->bd.owner_is_nsec3[r])
			rc = table_insert(d, apex_zone_node_of(zone, d->ids[r])->hash, d->ids[r]);
	for (size_t i = 0; i < d->ent_count && rc == APEX_OK; i++)
		rc = table_insert(d, apex_zone_node_of(zone, d->ents[i].id)->hash, d->ents[i].id);
	if (rc != APEX_OK) {
		apex_derive_table_return(d); /* the table is built again, or not at all */
		return rc;
	}
	zone->node_table_pages = (const uint32_t *const *)d->table_pages;
	zone->node_table_size = old->node_table_size;
	zone->node_table_length = old->node_table_length;
	zone->node_table_mask = old->node_table_mask;
	return APEX_OK;
}

void apex_derive_table_return(apex_derive_t *d)
{
	size_t page_count = apex_node_table_page_count(d->old->node_table_length);

	for (size_t p = 0; d->table_copied != NULL && p < page_count; p++)
		if (d->table_copied[p] == COPIED_INTO_SPARE) {
			apex_zone_return_spare_small(d->old, d->table_pages[p]);
			d->table_copied[p] = 0;
		}
}
