/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "dns/name.h"
#include "dns/name_hash.h"
#include "dns/name_refs.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/hash_slots.h"
#include "zone/zone_bags.h"
#include "zone/zoneset.h"

/* A new empty zoneset with one reference; caller owns it. */
static apex_zoneset_t *zoneset_new(void)
{
	apex_zoneset_t *set = calloc(1, sizeof(*set));
	if (set == NULL)
		return NULL;
	atomic_init(&set->refcount, 1);
	set->max_origin_labels = -1;
	return set;
}

/* The index of configured origins not served (zoneset.h). */
struct apex_unserved_index {
	atomic_uint refcount;
	size_t count;
	unsigned bits;
	uint64_t *slots; /* 1 << bits of them, into origins */
	apex_unserved_origin_t origins[];
};

static void unserved_index_release(apex_unserved_index_t *index)
{
	if (index == NULL ||
	    atomic_fetch_sub_explicit(&index->refcount, 1, memory_order_acq_rel) != 1)
		return;
	free(index->slots);
	free(index);
}

/*
 * A new index of the list's origins but the one at index skip (-1:
 * none), with one reference, the caller's, in *out; NULL there when none
 * is left.  APEX_ENOMEM when out of memory.
 */
static int unserved_index_build(const apex_origin_list_t *list, ssize_t skip,
				apex_unserved_index_t **out)
{
	size_t count = list->count - (skip >= 0 ? 1 : 0);
	*out = NULL;
	if (count == 0)
		return APEX_OK;
	unsigned bits = apex_hash_slots_bits(count);
	apex_unserved_index_t *index = malloc(sizeof(*index) + count * sizeof(index->origins[0]));
	uint64_t *slots = calloc((size_t)1 << bits, sizeof(*slots));
	if (index == NULL || slots == NULL) {
		free(index);
		free(slots);
		return APEX_ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < list->count; i++) {
		if ((ssize_t)i == skip)
			continue;
		apex_unserved_origin_t *u = &index->origins[n];
		apex_lookup_name_t k;
		apex_lookup_name_init(&k, list->entries[i].origin);
		u->hash = k.hashes[k.labels];
		u->labels = k.labels;
		u->key_size = k.size;
		memcpy(u->key, k.key, k.size);
		apex_hash_slots_insert(slots, bits, u->hash, (uint32_t)n++);
	}
	atomic_init(&index->refcount, 1);
	index->count = n;
	index->bits = bits;
	index->slots = slots;
	*out = index;
	return APEX_OK;
}

/* Let set look up the origins of index (NULL: none), of which it takes
 * a reference. */
static void zoneset_attach_unserved(apex_zoneset_t *set, apex_unserved_index_t *index)
{
	if (index == NULL)
		return;
	atomic_fetch_add_explicit(&index->refcount, 1, memory_order_relaxed);
	set->unserved_index = index;
	set->unserved_count = index->count;
	set->unserved = index->origins;
	set->unserved_slots = index->slots;
	set->unserved_bits = index->bits;
}

/* Free a set: its unserved index, and its references to its zones' shelves of bags. */
static void zoneset_free(apex_zoneset_t *set)
{
	apex_zone_bags_release(&set->bags);
	unserved_index_release(set->unserved_index);
	free(set);
}

void apex_zoneset_release(apex_zoneset_t *set)
{
	if (set == NULL)
		return;
	if (atomic_fetch_sub_explicit(&set->refcount, 1, memory_order_acq_rel) != 1)
		return;
	zoneset_free(set);
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
	table->current = zoneset_new();
	if (table->current == NULL) {
		pthread_mutex_destroy(&table->publish_lock);
		apex_rwlock_destroy(&table->lock);
		return APEX_ENOMEM;
	}
	atomic_init(&table->generation, 0);
	table->slots = (apex_zone_slots_t){ 0 };
	table->unserved = (apex_origin_list_t){ 0 };
	table->unserved_index = NULL;
	table->unserved_stale = 0;
	return APEX_OK;
}

void apex_zonetable_destroy(apex_zonetable_t *table)
{
	apex_zoneset_release(table->current);
	table->current = NULL;
	for (size_t i = 0; i < table->slots.count; i++)
		free(table->slots.origins[i]);
	free(table->slots.origins);
	free(table->slots.index);
	table->slots = (apex_zone_slots_t){ 0 };
	for (size_t i = 0; i < table->unserved.count; i++)
		free(table->unserved.entries[i].origin);
	free(table->unserved.entries);
	table->unserved = (apex_origin_list_t){ 0 };
	unserved_index_release(table->unserved_index);
	table->unserved_index = NULL;
	pthread_mutex_destroy(&table->publish_lock);
	apex_rwlock_destroy(&table->lock);
}

