/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Open-addressing hash slots mapping a 32-bit hash to an array index,
 * for tables that are built once and then only read (the zone table;
 * a zone's name index has its own, zone/node_slots.h).  Each slot is a
 * uint64_t: the hash in the high half, the index + 1 in the low half, 0
 * for a free slot.  The table is a power of two at most half full,
 * probed linearly, so a lookup costs one or two slot reads, usually in
 * one cache line; the caller confirms a matching hash by comparing the
 * keys.
 */
#ifndef APEX_UTIL_HASH_SLOTS_H
#define APEX_UTIL_HASH_SLOTS_H

#include <stddef.h>
#include <stdint.h>

/* log2 of the slot count for n entries: at most half full, at least 2 slots. */
static inline unsigned apex_hash_slots_bits(size_t n)
{
	unsigned bits = 1;
	while (((size_t)1 << bits) < 2 * n)
		bits++;
	return bits;
}

/* First slot to probe.  The multiply spreads the hash's bits (FNV-1a's
 * low bits depend only on the input's low bits) into the high bits
 * taken here. */
static inline uint32_t apex_hash_slots_first(uint32_t hash, unsigned bits)
{
	return (uint32_t)(hash * 0x9E3779B1u) >> (32 - bits);
}

static inline uint32_t apex_hash_slots_hash(uint64_t slot)
{
	return (uint32_t)(slot >> 32);
}

/* The index a used slot maps to. */
static inline uint32_t apex_hash_slots_index(uint64_t slot)
{
	return (uint32_t)slot - 1;
}

/* Insert (hash, index) into slots (1 << bits of them, zeroed at first). */
static inline void apex_hash_slots_insert(uint64_t *slots, unsigned bits, uint32_t hash,
					  uint32_t index)
{
	uint32_t mask = (1u << bits) - 1;
	uint32_t i = apex_hash_slots_first(hash, bits);
	while (slots[i] != 0)
		i = (i + 1) & mask;
	slots[i] = (uint64_t)hash << 32 | (index + 1u);
}

#endif
