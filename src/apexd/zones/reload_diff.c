/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A reload of a zone served, derived from the version served
 * (reload_internal.h): the file is compared with that version record by
 * record as it is parsed (xfr/file_diff.h), which keeps no second copy of
 * the zone, and the change found is applied as an IXFR's is
 * (xfr/ixfr_apply.h): in place when a derivation does it, unchanged
 * names shared; else built whole from the version and the change, once
 * memory-limit allows it.  A change that does not make a zone is left to
 * a whole load of the file, which refuses it with the words and the
 * FILE:LINE it always gave.  After such a reload, a chain of derived
 * versions that holds too much is built compact (compact.h).  A file
 * whose bytes are those the version served was loaded or derived from
 * (the same SHA-256, zone/file_digest.h) is not parsed at all.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "zones/reload.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "process/memory.h"
#include "process/memory_limit.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/file_diff.h"
#include "xfr/ixfr_apply.h"
#include "zone/derive_profile.h"
#include "zones/compact.h"
#include "zones/reload_internal.h"

/* What the guard of a whole build asks memory-limit with. */
typedef struct whole_guard {
	apex_reloader_t *r;
	apex_load_job_t *job;
} whole_guard_t;

/* A change set larger than this share of the version served is freed once
 * the derivation has read it (apex_ixfr_guard_t's sets_read), and the
 * journal, if the zone has one, compares the two versions after the new
 * one is published instead (xfr/diff.h): 9.6 MB for an edit of a tenth of
 * a 1M-record zone, 7% of its steady memory, no longer held through the
 * derivation's peak.  A smaller one is kept: comparing the versions walks
 * both indexes, where the set costs nothing more. */
#define APEX_RELOAD_SET_KEPT_SHARE 64

/* A reload of a version of this much memory or more runs in the arena
 * that gives freed memory back at once (process/memory.h), from then on:
 * the temporaries of the comparison and of the derivation are not left
 * resident under the next step's peak, and the 2 to 3 MiB the arena costs
 * are under 5% of the zone. */
#define APEX_RELOAD_GIVES_BACK_MEMORY ((size_t)64 << 20)

/* apex_ixfr_guard_t's sets_read: the job's set freed (not for the
 * journal), and given back to the system with what the derivation freed
 * before (its index of the set), rather than left to the allocator's
 * decay under the derivation's peak. */
static void release_set(void *ctx)
{
	whole_guard_t *g = ctx;

	apex_changes_free(&g->job->set);
	apex_memory_purge();
}

