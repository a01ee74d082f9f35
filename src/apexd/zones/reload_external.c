/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reloader's zones as other threads see them (reload.h): the id of a
 * configured zone, a version built elsewhere (a transfer) published, and
 * a transfer refused by memory-limit noted as the zone's error.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "zones/reload.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dns/name_index.h"
#include "zones/reload_internal.h"
#include "util/error.h"

bool apex_reloader_has_id(apex_reloader_t *r, uint64_t id)
{
	pthread_mutex_lock(&r->lock);
	bool found = apex_reloader_find_id(r, id) != NULL;
	pthread_mutex_unlock(&r->lock);
	return found;
}

unsigned long apex_reloader_removals(apex_reloader_t *r)
{
	return atomic_load_explicit(&r->removals, memory_order_acquire);
}

bool apex_reloader_first_load_pending(apex_reloader_t *r, uint64_t id)
{
	pthread_mutex_lock(&r->lock);
	const apex_managed_zone_t *z = apex_reloader_find_id(r, id);
	bool pending = z != NULL && z->loads == 0 && z->done < z->requested;
	pthread_mutex_unlock(&r->lock);
	return pending;
}

int apex_reloader_zone_ids(apex_reloader_t *r, const uint8_t *const *origins, size_t count,
			   uint64_t *ids)
{
	apex_name_index_t index;

	/* the origins indexed, each of the reloader's zones probed once:
	 * thousands of catalog members matched under the lock */
	apex_name_ref_t *refs = malloc((count + 1) * sizeof(*refs));
	if (refs == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < count; i++) {
		refs[i] = (apex_name_ref_t){ origins[i], i };
		ids[i] = 0;
	}
	if (apex_name_index_init(&index, refs, count) < 0) {
		free(refs);
		return APEX_ENOMEM;
	}
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->count; i++) {
		const apex_name_ref_t *found = apex_name_index_find_hashed(
			&index, r->zones[i]->origin, r->zones[i]->origin_hash);

		if (found != NULL)
			ids[found->index] = r->zones[i]->id;
	}
	pthread_mutex_unlock(&r->lock);
	apex_name_index_free(&index);
	free(refs);
	return APEX_OK;
}

/* Under the lock: a version of z was published (a transfer): an error of
 * a transfer that memory-limit refused is over, and so is the missing copy
 * of a zone that had none (it is served now, its first load's failure no
 * longer shown). */
static void published_over_refusal(apex_managed_zone_t *z)
{
	if (z->refused || z->awaiting_transfer) {
		z->refused = false;
		z->awaiting_transfer = false;
		z->state = APEX_ZONE_LOADED;
		z->error[0] = '\0';
	}
}

int apex_reloader_publish(apex_reloader_t *r, uint64_t zone_id, apex_zone_t *zone)
{
	pthread_mutex_lock(&r->lock);
	apex_managed_zone_t *z = apex_reloader_find_id(r, zone_id);
	int rc = z != NULL ? apex_zonetable_publish(&r->server->zonetable, zone) : APEX_ENOENT;
	if (rc == APEX_OK)
		published_over_refusal(z);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

int apex_reloader_publish_over(apex_reloader_t *r, uint64_t zone_id, const apex_zone_t *expected,
			       apex_zone_t *zone)
{
	pthread_mutex_lock(&r->lock);
	apex_zone_t *served = apex_server_served_version(r->server, zone->origin);
	apex_managed_zone_t *z = apex_reloader_find_id(r, zone_id);
	int rc = z == NULL            ? APEX_ENOENT
		 : served != expected ? -ESTALE
				      : apex_zonetable_publish(&r->server->zonetable, zone);
	if (rc == APEX_OK)
		published_over_refusal(z);
	pthread_mutex_unlock(&r->lock);
	apex_zone_unref(served);
	return rc;
}

void apex_reloader_refused(apex_reloader_t *r, uint64_t zone_id, const char *err)
{
	pthread_mutex_lock(&r->lock);
	apex_managed_zone_t *z = apex_reloader_find_id(r, zone_id);
	if (z != NULL && !z->loading) {
		z->refused = true;
		z->state = APEX_ZONE_FAILED;
		snprintf(z->error, sizeof(z->error), "%s", err);
		clock_gettime(CLOCK_REALTIME, &z->failed_at);
	}
	pthread_mutex_unlock(&r->lock);
}
