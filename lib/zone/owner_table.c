/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Owner interning: each distinct owner name of a sink once, found by a
 * hash table of its lookup key (open addressing, load factor at most
 * 1/2), with a shortcut for the owner of the previous record (records
 * usually share owners).  The table belongs to the sink (zone_sink.h).
 */
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "zone/zone_sink.h"

static uint64_t key_hash(const uint8_t *key, size_t size)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < size; i++) {
		h ^= key[i];
		h *= 1099511628211ULL;
	}
	return h ^ (h >> 29);
}

/* Rebuild the owner table with room for `owners` owners at a load
 * factor of at most 1/2 (at least twice its size). */
int apex_owner_table_resize(apex_sink_t *s, size_t owners)
{
	size_t size = s->table_size ? s->table_size * 2 : 4096;
	while (size / 2 < owners)
		size *= 2;
	uint32_t *table = calloc(size, sizeof(*table));
	if (table == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < s->owner_count; i++) {
		size_t slot = key_hash(s->owners[i].key, s->owners[i].key_size) & (size - 1);
		while (table[slot] != 0)
			slot = (slot + 1) & (size - 1);
		table[slot] = (uint32_t)i + 1;
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
	size_t slot = key_hash(like->key, like->key_size) & mask;
	while (s->table[slot] != 0) {
		uint32_t i = s->table[slot] - 1;
		if (owner_is(&s->owners[i], like->key, like->key_size)) {
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
	o->name = apex_sink_dup(s->keep, like->name, like->name_size);
	o->key = apex_sink_dup(s->keep, like->key, like->key_size);
	if (o->name == NULL || o->key == NULL)
		return APEX_ENOMEM;
	s->table[slot] = (uint32_t)s->owner_count + 1;
	*index = s->last_owner = (uint32_t)s->owner_count;
	s->have_last = true;
	s->owner_count++;
	return APEX_OK;
}
