/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zone loading and reloading on a thread of its own (reload.h): the
 * zones' loads, requests and reports.  The list of configured zones is
 * kept in reload_zones.c; what a reconfiguration changes in it is in
 * reconfigure.c.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "zones/reload.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "process/crash_point.h"
#include "process/memory.h"
#include "process/memory_limit.h"
#include "process/thread_priority.h"
#include "zones/reload_internal.h"
#include "zones/verify_check.h"
#include "zones/zonemd_check.h"
#include "query/precompute.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/log.h"
#include "zone/index_block.h"
#include "zone/load.h"

/* A file at least this large lets enough go, once its load is done, to
 * give it back at once (apex_memory_purge()). */
#define APEX_RELOAD_PURGE_BYTES (1u << 20)

int apex_reloader_init(apex_reloader_t *r, apex_server_t *server, const apex_config_t *cfg)
{
	memset(r, 0, sizeof(*r));
	r->server = server;
	r->idle = cfg->reload_idle;
	r->nice = (int)cfg->reload_nice;
	if (pthread_mutex_init(&r->lock, NULL) != 0)
		return APEX_ENOMEM;
	if (pthread_cond_init(&r->work, NULL) != 0) {
		pthread_mutex_destroy(&r->lock);
		return APEX_ENOMEM;
	}
	const uint8_t **origins = malloc((cfg->zone_count + 1) * sizeof(*origins));

	if (origins == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		apex_managed_zone_t *z = apex_reloader_zone_new(r, &cfg->zones[i]);

		if (z == NULL || apex_reloader_zones_push(r, z) < 0) {
			apex_reloader_zone_free(z);
			free(origins);
			return APEX_ENOMEM; /* apex_reloader_free() releases the rest */
		}
		origins[i] = z->origin;
	}
	/* SERVFAIL, not REFUSED, until they are loaded */
	int rc = apex_zonetable_configure_many(&server->zonetable, origins, cfg->zone_count);
	free(origins);
	return rc;
}

void apex_reloader_free(apex_reloader_t *r)
{
	if (r->server == NULL)
		return;
	apex_reloader_stop(r);
	for (size_t i = 0; i < r->count; i++)
		apex_reloader_zone_free(r->zones[i]);
	free(r->zones);
	free(r->by_origin);
	for (size_t i = 0; i < r->first_count; i++)
		apex_zone_unref(r->first[i]);
	free(r->first);
	free(r->threads);
	pthread_cond_destroy(&r->work);
	pthread_mutex_destroy(&r->lock);
	memset(r, 0, sizeof(*r));
}

/* ---------------------------------------------------------------- loading */

/* Under the lock: the next zone with a pending request that no thread loads, or NULL. */
static apex_managed_zone_t *pick(apex_reloader_t *r)
{
	for (size_t n = 0; n < r->count; n++) {
		size_t i = (r->next_pick + n) % r->count;
		apex_managed_zone_t *z = r->zones[i];

		if (!z->loading && z->requested > z->done) {
			r->next_pick = i + 1;
			return z;
		}
	}
	return NULL;
}

