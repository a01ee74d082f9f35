/* SPDX-License-Identifier: BSD-3-Clause */
/* Catalog zones consumed (consumer.h): the catalogs read, their members owned and put in force. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "catalog/consumer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog/catalog_read.h"
#include "catalog/consumer_internal.h"
#include "catalog/producer.h"
#include "process/privs.h"
#include "process/thread_priority.h"
#include "control/commands.h"
#include "transfers/secondary.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/zoneset.h"

/* A configuration that could not be read or put in force is tried again
 * after this long, or at the next change. */
#define RETRY_SECONDS 10

/* ---------------------------------------------------------------- the configuration's side */

/* The catalogs of cfg, with what was read of those already known. */
static int sync_consumers(apexd_catalogs_t *c, const apex_config_t *cfg)
{
	size_t count = 0, kept = 0;
	consumer_t *list;

	for (size_t i = 0; i < cfg->zone_count; i++)
		count += cfg->zones[i].catalog_consumer;
	if ((list = calloc(count > 0 ? count : 1, sizeof(*list))) == NULL)
		return APEX_ENOMEM;
	count = 0;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const apex_zone_config_t *z = &cfg->zones[i];
		consumer_t *k = &list[count], *old;

		if (!z->catalog_consumer)
			continue;
		memcpy(k->origin, z->origin, apex_name_size(z->origin));
		k->name = strdup(z->name);
		k->pattern = strdup(z->catalog_member_pattern);
		count++;
		if (k->name == NULL || k->pattern == NULL) {
			for (size_t j = 0; j < count; j++)
				consumer_clear(&list[j]);
			free(list);
			return APEX_ENOMEM;
		}
		if ((old = consumer_find(c, z->origin)) != NULL) {
			k->seen = old->seen;
			k->serial = old->serial;
			k->catalog = old->catalog;
			memset(&old->catalog, 0, sizeof(old->catalog));
			kept++;
		}
	}
	/* a catalog gone from the configuration: its members lose their
	 * state at the next pass (their files are deleted then) */
	if (kept < c->consumer_count)
		c->dirty = true;
	for (size_t i = 0; i < c->consumer_count; i++)
		consumer_clear(&c->consumers[i]);
	free(c->consumers);
	c->consumers = list;
	c->consumer_count = count;
	return APEX_OK;
}

/* The zones cfg lists (before any member is appended), sorted. */
static int sync_configured(apexd_catalogs_t *c, const apex_config_t *cfg)
{
	uint8_t **list = calloc(cfg->zone_count > 0 ? cfg->zone_count : 1, sizeof(*list));

	if (list == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		if ((list[i] = name_dup(cfg->zones[i].origin)) == NULL) {
			for (size_t j = 0; j < i; j++)
				free(list[j]);
			free(list);
			return APEX_ENOMEM;
		}
	}
	qsort(list, cfg->zone_count, sizeof(*list), compare_names);
	for (size_t i = 0; i < c->configured_count; i++)
		free(c->configured[i]);
	free(c->configured);
	c->configured = list;
	c->configured_count = cfg->zone_count;
	return APEX_OK;
}

/* list's members appended to cfg as zones, each with its pattern; each
 * member's file noted. */
