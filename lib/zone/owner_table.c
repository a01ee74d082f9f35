/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Owner entries: one for each run of records with the same owner, in the
 * order of the records (build.h asks for this: the build then moves each
 * run of records as a whole, in the owners' canonical order).  Records
 * usually share their owner with the record before, which is checked
 * first.
 *
 * An owner met again after other owners gets a new entry, but not a new
 * copy of its name and key when a small cache of the owners seen last
 * still holds it: zone files list an owner's records together or close
 * by.  The build merges entries with the same key.  The cache has a
 * fixed size, so that it stays in the CPU's cache whatever the zone's
 * size: a table of every owner, probed at random over hundreds of
 * megabytes in a TLD of millions of names, cost a cache miss for each new
 * owner, and made the parse's cost per record grow with the zone.
 *
 * A slot holds the key's 32-bit hash beside the entry's index, so that a
 * probe reads another owner's key only when the hashes agree.  A key
 * probes the OWNER_CACHE_WAYS slots of its home, in one cache line,
 * newest first: a new owner goes first, and the oldest leaves.
 *
 * It starts small and grows with the owners up to that size (emptied as
 * it grows: it is a cache), so that a zone of a few dozen records, of
 * which a server may load thousands, does not pay for a TLD's cache.
 */
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "zone/zone_sink.h"

#define OWNER_CACHE_SLOTS 8192u      /* 64 KiB at most: a power of two */
#define OWNER_CACHE_FIRST_SLOTS 256u /* 2 KiB at first */
#define OWNER_CACHE_WAYS 4u

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

static bool owner_is(const apex_build_owner_t *o, const uint8_t *key, size_t key_size)
{
	return o->key_size == key_size && memcmp(o->key, key, key_size) == 0;
}

int apex_sink_reserve_owners(apex_sink_t *s, size_t owners)
{
	if (owners <= s->owner_cap)
		return APEX_OK;
	apex_build_owner_t *p = realloc(s->owners, owners * sizeof(*p));
	if (p == NULL)
		return APEX_ENOMEM;
	s->owners = p;
	s->owner_cap = owners;
	return APEX_OK;
}

/* A new entry at the end of s->owners for `like`: its name and key
 * copied into s's names memory, or shared with the entry `same` (an
 * earlier one with the same key) unless that is -1.  Its index, or -1
 * (APEX_ENOMEM). */
static int64_t owner_add(apex_sink_t *s, const apex_build_owner_t *like, int64_t same)
{
	if (s->owner_count == s->owner_cap &&
	    apex_sink_reserve_owners(s, s->owner_cap ? s->owner_cap * 2 : 1024) != APEX_OK)
		return -1;
	if (s->owner_count >= UINT32_MAX - 1)
		return -1;
	apex_build_owner_t *o = &s->owners[s->owner_count];
	if (same >= 0) {
		*o = s->owners[same];
	} else {
		*o = *like;
		/* Apart: the build copies them in canonical order, then frees them. */
		if (apex_build_owner_copy(s->names, o, like) != APEX_OK)
			return -1;
	}
	return (int64_t)s->owner_count++;
}

/* The entry of the record being added, whose owner is `like`, in *index:
 * the last record's if it has the same key, else a new one. */
int apex_owner_intern(apex_sink_t *s, const apex_build_owner_t *like, uint32_t *index)
{
	if (s->have_last && owner_is(&s->owners[s->last_owner], like->key, like->key_size)) {
		*index = s->last_owner;
		return APEX_OK;
	}
	if (s->table == NULL ||
	    (s->owner_count >= s->table_slots && s->table_slots < OWNER_CACHE_SLOTS)) {
		uint32_t slots = s->table == NULL ? OWNER_CACHE_FIRST_SLOTS : s->table_slots * 8;

		if (slots > OWNER_CACHE_SLOTS)
			slots = OWNER_CACHE_SLOTS;
		uint64_t *table = calloc(slots, sizeof(*table));

		if (table == NULL)
			return APEX_ENOMEM;
		free(s->table);
		s->table = table;
		s->table_slots = slots;
	}
	uint32_t hash = key_hash(like->key, like->key_size);
	/* the home's slots, in one cache line */
	uint64_t *ways = &s->table[hash & (s->table_slots - 1) & ~(OWNER_CACHE_WAYS - 1)];
	int64_t same = -1;
	size_t w = 0;
	for (; w < OWNER_CACHE_WAYS && ways[w] != 0; w++) {
		uint32_t i = (uint32_t)ways[w] - 1;
		if ((uint32_t)(ways[w] >> 32) == hash &&
		    owner_is(&s->owners[i], like->key, like->key_size)) {
			same = i;
			break;
		}
	}
	int64_t added = owner_add(s, like, same);
	if (added < 0)
		return APEX_ENOMEM;
	/* the new entry first; the one it replaces (its own older entry,
	 * or else the oldest) leaves */
	if (w == OWNER_CACHE_WAYS)
		w--;
	memmove(&ways[1], &ways[0], w * sizeof(*ways));
	ways[0] = slot_of(hash, (size_t)added);
	*index = s->last_owner = (uint32_t)added;
	s->have_last = true;
	return APEX_OK;
}
