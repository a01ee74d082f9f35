/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The table of served zones.
 *
 * A zoneset is an immutable set of zone versions with an atomic reference
 * count, found by origin hash in bags shared between sets (zone_bags.h).  The zonetable holds the current zoneset; a
 * fair rwlock guards only the pointer swap on publish and the pick-up
 * by a worker.  Workers keep a reference to the zoneset they picked up
 * and check the table's generation number between batches (one relaxed
 * read of a line written only on publish), so no lock, reference count
 * or other shared write happens per query.
 *
 * A publisher never makes a worker wait for it: it builds the next set
 * beside the current one (publishers take turns on their own mutex,
 * which no worker takes), holds the write side of the rwlock only for
 * the pointer swap, and bumps the generation after releasing it, so a
 * worker that sees the new generation finds the lock free.  The reload
 * thread may run at the lowest priority (SCHED_IDLE) and be kept off the
 * CPU for long stretches; nothing a worker needs waits for it.
 */
#ifndef APEX_ZONE_ZONESET_H
#define APEX_ZONE_ZONESET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/rwlock.h"
#include "zone/lookup_name.h"
#include "zone/zone.h"
#include "zone/zone_bags.h"

/*
 * A configured zone that is not served: its first load failed (a syntax
 * error, a ZONEMD mismatch) or a secondary waits for its first transfer.
 * Queries below its origin are answered SERVFAIL, as NSD, Knot DNS and
 * BIND answer them, not REFUSED as for a name apex knows nothing of.
 */
typedef struct apex_unserved_origin {
	uint32_t hash; /* the name hash of the origin (dns/name_hash.h) */
	int labels;    /* labels of the origin */
	size_t key_size;
	uint8_t key[APEX_KEY_MAX]; /* lookup key (dns/name.h) */
} apex_unserved_origin_t;

/* The index of configured origins not served (zoneset.c): built from the
 * table's list, immutable, shared by the sets published while the list
 * shrinks, freed with the last of them. */
typedef struct apex_unserved_index apex_unserved_index_t;

typedef struct apex_zoneset {
	atomic_uint refcount;
	size_t count;          /* zones in bags */
	int max_origin_labels; /* the most labels of any origin; -1 if empty */
	/* A zone's name table is large enough for the queries to be read
	 * ahead of their answers (zone/lookup_ahead.h,
	 * query/answer_ahead.h): a batch of queries to a set without one is
	 * answered one by one, with nothing read ahead. */
	bool read_ahead;
	/* Configured origins not served, with hash slots into unserved as
	 * for zones: the arrays of unserved_index, of which the set holds a
	 * reference; NULL and 0 when every configured zone is served.  The
	 * index may also hold origins this set serves (served since it was
	 * built): never a match, as a served zone of as many labels is found
	 * first and only deeper unserved origins are looked for. */
	size_t unserved_count;
	const apex_unserved_origin_t *unserved;
	const uint64_t *unserved_slots;
	unsigned unserved_bits;
	apex_unserved_index_t *unserved_index;
	/* the zones, by origin hash, and the set's references to them: bags
	 * a publication did not touch are shared with the set before */
	apex_zone_bags_t bags;
} apex_zoneset_t;

/*
 * Statistics slots: every origin ever published gets a small number of
 * its own, kept for the table's life (a zone removed and added again
 * gets its old one back), so that a worker counts queries per zone in an
 * array of its own indexed by the answering version's stats_slot, and a
 * reader finds the origin of each slot.
 */
typedef struct apex_zone_slots {
	uint8_t **origins; /* origins[slot]: wire format, owned */
	size_t count, capacity;
	/* origin hash to slot (util/hash_slots.h), 1 << bits of them, owned:
	 * a zone new to the set finds the slot its origin had without
	 * comparing every origin (thousands of catalog members added one by
	 * one) */
	uint64_t *index;
	unsigned bits;
} apex_zone_slots_t;

/* Wire-format origins, each owned by the list, with their name hashes
 * (dns/name_hash.h) to find one without comparing every name. */
typedef struct apex_listed_origin {
	uint8_t *origin;
	uint32_t hash;
} apex_listed_origin_t;

typedef struct apex_origin_list {
	apex_listed_origin_t *entries;
	size_t count, capacity;
} apex_origin_list_t;