static int append_members(apexd_catalogs_t *c, apex_config_t *cfg, member_t *list, size_t count,
			  char *err, size_t err_size)
{
	char zone[APEX_NAME_MAX * 4 + 1], reason[512];

	if (apex_config_reserve_zones(cfg, count) < 0)
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	for (size_t i = 0; i < count; i++) {
		member_t *m = &list[i];
		const consumer_t *k = m->catalog != NULL ? consumer_find(c, m->catalog) : NULL;
		const char *by = k != NULL ? k->name : "zone-add";
		const apex_zone_config_t *pattern = NULL;
		int rc;

		if ((m->catalog != NULL && k == NULL) || is_configured(c, m->zone))
			continue; /* its catalog is gone, or the file took the name */
		if (m->pattern != NULL)
			pattern = apex_config_pattern(cfg, m->pattern);
		else if (m->group != NULL)
			pattern = apex_config_pattern(cfg, m->group);
		if (pattern == NULL && k != NULL)
			pattern = apex_config_pattern(cfg, k->pattern);
		if (pattern == NULL) {
			text_of(m->zone, zone, sizeof(zone));
			apex_warning("%s: zone %s not served: its pattern %s is gone", by, zone,
				     m->pattern != NULL ? m->pattern : "");
			continue;
		}
		rc = apex_config_add_member(cfg, pattern, m->zone, reason, sizeof(reason));
		if (rc == APEX_ENOMEM)
			return apex_fail(err, err_size, rc, "out of memory");
		if (rc < 0) {
			text_of(m->zone, zone, sizeof(zone));
			apex_warning("%s: zone %s not served: %s", by, zone, reason);
			continue;
		}
		free(m->file);
		if ((m->file = strdup(cfg->zones[cfg->zone_count - 1].file)) == NULL)
			return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	}
	return APEX_OK;
}

/* cfg's catalogs taken note of, and those it produces written. */
static int prepare(apexd_catalogs_t *c, const apex_config_t *cfg)
{
	int rc = sync_consumers(c, cfg);

	if (rc == APEX_OK)
		rc = sync_configured(c, cfg);
	if (rc == APEX_OK)
		rc = zone_list_configure(c, cfg);
	if (rc == APEX_OK)
		rc = apexd_catalogs_produce(cfg, &c->produced, &c->produced_count);
	return rc;
}

/* Once the configuration is in force: the catalogs produced whose file
 * was written reloaded (a new one is loaded anyway: no harm). */
static void reload_produced(apexd_catalogs_t *c)
{
	for (size_t i = 0; i < c->produced_count; i++) {
		apex_reload_ticket_t *tickets = NULL;
		size_t count = 0;
		int rc = apex_reloader_request(c->ctx.reloader, c->produced[i], &tickets, &count);

		if (rc < 0 && rc != APEX_ENOENT)
			apex_error("catalogs: a produced catalog not reloaded: %s",
				   apex_strerror(rc));
		free(tickets);
		free(c->produced[i]);
	}
	free(c->produced);
	c->produced = NULL;
	c->produced_count = 0;
}

int apexd_catalogs_extend(apexd_catalogs_t *c, apex_config_t *cfg, char *err, size_t err_size)
{
	if (prepare(c, cfg) < 0)
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	return append_members(c, cfg, c->members, c->member_count, err, err_size);
}

/* ---------------------------------------------------------------- reading the catalogs */

static void skipped(void *ctx, const char *owner, const char *reason)
{
	const consumer_t *k = ctx;

	apex_warning("catalog %s: member node %s skipped: %s", k->name, owner, reason);
}

/* Each catalog whose served version is not the one last read, read
 * again.  Returns whether any was. */
static bool read_catalogs(apexd_catalogs_t *c)
{
	apex_zoneset_t *set = apex_zonetable_acquire(&c->ctx.server->zonetable, NULL);
	bool changed = false;
	char err[512];

	for (size_t i = 0; i < c->consumer_count; i++) {
		consumer_t *k = &c->consumers[i];
		const apex_zone_t *zone = apex_zoneset_get(set, k->origin);
		apex_catalog_t catalog;
		int rc;

		if (zone == NULL || (zone == k->seen && zone->serial == k->serial))
			continue;
		k->seen = zone;
		k->serial = zone->serial;
		rc = apex_catalog_read(zone, &catalog, skipped, k, err, sizeof(err));
		if (rc == APEX_ENOMEM) {
			k->seen = NULL; /* read again next time */
			apex_error("catalog %s: serial %u not read: out of memory", k->name,
				   zone->serial);
			continue;
		}
		if (rc < 0) {
			/* RFC 9432 section 5.1: a broken catalog is ignored; its
			 * members stay as they were */
			apex_error("catalog %s: serial %u not processed as a catalog: %s", k->name,
				   zone->serial, err);
			continue;
		}
		apex_catalog_free(&k->catalog);
		k->catalog = catalog;
		changed = true;
		apex_info("catalog %s: serial %u, %zu member zone(s)", k->name, zone->serial,
			  catalog.count);
	}
	apex_zoneset_release(set);
	return changed;
}