/* The zone of set with zone's origin, or NULL. */
static apex_zone_t *zoneset_same_origin(const apex_zoneset_t *set, const apex_zone_t *zone)
{
	return apex_zone_bags_find(&set->bags, zone->apex->hash, zone->origin_key,
				   zone->origin_key_size);
}

/* Index of origin in list, or -1. */
static ssize_t origin_list_find(const apex_origin_list_t *list, const uint8_t *origin)
{
	uint32_t hash = apex_name_hash(origin);

	for (size_t i = 0; i < list->count; i++) {
		if (list->entries[i].hash == hash &&
		    apex_name_equal(list->entries[i].origin, origin))
			return (ssize_t)i;
	}
	return -1;
}

/* Append a copy of origin to list. */
static int origin_list_add(apex_origin_list_t *list, const uint8_t *origin)
{
	apex_listed_origin_t *grown =
		apex_grow(list->entries, &list->capacity, list->count, sizeof(*grown), 8);
	if (grown == NULL)
		return APEX_ENOMEM;
	list->entries = grown;
	size_t size = apex_name_size(origin);
	uint8_t *copy = malloc(size);
	if (copy == NULL)
		return APEX_ENOMEM;
	memcpy(copy, origin, size);
	list->entries[list->count++] = (apex_listed_origin_t){ copy, apex_name_hash(origin) };
	return APEX_OK;
}

/* Free and drop the origin at index i (order is not kept). */
static void origin_list_drop(apex_origin_list_t *list, size_t i)
{
	free(list->entries[i].origin);
	list->entries[i] = list->entries[--list->count];
}

/*
 * The unserved index of the next set.  Rebuilding it for every version
 * published would cost each transfer of a new secondary zone a pass over
 * every zone still waiting for its first (10,000 catalog members at
 * once), so a set may keep its predecessor's index with entries served
 * by now: harmless (zoneset.h), and rebuilt once they outnumber the
 * others, which bounds the rebuilds' total work to twice the origins
 * served.
 */
typedef struct unserved_next {
	apex_unserved_index_t *index; /* for the next set; NULL: none */
	bool built;                   /* new: its reference is the caller's */
	size_t stale;                 /* the table's unserved_stale once in force */
} unserved_next_t;

/*
 * Plan the next set's index once the table's list has become `list` but
 * its entry at skip (-1: none), `served` origins having left it to be
 * served; `rebuild` when an origin was added or removed outright (an
 * index must not hold an origin neither served nor configured).
 */
static int unserved_next(const apex_zonetable_t *table, const apex_origin_list_t *list,
			 ssize_t skip, size_t served, bool rebuild, unserved_next_t *next)
{
	size_t live = list->count - (skip >= 0 ? 1 : 0);

	next->index = table->unserved_index;
	next->built = false;
	next->stale = table->unserved_stale + served;
	if (!rebuild && next->stale <= live)
		return APEX_OK;
	next->built = true;
	next->stale = 0;
	return unserved_index_build(list, skip, &next->index);
}

/* Put the planned index in force as the table's, once its set is. */
static void unserved_next_commit(apex_zonetable_t *table, const unserved_next_t *next)
{
	if (next->built) {
		unserved_index_release(table->unserved_index);
		table->unserved_index = next->index; /* the plan's reference */
	}
	table->unserved_stale = next->stale;
}

/*
 * Swap in `next` as the current set (the caller holds publish_lock): the
 * write side of the rwlock only for the swap, the generation bumped once
 * it is free again, then the table's reference to the old set dropped.
 */
static void zonetable_swap(apex_zonetable_t *table, apex_zoneset_t *next)
{
	next->max_origin_labels = apex_zone_bags_max_origin_labels(&next->bags);
	next->read_ahead = apex_zone_bags_read_ahead(&next->bags);
	apex_rwlock_wrlock(&table->lock);
	apex_zoneset_t *old = table->current;
	table->current = next;
	apex_rwlock_unlock(&table->lock);
	atomic_fetch_add_explicit(&table->generation, 1, memory_order_release);
	apex_zoneset_release(old);
}

