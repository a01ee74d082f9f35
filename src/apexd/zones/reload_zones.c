/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reloader's list of configured zones (reload_internal.h): a zone
 * made from its configuration and freed, found by origin and by id in
 * log N (the list in the order of the ids, an index by origin made again
 * when the list changed), added and taken out.  Under the reloader's lock.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "zones/reload.h"

#include <stdlib.h>
#include <string.h>

#include "dns/name_hash.h"
#include "dns/name_refs.h"
#include "zones/reload_internal.h"
#include "util/error.h"

void apex_reloader_zone_free(apex_managed_zone_t *z)
{
	if (z == NULL)
		return;
	free(z->name);
	free(z->file);
	free(z);
}

/* A new zone entry for zc with one request pending; caller owns it. */
apex_managed_zone_t *apex_reloader_zone_new(apex_reloader_t *r, const apex_zone_config_t *zc)
{
	apex_managed_zone_t *z = calloc(1, sizeof(*z));
	char text[APEX_RELOAD_NAME_TEXT];

	if (z == NULL)
		return NULL;
	memcpy(z->origin, zc->origin, apex_name_size(zc->origin));
	z->origin_hash = apex_name_hash(z->origin);
	apex_name_to_str(z->origin, text, sizeof(text));
	z->name = strdup(text);
	z->file = strdup(zc->file);
	if (z->name == NULL || z->file == NULL) {
		apex_reloader_zone_free(z);
		return NULL;
	}
	z->secondary = zc->request_xfr_count > 0;
	z->zonemd_verify = zc->zonemd_verify;
	z->id = ++r->next_id;
	z->state = APEX_ZONE_LOADING;
	z->requested = 1;
	return z;
}

/* Under the lock: index of the zone with this origin, or -1.  The index
 * by origin is made again after zones were added or removed. */
ssize_t apex_reloader_find_origin(apex_reloader_t *r, const uint8_t *origin)
{
	const apex_name_ref_t *found;

	if (r->by_origin == NULL || r->by_origin_stale) {
		apex_name_ref_t *sorted = apex_reloader_sorted_zones(r);

		if (sorted == NULL) { /* out of memory: the long way */
			for (size_t i = 0; i < r->count; i++)
				if (apex_name_equal(r->zones[i]->origin, origin))
					return (ssize_t)i;
			return -1;
		}
		free(r->by_origin);
		r->by_origin = sorted;
		r->by_origin_stale = false;
	}
	found = apex_name_refs_find(r->by_origin, r->count, origin);
	return found != NULL ? (ssize_t)found->index : -1;
}

struct apex_name_ref *apex_reloader_sorted_zones(const apex_reloader_t *r)
{
	apex_name_ref_t *sorted = calloc(r->count > 0 ? r->count : 1, sizeof(*sorted));

	if (sorted == NULL)
		return NULL;
	for (size_t i = 0; i < r->count; i++)
		sorted[i] = (apex_name_ref_t){ r->zones[i]->origin, i };
	apex_name_refs_sort(sorted, r->count);
	return sorted;
}

/* Under the lock: the zone with this id, or NULL (by binary search: the
 * zones are in the order of their ids). */
apex_managed_zone_t *apex_reloader_find_id(const apex_reloader_t *r, uint64_t id)
{
	size_t lo = 0, hi = r->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->zones[mid]->id == id)
			return r->zones[mid];
		if (r->zones[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Under the lock: append z (taking it over; its id is the highest yet);
 * APEX_ENOMEM leaves z to the caller. */
int apex_reloader_zones_push(apex_reloader_t *r, apex_managed_zone_t *z)
{
	if (r->count == r->capacity) {
		size_t capacity = r->capacity < 16 ? 16 : r->capacity * 2;
		apex_managed_zone_t **grown = realloc(r->zones, capacity * sizeof(*grown));

		if (grown == NULL)
			return APEX_ENOMEM;
		r->zones = grown;
		r->capacity = capacity;
	}
	r->zones[r->count++] = z;
	r->by_origin_stale = true;
	return APEX_OK;
}

/* Under the lock: the zone at index i taken out (not freed), the order
 * of the others kept. */
void apex_reloader_zones_remove(apex_reloader_t *r, size_t i)
{
	memmove(&r->zones[i], &r->zones[i + 1], (r->count - i - 1) * sizeof(*r->zones));
	r->count--;
	r->by_origin_stale = true;
	atomic_fetch_add_explicit(&r->removals, 1, memory_order_release);
}
