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

#include "dns/name_index.h"
#include "zones/reload_internal.h"
#include "util/error.h"
#include "util/log.h"

/* cfg's zones by origin (dns/name_index.h): the refs into *refs (owned),
 * the index into index; APEX_ENOMEM when out of memory. */
static int index_config(const apex_config_t *cfg, apex_name_ref_t **refs, apex_name_index_t *index)
{
	*refs = calloc(cfg->zone_count > 0 ? cfg->zone_count : 1, sizeof(**refs));
	if (*refs == NULL)
		return APEX_ENOMEM;
	for (size_t j = 0; j < cfg->zone_count; j++)
		(*refs)[j] = (apex_name_ref_t){ cfg->zones[j].origin, j };
	return apex_name_index_init(index, *refs, cfg->zone_count);
}

/*
 * Under the lock: the zones that cfg no longer has (configured: cfg's
 * zones by origin) out of the table now, they are not served from here
 * on, all in one new set (a catalog's thousand members removed at once),
 * and out of the reloader; origins has room for all of them.  Those it
 * still has go to held_of[j], j their index in cfg (the others stay NULL).
 */
static int remove_unconfigured(apex_reloader_t *r, const apex_name_index_t *configured,
			       apex_managed_zone_t **held_of, const uint8_t **origins,
			       size_t *removed)
{
	size_t o = 0;

	for (size_t i = 0; i < r->count; i++) {
		apex_managed_zone_t *z = r->zones[i];
		const apex_name_ref_t *found =
			apex_name_index_find_hashed(configured, z->origin, z->origin_hash);

		if (found != NULL)
			held_of[found->index] = z;
		else
			origins[o++] = z->origin;
	}
	if (o == 0)
		return APEX_OK;
	int rc = apex_zonetable_remove_many(&r->server->zonetable, origins, o);
	if (rc < 0 && rc != APEX_ENOENT) {
		apex_error("reconfig: %zu zone(s) not removed: %s", o, apex_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < r->count;) {
		apex_managed_zone_t *z = r->zones[i];

		if (apex_name_index_find_hashed(configured, z->origin, z->origin_hash) != NULL) {
			i++;
			continue;
		}
		apex_info("zone %s removed", z->name);
		apex_reloader_zones_remove(r, i);
		apex_reloader_zone_free(z);
		(*removed)++;
	}
	return APEX_OK;
}

int apex_reloader_reconfigure(apex_reloader_t *r, const apex_config_t *cfg,
			      apex_reload_ticket_t **tickets, size_t *count, size_t *added,
			      size_t *removed, size_t *changed)
{
	apex_reload_ticket_t *list =
		calloc(cfg->zone_count > 0 ? cfg->zone_count : 1, sizeof(*list));
	/* the reloader's zone of each of cfg's, NULL for one it has not */
	apex_managed_zone_t **held_of =
		calloc(cfg->zone_count > 0 ? cfg->zone_count : 1, sizeof(*held_of));
	apex_name_ref_t *configured_refs = NULL;
	apex_name_index_t configured = { 0 };
	const uint8_t **origins = NULL;
	size_t n = 0, o = 0;
	int rc = index_config(cfg, &configured_refs, &configured);

	*tickets = NULL;
	*count = *added = *removed = *changed = 0;
	pthread_mutex_lock(&r->lock);
	/* room for the origins removed, then for those added */
	if (list != NULL && held_of != NULL && rc == APEX_OK)
		origins = malloc((r->count + cfg->zone_count + 1) * sizeof(*origins));
	if (origins == NULL) {
		pthread_mutex_unlock(&r->lock);
		free(list);
		free(held_of);
		apex_name_index_free(&configured);
		free(configured_refs);
		return APEX_ENOMEM;
	}
	/* the reloader's zones matched with cfg's by hash, one probe each
	 * under the lock: thousands of zones (a catalog's) */
	if ((rc = remove_unconfigured(r, &configured, held_of, origins, removed)) < 0)
		goto out;
	/* new zones, and zones whose file changed (cfg names each zone once,
	 * so those pushed meanwhile are none of held_of's) */
	for (size_t j = 0; j < cfg->zone_count; j++) {
		if (held_of[j] != NULL) {
			apex_managed_zone_t *z = held_of[j];
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
		origins[o++] = z->origin;
		list[n].zone_id = z->id;
		list[n++].seq = z->requested;
		(*added)++;
		apex_info("zone %s added", z->name);
	}
out:
	/* whatever was changed before a failure is kept, and its loads
	 * queued; the zones added are answered SERVFAIL, not REFUSED, until
	 * they are loaded, all entered in one new set */
	if (o > 0 && apex_zonetable_configure_many(&r->server->zonetable, origins, o) < 0)
		apex_warning("reconfig: %zu zone(s) added REFUSED until loaded: out of memory", o);
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->lock);
	apex_name_index_free(&configured);
	free(configured_refs);
	free(held_of);
	free(origins);
	*tickets = list;
	*count = n;
	return rc;
}
