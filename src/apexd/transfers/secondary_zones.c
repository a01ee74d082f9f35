/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The set of secondary zones (secondary.h): made from the settings in
 * force, replaced by the transfer thread when a reconfig brings new ones
 * (a zone kept keeps its state and timers), found by origin, rebased.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/secondary.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name_refs.h"
#include "process/hold_point.h"
#include "transfers/secondary_internal.h"
#include "zones/reload.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/zone_copy_batch.h"

/* The secondary zones of cfg, fresh (to be checked at once), into *out
 * (owned; NULL when none), their lists cfg's, sorted by origin (found by
 * binary search: a worker looks a NOTIFY's zone up among thousands).
 * Returns 0 or APEX_ENOMEM. */
int apex_secondary_make_zones(const apex_config_t *cfg, apex_secondary_zone_t **out,
			      size_t *out_count)
{
	size_t count = 0, n = 0;
	apex_name_ref_t *sorted;

	*out = NULL;
	*out_count = 0;
	for (size_t i = 0; i < cfg->zone_count; i++)
		count += cfg->zones[i].request_xfr_count > 0;
	if (count == 0)
		return APEX_OK;
	apex_secondary_zone_t *zones = calloc(count, sizeof(*zones));
	if (zones == NULL || (sorted = malloc(count * sizeof(*sorted))) == NULL) {
		free(zones);
		return APEX_ENOMEM;
	}
	for (size_t i = 0; i < cfg->zone_count; i++)
		if (cfg->zones[i].request_xfr_count > 0)
			sorted[n++] = (apex_name_ref_t){ cfg->zones[i].origin, i };
	apex_name_refs_sort(sorted, count);
	for (n = 0; n < count; n++) {
		const apex_zone_config_t *zc = &cfg->zones[sorted[n].index];
		apex_secondary_zone_t *z = &zones[n];

		z->name = zc->name;
		z->file = zc->file;
		z->origin = zc->origin;
		z->primaries = zc->request_xfr;
		z->primary_count = zc->request_xfr_count;
		z->allow_notify = zc->allow_notify;
		z->allow_notify_count = zc->allow_notify_count;
		z->zonemd_verify = zc->zonemd_verify;
		z->retry_ms = FIRST_RETRY_MS;
	}
	free(sorted);
	*out = zones;
	*out_count = count;
	return APEX_OK;
}