/* The slot of origin in s, or -1 (the caller holds publish_lock). */
static ssize_t slot_find(const apex_zone_slots_t *s, const uint8_t *origin)
{
	if (s->index == NULL)
		return -1;
	uint32_t hash = apex_name_hash(origin), mask = (1u << s->bits) - 1;

	for (uint32_t i = apex_hash_slots_first(hash, s->bits);; i = (i + 1) & mask) {
		uint64_t slot = s->index[i];

		if (slot == 0)
			return -1;
		if (apex_hash_slots_hash(slot) == hash &&
		    apex_name_equal(s->origins[apex_hash_slots_index(slot)], origin))
			return apex_hash_slots_index(slot);
	}
}

/* s's index made room for one slot more (rebuilt twice the size when it
 * would be more than half full).  APEX_OK or APEX_ENOMEM (s unchanged). */
static int slot_index_room(apex_zone_slots_t *s)
{
	unsigned bits = apex_hash_slots_bits(s->count + 1);

	if (s->index != NULL && bits <= s->bits)
		return APEX_OK;
	uint64_t *index = calloc((size_t)1 << bits, sizeof(*index));
	if (index == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < s->count; i++)
		apex_hash_slots_insert(index, bits, apex_name_hash(s->origins[i]), (uint32_t)i);
	free(s->index);
	s->index = index;
	s->bits = bits;
	return APEX_OK;
}

/* A new statistics slot for zone's origin (the caller holds publish_lock). */
static int slot_new(apex_zone_slots_t *s, apex_zone_t *zone)
{
	uint8_t **grown = apex_grow(s->origins, &s->capacity, s->count, sizeof(*grown), 16);
	if (grown == NULL || s->count >= UINT32_MAX - 1)
		return APEX_ENOMEM;
	s->origins = grown;
	if (slot_index_room(s) != APEX_OK)
		return APEX_ENOMEM;
	size_t size = apex_name_size(zone->origin);
	if ((s->origins[s->count] = malloc(size)) == NULL)
		return APEX_ENOMEM;
	memcpy(s->origins[s->count], zone->origin, size);
	apex_hash_slots_insert(s->index, s->bits, apex_name_hash(zone->origin), (uint32_t)s->count);
	zone->stats_slot = (uint32_t)s->count++;
	return APEX_OK;
}

/*
 * The statistics slot of zone's origin (the caller holds publish_lock):
 * the one its current version has, else the one it had before it was
 * removed, else a new one.
 */
