/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A reconfiguration's zones applied to the reloader (reload.h): the zones
 * no longer configured removed from the table at once, the new ones and
 * those whose file changed queued for loading.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "zones/reload.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name_refs.h"
#include "zones/reload_internal.h"
#include "util/error.h"
#include "util/log.h"

/* cfg's zones by origin (dns/name_refs.h); NULL when out of memory. */
static apex_name_ref_t *sort_config(const apex_config_t *cfg)
{
	apex_name_ref_t *sorted =
		calloc(cfg->zone_count > 0 ? cfg->zone_count : 1, sizeof(*sorted));

	if (sorted == NULL)
		return NULL;
	for (size_t j = 0; j < cfg->zone_count; j++)
		sorted[j] = (apex_name_ref_t){ cfg->zones[j].origin, j };
	apex_name_refs_sort(sorted, cfg->zone_count);
	return sorted;
}

int apex_reloader_reconfigure(apex_reloader_t *r, const apex_config_t *cfg,
			      apex_reload_ticket_t **tickets, size_t *count, size_t *added,
			      size_t *removed, size_t *changed)
{
	apex_reload_ticket_t *list =
		calloc(cfg->zone_count > 0 ? cfg->zone_count : 1, sizeof(*list));
	apex_name_ref_t *configured = sort_config(cfg), *held = NULL;
	size_t n = 0, held_count;
	int rc = APEX_OK;

	*tickets = NULL;
	*count = *added = *removed = *changed = 0;
	if (list == NULL || configured == NULL) {
		free(list);
		free(configured);
		return APEX_ENOMEM;
	}
	pthread_mutex_lock(&r->lock);
	/* zones that are gone: out of the table now (they are not served from here on) */
	for (size_t i = 0; i < r->count;) {
		apex_managed_zone_t *z = r->zones[i];

		if (apex_name_refs_find(configured, cfg->zone_count, z->origin) != NULL) {
			i++;
			continue;
		}
		rc = apex_zonetable_remove(&r->server->zonetable, z->origin);
		if (rc < 0 && rc != APEX_ENOENT) {
			apex_error("zone %s: not removed: %s", z->name, apex_strerror(rc));
			goto out;
		}
		rc = APEX_OK;
		apex_info("zone %s removed", z->name);
		apex_reloader_zone_free(z);
		apex_reloader_zones_remove(r, i);
		(*removed)++;
	}
	/* new zones, and zones whose file changed (those pushed meanwhile are
	 * not in held: cfg names each zone once); both sides sorted by origin,
	 * so that thousands of zones (a catalog's) match in N log N under the
	 * lock */
	if ((held = apex_reloader_sorted_zones(r)) == NULL) {
		rc = APEX_ENOMEM;
		goto out;
	}
	held_count = r->count;
	for (size_t j = 0; j < cfg->zone_count; j++) {
		const apex_name_ref_t *found =
			apex_name_refs_find(held, held_count, cfg->zones[j].origin);

		if (found != NULL) {
			apex_managed_zone_t *z = r->zones[found->index];
			char *file;

			z->secondary = cfg->zones[j].request_xfr_count > 0;
			z->zonemd_verify = cfg->zones[j].zonemd_verify;
			if (strcmp(z->file, cfg->zones[j].file) == 0)
				continue;
			if ((file = strdup(cfg->zones[j].file)) == NULL) {
				rc = APEX_ENOMEM;
				goto out;
			}
			free(z->file);
			z->file = file;
			apex_reloader_request_one(z, &list[n++]);
			(*changed)++;
			continue;
		}
		apex_managed_zone_t *z = apex_reloader_zone_new(r, &cfg->zones[j]);

		if (z == NULL || apex_reloader_zones_push(r, z) < 0) {
			apex_reloader_zone_free(z);
			rc = APEX_ENOMEM;
			goto out;
		}
		/* SERVFAIL, not REFUSED, until it is loaded */
		if (apex_zonetable_configure(&r->server->zonetable, z->origin) < 0)
			apex_warning("zone %s: REFUSED until loaded: out of memory", z->name);
		list[n].zone_id = z->id;
		list[n++].seq = z->requested;
		(*added)++;
		apex_info("zone %s added", z->name);
	}
out:
	/* whatever was changed before a failure is kept, and its loads queued */
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->lock);
	free(configured);
	free(held);
	*tickets = list;
	*count = n;
	return rc;
}
