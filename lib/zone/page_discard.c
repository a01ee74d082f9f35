/* SPDX-License-Identifier: BSD-3-Clause */
/* Replaced node pages given back to the system (see page_discard.h). */
#include "zone/page_discard.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zone/node_slots.h"

_Atomic size_t apex_spare_pages_max = 256;

/* A hash table's page is kept among the pages of RRsets pointers. */
static_assert(APEX_NODE_TABLE_PAGE_SIZE == APEX_RRSETS_PAGE_SIZE, "4 KiB pages");

/* See pages_kept_max(). */
#define APEX_SPARE_SHARE 64

/* The chain's kept pages are the one thing of a whole build its derived
 * versions change (with its kept index block, zone/index_block.h);
 * spare_lock guards them. */
static apex_zone_t *spare_owner(const apex_zone_t *zone)
{
	return apex_zone_chain_root(zone);
}

/* Pages root's chain keeps: apex_spare_pages_max, and at most 1/64 of the
 * whole build's memory (at least one page).  The compaction rule leaves
 * them out (apex_zone_spare_memory()): this bounds them apart, so that a
 * chain holds at most 1/32 + 1/64 of its whole build beyond it. */
static size_t pages_kept_max(const apex_zone_t *root)
{
	size_t max = atomic_load_explicit(&apex_spare_pages_max, memory_order_relaxed);
	size_t share = root->memory / APEX_SPARE_SHARE / (APEX_NODE_PAGE * sizeof(apex_node_t));

	share = share > 0 ? share : 1;
	return share < max ? share : max;
}

/* Keep page in kept, one of root's (its lock held): false when root
 * keeps enough of that kind. */
static bool keep(apex_zone_t *root, apex_kept_pages_t *kept, void *page)
{
	if (kept->count >= pages_kept_max(root))
		return false;
	if (kept->count == kept->cap) {
		uint32_t cap = kept->cap ? 2 * kept->cap : 64;
		void **grown = realloc(kept->pages, cap * sizeof(*grown));

		if (grown == NULL)
			return false; /* given back instead */
		kept->pages = grown;
		kept->cap = cap;
	}
	kept->pages[kept->count++] = page;
	return true;
}

/* A page of root's kept (root's lock taken here), or NULL. */
static void *take(apex_zone_t *root, apex_kept_pages_t *kept)
{
	void *page = NULL;

	pthread_mutex_lock(&root->spare_lock);
	if (kept->count > 0)
		page = kept->pages[--kept->count];
	pthread_mutex_unlock(&root->spare_lock);
	return page;
}

/* page kept again by root (root's lock taken here), or left to its
 * arena, which frees it with the chain. */
static void put_back(apex_zone_t *root, apex_kept_pages_t *kept, void *page)
{
	pthread_mutex_lock(&root->spare_lock);
	(void)keep(root, kept, page);
	pthread_mutex_unlock(&root->spare_lock);
}

apex_node_t *apex_zone_take_spare_page(const apex_zone_t *zone)
{
	apex_zone_t *root = spare_owner(zone);

	return take(root, &root->spare_nodes);
}

void apex_zone_return_spare_page(const apex_zone_t *zone, apex_node_t *page)
{
	apex_zone_t *root = spare_owner(zone);

	put_back(root, &root->spare_nodes, page);
}

void *apex_zone_take_spare_small(const apex_zone_t *zone)
{
	apex_zone_t *root = spare_owner(zone);

	return take(root, &root->spare_small);
}

void apex_zone_return_spare_small(const apex_zone_t *zone, void *page)
{
	apex_zone_t *root = spare_owner(zone);

	put_back(root, &root->spare_small, page);
}

size_t apex_zone_spare_small_count(const apex_zone_t *zone)
{
	apex_zone_t *root = spare_owner(zone);

	pthread_mutex_lock(&root->spare_lock);
	size_t count = root->spare_small.count;
	pthread_mutex_unlock(&root->spare_lock);
	return count;
}