static int zone_slot(apex_zonetable_t *table, const apex_zone_t *current, apex_zone_t *zone)
{
	if (current != NULL) {
		if (current != zone) /* never written while workers may read it */
			zone->stats_slot = current->stats_slot;
		return APEX_OK;
	}
	ssize_t slot = slot_find(&table->slots, zone->origin);
	if (slot >= 0) {
		zone->stats_slot = (uint32_t)slot;
		return APEX_OK;
	}
	return slot_new(&table->slots, zone);
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

/*
 * Give `next`, whose bags are filled, the table's unserved origins but the
 * one at index skip (-1: none), and swap it in; that origin is now served,
 * or removed (`removal`, which also covers a served zone removed).  On
 * failure next is freed.  The caller holds publish_lock.
 */
static int zonetable_commit(apex_zonetable_t *table, apex_zoneset_t *next, ssize_t skip,
			    bool removal)
{
	unserved_next_t unserved;
	int rc = unserved_next(table, &table->unserved, skip, !removal && skip >= 0 ? 1 : 0,
			       removal, &unserved);

	if (rc != APEX_OK) {
		zoneset_free(next);
		return APEX_ENOMEM;
	}
	zoneset_attach_unserved(next, unserved.index);
	zonetable_swap(table, next);
	unserved_next_commit(table, &unserved);
	if (skip >= 0)
		origin_list_drop(&table->unserved, (size_t)skip);
	return APEX_OK;
}

/*
 * Swap in next, for which a batch's index of the unserved origins was
 * planned, the table's list of them becoming kept (a view of the list's
 * entries, in their order): the entries left out have their origins
 * freed.  The caller holds publish_lock.
 */
static void zonetable_commit_kept(apex_zonetable_t *table, apex_zoneset_t *next,
				  const unserved_next_t *unserved, const apex_origin_list_t *kept)
{
	size_t k = 0;

	zoneset_attach_unserved(next, unserved->index);
	zonetable_swap(table, next);
	unserved_next_commit(table, unserved);
	for (size_t i = 0; i < table->unserved.count; i++) {
		if (k < kept->count && kept->entries[k].origin == table->unserved.entries[i].origin)
			k++;
		else
			free(table->unserved.entries[i].origin);
	}
	free(table->unserved.entries);
	table->unserved.entries = kept->entries;
	table->unserved.count = table->unserved.capacity = kept->count;
}

/* A new set with cur's zones but `drop` (NULL: none), not yet swapped in;
 * NULL if out of memory. */
static apex_zoneset_t *zoneset_copy(const apex_zoneset_t *cur, apex_zone_t *drop)
{
	apex_zoneset_t *next = zoneset_new();
	if (next == NULL)
		return NULL;
	if (apex_zone_bags_derive(&next->bags, &cur->bags, &drop, drop != NULL ? 1 : 0, NULL, 0) !=
	    APEX_OK) {
		zoneset_free(next);
		return NULL;
	}
	next->count = cur->count - (drop != NULL ? 1 : 0);
	return next;
}

int apex_zonetable_publish(apex_zonetable_t *table, apex_zone_t *zone)
{
	/* The new set is built beside the current one, publishers taking
	 * turns so that none loses another's zone; workers go on picking up
	 * the current set meanwhile.  Only the zone's bag is made again. */
	pthread_mutex_lock(&table->publish_lock);
	const apex_zoneset_t *cur = table->current;
	apex_zone_t *was = zoneset_same_origin(cur, zone);
	apex_zoneset_t *next = NULL;
	if (zone_slot(table, was, zone) == APEX_OK)
		next = zoneset_new();
	if (next != NULL && apex_zone_bags_derive(&next->bags, &cur->bags, &was,
						  was != NULL ? 1 : 0, &zone, 1) != APEX_OK) {
		zoneset_free(next);
		next = NULL;
	}
	if (next == NULL) {
		pthread_mutex_unlock(&table->publish_lock);
		return APEX_ENOMEM;
	}
	next->count = cur->count + (was != NULL ? 0 : 1);
	/* served from now on: no longer among the unserved */
	int rc = zonetable_commit(table, next, origin_list_find(&table->unserved, zone->origin),
				  false);
	pthread_mutex_unlock(&table->publish_lock);
	if (rc == APEX_OK)
		apex_zone_unref(zone); /* the set's bag holds it now */
	return rc;
}

/* ---------------------------------------------------------------- batches */

/* qsort: zones by origin key. */
static int by_origin_key(const void *a, const void *b)
{
	const apex_zone_t *x = *(apex_zone_t *const *)a, *y = *(apex_zone_t *const *)b;

	return apex_key_compare(x->origin_key, x->origin_key_size, y->origin_key,
				y->origin_key_size);
}

/* The zones of cur the batch replaces into replaced, *replaced_count of
 * them (a batch zone takes the statistics slot of the one it replaces),
 * and the slots of the batch's zones new to the set given. */
static int batch_replaced(apex_zonetable_t *table, const apex_zoneset_t *cur, apex_zone_t **batch,
			  size_t count, apex_zone_t **replaced, size_t *replaced_count)
{
	int rc = APEX_OK;

	for (size_t b = 0; rc == APEX_OK && b < count; b++) {
		apex_zone_t *was = zoneset_same_origin(cur, batch[b]);

		if (was != NULL)
			replaced[(*replaced_count)++] = was;
		rc = zone_slot(table, was, batch[b]);
	}
	return rc;
}

/* Whether origin is that of a zone of the sorted batch. */
static bool in_batch(apex_zone_t **batch, size_t count, const uint8_t *origin)
{
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(origin, key, NULL);
	size_t lo = 0, hi = count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = apex_key_compare(batch[mid]->origin_key, batch[mid]->origin_key_size, key,
					 key_size);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int apex_zonetable_publish_many(apex_zonetable_t *table, apex_zone_t **zones, size_t count)
{
	if (count == 0)
		return APEX_OK;
	qsort(zones, count, sizeof(*zones), by_origin_key);
	pthread_mutex_lock(&table->publish_lock);
	const apex_zoneset_t *cur = table->current;
	apex_zoneset_t *next = zoneset_new();
	/* the unserved origins that stay so: a view of the table's list */
	apex_origin_list_t kept = { malloc((table->unserved.count + 1) * sizeof(*kept.entries)), 0,
				    0 };
	apex_zone_t **replaced = malloc(count * sizeof(*replaced));
	size_t replaced_count = 0;
	unserved_next_t unserved = { 0 };
	int rc = next != NULL && kept.entries != NULL && replaced != NULL ? APEX_OK : APEX_ENOMEM;

	for (size_t i = 0; rc == APEX_OK && i < table->unserved.count; i++)
		if (!in_batch(zones, count, table->unserved.entries[i].origin))
			kept.entries[kept.count++] = table->unserved.entries[i];
	if (rc == APEX_OK)
		rc = batch_replaced(table, cur, zones, count, replaced, &replaced_count);
	if (rc == APEX_OK)
		rc = apex_zone_bags_derive(&next->bags, &cur->bags, replaced, replaced_count, zones,
					   count);
	free(replaced);
	if (rc == APEX_OK)
		next->count = cur->count + count - replaced_count;
	if (rc == APEX_OK)
		rc = unserved_next(table, &kept, -1, table->unserved.count - kept.count, false,
				   &unserved);
	if (rc != APEX_OK) { /* the batch's references stay the caller's */
		if (next != NULL)
			zoneset_free(next);
		free(kept.entries);
		pthread_mutex_unlock(&table->publish_lock);
		return rc;
	}
	zonetable_commit_kept(table, next, &unserved, &kept);
	pthread_mutex_unlock(&table->publish_lock);
	for (size_t i = 0; i < count; i++)
		apex_zone_unref(zones[i]); /* the set's bags hold them now */
	return APEX_OK;
}

int apex_zonetable_configure_many(apex_zonetable_t *table, const uint8_t *const *origins,
				  size_t count)
{
	pthread_mutex_lock(&table->publish_lock);
	const apex_zoneset_t *cur = table->current;
	size_t before = table->unserved.count;
	int rc = APEX_OK;

	for (size_t i = 0; rc == APEX_OK && i < count; i++) {
		apex_lookup_name_t name;

		apex_lookup_name_init(&name, origins[i]);
		/* served, or configured already: in cur's indexes */
		if (apex_zoneset_get(cur, origins[i]) == NULL &&
		    (cur->unserved_count == 0 ||
		     !apex_zoneset_unserved(cur, &name, name.labels, name.labels - 1)))
			rc = origin_list_add(&table->unserved, origins[i]);
	}
	if (rc == APEX_OK && table->unserved.count > before) {
		apex_zoneset_t *next = zoneset_copy(cur, NULL);
		rc = next == NULL ? APEX_ENOMEM : zonetable_commit(table, next, -1, true);
	}
	while (rc != APEX_OK && table->unserved.count > before)
		origin_list_drop(&table->unserved, table->unserved.count - 1);
	pthread_mutex_unlock(&table->publish_lock);
	return rc;
}

/* Whether origin is among the sorted refs. */
static bool in_refs(const apex_name_ref_t *refs, size_t count, const uint8_t *origin)
{
	return apex_name_refs_find(refs, count, origin) != NULL;
}

int apex_zonetable_remove_many(apex_zonetable_t *table, const uint8_t *const *origins, size_t count)
{
	apex_name_ref_t *refs = malloc((count + 1) * sizeof(*refs));
	if (refs == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < count; i++)
		refs[i] = (apex_name_ref_t){ origins[i], i };
	apex_name_refs_sort(refs, count);

	pthread_mutex_lock(&table->publish_lock);
	const apex_zoneset_t *cur = table->current;
	apex_zoneset_t *next = zoneset_new();
	/* the unserved origins that stay so: a view of the table's list */
	apex_origin_list_t kept = { malloc((table->unserved.count + 1) * sizeof(*kept.entries)), 0,
				    0 };
	apex_zone_t **gone = malloc((count + 1) * sizeof(*gone));
	unserved_next_t unserved = { 0 };
	int rc = next != NULL && kept.entries != NULL && gone != NULL ? APEX_OK : APEX_ENOMEM;
	size_t gone_count = 0;

	for (size_t i = 0; rc == APEX_OK && i < table->unserved.count; i++)
		if (!in_refs(refs, count, table->unserved.entries[i].origin))
			kept.entries[kept.count++] = table->unserved.entries[i];
	for (size_t i = 0; rc == APEX_OK && i < count; i++) {
		/* sorted: an origin given twice is taken once */
		if (i > 0 && apex_name_equal(refs[i].name, refs[i - 1].name))
			continue;
		apex_zone_t *z = apex_zoneset_get(cur, refs[i].name);

		if (z != NULL)
			gone[gone_count++] = z;
	}
	if (rc == APEX_OK && gone_count == 0 && kept.count == table->unserved.count)
		rc = APEX_ENOENT; /* none of them served or configured */
	if (rc == APEX_OK)
		rc = apex_zone_bags_derive(&next->bags, &cur->bags, gone, gone_count, NULL, 0);
	free(gone);
	if (rc == APEX_OK)
		next->count = cur->count - gone_count;
	if (rc == APEX_OK)
		rc = unserved_next(table, &kept, -1, 0, true, &unserved);
	if (rc != APEX_OK) {
		if (next != NULL)
			zoneset_free(next);
		free(kept.entries);
		pthread_mutex_unlock(&table->publish_lock);
		free(refs);
		return rc;
	}
	zonetable_commit_kept(table, next, &unserved, &kept);
	pthread_mutex_unlock(&table->publish_lock);
	free(refs);
	return APEX_OK;
}

int apex_zonetable_remove(apex_zonetable_t *table, const uint8_t *origin)
{
	pthread_mutex_lock(&table->publish_lock);
	const apex_zoneset_t *cur = table->current;
	apex_zone_t *found = apex_zoneset_get(cur, origin);
	ssize_t unserved = origin_list_find(&table->unserved, origin);
	int rc = APEX_ENOENT;
	if (found != NULL || unserved >= 0) {
		apex_zoneset_t *next = zoneset_copy(cur, found);
		rc = next == NULL ? APEX_ENOMEM : zonetable_commit(table, next, unserved, true);
	}
	pthread_mutex_unlock(&table->publish_lock);
	return rc;
}

int apex_zonetable_configure(apex_zonetable_t *table, const uint8_t *origin)
{
	pthread_mutex_lock(&table->publish_lock);
	const apex_zoneset_t *cur = table->current;
	int rc = APEX_OK;
	if (apex_zoneset_get(cur, origin) == NULL &&
	    origin_list_find(&table->unserved, origin) < 0 &&
	    (rc = origin_list_add(&table->unserved, origin)) == APEX_OK) {
		apex_zoneset_t *next = zoneset_copy(cur, NULL);
		rc = next == NULL ? APEX_ENOMEM : zonetable_commit(table, next, -1, true);
		if (rc != APEX_OK)
			origin_list_drop(&table->unserved, table->unserved.count - 1);
	}
	pthread_mutex_unlock(&table->publish_lock);
	return rc;
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
	/* Longest match first: the name itself, then each ancestor, from
	 * the most labels an origin has. */
	for (int l = labels < set->max_origin_labels ? labels : set->max_origin_labels; l >= 0;
	     l--) {
		const apex_zone_t *z =
			apex_zone_bags_find(&set->bags, name->hashes[l], name->key, name->ends[l]);
		if (z != NULL)
			return z;
	}
	return NULL;
}

bool apex_zoneset_unserved(const apex_zoneset_t *set, const apex_lookup_name_t *name, int labels,
			   int above_labels)
{
	uint32_t mask = (1u << set->unserved_bits) - 1;
	for (int l = labels; l > above_labels; l--) {
		uint32_t hash = name->hashes[l];
		size_t key_size = name->ends[l];
		for (uint32_t i = apex_hash_slots_first(hash, set->unserved_bits);;
		     i = (i + 1) & mask) {
			uint64_t slot = set->unserved_slots[i];
			if (slot == 0)
				break;
			if (apex_hash_slots_hash(slot) != hash)
				continue;
			const apex_unserved_origin_t *u =
				&set->unserved[apex_hash_slots_index(slot)];
			if (u->key_size == key_size && memcmp(u->key, name->key, key_size) == 0)
				return true;
		}
	}
	return false;
}

apex_zone_t *apex_zoneset_get(const apex_zoneset_t *set, const uint8_t *origin)
{
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(origin, key, NULL);
	return apex_zone_bags_find(&set->bags, apex_name_hash(origin), key, key_size);
}

void apex_zoneset_list(const apex_zoneset_t *set, const apex_zone_t **zones)
{
	size_t n = 0;

	for (unsigned b = 0; b < APEX_ZONE_BAGS; b++) {
		const apex_zone_bag_t *bag = set->bags.bag[b];

		for (uint32_t i = 0; bag != NULL && i < bag->count; i++)
			zones[n++] = bag->zones[i];
	}
	qsort(zones, n, sizeof(*zones), by_origin_key);
}