/* ---------------------------------------------------------------- putting members in force */

/* The configuration file read again with list's members appended, put in
 * force as reconfig does.  The loads it queues are not waited for. */
static int put_in_force(apexd_catalogs_t *c, member_t *list, size_t count)
{
	apex_config_t cfg;
	apex_command_pending_t pending;
	char err[512];
	int rc;

	memset(&pending, 0, sizeof(pending));
	rc = c->ctx.reread_config(c->ctx.reread_arg, &cfg, err, sizeof(err));
	if (rc == APEX_OK && prepare(c, &cfg) < 0)
		rc = apex_fail(err, sizeof(err), APEX_ENOMEM, "out of memory");
	if (rc == APEX_OK)
		rc = append_members(c, &cfg, list, count, err, sizeof(err));
	if (rc < 0) {
		apex_error("catalogs: members not changed: configuration: %s", err);
		apex_config_free(&cfg);
		return rc;
	}
	rc = apex_command_apply_config(&c->ctx, &cfg, &pending);
	apex_config_free(&cfg);
	free(pending.tickets);
	reload_produced(c);
	if (rc < 0) {
		apex_error("catalogs: members not changed: %s", apex_strerror(rc));
		return rc;
	}
	apex_info("catalogs: %zu zone(s) added, %zu removed", pending.added, pending.removed);
	return APEX_OK;
}

/* A member's state gone with it: its file, its journal and a transfer's
 * temporary copy (xfr/zone_copy.h), the last also when it waits to be
 * synced with others. */
static void remove_files(apexd_catalogs_t *c, const member_t *m)
{
	static const char *const suffixes[] = { "", ".jnl", ".xfr" };
	char path[4096];

	if (m->file == NULL)
		return;
	if (c->ctx.secondary != NULL)
		apex_secondary_drop_copy(c->ctx.secondary, m->file);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", m->file, suffixes[i]);
		if (unlink(path) < 0 && errno != ENOENT)
			apex_warning("catalogs: %s: not removed: %s", path, strerror(errno));
	}
}

/* Whether old, a member in force, keeps its state in list: it is still
 * there, with the same catalog and the same member node (RFC 9432
 * section 5.4). */
static bool keeps_state(const member_t *old, member_t *list, size_t count, bool *readded)
{
	const member_t *now = member_find(list, count, old->zone);

	*readded = now != NULL;
	return now != NULL && same_owner(now, old) &&
	       memcmp(now->id, old->id, (size_t)old->id[0] + 1) == 0;
}