/* The zone of origin among zones (count, sorted by origin), or NULL. */
static apex_secondary_zone_t *find_in(apex_secondary_zone_t *zones, size_t count,
				      const uint8_t *origin)
{
	size_t lo = 0, hi = count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = apex_name_compare(origin, zones[mid].origin);

		if (c == 0)
			return &zones[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static bool same_key(const apex_tsig_key_t *a, const apex_tsig_key_t *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return a->alg == b->alg && a->secret_size == b->secret_size &&
	       memcmp(a->secret, b->secret, a->secret_size) == 0;
}

/* Whether two lists say the same: address, port, key name and AXFR-only
 * (the texts) and the same secret behind each key. */
static bool same_string(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The same tls-auth clause, as far as a primary is asked with it. */
static bool same_tls(const apex_tls_auth_t *a, const apex_tls_auth_t *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return same_string(a->auth_domain_name, b->auth_domain_name) &&
	       same_string(a->client_cert, b->client_cert) &&
	       same_string(a->client_key, b->client_key);
}

static bool same_entries(const apex_acl_entry_t *a, size_t a_count, const apex_acl_entry_t *b,
			 size_t b_count)
{
	if (a_count != b_count)
		return false;
	for (size_t i = 0; i < a_count; i++) {
		if (strcmp(a[i].text, b[i].text) != 0 || !same_key(a[i].key, b[i].key) ||
		    !same_tls(a[i].tls_auth, b[i].tls_auth))
			return false;
	}
	return true;
}

/* The reloader's ids of zones (0 without a reloader, or when out of
 * memory: then taken as new zones). */
void apex_secondary_bind_zones(apex_secondary_t *s, apex_secondary_zone_t *zones, size_t count)
{
	const uint8_t **origins;
	uint64_t *ids;

	if (s->reloader == NULL || count == 0)
		return;
	s->removals_seen = ULONG_MAX; /* the next pass checks them */
	origins = calloc(count, sizeof(*origins));
	ids = calloc(count, sizeof(*ids));
	for (size_t i = 0; i < count && origins != NULL; i++)
		origins[i] = zones[i].origin;
	if (origins != NULL && ids != NULL &&
	    apex_reloader_zone_ids(s->reloader, origins, count, ids) == APEX_OK) {
		for (size_t i = 0; i < count; i++)
			zones[i].reloader_id = ids[i];
	}
	free(origins);
	free(ids);
}

/* On the scheduler, when no refresh runs: take the secondary zones
 * of the settings in force when they changed (secondary.h).  A zone the
 * reconfigs removed and added again (a new reloader id) is taken as new,
 * even when this thread saw neither step alone. */
void apex_secondary_apply_settings(apex_secondary_t *s)
{
	apex_settings_t *next = apex_settings_get(s->settings);
	apex_secondary_zone_t *zones;
	size_t count, added = 0, changed = 0;

	if (s->copies != NULL) /* the copies of zones the settings may remove */
		apex_zone_copy_batch_settle(s->copies, NULL);
	if (next == s->applied) {
		apex_settings_put(next);
		return;
	}
	apex_tls_clients_t clients;

	if (apex_secondary_make_zones(next->cfg, &zones, &count) < 0 ||
	    apex_tls_clients_build(&clients, next->cfg) < 0) {
		apex_error("secondary zones: the new settings are not applied: out of memory");
		apex_settings_put(next);
		return;
	}
	apex_secondary_bind_zones(s, zones, count);
	pthread_rwlock_wrlock(&s->zones_lock);
	apexd_hold_point("secondary-zones-swapping");
	pthread_mutex_lock(&s->lock);
	/* both sorted by origin: thousands of zones match in N log N */
	for (size_t i = 0; i < count; i++) {
		apex_secondary_zone_t *z = &zones[i];
		apex_secondary_zone_t *was = find_in(s->zones, s->count, z->origin);

		if (was != NULL && was->reloader_id != z->reloader_id)
			was = NULL;
		if (was == NULL) {
			added++;
			atomic_store(&z->notified, true);
			continue;
		}
		z->next_check = was->next_check;
		z->expire_at = was->expire_at;
		z->retry_ms = was->retry_ms;
		z->copy_due = was->copy_due;
		z->copy_serial = was->copy_serial;
		z->compact_wanted = was->compact_wanted;
		z->compact_gave_way = was->compact_gave_way;
		z->compact_parts_gave_way = was->compact_parts_gave_way;
		z->status = was->status;
		atomic_store(&z->notified, atomic_load(&was->notified));
		atomic_store(&z->force, atomic_load(&was->force));
		atomic_store(&z->notifies_accepted, atomic_load(&was->notifies_accepted));
		atomic_store(&z->notifies_refused, atomic_load(&was->notifies_refused));
		if (!same_entries(z->primaries, z->primary_count, was->primaries,
				  was->primary_count)) {
			atomic_store(&z->notified, true); /* new primaries or keys: ask now */
			changed++;
		} else if (!same_entries(z->allow_notify, z->allow_notify_count, was->allow_notify,
					 was->allow_notify_count)) {
			changed++;
		}
	}
	size_t removed = s->count + added - count;
	apex_secondary_zone_t *old_zones = s->zones;
	apex_settings_t *old = s->applied;
	s->zones = zones;
	s->count = count;
	s->applied = next;
	apex_tls_clients_t old_clients = s->tls_clients;
	s->tls_clients = clients;
	pthread_mutex_unlock(&s->lock);
	pthread_rwlock_unlock(&s->zones_lock);
	free(old_zones); /* they own nothing: their names are the config's */
	apex_tls_clients_free(&old_clients);
	apex_settings_put(old);
	apex_info("secondary zones: %zu now (%zu added, %zu no longer secondary, %zu with new "
		  "primaries or allow-notify)",
		  count, added, removed, changed);
}

/*
 * Whether z is a zone a reconfig, a catalog or zone-add just added, whose
 * copy (if it has one) is about to be loaded: then it is looked at again
 * shortly, once that load has finished, rather than transferred whole
 * meanwhile (a restart's catalog members keep their copies).
 */
bool apex_secondary_awaits_first_load(apex_secondary_t *s, apex_secondary_zone_t *z)
{
	apex_zone_t *current;

	if (s->reloader == NULL)
		return false;
	if ((current = apex_server_served_version(s->server, z->origin)) != NULL) {
		apex_zone_unref(current);
		return false;
	}
	if (!apex_reloader_first_load_pending(s->reloader, z->reloader_id))
		return false;
	z->next_check = apex_monotonic_ms() + FIRST_LOAD_WAIT_MS;
	return true;
}

apex_secondary_zone_t *apex_secondary_find_zone(apex_secondary_t *s, const uint8_t *origin)
{
	return find_in(s->zones, s->count, origin);
}

void apex_secondary_rebase(apex_secondary_t *s,
			   const char *(*rebase)(const char *base, const char *path),
			   const char *base)
{
	/* the files are the applied config's (at start-up, the daemon's own,
	 * which nothing reads as seen from outside the chroot from here on):
	 * rebased there, before any other thread reads them */
	for (size_t i = 0; i < s->count; i++) {
		char *file = (char *)s->zones[i].file;
		const char *inside = rebase(base, file);

		if (inside != file)
			memmove(file, inside, strlen(inside) + 1);
	}
}
