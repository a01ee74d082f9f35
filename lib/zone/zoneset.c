/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/hash_slots.h"
#include "zone/zoneset.h"

/* A new zoneset with room for count zones and one reference; caller owns it. */
static apex_zoneset_t *zoneset_new(size_t count)
{
	apex_zoneset_t *set = calloc(1, sizeof(*set) + count * sizeof(set->zones[0]));
	if (set == NULL)
		return NULL;
	atomic_init(&set->refcount, 1);
	set->count = count;
	set->max_origin_labels = -1;
	return set;
}

/* Free a set that holds no references yet (its zones array is not filled). */
static void zoneset_free_empty(apex_zoneset_t *set)
{
	free(set->slots);
	free(set);
}

/* Fill set->slots and max_origin_labels once set->zones is filled. */
static int zoneset_index(apex_zoneset_t *set)
{
	unsigned bits = apex_hash_slots_bits(set->count);
	uint64_t *slots = calloc((size_t)1 << bits, sizeof(*slots));
	if (slots == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < set->count; i++) {
		const apex_zone_t *z = set->zones[i];
		apex_hash_slots_insert(slots, bits, z->apex->hash, (uint32_t)i);
		if (z->origin_labels > set->max_origin_labels)
			set->max_origin_labels = z->origin_labels;
	}
	set->slots = slots;
	set->bits = bits;
	return APEX_OK;
}

