/* SPDX-License-Identifier: BSD-3-Clause */
/* Replaced node pages given back to the system (see page_discard.h). */
#include "zone/page_discard.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* The chain's whole build: the version without a base. */
static const apex_zone_t *chain_root(const apex_zone_t *zone)
{
	while (zone->base != NULL)
		zone = zone->base;
	return zone;
}

/* Nobody reads a page of zone's that its one derived version replaced:
 * zone and every version before it are released, and each has that one
 * derived version only. */
static bool chain_is_private(const apex_zone_t *zone)
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

size_t apex_zone_discard_replaced(apex_zone_t *old, const apex_zone_t *successor)
{
	long system_page = sysconf(_SC_PAGESIZE);
	size_t pages = (old->id_count + APEX_NODE_PAGE - 1) / APEX_NODE_PAGE, bytes = 0;

	if (successor == NULL || successor->base != old || system_page <= 0 ||
	    !chain_is_private(old))
		return 0;
	for (size_t p = 0; p < pages; p++) {
		/* the nodes old has there: a whole build's last page is short */
		size_t first = p * APEX_NODE_PAGE, nodes = old->id_count - first;
		if (nodes > APEX_NODE_PAGE)
			nodes = APEX_NODE_PAGE;
		if (successor->node_pages[p] != old->node_pages[p])
			bytes += discard_range(old->node_pages[p], nodes * sizeof(apex_node_t),
					       (uintptr_t)system_page);
	}
	/* only the thread that replaces versions of this zone writes it */
	apex_zone_t *root = (apex_zone_t *)chain_root(old);
	atomic_fetch_add_explicit(&root->pages_discarded, bytes, memory_order_relaxed);
	return bytes;
}

/* bytes less what zone's chain gave back, at least 0. */
static size_t less_given_back(const apex_zone_t *zone, size_t bytes)
{
	size_t given =
		atomic_load_explicit(&chain_root(zone)->pages_discarded, memory_order_relaxed);

	return bytes > given ? bytes - given : 0;
}

size_t apex_zone_chain_memory(const apex_zone_t *zone)
{
	return less_given_back(zone, zone->chain_memory);
}

size_t apex_zone_memory(const apex_zone_t *zone)
{
	return less_given_back(zone, zone->memory);
}
