/* SPDX-License-Identifier: BSD-3-Clause */
/* Secondary zones kept up to date from their primaries (secondary.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/secondary.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "dns/rrtype.h"
#include "dns/serial.h"
#include "dns/wire.h"
#include "process/memory.h"
#include "zones/reload.h"
#include "process/thread_priority.h"
#include "serve/worker.h"
#include "zones/zonemd_check.h"
#include "query/precompute.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/ixfr_apply.h"
#include "xfr/notify_in.h"
#include "xfr/xfr_client.h"
#include "xfr/zone_copy.h"
#include "zone/zone_from_wire.h"

#define CONNECT_TIMEOUT_MS 5000
/* Before the first version: retry after 1 s, doubling up to 5 minutes. */
#define FIRST_RETRY_MS 1000
#define MAX_FIRST_RETRY_MS 300000

/* The SOA timers of a version: refresh, retry, expire (seconds). */
static void soa_timers(const apex_zone_t *zone, uint32_t *refresh, uint32_t *retry,
		       uint32_t *expire)
{
	const uint8_t *rdata = zone->soa->rdata;
	const uint8_t *end = rdata + 2 + apex_read_u16(rdata);

	*refresh = apex_read_u32(end - 16);
	*retry = apex_read_u32(end - 12);
	*expire = apex_read_u32(end - 8);
}

static apex_acl_entry_t *copy_entries(const apex_acl_entry_t *from, size_t count)
{
	apex_acl_entry_t *to = count > 0 ? malloc(count * sizeof(*to)) : NULL;

	if (to != NULL)
		memcpy(to, from, count * sizeof(*to));
	return to;
}

static void free_zones(apex_secondary_zone_t *zones, size_t count)
{
	for (size_t i = 0; i < count && zones != NULL; i++) {
		free(zones[i].name);
		free(zones[i].file);
		free(zones[i].primaries);
		free(zones[i].allow_notify);
	}
	free(zones);
}

/* The secondary zones of cfg, fresh (to be checked at once), into *out
 * (owned; NULL when none).  Returns 0 or APEX_ENOMEM. */
static int make_zones(const apex_config_t *cfg, apex_secondary_zone_t **out, size_t *out_count)
{
	size_t count = 0, n = 0;

	*out = NULL;
	*out_count = 0;
	for (size_t i = 0; i < cfg->zone_count; i++)
		count += cfg->zones[i].request_xfr_count > 0;
	if (count == 0)
		return APEX_OK;
	apex_secondary_zone_t *zones = calloc(count, sizeof(*zones));
	if (zones == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const apex_zone_config_t *zc = &cfg->zones[i];
		apex_secondary_zone_t *z;

		if (zc->request_xfr_count == 0)
			continue;
		z = &zones[n++];
		z->name = strdup(zc->name);
		z->file = strdup(zc->file);
		memcpy(z->origin, zc->origin, apex_name_size(zc->origin));
		z->primaries = copy_entries(zc->request_xfr, zc->request_xfr_count);
		z->primary_count = zc->request_xfr_count;
		z->allow_notify = copy_entries(zc->allow_notify, zc->allow_notify_count);
		z->allow_notify_count = zc->allow_notify_count;
		z->zonemd_verify = zc->zonemd_verify;
		z->retry_ms = FIRST_RETRY_MS;
		if (z->name == NULL || z->file == NULL || z->primaries == NULL ||
		    (zc->allow_notify_count > 0 && z->allow_notify == NULL)) {
			free_zones(zones, n);
			return APEX_ENOMEM;
		}
	}
	*out = zones;
	*out_count = count;
	return APEX_OK;
}

int apex_secondary_init(apex_secondary_t *s, apex_server_t *server,
			apex_settings_holder_t *settings)
{
	memset(s, 0, sizeof(*s));
	s->server = server;
	s->settings = settings;
	s->notify_fd = s->stop_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_rwlock_init(&s->zones_lock, NULL);
	s->applied = apex_settings_get(settings);
	int rc = make_zones(s->applied->cfg, &s->zones, &s->count);
	if (rc < 0)
		return rc;
	s->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->notify_fd < 0 || s->stop_fd < 0)
		return apex_errno();
	return APEX_OK;
}