int apex_reloader_ready(apex_load_job_t *job, apex_zone_t **zone)
{
	struct timespec t0, t1;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((rc = apex_precompute(*zone)) != APEX_OK ||
	    (rc = apexd_zonemd_check(job->name, *zone, job->zonemd_verify, job->err,
				     sizeof(job->err))) != APEX_OK ||
	    (rc = apexd_verify_check(job->name, job->origin, *zone, job->err, sizeof(job->err))) !=
		    APEX_OK) {
		apex_zone_unref(*zone);
		*zone = NULL;
		return rc;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	apex_debug("zone %s: answers precomputed, ZONEMD and verifier checked in %.3f s", job->name,
		   (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return APEX_OK;
}

int apex_reloader_load_whole(apex_reloader_t *r, apex_load_job_t *job, apex_zone_t **zone)
{
	int rc = apex_reloader_memory_claim(r, job->file, job->origin, job->loaded_size,
					    &job->file_size, &job->claim, job->err,
					    sizeof(job->err));
	struct stat st;

	/* a file that is not there (a catalog's new member, before its first
	 * transfer) fails as the load would, without a version begun for it */
	if (rc == APEX_OK && job->file_size == 0 && stat(job->file, &st) != 0) {
		snprintf(job->err, sizeof(job->err), "%s: cannot open: %s", job->file,
			 strerror(errno));
		return APEX_ELOAD;
	}
	if (rc == APEX_OK)
		rc = apex_zone_load(job->file, job->origin, zone, job->err, sizeof(job->err));
	if (rc == APEX_OK)
		rc = apex_reloader_ready(job, zone);
	return rc;
}

/* Under the lock: z picked, its load begun. */
static void job_take(apex_load_job_t *job, apex_managed_zone_t *z)
{
	memset(job, 0, sizeof(*job));
	job->id = z->id;
	job->seq = z->requested;
	job->file = strdup(z->file);
	memcpy(job->origin, z->origin, apex_name_size(z->origin));
	snprintf(job->name, sizeof(job->name), "%s", z->name);
	job->secondary = z->secondary;
	job->zonemd_verify = z->zonemd_verify;
	job->loaded_size = z->file_size;
	apex_changes_init(&job->set);
	z->loading = true;
	z->state = APEX_ZONE_LOADING;
}

/* Under the lock: z's state after its load failed with job->err. */
static void note_failure(apex_managed_zone_t *z, const apex_load_job_t *job)
{
	const char *file = job->file != NULL ? job->file : job->name;

	z->state = APEX_ZONE_FAILED;
	z->failures++;
	snprintf(z->error, sizeof(z->error), "%s", job->err);
	clock_gettime(CLOCK_REALTIME, &z->failed_at);
	z->awaiting_transfer = job->secondary && z->loads == z->failures && access(file, F_OK) != 0;
	if (z->awaiting_transfer)
		apex_info("zone %s: no copy in %s yet: served after the first transfer", job->name,
			  file);
	else
		apex_error("zone %s: %s (%s)", job->name, job->err,
			   z->loads > z->failures ? "the previous version is still served"
						  : "the zone is not served");
}

/* Under the lock: version (a reference, taken) kept for the first load's
 * publication together (apex_reloader_load_initial()). */
static int keep_first(apex_reloader_t *r, apex_zone_t *version)
{
	apex_zone_t **grown =
		apex_grow(r->first, &r->first_capacity, r->first_count, sizeof(*grown), 64);
	if (grown == NULL)
		return APEX_ENOMEM;
	r->first = grown;
	r->first[r->first_count++] = version;
	return APEX_OK;
}

/*
 * Under the lock: publish *zone, the result of the load (rc), and note
 * the outcome in the zone's entry.  Returns rc, or the failure to
 * publish; *zone and *old are NULL when nothing was published.
 */
static int finish_load(apex_reloader_t *r, apex_load_job_t *job, int rc, apex_zone_t **zone,
		       apex_zone_t **old)
{
	apex_managed_zone_t *z = apex_reloader_find_id(r, job->id);

	if (z == NULL) {
		/* removed by a reconfiguration meanwhile: nothing to publish */
		apex_zone_unref(*zone);
		apex_zone_unref(*old);
		*old = *zone = NULL;
		return rc;
	}
	if (rc == APEX_OK && *zone != NULL) {
		apex_zone_ref(*zone); /* for the published hook, dropped by the caller */
		if (r->live)          /* a reload, not the first load */
			apexd_crash_point("reload-publishing");
		rc = r->live ? apex_zonetable_publish(&r->server->zonetable, *zone)
			     : keep_first(r, *zone);
		if (rc < 0) {
			snprintf(job->err, sizeof(job->err), "%s: not published: %s", job->file,
				 apex_strerror(rc));
			apex_zone_unref(*zone);
			apex_zone_unref(*zone);
			*zone = NULL;
		}
	}
	z->loading = false;
	z->done = job->seq;
	z->loads++;
	z->awaiting_transfer = false;
	if (rc != APEX_OK) {
		note_failure(z, job);
		return rc;
	}
	z->state = APEX_ZONE_LOADED;
	z->error[0] = '\0';
	z->refused = false;
	z->file_size = job->file_size;
	if (*zone == NULL) {
		apex_info("zone %s: %s unchanged (serial %u, %s): the version served is kept",
			  job->name, job->file, job->unchanged_serial,
			  job->unchanged_bytes ? "the same bytes" : "the same records");
		return rc;
	}
	apex_info("zone %s loaded from %s: serial %u, %zu records, %.3f s, %.1f MiB", job->name,
		  job->file, (*zone)->serial, (*zone)->record_count, (*zone)->load_seconds,
		  (double)(*zone)->memory / (1024.0 * 1024.0));
	return rc;
}

/*
 * Called with the lock held and z picked: load z's file with the lock
 * released (once memory-limit allows it, on the reload thread), publish
 * the result, and return with the lock held again.
 */
static void load_picked(apex_reloader_t *r, apex_managed_zone_t *z)
{
	apex_load_job_t job;
	apex_zone_t *zone = NULL, *old = NULL;
	bool derived = false;
	int rc;

	job_take(&job, z);
	apex_reloader_more_threads(r);
	pthread_mutex_unlock(&r->lock);

	rc = job.file == NULL ? APEX_ENOMEM : APEX_ENOTSUP;
	if (rc == APEX_ENOTSUP && r->live)
		rc = apex_reloader_derive(r, &job, &zone);
	if (rc == APEX_ENOTSUP)
		rc = apex_reloader_load_whole(r, &job, &zone);
	if (rc < 0 && job.err[0] == '\0')
		snprintf(job.err, sizeof(job.err), "%.400s: %s",
			 job.file != NULL ? job.file : job.name, apex_strerror(rc));
	if (rc == APEX_OK && zone != NULL) {
		if (r->live) /* a reload, not the first load */
			apexd_crash_point("reload-built");
		old = apex_server_served_version(r->server, job.origin);
	}

	pthread_mutex_lock(&r->lock);
	rc = finish_load(r, &job, rc, &zone, &old);
	derived = rc == APEX_OK && zone != NULL && job.derived;
	if (derived) /* no other thread loads it before its compaction below */
		apex_reloader_find_id(r, job.id)->loading = true;
	pthread_mutex_unlock(&r->lock);

	if (rc == APEX_OK && zone != NULL) {
		if (r->live) /* a reload, not the first load */
			apexd_crash_point("reload-published");
		/* a set freed once read (reload_diff.c): the journal compares
		 * the versions, once what the derivation freed is given back */
		if (r->live && job.derived && !job.have_set)
			apex_memory_purge();
		if (r->live && r->published != NULL)
			r->published(r->published_arg, old, zone, job.have_set ? &job.set : NULL,
				     job.have_set ? 1 : 0);
		apex_server_retire(r->server, old, r->live);
		/* the retired version's index, kept by the chain for a next
		 * derivation (zone/index_block.h), goes back with the rest of
		 * what the reload let go of: reloads are not seconds apart */
		if (derived)
			apex_index_block_drop(zone);
		apex_zone_unref(zone);
	} else {
		apex_zone_unref(old); /* NULL unless publishing failed */
	}
	apex_changes_free(&job.set);
	/* what a load let go of back to the system; at start once, after all
	 * loads, and after a small file's (or a missing one's: a catalog's new
	 * members) not at all, jemalloc's decay returns that much within
	 * seconds: a purge per zone of thousands cost more than their loads */
	if (r->live && job.file_size >= APEX_RELOAD_PURGE_BYTES)
		apex_memory_purge();
	apexd_memory_limit_release(r->memory_limit, &job.claim);
	if (r->notify != NULL)
		r->notify(r->notify_arg);
	if (derived) /* its chain let go of when it holds too much */
		apex_reloader_compact(r, &job);
	free(job.file);
	pthread_mutex_lock(&r->lock);
	if (derived && (z = apex_reloader_find_id(r, job.id)) != NULL) {
		z->loading = false;
		pthread_cond_broadcast(&r->work); /* a request may have come meanwhile */
	}
}

void *apex_reloader_thread_main(void *arg)
{
	apex_reloader_t *r = arg;

	if (r->live) {
		pthread_setname_np(pthread_self(), "apexd-reload");
		apex_thread_lower_priority("reload thread", r->idle, r->nice);
	}
	pthread_mutex_lock(&r->lock);
	while (!r->stopping) {
		apex_managed_zone_t *z = pick(r);

		if (z == NULL) {
			if (!r->live)
				break; /* initial load: done when nothing is left */
			pthread_cond_wait(&r->work, &r->lock);
			continue;
		}
		load_picked(r, z);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int apex_reloader_load_initial(apex_reloader_t *r, size_t *loaded, size_t *awaiting)
{
	size_t threads = apex_config_cpu_count(), started = 0;
	pthread_t *tids;

	*loaded = *awaiting = 0;
	if (threads > r->count)
		threads = r->count;
	tids = threads > 1 ? calloc(threads, sizeof(*tids)) : NULL;
	for (size_t t = 0; tids != NULL && t < threads; t++) {
		if (pthread_create(&tids[t], NULL, apex_reloader_thread_main, r) != 0)
			break;
		started++;
	}
	if (started == 0)
		apex_reloader_thread_main(r); /* one zone, or no thread could start: load here */
	for (size_t t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	free(tids);

	pthread_mutex_lock(&r->lock);
	int rc = apex_zonetable_publish_many(&r->server->zonetable, r->first, r->first_count);
	if (rc < 0) /* the versions are still ours: nothing is served */
		for (size_t i = 0; i < r->first_count; i++)
			apex_zone_unref(r->first[i]);
	free(r->first);
	r->first = NULL;
	r->first_count = r->first_capacity = 0;
	apex_memory_purge();
	for (size_t i = 0; rc == APEX_OK && i < r->count; i++) {
		*loaded += r->zones[i]->state == APEX_ZONE_LOADED;
		*awaiting += r->zones[i]->awaiting_transfer;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* ---------------------------------------------------------------- requests */

/* Under the lock: ask for one more load of z and note the ticket. */
void apex_reloader_request_one(apex_managed_zone_t *z, apex_reload_ticket_t *ticket)
{
	z->requested++;
	if (!z->loading)
		z->state = APEX_ZONE_LOADING;
	if (ticket != NULL) {
		ticket->zone_id = z->id;
		ticket->seq = z->requested;
	}
}

int apex_reloader_request(apex_reloader_t *r, const uint8_t *origin, apex_reload_ticket_t **tickets,
			  size_t *count)
{
	apex_reload_ticket_t *list = NULL;
	size_t n = 0;
	int rc = APEX_OK;

	pthread_mutex_lock(&r->lock);
	if (origin != NULL) {
		ssize_t i = apex_reloader_find_origin(r, origin);

		if (i < 0) {
			rc = APEX_ENOENT;
			goto out;
		}
		if (tickets != NULL && (list = calloc(1, sizeof(*list))) == NULL) {
			rc = APEX_ENOMEM;
			goto out;
		}
		apex_reloader_request_one(r->zones[i], list);
		n = 1;
	} else {
		if (tickets != NULL && r->count > 0 &&
		    (list = calloc(r->count, sizeof(*list))) == NULL) {
			rc = APEX_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < r->count; i++)
			apex_reloader_request_one(r->zones[i], list != NULL ? &list[i] : NULL);
		n = r->count;
	}
	pthread_cond_broadcast(&r->work);
out:
	pthread_mutex_unlock(&r->lock);
	if (tickets != NULL) {
		*tickets = list;
		*count = rc == APEX_OK ? n : 0;
	} else {
		free(list);
	}
	return rc;
}

bool apex_reloader_ticket_done(apex_reloader_t *r, const apex_reload_ticket_t *ticket,
			       apex_reload_result_t *result)
{
	apex_managed_zone_t *z;
	bool done = true;

	memset(result, 0, sizeof(*result));
	pthread_mutex_lock(&r->lock);
	z = apex_reloader_find_id(r, ticket->zone_id);
	if (z == NULL) {
		result->removed = true;
		snprintf(result->error, sizeof(result->error), "zone removed by reconfig");
	} else if (z->done < ticket->seq) {
		done = false;
	} else {
		snprintf(result->name, sizeof(result->name), "%s", z->name);
		result->awaiting_transfer = z->awaiting_transfer;
		result->ok = z->state != APEX_ZONE_FAILED || z->awaiting_transfer;
		if (!result->ok)
			snprintf(result->error, sizeof(result->error), "%s", z->error);
	}
	pthread_mutex_unlock(&r->lock);
	return done;
}

/* ---------------------------------------------------------------- reports */

static int compare_zones(const void *a, const void *b)
{
	const apex_managed_zone_t *za = *(const apex_managed_zone_t *const *)a;
	const apex_managed_zone_t *zb = *(const apex_managed_zone_t *const *)b;

	return apex_name_compare(za->origin, zb->origin);
}

int apex_reloader_foreach(apex_reloader_t *r, const uint8_t *origin,
			  void (*fn)(const apex_managed_zone_t *zone, void *arg), void *arg)
{
	int rc = APEX_OK;

	pthread_mutex_lock(&r->lock);
	if (origin != NULL) {
		ssize_t i = apex_reloader_find_origin(r, origin);

		if (i < 0)
			rc = APEX_ENOENT;
		else
			fn(r->zones[i], arg);
	} else {
		/* the order of the array changes on reconfig: sort a copy */
		apex_managed_zone_t **sorted =
			malloc((r->count > 0 ? r->count : 1) * sizeof(*sorted));

		if (sorted == NULL) {
			rc = APEX_ENOMEM;
		} else {
			memcpy(sorted, r->zones, r->count * sizeof(*sorted));
			qsort(sorted, r->count, sizeof(*sorted), compare_zones);
			for (size_t i = 0; i < r->count; i++)
				fn(sorted[i], arg);
			free(sorted);
		}
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

size_t apex_reloader_count(apex_reloader_t *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->count;
	pthread_mutex_unlock(&r->lock);
	return n;
}

void apex_reloader_rebase(apex_reloader_t *r,
			  const char *(*rebase)(const char *base, const char *path),
			  const char *base)
{
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->count; i++) {
		char *file = r->zones[i]->file;
		const char *inside = rebase(base, file);

		if (inside != file)
			memmove(file, inside, strlen(inside) + 1);
	}
	pthread_mutex_unlock(&r->lock);
}