size_t apex_zone_spare_memory(const apex_zone_t *zone)
{
	apex_zone_t *root = spare_owner(zone);

	pthread_mutex_lock(&root->spare_lock);
	size_t pages = root->spare_nodes.count, rrsets = root->spare_small.count;
	pthread_mutex_unlock(&root->spare_lock);
	return pages * APEX_NODE_PAGE * sizeof(apex_node_t) + rrsets * APEX_RRSETS_PAGE_SIZE;
}

bool apex_zone_chain_is_private(const apex_zone_t *zone)
{
	for (; zone != NULL; zone = zone->base)
		if (!atomic_load_explicit(&zone->released, memory_order_acquire) ||
		    atomic_load_explicit(&zone->base_refs, memory_order_acquire) != 1)
			return false;
	return true;
}

/* Give back the whole system pages inside [start, start + size). */
static size_t discard_range(const void *start, size_t size, uintptr_t system_page)
{
	uintptr_t from = ((uintptr_t)start + system_page - 1) & ~(system_page - 1);
	uintptr_t to = ((uintptr_t)start + size) & ~(system_page - 1);

	if (to <= from || madvise((void *)from, to - from, MADV_DONTNEED) != 0)
		return 0;
	return to - from;
}

/* The arrays of a whole build that a derivation replaces whole rather than
 * page by page (root->arrays_given_back). */
enum {
	GIVEN_BACK_PREFIXES = 1,
	GIVEN_BACK_NSEC3 = 4,
	GIVEN_BACK_NSEC3_OWNERS = 8,
};

/* Give back [array, array + size) of root once, as what (GIVEN_BACK_*),
 * when successor uses an array of its own instead: the bytes given back. */
static size_t discard_array(apex_zone_t *root, unsigned what, const void *array,
			    const void *successors, size_t size, uintptr_t system_page)
{
	if (array == NULL || successors == array || (root->arrays_given_back & what))
		return 0;
	root->arrays_given_back |= (uint8_t)what;
	return discard_range(array, size, system_page);
}

/*
 * The whole build's name index (key prefixes; its order is the identity,
 * no array) and NSEC3 arrays lie in its arena: a derivation
 * that adds or removes names (or NSEC3 owners) gives its version copies
 * of its own (zone/derive.h), and the versions after it copy those.  Once
 * successor holds such a copy and nobody reads old and the versions
 * before it (the caller checked), no version reads the whole build's
 * arrays again.  They were kept until the compaction: in a chain of
 * IXFRs adding names to the 1M-record nu.nsec3, 3.3 MiB (2.3% of its
 * memory) beside the copies served, and 32 bytes an NSEC3 owner more
 * when NSEC3 owners come or go.
 */
static size_t discard_root_arrays(apex_zone_t *root, const apex_zone_t *s, uintptr_t page)
{
	size_t bytes = 0;

	if (root->order == NULL) /* (a whole build's; never otherwise) */
		bytes += discard_array(root, GIVEN_BACK_PREFIXES, root->key_prefixes,
				       s->key_prefixes,
				       (root->node_count + 1) * sizeof(*root->key_prefixes), page);
	if (atomic_load_explicit(&root->nsec3_mem, memory_order_acquire) == NULL) {
		bytes += discard_array(root, GIVEN_BACK_NSEC3, root->nsec3, s->nsec3,
				       root->nsec3_count * sizeof(*root->nsec3), page);
		bytes += discard_array(root, GIVEN_BACK_NSEC3_OWNERS, root->nsec3_owners,
				       s->nsec3_owners,
				       root->nsec3_owner_count * sizeof(*root->nsec3_owners), page);
	}
	return bytes;
}

/*
 * old's hash table pages that successor replaced (all of them when its
 * table was built again): read by nobody once old is released and the
 * chain private.  A whole page on a system page of its own is kept for
 * the chain's next copies, else given back, as node pages are (the whole
 * build's too: its table is one array cut in pages, which lives as long
 * as the chain); the bytes given back.  The copies that replace them are
 * the chain's memory, so what they replace is counted out of it.
 */