/* apex_ixfr_guard_t's whole: the claim a whole load of the file makes. */
static int claim_whole(void *ctx, char *err, size_t err_size)
{
	whole_guard_t *g = ctx;
	apex_load_job_t *job = g->job;

	return apex_reloader_memory_claim(g->r, job->file, job->origin, job->loaded_size,
					  &job->file_size, &job->claim, err, err_size);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The version old becomes by job->set, ready, keeping the digest of the
 * file it holds: APEX_ENOTSUP when the change does not make a zone (a
 * whole load says why). */
static int derive(apex_reloader_t *r, apex_load_job_t *job, apex_zone_t *old,
		  const apex_file_digest_t *digest, const struct timespec *t0, apex_zone_t **zone)
{
	whole_guard_t g = { r, job };
	bool large = job->set.size > old->memory / APEX_RELOAD_SET_KEPT_SHARE;
	apex_ixfr_guard_t guard = { claim_whole, &g, large ? release_set : NULL };
	size_t removed = job->set.removed, added = job->set.added;
	bool in_place;
	int rc = apex_ixfr_version_guarded(old, &job->set, 1, job->file, &guard, zone, &in_place,
					   job->err, sizeof(job->err));

	if (rc == APEX_ELOAD || rc == APEX_EMALFORMED) {
		apex_debug("zone %s: %s: %s; loaded whole", job->name, job->file, job->err);
		job->err[0] = '\0';
		apexd_memory_limit_release(r->memory_limit, &job->claim);
		return APEX_ENOTSUP;
	}
	if (rc == APEX_ENOTSUP) /* turned down once the set was freed (ixfr_apply.h) */
		apex_debug("zone %s: %s: the change is not derived in place; loaded whole",
			   job->name, job->file);
	if (rc != APEX_OK)
		return rc;
	(*zone)->file_digest = *digest; /* not yet published: ours to write */
	apex_info("zone %s: %s against serial %u: %zu removed, %zu added, serial %u %s in %.3f s%s",
		  job->name, job->file, old->serial, removed, added, (*zone)->serial,
		  in_place ? "derived in place" : "built whole", seconds_since(t0),
		  job->set.data == NULL ? " (the change set freed once read: the journal "
					  "compares the versions)"
					: "");
	if (in_place) {
		char steps[200];
		apex_derive_profile_text((*zone)->derive_ms, steps, sizeof(steps));
		apex_debug("zone %s: serial %u derived: %s ms", job->name, (*zone)->serial, steps);
	}
	job->derived = true;
	job->have_set = job->set.data != NULL; /* not released: apex_changes_free() */
	return apex_reloader_ready(job, zone);
}

/* The file holds the bytes old was loaded or derived from: it is read
 * and digested, not parsed.  A file that cannot be read is left to the
 * comparison, which says why. */
static bool same_bytes(const apex_load_job_t *job, const apex_zone_t *old)
{
	apex_file_digest_t now;
	char err[256];

	if (!old->file_digest.valid || old->file == NULL || strcmp(old->file, job->file) != 0)
		return false;
	return apex_file_digest_path(job->file, &now, err, sizeof(err)) == APEX_OK &&
	       apex_file_digest_equal(&now, &old->file_digest);
}

int apex_reloader_derive(apex_reloader_t *r, apex_load_job_t *job, apex_zone_t **zone)
{
	apex_zone_t *old = apex_server_served_version(r->server, job->origin);
	apex_file_diff_result_t result;
	apex_file_digest_t digest;
	struct timespec t0;
	struct stat st;
	int rc;

	*zone = NULL;
	if (old == NULL)
		return APEX_ENOTSUP;
	if (old->memory >= APEX_RELOAD_GIVES_BACK_MEMORY)
		apex_memory_thread_gives_back();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (stat(job->file, &st) == 0)
		job->file_size = (uint64_t)st.st_size;
	if (same_bytes(job, old)) {
		job->unchanged_serial = old->serial;
		job->unchanged_bytes = true;
		apex_zone_unref(old);
		return APEX_OK;
	}
	rc = apex_file_diff(old, job->file, &job->set, &result, &digest, job->err,
			    sizeof(job->err));
	if (rc == APEX_OK && result == APEX_FILE_DIFF_WHOLE)
		rc = APEX_ENOTSUP;
	else if (rc == APEX_OK && result == APEX_FILE_DIFF_SAME)
		job->unchanged_serial = old->serial; /* other bytes, the same records */
	else if (rc == APEX_OK) {
		/* The parse's memory, freed but still resident in the
		 * allocator, is given back before the derivation allocates:
		 * else it stays under the reload's peak (doc/reload.md). */
		apex_memory_purge();
		rc = derive(r, job, old, &digest, &t0, zone);
	}
	apex_zone_unref(old);
	if (!job->have_set) {
		apex_changes_free(&job->set);
		apex_changes_init(&job->set);
	}
	return rc;
}

void apex_reloader_compact(apex_reloader_t *r, const apex_load_job_t *job)
{
	/* compact.h; why a reload waits for it: reload_internal.h */
	apex_compact_zone_t c = { .server = r->server,
				  .reloader = r,
				  .zone_id = job->id,
				  .origin = job->origin,
				  .name = job->name,
				  .limit = r->memory_limit,
				  .kind = APEXD_MEMORY_RELOAD };

	apex_compact_served(&c);
}
