/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The slots of a zone's name hash table (zone->node_table_pages, built by
 * zone/node_table.h): what lets a query find its name, or the closest
 * existing ancestor, without a binary search.
 *
 * 32-bit slots, probed linearly, at most half full (a quarter in small
 * zones).  A slot holds the node's id + 1 in its low bits, those of
 * zone->node_table_mask (0 is a free slot), and above them the same high
 * bits of the node's name hash (a tag): a probe reads a node only when
 * the tags agree, which for another node is about once in
 * 2^32 / (mask + 1) probes (once in 500 for 4.7 million nodes).  The
 * first slot scales the mixed hash to zone->node_table_size with a
 * multiply and a shift, so the size need not be a power of two: in a
 * large zone twice the nodes, not up to four times (a 10M-record TLD:
 * 38 MB, not 134 with 8-byte slots).  A run of used slots never wraps
 * around: it goes on into a tail past the size (node_table_length slots
 * in all), whose last slot is always free, so a probe only moves forward.
 *
 * The slots lie in pages of APEX_NODE_TABLE_PAGE (4 KiB, a system page):
 * zone->node_table_pages[i >> APEX_NODE_TABLE_PAGE_BITS] holds slot i.  A
 * whole build's pages are one array cut in pages; a version derived from
 * another copies the pages its new and removed names reach and shares
 * the rest (zone/derive_table.c), rather than the whole table.
 */
#ifndef APEX_ZONE_NODE_SLOTS_H
#define APEX_ZONE_NODE_SLOTS_H

#include <stddef.h>
#include <stdint.h>

/* Slots for n nodes, in whole cache lines: four times as many while that
 * is at most 2^18 slots (1 MiB: such a table stays in the caches, and a
 * sparser one means fewer probes for a name that is not there), then at
 * least 2^18 and twice as many (a large table's every probe is a cache
 * miss, in the same line as the next, and its memory counts). */
static inline size_t apex_node_table_size(size_t n)
{
	size_t size = 4 * n < ((size_t)1 << 18) ? 4 * n : (size_t)1 << 18;
	if (size < 2 * n)
		size = 2 * n;
	return (size + 16) & ~(size_t)15;
}

/* The slots' id mask for ids below id_count: the smallest 2^k - 1 that
 * holds id_count, k at most 31 so that the tag has a bit; 0 if id_count
 * is too large. */
static inline uint32_t apex_node_table_mask(size_t id_count)
{
	uint32_t mask = 1;
	while (mask < id_count && mask < 0x7fffffffu)
		mask = mask << 1 | 1;
	return mask >= id_count ? mask : 0;
}

#define APEX_NODE_TABLE_PAGE_BITS 10
#define APEX_NODE_TABLE_PAGE ((uint32_t)1 << APEX_NODE_TABLE_PAGE_BITS)
#define APEX_NODE_TABLE_PAGE_SIZE ((size_t)APEX_NODE_TABLE_PAGE * sizeof(uint32_t))

/* The address of slot i of a table in pages, and the slot. */
static inline const uint32_t *apex_node_table_at(const uint32_t *const *pages, uint32_t i)
{
	return &pages[i >> APEX_NODE_TABLE_PAGE_BITS][i & (APEX_NODE_TABLE_PAGE - 1)];
}

static inline uint32_t apex_node_table_get(const uint32_t *const *pages, uint32_t i)
{
	return *apex_node_table_at(pages, i);
}

/* The pages of a table of length slots (the last one may be short). */
static inline size_t apex_node_table_page_count(uint32_t length)
{
	return ((size_t)length + APEX_NODE_TABLE_PAGE - 1) >> APEX_NODE_TABLE_PAGE_BITS;
}

/* The slots on page p of a table of length slots. */
static inline uint32_t apex_node_table_page_slots(uint32_t length, size_t p)
{
	size_t first = p << APEX_NODE_TABLE_PAGE_BITS;
	return length - first < APEX_NODE_TABLE_PAGE ? (uint32_t)(length - first)
						     : APEX_NODE_TABLE_PAGE;
}

/* A tail that the table's runs of used slots fit in first, in slots. */
#define APEX_NODE_TABLE_TAIL 64

/* First slot to probe of size.  The multiply spreads the hash's bits
 * (FNV-1a's low bits depend only on the input's low bits) into the high
 * bits that the multiply-shift by size takes. */
static inline uint32_t apex_node_table_first(uint32_t hash, uint32_t size)
{
	return (uint32_t)(((uint64_t)(uint32_t)(hash * 0x9E3779B1u) * size) >> 32);
}

/* The slot of (hash, id). */
static inline uint32_t apex_node_table_slot(uint32_t hash, uint32_t id, uint32_t mask)
{
	return (hash & ~mask) | (id + 1);
}

/* Whether a used slot's tag is that of hash. */
static inline int apex_node_table_tag_is(uint32_t slot, uint32_t hash, uint32_t mask)
{
	return (slot ^ hash) <= mask;
}

/* The id a used slot maps to. */
static inline uint32_t apex_node_table_id(uint32_t slot, uint32_t mask)
{
	return (slot & mask) - 1;
}

/* Insert (hash, id) into slots (length of them, the first size the
 * homes).  Returns 0, or -1 if the run would take the last slot, which
 * stays free (the table must then be built with a longer tail). */
static inline int apex_node_table_insert(uint32_t *slots, uint32_t size, uint32_t length,
					 uint32_t mask, uint32_t hash, uint32_t id)
{
	uint32_t i = apex_node_table_first(hash, size);
	while (slots[i] != 0)
		i++;
	if (i + 1 >= length)
		return -1;
	slots[i] = apex_node_table_slot(hash, id, mask);
	return 0;
}

#endif
