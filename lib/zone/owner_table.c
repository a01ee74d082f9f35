/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Owner interning: each distinct owner name of a sink once, found by a
 * hash table of its lookup key (open addressing, load factor at most
 * 1/2), with a shortcut for the owner of the previous record (records
 * usually share owners).  The table belongs to the sink (zone_sink.h).
 *
 * A slot holds the key's 32-bit hash beside the owner's index: a probe
 * reads another owner's key only when the hashes agree, and a resize
 * places every owner again without reading any key.  In a large zone
 * the keys are spread over gigabytes, and most owners are new (every
 * probe a miss): each key read avoided is a cache miss avoided.
 */
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "zone/zone_sink.h"

static uint32_t key_hash(const uint8_t *key, size_t size)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < size; i++) {
		h ^= key[i];
		h *= 1099511628211ULL;
	}
	return (uint32_t)(h ^ (h >> 29) ^ (h >> 32));
}

/* A slot: the hash in the high half, index + 1 in the low (0: empty). */
static uint64_t slot_of(uint32_t hash, size_t index)
{
	return (uint64_t)hash << 32 | (uint32_t)(index + 1);
}

/* Rebuild the owner table with room for `owners` owners at a load
 * factor of at most 1/2 (at least twice its size). */
int apex_owner_table_resize(apex_sink_t *s, size_t owners)
{
	size_t size = s->table_size ? s->table_size * 2 : 4096;
	while (size / 2 < owners)
		size *= 2;
	uint64_t *table = calloc(size, sizeof(*table));
	if (table == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < s->table_size; i++) {
		uint64_t entry = s->table[i];
		if (entry == 0)
			continue;
		size_t slot = (entry >> 32) & (size - 1);
		while (table[slot] != 0)
			slot = (slot + 1) & (size - 1);
		table[slot] = entry;
	}
	free(s->table);
	s->table = table;
	s->table_size = size;
	return APEX_OK;
}

static bool owner_is(const apex_build_owner_t *o, const uint8_t *key, size_t key_size)
{
	return o->key_size == key_size && memcmp(o->key, key, key_size) == 0;
}

/* Index of the owner with this key in s (added if new, its name and
 * key copied into s's memory) in *index. */
int apex_owner_intern(apex_sink_t *s, const apex_build_owner_t *like, uint32_t *index)
{
	if (s->have_last && owner_is(&s->owners[s->last_owner], like->key, like->key_size)) {
		*index = s->last_owner;
		return APEX_OK;
	}
	if ((s->owner_count + 1) * 2 > s->table_size &&
	    apex_owner_table_resize(s, s->owner_count + 1) != APEX_OK)
		return APEX_ENOMEM;
	size_t mask = s->table_size - 1;
	uint32_t hash = key_hash(like->key, like->key_size);
	size_t slot = hash & mask;
	while (s->table[slot] != 0) {
		uint64_t entry = s->table[slot];
		uint32_t i = (uint32_t)entry - 1;
		if ((uint32_t)(entry >> 32) == hash &&
		    owner_is(&s->owners[i], like->key, like->key_size)) {
			*index = s->last_owner = i;
			s->have_last = true;
			return APEX_OK;
		}
		slot = (slot + 1) & mask;
	}
	if (s->owner_count == s->owner_cap) {
		size_t cap = s->owner_cap ? s->owner_cap * 2 : 1024;
		apex_build_owner_t *p = realloc(s->owners, cap * sizeof(*p));
		if (p == NULL)
			return APEX_ENOMEM;
		s->owners = p;
		s->owner_cap = cap;
	}
	if (s->owner_count >= UINT32_MAX - 1)
		return APEX_ENOMEM;
	apex_build_owner_t *o = &s->owners[s->owner_count];
	*o = *like;
	/* In scratch memory: the build copies them in canonical order. */
	if (apex_build_owner_copy(s->scratch, o, like) != APEX_OK)
		return APEX_ENOMEM;
	s->table[slot] = slot_of(hash, s->owner_count);
	*index = s->last_owner = (uint32_t)s->owner_count;
	s->have_last = true;
	s->owner_count++;
	return APEX_OK;
}