static bool same_string(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Whether two entries of a zone take the same pattern. */
static bool same_group(const member_t *a, const member_t *b)
{
	return same_string(a->group, b->group) && same_string(a->pattern, b->pattern);
}

/* Whether list differs from the members in force. */
static bool differs(const apexd_catalogs_t *c, member_t *list, size_t count)
{
	if (count != c->member_count)
		return true;
	for (size_t i = 0; i < count; i++) {
		bool readded;

		if (!apex_name_equal(list[i].zone, c->members[i].zone) ||
		    !keeps_state(&c->members[i], list, count, &readded) ||
		    !same_group(&list[i], &c->members[i]))
			return true;
	}
	return false;
}

/* The files of the members in force that do not keep their state in list. */
static void remove_lost(apexd_catalogs_t *c, member_t *list, size_t count)
{
	for (size_t i = 0; i < c->member_count; i++) {
		bool again;

		if (!keeps_state(&c->members[i], list, count, &again))
			remove_files(c, &c->members[i]);
	}
}

/*
 * The zones of origins (count of them) no longer served, at once: the
 * members gone from every catalog, before the configuration without them
 * is built and put in force (some 50 ms for 10,000 members), which takes
 * them out of the reloader and the transfer thread.  Should that fail,
 * they stay unserved, as their catalog says, and the next attempt
 * finishes the job.
 */
static void withdraw(apexd_catalogs_t *c, const uint8_t **origins, size_t count)
{
	int rc = count > 0 ? apex_zonetable_remove_many(&c->ctx.server->zonetable, origins, count)
			   : APEX_OK;

	if (rc < 0 && rc != APEX_ENOENT)
		apex_error("catalogs: %zu member zone(s) not withdrawn: %s", count,
			   apex_strerror(rc));
}

/*
 * Put list (owned, taken) in force in place of the members in force.
 * Members that lose their state are taken out first and their files
 * removed; those of them list has again are then added afresh.
 */
static void update(apexd_catalogs_t *c, member_t *list, size_t count)
{
	size_t lost = 0, readded = 0, gone = 0;
	const uint8_t **origins;
	int rc = APEX_OK;

	if (!c->retry && !c->dirty && !differs(c, list, count)) {
		members_free(list, count);
		return;
	}
	/* the members no longer listed (a zone of the file by the same name
	 * stays: it took the name) */
	origins = malloc((c->member_count > 0 ? c->member_count : 1) * sizeof(*origins));
	for (size_t i = 0; i < c->member_count; i++) {
		bool again;

		if (!keeps_state(&c->members[i], list, count, &again)) {
			lost++;
			readded += again;
			if (!again && origins != NULL && !is_configured(c, c->members[i].zone))
				origins[gone++] = c->members[i].zone;
		}
	}
	withdraw(c, origins, gone);
	free(origins);
	if (readded > 0) {
		/* without the members that start afresh */
		member_t *first = calloc(count > 0 ? count : 1, sizeof(*first));
		size_t n = 0;

		if (first == NULL) {
			rc = APEX_ENOMEM;
		} else {
			for (size_t i = 0; i < count; i++) {
				const member_t *old =
					member_find(c->members, c->member_count, list[i].zone);
				bool again;

				if (old == NULL || keeps_state(old, list, count, &again)) {
					first[n] = list[i]; /* shallow: list keeps them */
					first[n++].file = NULL;
				}
			}
			rc = put_in_force(c, first, n);
			for (size_t i = 0; i < n; i++)
				free(first[i].file); /* noted again by the next */
			free(first);
		}
	}
	/* the files of the members that lost their state, once they are out
	 * of the server: before the second configuration when some come back */
	if (rc == APEX_OK && readded > 0)
		remove_lost(c, list, count);
	if (rc == APEX_OK)
		rc = put_in_force(c, list, count);
	if (rc == APEX_OK && readded == 0 && lost > 0)
		remove_lost(c, list, count);
	c->retry = rc < 0;
	if (rc < 0) {
		members_free(list, count);
		return;
	}
	c->dirty = false;
	/* a member whose new pattern gives it another file: the old one goes */
	for (size_t i = 0; i < c->member_count; i++) {
		const member_t *now = member_find(list, count, c->members[i].zone);
		bool again;

		if (now != NULL && keeps_state(&c->members[i], list, count, &again) &&
		    c->members[i].file != NULL && now->file != NULL &&
		    strcmp(c->members[i].file, now->file) != 0)
			remove_files(c, &c->members[i]);
	}
	members_free(c->members, c->member_count);
	c->members = list;
	c->member_count = count;
}

/* One pass: the catalogs read, and their members put in force if they
 * changed (or the last attempt failed).  Returns whether to try again. */
static bool pass(apexd_catalogs_t *c)
{
	member_t *list;
	size_t count;
	bool retry;

	pthread_mutex_lock(&c->apply);
	reload_produced(c); /* written for a reconfig */
	if ((read_catalogs(c) || c->retry || c->dirty) && c->ctx.reread_config != NULL) {
		if (assign(c, &list, &count) < 0) {
			apex_error("catalogs: members not changed: out of memory");
			c->retry = true;
		} else {
			update(c, list, count);
		}
	}
	retry = c->retry;
	pthread_mutex_unlock(&c->apply);
	return retry;
}

/* ---------------------------------------------------------------- the thread */

static void *catalogs_main(void *arg)
{
	apexd_catalogs_t *c = arg;
	bool retry = false;

	pthread_setname_np(pthread_self(), "apexd-catalog");
	apex_thread_lower_priority("catalog thread", c->idle, c->nice);
	pthread_mutex_lock(&c->wake_lock);
	while (!c->stopping) {
		if (!c->woken && retry) {
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += RETRY_SECONDS;
			if (pthread_cond_timedwait(&c->wake_cond, &c->wake_lock, &until) ==
			    ETIMEDOUT)
				c->woken = true;
			continue;
		}
		if (!c->woken) {
			pthread_cond_wait(&c->wake_cond, &c->wake_lock);
			continue;
		}
		c->woken = false;
		pthread_mutex_unlock(&c->wake_lock);
		retry = pass(c);
		pthread_mutex_lock(&c->wake_lock);
	}
	pthread_mutex_unlock(&c->wake_lock);
	return NULL;
}

apexd_catalogs_t *apexd_catalogs_new(const struct apex_command_context *ctx,
				     const apex_config_t *cfg)
{
	apexd_catalogs_t *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ctx = *ctx;
	c->ctx.lock_config = NULL; /* its own calls hold the lock already */
	c->ctx.extend_config = NULL;
	pthread_mutex_init(&c->apply, NULL);
	pthread_mutex_init(&c->wake_lock, NULL);
	pthread_cond_init(&c->wake_cond, NULL);
	c->woken = true; /* the catalogs loaded from their copies */
	c->idle = cfg->reload_idle;
	c->nice = (int)cfg->reload_nice;
	if (sync_consumers(c, cfg) < 0 || sync_configured(c, cfg) < 0 ||
	    zone_list_configure(c, cfg) < 0) {
		apexd_catalogs_free(c);
		return NULL;
	}
	/* read from outside the chroot, written from inside it (a reconfig
	 * gives the path as seen there) */
	if (c->zone_list != NULL && cfg->chroot_dir != NULL) {
		const char *inside = apex_privs_chroot_path(cfg->chroot_dir, c->zone_list);

		if (inside != c->zone_list)
			memmove(c->zone_list, inside, strlen(inside) + 1);
	}
	return c;
}

int apexd_catalogs_start(apexd_catalogs_t *c)
{
	int rc = pthread_create(&c->thread, NULL, catalogs_main, c);

	if (rc != 0) {
		apex_error("catalogs: thread not started: %s", strerror(rc));
		return APEX_ENOMEM;
	}
	c->started = true;
	return APEX_OK;
}

void apexd_catalogs_wake(apexd_catalogs_t *c)
{
	pthread_mutex_lock(&c->wake_lock);
	c->woken = true;
	pthread_cond_signal(&c->wake_cond);
	pthread_mutex_unlock(&c->wake_lock);
}

void apexd_catalogs_lock(apexd_catalogs_t *c)
{
	pthread_mutex_lock(&c->apply);
}

void apexd_catalogs_unlock(apexd_catalogs_t *c)
{
	pthread_mutex_unlock(&c->apply);
	apexd_catalogs_wake(c);
}

void apexd_catalogs_stop(apexd_catalogs_t *c)
{
	if (c == NULL || !c->started)
		return;
	pthread_mutex_lock(&c->wake_lock);
	c->stopping = true;
	pthread_cond_signal(&c->wake_cond);
	pthread_mutex_unlock(&c->wake_lock);
	pthread_join(c->thread, NULL);
	c->started = false;
}

void apexd_catalogs_free(apexd_catalogs_t *c)
{
	if (c == NULL)
		return;
	apexd_catalogs_stop(c);
	for (size_t i = 0; i < c->consumer_count; i++)
		consumer_clear(&c->consumers[i]);
	free(c->consumers);
	for (size_t i = 0; i < c->configured_count; i++)
		free(c->configured[i]);
	free(c->configured);
	members_free(c->members, c->member_count);
	for (size_t i = 0; i < c->produced_count; i++)
		free(c->produced[i]);
	free(c->produced);
	zone_list_free(c);
	pthread_mutex_destroy(&c->apply);
	pthread_mutex_destroy(&c->wake_lock);
	pthread_cond_destroy(&c->wake_cond);
	free(c);
}