typedef struct apex_zonetable {
	pthread_mutex_t publish_lock; /* publishers take turns; never a worker */
	apex_zone_slots_t slots;      /* guarded by publish_lock */
	apex_origin_list_t unserved;  /* guarded by publish_lock */
	/* The index of the current set's unserved origins and how many of
	 * its entries are served by now (both guarded by publish_lock): it
	 * is built again when those outnumber the unserved ones, or when an
	 * origin is configured or removed. */
	apex_unserved_index_t *unserved_index;
	size_t unserved_stale;
	apex_rwlock_t lock;                    /* guards `current` */
	apex_zoneset_t *current;               /* never NULL after init */
	_Alignas(64) atomic_ullong generation; /* bumped on every publish */
} apex_zonetable_t;

int apex_zonetable_init(apex_zonetable_t *table);
void apex_zonetable_destroy(apex_zonetable_t *table);

/*
 * Publish a version: it replaces the zone with the same origin, or is
 * added.  The table takes over the caller's reference to zone.  The
 * old version is released when its last reader lets go.
 */
int apex_zonetable_publish(apex_zonetable_t *table, apex_zone_t *zone);

/*
 * Publish count versions of distinct zones at once, in one new set (the
 * first load of many zones: one set built, not one per zone).  On
 * success the table takes over the caller's reference to each; on
 * failure (APEX_ENOMEM) they stay the caller's and nothing changes.
 * zones is sorted by origin in place.
 */
int apex_zonetable_publish_many(apex_zonetable_t *table, apex_zone_t **zones, size_t count);

/*
 * The origin of statistics slot `slot`, copied into origin (at least
 * APEX_NAME_MAX bytes); false if no zone has that slot.  Takes the
 * publish lock: for readers of statistics, never for a worker.
 */
bool apex_zonetable_slot_origin(apex_zonetable_t *table, uint32_t slot, uint8_t *origin);

/* Slots handed out so far: every slot below it has an origin. */
uint32_t apex_zonetable_slot_count(apex_zonetable_t *table);

/*
 * Remove the zone with this origin, served or configured but unserved;
 * APEX_ENOENT if it is neither.
 */
int apex_zonetable_remove(apex_zonetable_t *table, const uint8_t *origin);

/*
 * apex_zonetable_remove() for count distinct origins at once, in one new
 * set (a reconfig that takes out a thousand catalog members); APEX_ENOENT
 * if none of them is served or configured.
 */
int apex_zonetable_remove_many(apex_zonetable_t *table, const uint8_t *const *origins,
			       size_t count);

/*
 * Record that a zone with this origin is configured: until a version of
 * it is published, queries for names in it are answered SERVFAIL (see
 * apex_zoneset_unserved()).  Nothing changes if a version is served.
 */
int apex_zonetable_configure(apex_zonetable_t *table, const uint8_t *origin);

/* apex_zonetable_configure() for count distinct origins at once, in one
 * new set. */
int apex_zonetable_configure_many(apex_zonetable_t *table, const uint8_t *const *origins,
				  size_t count);

/* Current generation; compare with the one a zoneset was acquired at. */
static inline unsigned long long apex_zonetable_generation(apex_zonetable_t *table)
{
	return atomic_load_explicit(&table->generation, memory_order_acquire);
}

/* A reference to the current zoneset (release with apex_zoneset_release()). */
apex_zoneset_t *apex_zonetable_acquire(apex_zonetable_t *table, unsigned long long *generation);

void apex_zoneset_release(apex_zoneset_t *set);

/*
 * The closest enclosing zone of the ancestor with `labels` labels of a
 * name prepared with apex_lookup_name_init() (labels == name->labels:
 * of the name itself), or NULL if no such zone is served.  One hash
 * probe per candidate origin; no allocation, no shared write.
 */
const apex_zone_t *apex_zoneset_find_name(const apex_zoneset_t *set, const apex_lookup_name_t *name,
					  int labels);

/*
 * Whether a configured but unserved zone with more than above_labels and
 * at most labels labels encloses the name: then the name belongs to it,
 * not to the served zone with above_labels labels (-1: none) that
 * apex_zoneset_find_name() found.  Only called when set->unserved_count
 * is not 0; no allocation, no shared write.
 */
bool apex_zoneset_unserved(const apex_zoneset_t *set, const apex_lookup_name_t *name, int labels,
			   int above_labels);

/* The zone with exactly this origin, or NULL. */
apex_zone_t *apex_zoneset_get(const apex_zoneset_t *set, const uint8_t *origin);

/*
 * The set's zones sorted by origin (canonical order) into zones, which
 * has room for set->count of them; the set's references, valid while the
 * caller holds the set.  For the control thread, not the query path.
 */
void apex_zoneset_list(const apex_zoneset_t *set, const apex_zone_t **zones);

#endif