void apex_zoneset_release(apex_zoneset_t *set)
{
	if (set == NULL)
		return;
	if (atomic_fetch_sub_explicit(&set->refcount, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < set->count; i++)
		apex_zone_unref(set->zones[i]);
	free(set->slots);
	free(set);
}

int apex_zonetable_init(apex_zonetable_t *table)
{
	int rc = apex_rwlock_init(&table->lock);
	if (rc != APEX_OK)
		return rc;
	if (pthread_mutex_init(&table->publish_lock, NULL) != 0) {
		apex_rwlock_destroy(&table->lock);
		return APEX_ENOMEM;
	}
	table->current = zoneset_new(0);
	if (table->current != NULL && zoneset_index(table->current) != APEX_OK) {
		zoneset_free_empty(table->current);
		table->current = NULL;
	}
	if (table->current == NULL) {
		pthread_mutex_destroy(&table->publish_lock);
		apex_rwlock_destroy(&table->lock);
		return APEX_ENOMEM;
	}
	atomic_init(&table->generation, 0);
	table->slots = (apex_zone_slots_t){ 0 };
	return APEX_OK;
}

void apex_zonetable_destroy(apex_zonetable_t *table)
{
	apex_zoneset_release(table->current);
	table->current = NULL;
	for (size_t i = 0; i < table->slots.count; i++)
		free(table->slots.origins[i]);
	free(table->slots.origins);
	table->slots = (apex_zone_slots_t){ 0 };
	pthread_mutex_destroy(&table->publish_lock);
	apex_rwlock_destroy(&table->lock);
}

/* Index of the zone with this origin key in set, or where it would go (*found false). */
static size_t zoneset_search(const apex_zoneset_t *set, const uint8_t *key, size_t key_size,
			     bool *found)
{
	size_t lo = 0, hi = set->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const apex_zone_t *z = set->zones[mid];
		int c = apex_key_compare(z->origin_key, z->origin_key_size, key, key_size);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/*
 * Swap in `next` as the current set (the caller holds publish_lock): the
 * write side of the rwlock only for the swap, the generation bumped once
 * it is free again, then the table's reference to the old set dropped.
 */
static void zonetable_swap(apex_zonetable_t *table, apex_zoneset_t *next)
{
	apex_rwlock_wrlock(&table->lock);
	apex_zoneset_t *old = table->current;
	table->current = next;
	apex_rwlock_unlock(&table->lock);
	atomic_fetch_add_explicit(&table->generation, 1, memory_order_release);
	apex_zoneset_release(old);
}

/*
 * The statistics slot of zone's origin (the caller holds publish_lock):
 * the one its current version has, else the one it had before it was
 * removed, else a new one.
 */
static int zone_slot(apex_zonetable_t *table, const apex_zone_t *current, apex_zone_t *zone)
{
	apex_zone_slots_t *s = &table->slots;

	if (current != NULL) {
		if (current != zone) /* never written while workers may read it */
			zone->stats_slot = current->stats_slot;
		return APEX_OK;
	}
	for (size_t i = 0; i < s->count; i++) {
		if (apex_name_equal(s->origins[i], zone->origin)) {
			zone->stats_slot = (uint32_t)i;
			return APEX_OK;
		}
	}
	uint8_t **grown = apex_grow(s->origins, &s->capacity, s->count, sizeof(*grown), 16);
	if (grown == NULL || s->count >= UINT32_MAX)
		return APEX_ENOMEM;
	s->origins = grown;
	size_t size = apex_name_size(zone->origin);
	if ((s->origins[s->count] = malloc(size)) == NULL)
		return APEX_ENOMEM;
	memcpy(s->origins[s->count], zone->origin, size);
	zone->stats_slot = (uint32_t)s->count++;
	return APEX_OK;
}

bool apex_zonetable_slot_origin(apex_zonetable_t *table, uint32_t slot, uint8_t *origin)
{
	bool found = false;

	pthread_mutex_lock(&table->publish_lock);
	if (slot < table->slots.count) {
		memcpy(origin, table->slots.origins[slot],
		       apex_name_size(table->slots.origins[slot]));
		found = true;
	}
	pthread_mutex_unlock(&table->publish_lock);
	return found;
}

uint32_t apex_zonetable_slot_count(apex_zonetable_t *table)
{
	pthread_mutex_lock(&table->publish_lock);
	uint32_t count = (uint32_t)table->slots.count;
	pthread_mutex_unlock(&table->publish_lock);
	return count;
}

int apex_zonetable_publish(apex_zonetable_t *table, apex_zone_t *zone)
{
	/* The new set is built beside the current one, publishers taking
	 * turns so that none loses another's zone; workers go on picking up
	 * the current set meanwhile. */
	pthread_mutex_lock(&table->publish_lock);
	const apex_zoneset_t *cur = table->current;
	bool found;
	size_t at = zoneset_search(cur, zone->origin_key, zone->origin_key_size, &found);
	apex_zoneset_t *next = NULL;
	if (zone_slot(table, found ? cur->zones[at] : NULL, zone) == APEX_OK)
		next = zoneset_new(cur->count + (found ? 0 : 1));
	if (next == NULL) {
		pthread_mutex_unlock(&table->publish_lock);
		return APEX_ENOMEM;
	}
	size_t j = 0;
	for (size_t i = 0; i < cur->count; i++) {
		if (i == at) {
			next->zones[j++] = zone;
			if (found)
				continue;
		}
		apex_zone_ref(cur->zones[i]);
		next->zones[j++] = cur->zones[i];
	}
	if (at == cur->count)
		next->zones[j++] = zone;
	if (zoneset_index(next) != APEX_OK) {
		/* Undo: the references taken above go back, zone stays the caller's. */
		for (size_t i = 0; i < next->count; i++)
			if (next->zones[i] != zone)
				apex_zone_unref(next->zones[i]);
		zoneset_free_empty(next);
		pthread_mutex_unlock(&table->publish_lock);
		return APEX_ENOMEM;
	}
	zonetable_swap(table, next);
	pthread_mutex_unlock(&table->publish_lock);
	return APEX_OK;
}

int apex_zonetable_remove(apex_zonetable_t *table, const uint8_t *origin)
{
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(origin, key, NULL);
	pthread_mutex_lock(&table->publish_lock);
	const apex_zoneset_t *cur = table->current;
	bool found;
	size_t at = zoneset_search(cur, key, key_size, &found);
	if (!found) {
		pthread_mutex_unlock(&table->publish_lock);
		return APEX_ENOENT;
	}
	apex_zoneset_t *next = zoneset_new(cur->count - 1);
	if (next == NULL) {
		pthread_mutex_unlock(&table->publish_lock);
		return APEX_ENOMEM;
	}
	size_t j = 0;
	for (size_t i = 0; i < cur->count; i++) {
		if (i == at)
			continue;
		apex_zone_ref(cur->zones[i]);
		next->zones[j++] = cur->zones[i];
	}
	if (zoneset_index(next) != APEX_OK) {
		for (size_t i = 0; i < next->count; i++)
			apex_zone_unref(next->zones[i]);
		zoneset_free_empty(next);
		pthread_mutex_unlock(&table->publish_lock);
		return APEX_ENOMEM;
	}
	zonetable_swap(table, next);
	pthread_mutex_unlock(&table->publish_lock);
	return APEX_OK;
}

apex_zoneset_t *apex_zonetable_acquire(apex_zonetable_t *table, unsigned long long *generation)
{
	apex_rwlock_rdlock(&table->lock);
	apex_zoneset_t *set = table->current;
	atomic_fetch_add_explicit(&set->refcount, 1, memory_order_relaxed);
	if (generation != NULL)
		*generation = atomic_load_explicit(&table->generation, memory_order_relaxed);
	apex_rwlock_unlock(&table->lock);
	return set;
}

const apex_zone_t *apex_zoneset_find_name(const apex_zoneset_t *set, const apex_lookup_name_t *name,
					  int labels)
{
	uint32_t mask = (1u << set->bits) - 1;
	/* Longest match first: the name itself, then each ancestor, from
	 * the most labels an origin has. */
	for (int l = labels < set->max_origin_labels ? labels : set->max_origin_labels; l >= 0;
	     l--) {
		uint32_t hash = name->hashes[l];
		size_t key_size = name->ends[l];
		for (uint32_t i = apex_hash_slots_first(hash, set->bits);; i = (i + 1) & mask) {
			uint64_t slot = set->slots[i];
			if (slot == 0)
				break;
			if (apex_hash_slots_hash(slot) != hash)
				continue;
			const apex_zone_t *z = set->zones[apex_hash_slots_index(slot)];
			if (z->origin_key_size == key_size &&
			    memcmp(z->origin_key, name->key, key_size) == 0)
				return z;
		}
	}
	return NULL;
}

apex_zone_t *apex_zoneset_get(const apex_zoneset_t *set, const uint8_t *origin)
{
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(origin, key, NULL);
	bool found;
	size_t at = zoneset_search(set, key, key_size, &found);
	return found ? set->zones[at] : NULL;
}
