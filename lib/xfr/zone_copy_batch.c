/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies of small zones settled together (zone_copy_batch.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* _GNU_SOURCE: syncfs() */
#endif
#include "xfr/zone_copy_batch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

typedef struct waiting {
	apex_zone_copy_t copy; /* flushed, its file open */
	char *name, *path;     /* owned, for the settled function (NULL: no memory) */
	uint32_t serial;
} waiting_t;

struct apex_zone_copy_batch {
	size_t max;
	uint64_t delay_ms;
	apex_zone_copy_settled_fn settled;
	void *arg;
	/* held for a whole settle: one at a time, and a settle of a path
	 * waits for one under way (whose copy of it may not be renamed yet) */
	pthread_mutex_t settle_lock;
	pthread_mutex_t lock; /* the waiting copies */
	waiting_t *waiting;   /* max of them */
	size_t count;
	uint64_t first_ms;   /* when the oldest was added */
	waiting_t *settling; /* max of them: those taken to settle (settle_lock's) */
};

apex_zone_copy_batch_t *apex_zone_copy_batch_new(size_t max, uint64_t delay_ms,
						 apex_zone_copy_settled_fn settled, void *arg)
{
	apex_zone_copy_batch_t *b = calloc(1, sizeof(*b));

	if (max == 0)
		max = 1;
	if (b == NULL || (b->waiting = calloc(max, sizeof(*b->waiting))) == NULL ||
	    (b->settling = calloc(max, sizeof(*b->settling))) == NULL) {
		if (b != NULL)
			free(b->waiting);
		free(b);
		return NULL;
	}
	b->max = max;
	b->delay_ms = delay_ms;
	b->settled = settled;
	b->arg = arg;
	pthread_mutex_init(&b->settle_lock, NULL);
	pthread_mutex_init(&b->lock, NULL);
	return b;
}

/* Commit one copy (its file synced by the batch's syncfs, or not), tell
 * it, free what w holds. */
static void settle_one(apex_zone_copy_batch_t *b, waiting_t *w, bool synced)
{
	char err[512] = "";
	int rc = synced ? apex_zone_copy_commit_synced(&w->copy, err, sizeof(err))
			: apex_zone_copy_commit(&w->copy, err, sizeof(err));

	b->settled(b->arg, w->name != NULL ? w->name : "", w->path != NULL ? w->path : "",
		   w->serial, rc, err);
	free(w->name);
	free(w->path);
	w->name = w->path = NULL;
}

/*
 * Sync the file systems of the n copies (one syncfs(2) each), then
 * commit each: those of a file system whose sync failed with an fsync(2)
 * of their own, so that only a copy that fails is told so.  The caller
 * holds settle_lock.
 */
static void settle_taken(apex_zone_copy_batch_t *b, waiting_t *taken, size_t n)
{
	dev_t devs[16];
	bool synced[16];
	size_t dev_count = 0;

	for (size_t i = 0; i < n; i++) {
		struct stat st;
		bool ok = false;
		size_t d;

		if (taken[i].copy.error != APEX_OK || fstat(fileno(taken[i].copy.fp), &st) != 0) {
			settle_one(b, &taken[i], false); /* the failure told, or an fsync */
			continue;
		}
		for (d = 0; d < dev_count && devs[d] != st.st_dev; d++)
			;
		if (d < dev_count) {
			ok = synced[d];
		} else {
			ok = syncfs(fileno(taken[i].copy.fp)) == 0;
			if (dev_count < sizeof(devs) / sizeof(devs[0])) {
				devs[dev_count] = st.st_dev;
				synced[dev_count++] = ok;
			}
		}
		settle_one(b, &taken[i], ok);
	}
}

/* Take every copy waiting and settle them (the caller holds settle_lock). */
static void settle_all(apex_zone_copy_batch_t *b)
{
	pthread_mutex_lock(&b->lock);
	size_t n = b->count;

	memcpy(b->settling, b->waiting, n * sizeof(*b->waiting));
	b->count = 0;
	b->first_ms = 0;
	pthread_mutex_unlock(&b->lock);
	settle_taken(b, b->settling, n);
}

void apex_zone_copy_batch_add(apex_zone_copy_batch_t *b, apex_zone_copy_t *c, const char *name,
			      uint32_t serial, uint64_t now_ms)
{
	waiting_t w = { .serial = serial };
	bool full;

	(void)apex_zone_copy_flush(c); /* a failure is the commit's */
	w.copy = *c;
	memset(c, 0, sizeof(*c));
	w.name = strdup(name);
	w.path = w.copy.path != NULL ? strdup(w.copy.path) : NULL;
	if (w.copy.error != APEX_OK || w.name == NULL || w.path == NULL) {
		pthread_mutex_lock(&b->settle_lock); /* told one at a time */
		settle_one(b, &w, false);
		pthread_mutex_unlock(&b->settle_lock);
		return;
	}
	for (;;) { /* a batch another thread filled is settled first */
		pthread_mutex_lock(&b->lock);
		if (b->count < b->max)
			break;
		pthread_mutex_unlock(&b->lock);
		pthread_mutex_lock(&b->settle_lock);
		settle_all(b);
		pthread_mutex_unlock(&b->settle_lock);
	}
	if (b->count == 0)
		b->first_ms = now_ms;
	b->waiting[b->count++] = w;
	full = b->count == b->max;
	pthread_mutex_unlock(&b->lock);
	if (full) {
		pthread_mutex_lock(&b->settle_lock);
		settle_all(b); /* or what came since another settled it */
		pthread_mutex_unlock(&b->settle_lock);
	}
}

uint64_t apex_zone_copy_batch_due(apex_zone_copy_batch_t *b)
{
	pthread_mutex_lock(&b->lock);
	uint64_t due = b->count > 0 ? b->first_ms + b->delay_ms : 0;
	pthread_mutex_unlock(&b->lock);
	return due;
}

/* Whether a copy of path waits (the caller holds b->lock). */
static bool waits_for(const apex_zone_copy_batch_t *b, const char *path)
{
	for (size_t i = 0; i < b->count; i++)
		if (strcmp(b->waiting[i].path, path) == 0)
			return true;
	return false;
}

void apex_zone_copy_batch_settle(apex_zone_copy_batch_t *b, const char *path)
{
	pthread_mutex_lock(&b->settle_lock);
	pthread_mutex_lock(&b->lock);
	bool settle = b->count > 0 && (path == NULL || waits_for(b, path));
	pthread_mutex_unlock(&b->lock);
	if (settle)
		settle_all(b);
	pthread_mutex_unlock(&b->settle_lock);
}

size_t apex_zone_copy_batch_drop(apex_zone_copy_batch_t *b, const char *path)
{
	size_t dropped = 0, kept = 0;

	pthread_mutex_lock(&b->settle_lock); /* a settle under way renames first */
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->count; i++) {
		waiting_t *w = &b->waiting[i];

		if (strcmp(w->path, path) != 0) {
			b->waiting[kept++] = *w;
			continue;
		}
		apex_zone_copy_abort(&w->copy);
		free(w->name);
		free(w->path);
		dropped++;
	}
	b->count = kept;
	if (kept == 0)
		b->first_ms = 0;
	pthread_mutex_unlock(&b->lock);
	pthread_mutex_unlock(&b->settle_lock);
	return dropped;
}

void apex_zone_copy_batch_free(apex_zone_copy_batch_t *b)
{
	if (b == NULL)
		return;
	apex_zone_copy_batch_settle(b, NULL);
	pthread_mutex_destroy(&b->lock);
	pthread_mutex_destroy(&b->settle_lock);
	free(b->waiting);
	free(b->settling);
	free(b);
}