static size_t discard_table_pages(apex_zone_t *root, const apex_zone_t *old,
				  const apex_zone_t *successor, uintptr_t system_page)
{
	const uint32_t *const *mine = old->node_table_pages;
	const uint32_t *const *theirs = successor->node_table_pages;
	size_t bytes = 0;

	if (mine == NULL || mine == theirs)
		return 0;
	uint32_t length = old->node_table_length;
	size_t count = apex_node_table_page_count(length);
	bool same_form = theirs != NULL && successor->node_table_length == length &&
			 successor->node_table_size == old->node_table_size;

	for (size_t p = 0; p < count; p++) {
		if (same_form && theirs[p] == mine[p])
			continue;
		uint32_t *page = (uint32_t *)mine[p];
		size_t size = apex_node_table_page_slots(length, p) * sizeof(*page);
		if (size < APEX_NODE_TABLE_PAGE_SIZE ||
		    ((uintptr_t)page & (APEX_NODE_TABLE_PAGE_SIZE - 1)) != 0 ||
		    !keep(root, &root->spare_small, page))
			bytes += discard_range(page, size, system_page);
	}
	return bytes;
}

size_t apex_zone_discard_replaced(apex_zone_t *old, const apex_zone_t *successor)
{
	long system_page = sysconf(_SC_PAGESIZE);
	size_t pages = (old->id_count + APEX_NODE_PAGE - 1) / APEX_NODE_PAGE, bytes = 0;

	if (successor == NULL || successor->base != old || system_page <= 0 ||
	    !apex_zone_chain_is_private(old))
		return 0;
	apex_zone_t *root = spare_owner(old);

	pthread_mutex_lock(&root->spare_lock);
	for (size_t p = 0; p < pages; p++) {
		/* the nodes old has there: a whole build's last page is short,
		 * and only a whole page is kept for a copy */
		size_t first = p * APEX_NODE_PAGE, nodes = old->id_count - first;
		if (nodes > APEX_NODE_PAGE)
			nodes = APEX_NODE_PAGE;
		const apex_rrset_t **sets = (const apex_rrset_t **)old->rrset_pages[p];
		if (successor->rrset_pages[p] != old->rrset_pages[p] &&
		    (nodes < APEX_NODE_PAGE || !keep(root, &root->spare_small, (void *)sets)))
			bytes += discard_range(sets, nodes * sizeof(*sets), (uintptr_t)system_page);
		if (successor->node_pages[p] == old->node_pages[p])
			continue;
		apex_node_t *page = (apex_node_t *)old->node_pages[p];
		if (nodes < APEX_NODE_PAGE || !keep(root, &root->spare_nodes, page))
			bytes += discard_range(page, nodes * sizeof(apex_node_t),
					       (uintptr_t)system_page);
	}
	size_t arrays = discard_root_arrays(root, successor, (uintptr_t)system_page);
	bytes += discard_table_pages(root, old, successor, (uintptr_t)system_page);
	pthread_mutex_unlock(&root->spare_lock);
	atomic_fetch_add_explicit(&root->pages_discarded, bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&root->arrays_discarded, arrays, memory_order_relaxed);
	return bytes + arrays;
}

/* bytes less what zone's chain gave back, at least 0. */
static size_t less_given_back(const apex_zone_t *zone, size_t bytes)
{
	size_t given = atomic_load_explicit(&apex_zone_chain_root(zone)->pages_discarded,
					    memory_order_relaxed);

	return bytes > given ? bytes - given : 0;
}

size_t apex_zone_chain_memory(const apex_zone_t *zone)
{
	return less_given_back(zone, zone->chain_memory);
}

size_t apex_zone_memory(const apex_zone_t *zone)
{
	/* the whole build's arrays are of its memory, not of the chain's */
	size_t arrays = atomic_load_explicit(&apex_zone_chain_root(zone)->arrays_discarded,
					     memory_order_relaxed);
	size_t memory = less_given_back(zone, zone->memory);

	return memory > arrays ? memory - arrays : 0;
}
