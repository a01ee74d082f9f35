#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "zone/zoneset.h"


/* A new zoneset with room for count zones and one reference; caller owns it. */
static apex_zoneset_t *zoneset_new(size_t count)
{
	apex_zoneset_t *set = calloc(1, sizeof(*set) + count * sizeof(set->zones[0]));
	if (set == NULL)
		return NULL;
	atomic_init(&set->refcount, 1);
	set->count = count;
	return set;
}

void apex_zoneset_release(apex_zoneset_t *set)
{
	if (set == NULL)
		return;
	if (atomic_fetch_sub_explicit(&set->refcount, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < set->count; i++)
		apex_zone_unref(set->zones[i]);
	free(set);
}

int apex_zonetable_init(apex_zonetable_t *table)
{
	int rc = apex_rwlock_init(&table->lock);
	if (rc != APEX_OK)
		return rc;
	table->current = zoneset_new(0);
	if (table->current == NULL) {
		apex_rwlock_destroy(&table->lock);
		return APEX_ENOMEM;
	}
	atomic_init(&table->generation, 0);
	return APEX_OK;
}

void apex_zonetable_destroy(apex_zonetable_t *table)
{
	apex_zoneset_release(table->current);
	table->current = NULL;
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

/* Swap in `next` as the current set; the table's reference to the old set is dropped. */
static void zonetable_swap(apex_zonetable_t *table, apex_zoneset_t *next)
{
	apex_zoneset_t *old = table->current;
	table->current = next;
	atomic_fetch_add_explicit(&table->generation, 1, memory_order_release);
	apex_rwlock_unlock(&table->lock);
	apex_zoneset_release(old);
}

int apex_zonetable_publish(apex_zonetable_t *table, apex_zone_t *zone)
{
	/* The new set is built under the write lock so that two publishers
	 * cannot lose each other's zone; it is a short array copy. */
	apex_rwlock_wrlock(&table->lock);
	const apex_zoneset_t *cur = table->current;
	bool found;
	size_t at = zoneset_search(cur, zone->origin_key, zone->origin_key_size, &found);
	apex_zoneset_t *next = zoneset_new(cur->count + (found ? 0 : 1));
	if (next == NULL) {
		apex_rwlock_unlock(&table->lock);
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
	zonetable_swap(table, next);
	return APEX_OK;
}

int apex_zonetable_remove(apex_zonetable_t *table, const uint8_t *origin)
{
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(origin, key, NULL);
	apex_rwlock_wrlock(&table->lock);
	const apex_zoneset_t *cur = table->current;
	bool found;
	size_t at = zoneset_search(cur, key, key_size, &found);
	if (!found) {
		apex_rwlock_unlock(&table->lock);
		return APEX_ENOENT;
	}
	apex_zoneset_t *next = zoneset_new(cur->count - 1);
	if (next == NULL) {
		apex_rwlock_unlock(&table->lock);
		return APEX_ENOMEM;
	}
	size_t j = 0;
	for (size_t i = 0; i < cur->count; i++) {
		if (i == at)
			continue;
		apex_zone_ref(cur->zones[i]);
		next->zones[j++] = cur->zones[i];
	}
	zonetable_swap(table, next);
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

const apex_zone_t *apex_zoneset_find(const apex_zoneset_t *set, const uint8_t *key,
				     const uint16_t *label_ends, int labels)
{
	/* Longest match first: the name itself, then each ancestor. */
	for (int i = labels; i >= 0; i--) {
		bool found;
		size_t at = zoneset_search(set, key, label_ends[i], &found);
		if (found)
			return set->zones[at];
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