void apex_secondary_free(apex_secondary_t *s)
{
	free_zones(s->zones, s->count);
	apex_settings_put(s->applied);
	if (s->notify_fd >= 0)
		close(s->notify_fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	pthread_rwlock_destroy(&s->zones_lock);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
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
static bool same_entries(const apex_acl_entry_t *a, size_t a_count, const apex_acl_entry_t *b,
			 size_t b_count)
{
	if (a_count != b_count)
		return false;
	for (size_t i = 0; i < a_count; i++) {
		if (strcmp(a[i].text, b[i].text) != 0 || !same_key(a[i].key, b[i].key))
			return false;
	}
	return true;
}

/* The reloader's ids of zones (0 without a reloader). */
static void bind_zones(apex_secondary_t *s, apex_secondary_zone_t *zones, size_t count)
{
	for (size_t i = 0; i < count && s->reloader != NULL; i++)
		zones[i].reloader_id = apex_reloader_zone_id(s->reloader, zones[i].origin);
}

/* On the transfer thread, between two exchanges: take the secondary zones
 * of the settings in force when they changed (secondary.h).  A zone the
 * reconfigs removed and added again (a new reloader id) is taken as new,
 * even when this thread saw neither step alone. */
static void apply_settings(apex_secondary_t *s)
{
	apex_settings_t *next = apex_settings_get(s->settings);
	apex_secondary_zone_t *zones;
	size_t count, added = 0, changed = 0;

	if (next == s->applied) {
		apex_settings_put(next);
		return;
	}
	if (make_zones(next->cfg, &zones, &count) < 0) {
		apex_error("secondary zones: the new settings are not applied: out of memory");
		apex_settings_put(next);
		return;
	}
	bind_zones(s, zones, count);
	pthread_rwlock_wrlock(&s->zones_lock);
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < count; i++) {
		apex_secondary_zone_t *z = &zones[i], *was = NULL;

		for (size_t j = 0; j < s->count && was == NULL; j++) {
			if (apex_name_equal(s->zones[j].origin, z->origin) &&
			    s->zones[j].reloader_id == z->reloader_id)
				was = &s->zones[j];
		}
		if (was == NULL) {
			added++;
			atomic_store(&z->notified, true);
			continue;
		}
		z->next_check = was->next_check;
		z->expire_at = was->expire_at;
		z->retry_ms = was->retry_ms;
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
	size_t old_count = s->count;
	apex_settings_t *old = s->applied;
	s->zones = zones;
	s->count = count;
	s->applied = next;
	pthread_mutex_unlock(&s->lock);
	pthread_rwlock_unlock(&s->zones_lock);
	free_zones(old_zones, old_count);
	apex_settings_put(old);
	apex_info("secondary zones: %zu now (%zu added, %zu no longer secondary, %zu with new "
		  "primaries or allow-notify)",
		  count, added, removed, changed);
}

void apex_secondary_settings_changed(apex_secondary_t *s)
{
	uint64_t one = 1;

	if (write(s->notify_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		apex_warning("secondary zones: notify eventfd: %s", strerror(errno));
}

static apex_secondary_zone_t *find_zone(apex_secondary_t *s, const uint8_t *origin)
{
	for (size_t i = 0; i < s->count; i++) {
		if (apex_name_equal(s->zones[i].origin, origin))
			return &s->zones[i];
	}
	return NULL;
}

void apex_secondary_rebase(apex_secondary_t *s,
			   const char *(*rebase)(const char *base, const char *path),
			   const char *base)
{
	for (size_t i = 0; i < s->count; i++) {
		char *file = s->zones[i].file;
		const char *inside = rebase(base, file);

		if (inside != file)
			memmove(file, inside, strlen(inside) + 1);
	}
}

int apex_secondary_refresh(apex_secondary_t *s, const uint8_t *origin, bool full)
{
	uint64_t one = 1;

	pthread_rwlock_rdlock(&s->zones_lock);
	apex_secondary_zone_t *z = find_zone(s, origin);
	if (z != NULL) {
		if (full)
			atomic_store(&z->force, true);
		atomic_store(&z->notified, true);
	}
	pthread_rwlock_unlock(&s->zones_lock);
	if (z == NULL)
		return APEX_ENOENT;
	if (write(s->notify_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return apex_errno();
	return APEX_OK;
}

bool apex_secondary_report(apex_secondary_t *s, const uint8_t *origin, apex_secondary_status_t *out,
			   char *primaries, size_t primaries_size)
{
	uint64_t now = apex_monotonic_ms();
	size_t used = 0;

	pthread_rwlock_rdlock(&s->zones_lock);
	apex_secondary_zone_t *z = find_zone(s, origin);
	if (z == NULL) {
		pthread_rwlock_unlock(&s->zones_lock);
		return false;
	}
	pthread_mutex_lock(&s->lock);
	*out = z->status;
	out->next_check_ms = z->next_check > now ? z->next_check - now : 0;
	out->expire_in_ms = z->expire_at > now ? z->expire_at - now : 0;
	pthread_mutex_unlock(&s->lock);
	out->notifies_accepted = atomic_load(&z->notifies_accepted);
	out->notifies_refused = atomic_load(&z->notifies_refused);
	primaries[0] = '\0';
	for (size_t i = 0; i < z->primary_count && used < primaries_size; i++)
		used += (size_t)snprintf(primaries + used, primaries_size - used, "%s%s",
					 i > 0 ? "; " : "", z->primaries[i].text);
	pthread_rwlock_unlock(&s->zones_lock);
	return true;
}

void apex_secondary_totals(apex_secondary_t *s, uint64_t *transfers, uint64_t *failures,
			   uint64_t *notifies_accepted, uint64_t *notifies_refused)
{
	*transfers = *failures = *notifies_accepted = *notifies_refused = 0;
	pthread_rwlock_rdlock(&s->zones_lock);
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->count; i++) {
		*transfers += s->zones[i].status.transfers;
		*failures += s->zones[i].status.failures;
	}
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < s->count; i++) {
		*notifies_accepted += atomic_load(&s->zones[i].notifies_accepted);
		*notifies_refused += atomic_load(&s->zones[i].notifies_refused);
	}
	pthread_rwlock_unlock(&s->zones_lock);
}

bool apex_secondary_has(apex_secondary_t *s, const uint8_t *origin)
{
	pthread_rwlock_rdlock(&s->zones_lock);
	bool has = find_zone(s, origin) != NULL;
	pthread_rwlock_unlock(&s->zones_lock);
	return has;
}

/* ---------------------------------------------------------------- NOTIFY */

static const apex_acl_entry_t *zone_acl(void *ctx, const uint8_t *zone, size_t *count,
					void **ctx_zone)
{
	apex_secondary_zone_t *z = find_zone(ctx, zone);

	*ctx_zone = z;
	if (z == NULL)
		return NULL;
	*count = z->allow_notify_count;
	return z->allow_notify;
}

size_t apex_secondary_notify(void *ctx, const struct sockaddr_storage *peer, const uint8_t *msg,
			     size_t size, uint8_t *out, size_t out_capacity)
{
	apex_secondary_t *s = ctx;
	apex_notify_result_t res;
	uint64_t one = 1;

	pthread_rwlock_rdlock(&s->zones_lock);
	if (s->count == 0) {
		pthread_rwlock_unlock(&s->zones_lock);
		return APEX_WORKER_NOTIFY_PASS;
	}
	apex_tsig_keyring_t ring = { s->applied->cfg->keys, s->applied->cfg->key_count };
	size_t n = apex_notify_answer(msg, size, (const struct sockaddr *)peer, &ring, zone_acl, s,
				      (uint64_t)time(NULL), out, out_capacity, &res);
	apex_secondary_zone_t *z = res.ctx_zone;

	if (res.accepted) {
		atomic_fetch_add_explicit(&z->notifies_accepted, 1, memory_order_relaxed);
		atomic_store(&z->notified, true);
		if (write(s->notify_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			apex_warning("secondary zones: notify eventfd: %s", strerror(errno));
	} else if (n > 0) {
		/* counted, and logged at debug level only: a flood must not fill the log */
		zone_acl(s, res.zone, &(size_t){ 0 }, (void **)&z);
		if (z != NULL)
			atomic_fetch_add_explicit(&z->notifies_refused, 1, memory_order_relaxed);
		apex_debug("NOTIFY refused (RCODE %u): %s", res.rcode, res.why);
	}
	pthread_rwlock_unlock(&s->zones_lock);
	return n;
}

/* ---------------------------------------------------------------- one transfer */

/* Where what a primary sends goes: the records of a whole zone to the new
 * version and the copy; the change sets of an IXFR, kept until applied. */
typedef struct receiver {
	apex_zone_from_wire_t *builder;
	/* The copy: written as the records arrive for a whole zone; for an
	 * IXFR, from the version once it is published (derived) so that the
	 * new serial is served without waiting for the file. */
	apex_zone_copy_t copy;
	bool derived;         /* the version comes from the old one and sets (an IXFR) */
	bool in_place;        /* ... derived in place (zone/derive.h), not built whole */
	char source[200];     /* the new version's source, for messages */
	apex_changes_t *sets; /* copies, owned */
	size_t set_count;
} receiver_t;

static int receive_record(void *ctx, const apex_rr_t *rr)
{
	receiver_t *r = ctx;
	int rc = apex_zone_from_wire_add(r->builder, rr->owner, rr->type, rr->ttl, rr->rdata,
					 rr->rdlength);

	return rc < 0 ? rc : apex_zone_copy_add(&r->copy, rr);
}

static int receive_changes(void *ctx, const apex_changes_t *set)
{
	receiver_t *r = ctx;
	apex_changes_t *grown = realloc(r->sets, (r->set_count + 1) * sizeof(*grown));

	if (grown == NULL)
		return APEX_ENOMEM;
	r->sets = grown;
	grown[r->set_count] = *set;
	grown[r->set_count].data = malloc(set->size ? set->size : 1);
	if (grown[r->set_count].data == NULL)
		return APEX_ENOMEM;
	memcpy(grown[r->set_count].data, set->data, set->size);
	grown[r->set_count].capacity = set->size;
	r->set_count++;
	return APEX_OK;
}

/* Give up what r holds (the builder and the copy unless already done). */
static void receiver_abort(receiver_t *r)
{
	if (r->builder != NULL)
		apex_zone_from_wire_abort(r->builder);
	if (r->copy.fp != NULL)
		apex_zone_copy_abort(&r->copy);
	for (size_t i = 0; i < r->set_count; i++)
		apex_changes_free(&r->sets[i]);
	free(r->sets);
	memset(r, 0, sizeof(*r));
}

static void primary_of(const apex_acl_entry_t *e, apex_xfr_primary_t *p)
{
	memset(p, 0, sizeof(*p));
	p->addr_len = apex_acl_sockaddr(e, &p->addr);
	p->key = e->key;
	p->text = e->text;
}

static void timeouts_of(const apex_secondary_t *s, apex_xfr_timeouts_t *t)
{
	t->connect_ms = CONNECT_TIMEOUT_MS;
	t->idle_ms = s->applied->cfg->xfr_idle_timeout * 1000u;
	t->total_ms = s->applied->cfg->xfr_timeout * 1000u;
	t->cancel_fd = s->stop_fd;
}

/*
 * Ask e for z (IXFR from the serial of current, or AXFR when current is
 * NULL) and receive the answer into r, begun here; x holds the counts.
 */
static int receive(apex_secondary_t *s, apex_secondary_zone_t *z, const apex_acl_entry_t *e,
		   const apex_zone_t *current, receiver_t *r, apex_xfr_in_t *x, char *err,
		   size_t err_size)
{
	apex_xfr_in_handler_t handler = { r, receive_record, receive_changes };
	apex_xfr_in_limits_t limits = { s->applied->cfg->xfr_size_limit, 0 };
	apex_xfr_primary_t primary;
	apex_xfr_timeouts_t t;
	char header[300];
	int rc;

	memset(r, 0, sizeof(*r));
	primary_of(e, &primary);
	timeouts_of(s, &t);
	snprintf(r->source, sizeof(r->source), "transfer of %s from %s", z->name, e->text);
	snprintf(header, sizeof(header), "zone %s, received from %s", z->name, e->text);
	if ((rc = apex_zone_from_wire_begin(&r->builder, z->origin, r->source, err, err_size)) <
		    0 ||
	    (rc = apex_zone_copy_begin(&r->copy, z->file, header, err, err_size)) < 0) {
		receiver_abort(r);
		return rc;
	}
	rc = apex_xfr_client_transfer(
		&primary, z->origin, current != NULL ? APEX_TYPE_IXFR : APEX_TYPE_AXFR,
		current != NULL ? current->serial : 0, &handler, &limits, &t, x, err, err_size);
	if (rc == APEX_OK && x->out_of_zone > 0)
		apex_warning("zone %s: %llu record(s) outside the zone dropped from the transfer "
			     "from %s",
			     z->name, (unsigned long long)x->out_of_zone, e->text);
	return rc;
}

/* Finish r's copy of z: with the records of version first when given. */
static void commit_copy(apex_secondary_zone_t *z, receiver_t *r, const apex_zone_t *version)
{
	char err[512];
	int rc = version != NULL ? apex_zone_copy_version(&r->copy, version) : APEX_OK;

	if (rc < 0) {
		snprintf(err, sizeof(err), "writing it: %s", apex_strerror(rc));
		apex_zone_copy_abort(&r->copy);
	} else {
		rc = apex_zone_copy_commit(&r->copy, err, sizeof(err));
	}
	if (rc < 0)
		apex_warning("zone %s: the copy is not written (%s); serving the transfer anyway",
			     z->name, err);
}

/*
 * Publish zone (the caller's reference, taken), the version r received,
 * rename the copy; the status says how it came.  *held: the caller's
 * reference to the version served when its check began (or NULL), dropped
 * here once the new version is published, so that the old version is
 * freed as soon as the workers let go of it (apex_server_retire() waits
 * for that, at most a few seconds).
 */
static int publish(apex_secondary_t *s, apex_secondary_zone_t *z, receiver_t *r, apex_zone_t *zone,
		   const char *how, const char *detail, apex_zone_t **held, char *err,
		   size_t err_size)
{
	apex_zone_t *old;
	int rc = APEX_OK;

	if ((rc = apex_precompute(zone)) < 0)
		snprintf(err, err_size, "precomputing answers: %s", apex_strerror(rc));
	if (rc == APEX_OK)
		rc = apexd_zonemd_check(z->name, zone, z->zonemd_verify, err, err_size);
	if (rc < 0) {
		apex_zone_unref(zone);
		return rc;
	}
	if (!r->derived)
		commit_copy(z, r, NULL);
	old = apex_server_served_version(s->server, z->origin);
	uint32_t serial = zone->serial;
	size_t records = zone->record_count;
	apex_zone_ref(zone); /* for the published hook, dropped below */
	rc = s->reloader != NULL ? apex_reloader_publish(s->reloader, z->reloader_id, zone)
				 : apex_zonetable_publish(&s->server->zonetable, zone);
	if (rc < 0) {
		snprintf(err, err_size, "not published: %s",
			 rc == APEX_ENOENT ? "the zone was removed meanwhile" : apex_strerror(rc));
		apex_zone_unref(zone);
		apex_zone_unref(zone);
		apex_zone_unref(old);
		return rc;
	}
	if (s->published != NULL)
		s->published(s->published_arg, old, zone, r->derived ? r->sets : NULL,
			     r->derived ? r->set_count : 0);
	apex_zone_unref(*held);
	*held = NULL;
	apex_server_retire(s->server, old, true);
	if (r->derived)
		commit_copy(z, r, zone);
	apex_zone_unref(zone);
	apex_memory_purge();
	pthread_mutex_lock(&s->lock);
	z->status.transfers++;
	clock_gettime(CLOCK_REALTIME, &z->status.last_transfer);
	z->status.expired = false;
	snprintf(z->status.last_result, sizeof(z->status.last_result),
		 "%s serial %u %.180s: %zu records", how, serial, detail, records);
	apex_info("zone %s: %s", z->name, z->status.last_result);
	pthread_mutex_unlock(&s->lock);
	return APEX_OK;
}

/* The version r received: a whole zone built, or the change sets of an
 * IXFR applied to current (ixfr_apply.h; -ESTALE if they do not apply). */
static int received_version(receiver_t *r, apex_zone_t *current, apex_zone_t **out, char *err,
			    size_t err_size)
{
	int rc;

	if (!r->derived) {
		rc = apex_zone_from_wire_finish(r->builder, out);
		r->builder = NULL;
		return rc;
	}
	apex_zone_from_wire_abort(r->builder); /* received nothing */
	r->builder = NULL;
	rc = apex_ixfr_version(current, r->sets, r->set_count, r->source, out, &r->in_place, err,
			       err_size);
	return rc == APEX_EMALFORMED ? -ESTALE : rc;
}

/*
 * Transfer z from one primary and publish it: by IXFR from current (the
 * version served; NULL: AXFR).  Returns APEX_OK (also when up to date), or
 * an apex code with the reason in err: nothing is published or written
 * then.  -ESTALE: the change sets do not apply to current (ask by AXFR).
 */
static int transfer(apex_secondary_t *s, apex_secondary_zone_t *z, const apex_acl_entry_t *e,
		    apex_zone_t *current, apex_zone_t **held, char *err, size_t err_size)
{
	uint64_t start = apex_monotonic_ms();
	char detail[300];
	apex_xfr_in_t x;
	receiver_t r;
	apex_zone_t *zone = NULL;
	int rc = receive(s, z, e, current, &r, &x, err, err_size);

	if (rc == APEX_OK && x.style == APEX_XFR_STYLE_UP_TO_DATE) {
		receiver_abort(&r);
		apex_xfr_in_free(&x);
		return APEX_OK;
	}
	r.derived = rc == APEX_OK && x.style == APEX_XFR_STYLE_IXFR;
	if (rc == APEX_OK)
		rc = received_version(&r, current, &zone, err, err_size);
	snprintf(detail, sizeof(detail), "from %s: %llu messages, %llu bytes, %.3f s%s", e->text,
		 (unsigned long long)x.messages, (unsigned long long)x.bytes,
		 (double)(apex_monotonic_ms() - start) / 1000.0,
		 r.in_place ? ", derived in place" : "");
	if (rc == APEX_OK)
		rc = publish(s, z, &r, zone,
			     x.style == APEX_XFR_STYLE_IXFR ? "IXFR"
			     : current != NULL              ? "IXFR (whole zone)"
							    : "AXFR",
			     detail, held, err, err_size);
	receiver_abort(&r);
	apex_xfr_in_free(&x);
	return rc;
}

/*
 * Transfer z from e: by IXFR from current when there is one and e allows
 * it, falling back to AXFR when the primary refuses IXFR or its change
 * sets do not apply to what is served.  *held as for publish().
 */
static int transfer_any(apex_secondary_t *s, apex_secondary_zone_t *z, const apex_acl_entry_t *e,
			apex_zone_t *current, apex_zone_t **held, char *err, size_t err_size)
{
	bool incremental = current != NULL && !e->axfr_only;
	int rc = transfer(s, z, e, incremental ? current : NULL, held, err, err_size);

	if (incremental && (rc == -ESTALE || rc == APEX_EREFUSED)) {
		apex_warning("zone %s: IXFR from %s: %s; asking for the whole zone", z->name,
			     e->text, err);
		rc = transfer(s, z, e, NULL, held, err, err_size);
	}
	return rc;
}

/* ---------------------------------------------------------------- refresh */

/*
 * Check z with its primaries in order, transferring it when a primary has
 * a newer serial or nothing is served, and schedule the next check.
 */
static void refresh(apex_secondary_t *s, apex_secondary_zone_t *z)
{
	apex_zone_t *current = apex_server_served_version(s->server, z->origin);
	uint32_t refresh_s = 0, retry_s = 0, expire_s = 0, serial = 0;
	char err[512] = "no primary answered";
	bool ok = false, have_version = current != NULL;
	bool force = atomic_exchange(&z->force, false);

	if (have_version && atomic_load(&current->expired))
		force = true; /* an expired zone is transferred whole, whatever the serial */
	if (have_version) {
		serial = current->serial;
		soa_timers(current, &refresh_s, &retry_s, &expire_s);
	}
	for (size_t i = 0; i < z->primary_count && !ok; i++) {
		const apex_acl_entry_t *e = &z->primaries[i];
		apex_xfr_primary_t primary;
		apex_xfr_timeouts_t t;
		uint32_t theirs;

		if (have_version) {
			primary_of(e, &primary);
			timeouts_of(s, &t);
			if (apex_xfr_client_soa(&primary, z->origin, &t, &theirs, err,
						sizeof(err)) < 0) {
				apex_warning("zone %s: SOA query: %s", z->name, err);
				continue;
			}
			if (!force && !apex_serial_newer(theirs, serial)) {
				apex_debug("zone %s: serial %u is current (%s has %u)", z->name,
					   serial, e->text, theirs);
				ok = true;
				break;
			}
		}
		/* current is dropped once a new version is published */
		if (transfer_any(s, z, e, have_version && !force ? current : NULL, &current, err,
				 sizeof(err)) == APEX_OK) {
			apex_zone_t *now_served = apex_server_served_version(s->server, z->origin);

			ok = true;
			if (now_served != NULL)
				soa_timers(now_served, &refresh_s, &retry_s, &expire_s);
			apex_zone_unref(now_served);
		} else {
			apex_error("zone %s: %s (the previous version, if any, is still served)",
				   z->name, err);
			pthread_mutex_lock(&s->lock);
			z->status.failures++;
			snprintf(z->status.last_result, sizeof(z->status.last_result),
				 "failed: %.230s", err);
			pthread_mutex_unlock(&s->lock);
		}
	}

	apex_zone_unref(current);
	pthread_mutex_lock(&s->lock);
	clock_gettime(CLOCK_REALTIME, &z->status.last_check);
	if (ok && !z->status.expired && have_version && z->status.last_result[0] == '\0')
		snprintf(z->status.last_result, sizeof(z->status.last_result),
			 "serial %u is current", serial);
	pthread_mutex_unlock(&s->lock);
	uint64_t now = apex_monotonic_ms();
	if (ok) {
		z->next_check = now + (uint64_t)refresh_s * 1000;
		z->expire_at = expire_s > 0 ? now + (uint64_t)expire_s * 1000 : 0;
		z->retry_ms = FIRST_RETRY_MS;
	} else if (have_version) {
		z->next_check = now + (uint64_t)(retry_s > 0 ? retry_s : 60) * 1000;
	} else {
		z->next_check = now + z->retry_ms;
		if (z->retry_ms < MAX_FIRST_RETRY_MS)
			z->retry_ms *= 2;
	}
}

/* Expire z when its SOA expire time has passed without a successful
 * refresh: its queries are answered SERVFAIL until a transfer succeeds. */
static void check_expiry(apex_secondary_t *s, apex_secondary_zone_t *z, uint64_t now)
{
	apex_zone_t *current;

	if (z->expire_at == 0 || now < z->expire_at)
		return;
	z->expire_at = 0;
	current = apex_server_served_version(s->server, z->origin);
	if (current == NULL)
		return;
	atomic_store(&current->expired, true);
	apex_zone_unref(current);
	apex_error("zone %s expired: no primary answered within the SOA expire time; "
		   "queries get SERVFAIL until a transfer succeeds",
		   z->name);
	pthread_mutex_lock(&s->lock);
	z->status.expired = true;
	pthread_mutex_unlock(&s->lock);
}

/* Whether z is still configured (a reconfiguration may have removed it,
 * or removed it and added it again: then the new settings make it anew). */
static bool configured(apex_secondary_t *s, const apex_secondary_zone_t *z)
{
	return s->reloader == NULL ||
	       apex_reloader_zone_id(s->reloader, z->origin) == z->reloader_id;
}

static void *secondary_main(void *arg)
{
	apex_secondary_t *s = arg;

	pthread_setname_np(pthread_self(), "apexd-xfr");
	/* a transfer builds a version as a reload does, and as reload-priority
	 * says: from the CPU time the workers leave */
	apex_thread_lower_priority("transfer thread", s->applied->cfg->reload_idle,
				   (int)s->applied->cfg->reload_nice);
	bind_zones(s, s->zones, s->count);
	for (;;) {
		/* a reconfig's zones are taken here, between two exchanges */
		if (apex_settings_generation(s->settings) != s->applied->generation)
			apply_settings(s);
		uint64_t now = apex_monotonic_ms(), next = now + 3600 * 1000;
		struct pollfd pfd[2] = { { .fd = s->stop_fd, .events = POLLIN },
					 { .fd = s->notify_fd, .events = POLLIN } };
		uint64_t count;

		for (size_t i = 0; i < s->count; i++) {
			apex_secondary_zone_t *z = &s->zones[i];

			if (atomic_exchange(&z->notified, false))
				z->next_check = now;
			if (z->next_check <= now && !configured(s, z)) {
				z->next_check = now + 3600 * 1000; /* removed: left alone */
				z->expire_at = 0;
			}
			check_expiry(s, z, now);
			if (z->next_check <= now) {
				refresh(s, z);
				now = apex_monotonic_ms();
			}
			if (z->next_check < next)
				next = z->next_check;
			if (z->expire_at != 0 && z->expire_at < next)
				next = z->expire_at;
		}
		now = apex_monotonic_ms();
		int n = poll(pfd, 2, next > now ? (int)(next - now) : 0);
		if (n > 0 && (pfd[0].revents & POLLIN))
			break;
		if (n > 0 && (pfd[1].revents & POLLIN) &&
		    read(s->notify_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
			apex_warning("secondary zones: notify eventfd: %s", strerror(errno));
	}
	return NULL;
}

int apex_secondary_start(apex_secondary_t *s)
{
	int err = pthread_create(&s->thread, NULL, secondary_main, s);
	if (err != 0) {
		apex_error("cannot start the transfer thread: %s", strerror(err));
		return -err;
	}
	s->thread_started = true;
	return APEX_OK;
}

void apex_secondary_stop(apex_secondary_t *s)
{
	uint64_t one = 1;

	if (!s->thread_started)
		return;
	if (write(s->stop_fd, &one, sizeof(one)) < 0)
		apex_warning("secondary zones: stop eventfd: %s", strerror(errno));
	pthread_join(s->thread, NULL);
	s->thread_started = false;
}
