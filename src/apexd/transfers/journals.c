/* SPDX-License-Identifier: BSD-3-Clause */
/* The journals of the served zones (journals.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/journals.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dns/serial.h"
#include "observe/write_failures.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/condense.h"
#include "xfr/journal_diff.h"

/* Under zj's lock (or before anyone else sees zj): zj's journal in path,
 * opened; a failure is logged and leaves it closed. */
static void open_journal(apex_zone_journal_t *zj, const char *path, size_t size)
{
	char err[512];
	apex_journal_recovery_t rec;

	if (zj->open)
		apex_journal_close(&zj->journal);
	zj->open = false;
	free(zj->path);
	zj->path = strdup(path);
	if (zj->path == NULL || apex_journal_open(&zj->journal, path, zj->origin, size, false, &rec,
						  err, sizeof(err)) < 0) {
		apex_warning("zone %s: no journal (IXFR answered with the whole zone): %s",
			     zj->name, zj->path == NULL ? "out of memory" : err);
		return;
	}
	zj->open = true;
	if (rec.dropped_bytes > 0)
		apex_warning("zone %s: journal %s: %llu damaged bytes at its end dropped", zj->name,
			     path, (unsigned long long)rec.dropped_bytes);
	if (zj->journal.count > 0)
		apex_info("zone %s: journal %s opened: %zu change set(s), serial %u to %u",
			  zj->name, path, zj->journal.count, zj->journal.entries[0].serial_from,
			  zj->journal.entries[zj->journal.count - 1].serial_to);
	else
		apex_info("zone %s: journal %s opened: empty", zj->name, path);
}

/* Under the table's lock: the entry of origin, or NULL. */
static apex_zone_journal_t *entry_of(const apex_journals_t *js, const uint8_t *origin)
{
	for (size_t i = 0; i < js->count; i++)
		if (apex_name_equal(js->zones[i]->origin, origin))
			return js->zones[i];
	return NULL;
}

/* Under the table's write lock: a new entry for zc, its journal opened. */
static int add_entry(apex_journals_t *js, const apex_zone_config_t *zc, const char *path)
{
	if (js->count == js->capacity) {
		size_t capacity = js->capacity ? 2 * js->capacity : 8;
		apex_zone_journal_t **grown = realloc(js->zones, capacity * sizeof(*grown));
		if (grown == NULL)
			return APEX_ENOMEM;
		js->zones = grown;
		js->capacity = capacity;
	}
	apex_zone_journal_t *zj = calloc(1, sizeof(*zj));
	if (zj == NULL || (zj->name = strdup(zc->name)) == NULL) {
		free(zj);
		return APEX_ENOMEM;
	}
	memcpy(zj->origin, zc->origin, apex_name_size(zc->origin));
	pthread_mutex_init(&zj->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&zj->recorded_cond, &attr);
	pthread_condattr_destroy(&attr);
	open_journal(zj, path, js->size);
	js->zones[js->count++] = zj;
	return APEX_OK;
}

int apex_journals_update(apex_journals_t *js, const apex_config_t *cfg)
{
	char path[4096];
	int rc = APEX_OK;

	if (js->size == 0)
		return APEX_OK;
	pthread_rwlock_wrlock(&js->lock);
	for (size_t i = 0; i < cfg->zone_count && rc == APEX_OK; i++) {
		const apex_zone_config_t *zc = &cfg->zones[i];

		/* only a zone that may be transferred out needs its history */
		if (zc->provide_xfr_count == 0)
			continue;
		snprintf(path, sizeof(path), "%s.jnl", zc->file);
		apex_zone_journal_t *zj = entry_of(js, zc->origin);
		if (zj == NULL) {
			rc = add_entry(js, zc, path);
			continue;
		}
		pthread_mutex_lock(&zj->lock);
		if (zj->path == NULL || strcmp(zj->path, path) != 0)
			open_journal(zj, path, js->size); /* the zone's file changed */
		pthread_mutex_unlock(&zj->lock);
	}
	pthread_rwlock_unlock(&js->lock);
	return rc;
}

int apex_journals_init(apex_journals_t *js, const apex_config_t *cfg)
{
	memset(js, 0, sizeof(*js));
	pthread_rwlock_init(&js->lock, NULL);
	js->size = cfg->journal_size;
	return apex_journals_update(js, cfg);
}

void apex_journals_rebase(apex_journals_t *js,
			  const char *(*rebase)(const char *base, const char *path),
			  const char *base)
{
	pthread_rwlock_wrlock(&js->lock);
	for (size_t i = 0; i < js->count; i++) {
		char *path = js->zones[i]->path;
		const char *inside = path != NULL ? rebase(base, path) : NULL;

		if (inside != path)
			memmove(path, inside, strlen(inside) + 1);
	}
	pthread_rwlock_unlock(&js->lock);
}

void apex_journals_free(apex_journals_t *js)
{
	for (size_t i = 0; i < js->count; i++) {
		apex_zone_journal_t *zj = js->zones[i];
		if (zj->open)
			apex_journal_close(&zj->journal);
		pthread_mutex_destroy(&zj->lock);
		pthread_cond_destroy(&zj->recorded_cond);
		free(zj->name);
		free(zj->path);
		free(zj);
	}
	free(js->zones);
	pthread_rwlock_destroy(&js->lock);
	memset(js, 0, sizeof(*js));
}

/* The entry of origin, or NULL; it stays valid (the table only grows).
 * Its journal may be closed: look at zj->open under zj->lock. */
static apex_zone_journal_t *find(apex_journals_t *js, const uint8_t *origin)
{
	pthread_rwlock_rdlock(&js->lock);
	apex_zone_journal_t *zj = entry_of(js, origin);
	pthread_rwlock_unlock(&js->lock);
	return zj;
}

/* Under zj's lock: an append of the change from serial from to serial
 * to failed with rc (err: the file and why), logged once until the
 * journal is written again. */
static void append_failed(apex_zone_journal_t *zj, uint32_t from, uint32_t to, int rc,
			  const char *err)
{
	if (!apexd_write_failed(zj->path, rc)) {
		apex_debug("zone %s: journal: %s (serial %u to %u)", zj->name, err, from, to);
		return;
	}
	apex_warning("zone %s: journal: %s; the change from serial %u to %u is not recorded: "
		     "an IXFR from an older serial gets the whole zone, and the journal starts "
		     "again with the next change it can record (not logged again until then)",
		     zj->name, err, from, to);
}

/* Under zj's lock: the change from serial from to serial to, of bytes
 * (0: more than the journal takes, not counted to the end), passed the
 * journal's bound, which emptied it (apex_journal_begin()); said so. */
static void too_large(apex_zone_journal_t *zj, uint32_t from, uint32_t to, size_t bytes)
{
	char size[64];

	if (bytes > 0)
		snprintf(size, sizeof(size), "%zu bytes", bytes);
	else
		snprintf(size, sizeof(size), "more than %llu bytes",
			 (unsigned long long)apex_journal_payload_max(&zj->journal));
	apex_info("zone %s: journal: the change from serial %u to %u (%s) is larger than "
		  "journal-size allows: the journal is emptied, and an IXFR from an older serial "
		  "gets the whole zone",
		  zj->name, from, to, size);
}

/* Under zj's lock: what an append of the change from serial from to
 * serial to came to (rc, err), told; false when it failed (a full disk:
 * the journal as it was, its file cut back to its last whole entry). */
static bool appended(apex_zone_journal_t *zj, uint32_t from, uint32_t to, int rc, const char *err,
		     size_t bytes, size_t removed, size_t added)
{
	if (rc == APEX_ESPACE) {
		too_large(zj, from, to, bytes);
		return true; /* the sets after it chain on the empty journal */
	}
	if (rc < 0) {
		append_failed(zj, from, to, rc, err);
		return false;
	}
	if (apexd_write_worked(zj->path))
		apex_info("zone %s: writing the journal %s works again: its history starts again "
			  "at serial %u",
			  zj->name, zj->path,
			  zj->journal.count > 0 ? zj->journal.entries[0].serial_from : to);
	apex_info("zone %s: journal: serial %u to %u, %zu removed, %zu added", zj->name, from, to,
		  removed, added);
	return true;
}

/* Under zj's lock: a history the change from serial from does not chain
 * on, cleared. */
static int chain_from(apex_zone_journal_t *zj, uint32_t from, char *err, size_t err_size)
{
	uint32_t last;

	if (!apex_journal_last_serial(&zj->journal, &last) || last == from)
		return APEX_OK;
	return apex_journal_clear(&zj->journal, err, err_size);
}

/* Under zj's lock: append the change set, clearing first a history it
 * does not chain on; false when it failed (appended()).  Written through
 * the journal's writer rather than apex_journal_append(), which takes a
 * set past the bound (APEX_ESPACE here, the journal emptied) for done. */
static bool append(apex_zone_journal_t *zj, const apex_changes_t *set)
{
	char err[512] = "";
	apex_journal_writer_t w;
	int rc = chain_from(zj, set->serial_from, err, sizeof(err));

	if (rc == APEX_OK)
		rc = apex_journal_begin(&zj->journal, set->serial_from, set->serial_to, set->size,
					&w, err, sizeof(err));
	if (rc == APEX_OK)
		rc = apex_journal_write(&w, set->data, set->size, err, sizeof(err));
	if (rc == APEX_OK)
		rc = apex_journal_commit(&w, err, sizeof(err));
	return appended(zj, set->serial_from, set->serial_to, rc, err, set->size, set->removed,
			set->added);
}

/* Under zj's lock: the difference from old to version appended, written
 * in pieces where version is derived from old (xfr/journal_diff.h). */
static void append_difference(apex_zone_journal_t *zj, const apex_zone_t *old,
			      const apex_zone_t *version)
{
	char err[512] = "";
	size_t removed = 0, added = 0;
	int rc = chain_from(zj, old->serial, err, sizeof(err));

	if (rc == APEX_OK)
		rc = apex_journal_append_diff(&zj->journal, old, version, &removed, &added, err,
					      sizeof(err));
	appended(zj, old->serial, version->serial, rc, err, 0, removed, added);
}

/* sets[0..count) lead from serial `from` to serial `to`, one after the other. */
static bool sets_lead(const apex_changes_t *sets, size_t count, uint32_t from, uint32_t to)
{
	for (size_t i = 0; i < count; i++) {
		if (!apex_changes_complete(&sets[i]) || sets[i].serial_from != from)
			return false;
		from = sets[i].serial_to;
	}
	return count > 0 && from == to;
}

/* Under zj's lock: version's record is over, whatever became of it; an
 * IXFR waiting for it goes on (reader_changes()). */
static void recorded(apex_zone_journal_t *zj, const apex_zone_t *version)
{
	zj->has_recorded = true;
	zj->recorded = version->serial;
	pthread_cond_broadcast(&zj->recorded_cond);
}

void apex_journals_record(apex_journals_t *js, const apex_zone_t *old, const apex_zone_t *version,
			  const apex_changes_t *sets, size_t count)
{
	apex_zone_journal_t *zj = find(js, version->origin);
	char err[512];
	uint32_t last;

	if (zj == NULL)
		return;
	pthread_mutex_lock(&zj->lock);
	if (!zj->open) {
		recorded(zj, version);
		pthread_mutex_unlock(&zj->lock);
		return;
	}
	if (old == NULL && apex_journal_last_serial(&zj->journal, &last) &&
	    last == version->serial) {
		/* a first load at the serial the journal ends at: its history
		 * stays, as at start-up */
		recorded(zj, version);
		pthread_mutex_unlock(&zj->lock);
		return;
	}
	if (old == NULL || !apex_serial_newer(version->serial, old->serial)) {
		/* no history to the new version (a first load, a serial not newer) */
		if (apex_journal_clear(&zj->journal, err, sizeof(err)) < 0)
			apex_warning("zone %s: journal: %s", zj->name, err);
		recorded(zj, version);
		pthread_mutex_unlock(&zj->lock);
		return;
	}
	if (sets_lead(sets, count, old->serial, version->serial)) {
		for (size_t i = 0; i < count; i++)
			if (!append(zj, &sets[i]))
				break; /* the next sets would not chain on the journal */
		recorded(zj, version);
		pthread_mutex_unlock(&zj->lock);
		return;
	}
	append_difference(zj, old, version);
	recorded(zj, version);
	pthread_mutex_unlock(&zj->lock);
}

bool apex_journals_chains(apex_journals_t *js, const uint8_t *origin, uint32_t serial,
			  uint64_t bytes)
{
	apex_zone_journal_t *zj = find(js, origin);
	size_t first;
	bool chains = false;

	if (zj == NULL)
		return false;
	pthread_mutex_lock(&zj->lock);
	/* an entry starts at serial, or the journal ends there (the next
	 * append starts there), and the appends keep that entry */
	if (zj->open && apex_journal_find(&zj->journal, serial, &first) == APEX_OK)
		chains = (bytes == 0 && first < zj->journal.count) ||
			 (bytes > 0 && apex_journal_dropped_by(&zj->journal, bytes) <= first);
	pthread_mutex_unlock(&zj->lock);
	return chains;
}

int apex_journals_replay_sets(apex_journals_t *js, const uint8_t *origin, uint32_t serial,
			      apex_replay_rule_t rule, apex_changes_t **sets, size_t *count,
			      char *err, size_t err_size)
{
	apex_zone_journal_t *zj = find(js, origin);
	int rc = APEX_OK;

	*sets = NULL;
	*count = 0;
	if (zj == NULL)
		return APEX_OK;
	pthread_mutex_lock(&zj->lock);
	if (zj->open)
		rc = apex_journal_replay_sets(&zj->journal, serial, rule, sets, count, err,
					      err_size);
	pthread_mutex_unlock(&zj->lock);
	return rc;
}

/* The change sets an IXFR reads, copied out of the journal. */
typedef struct sets {
	size_t count;
	uint8_t **data;
	size_t *sizes;
} sets_t;

static void sets_free(sets_t *s)
{
	for (size_t i = 0; s != NULL && i < s->count; i++)
		free(s->data[i]);
	if (s != NULL) {
		free(s->data);
		free(s->sizes);
		free(s);
	}
}

/* Under zj's lock: entries first.. of the journal copied into s. */
static bool read_sets(apex_zone_journal_t *zj, size_t first, sets_t *s)
{
	size_t n = zj->journal.count - first;

	s->data = calloc(n, sizeof(*s->data));
	s->sizes = calloc(n, sizeof(*s->sizes));
	if (s->data == NULL || s->sizes == NULL)
		return false;
	for (size_t i = 0; i < n; i++) {
		const apex_journal_entry_t *e = &zj->journal.entries[first + i];

		s->data[i] = malloc(e->size ? e->size : 1);
		if (s->data[i] == NULL)
			return false;
		s->count = i + 1;
		s->sizes[i] = e->size;
		if (apex_journal_read(&zj->journal, first + i, s->data[i], e->size) < 0)
			return false;
	}
	return true;
}

/* More than one set: condensed into one (xfr/condense.h), which is never
 * longer and spares the secondary the versions in between.  Left as they
 * are if that fails (the sequence is as good an answer). */
static void condense_sets(sets_t *s)
{
	apex_changes_t *views = calloc(s->count, sizeof(*views)), one;

	if (views == NULL)
		return;
	for (size_t i = 0; i < s->count; i++) {
		views[i].data = s->data[i];
		views[i].size = s->sizes[i];
	}
	if (apex_changes_condense(views, s->count, &one) == APEX_OK) {
		for (size_t i = 0; i < s->count; i++)
			free(s->data[i]);
		s->data[0] = one.data; /* the set's buffer, now ours */
		s->sizes[0] = one.size;
		s->count = 1;
	}
	free(views);
}

/* Under zj's lock: whether the version of serial `to` may still be on
 * its way into the journal (published, its record not over yet): neither
 * it nor a newer version recorded, the journal ending before it. */
static bool record_pending(const apex_zone_journal_t *zj, uint32_t to)
{
	uint32_t last;

	if (!zj->open || (zj->has_recorded && !apex_serial_newer(to, zj->recorded)))
		return false; /* recorded, or a newer version was */
	return !apex_journal_last_serial(&zj->journal, &last) || apex_serial_newer(to, last);
}

/* Under zj's lock: wait (APEX_JOURNAL_RECORD_WAIT_MS at most, journals.h)
 * until the version of serial `to`, published, is recorded; a version
 * that is not by then counts as recorded, so no other IXFR waits for it. */
static void wait_recorded(apex_zone_journal_t *zj, uint32_t to)
{
	struct timespec until;

	if (!record_pending(zj, to))
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += APEX_JOURNAL_RECORD_WAIT_MS / 1000;
	until.tv_nsec += (long)(APEX_JOURNAL_RECORD_WAIT_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (record_pending(zj, to))
		if (pthread_cond_timedwait(&zj->recorded_cond, &zj->lock, &until) == ETIMEDOUT) {
			if (record_pending(zj, to)) {
				apex_info("zone %s: journal: serial %u not recorded within %d ms; "
					  "IXFR answered without it",
					  zj->name, to, APEX_JOURNAL_RECORD_WAIT_MS);
				zj->has_recorded = true;
				zj->recorded = to;
			}
			break;
		}
}

static void reader_changes(void *ctx, const uint8_t *zone, uint32_t from, uint32_t to,
			   const uint8_t *const **sets, const size_t **sizes, size_t *count,
			   void **sets_ctx)
{
	apex_zone_journal_t *zj = find(ctx, zone);
	sets_t *s = calloc(1, sizeof(*s));
	uint32_t last;
	size_t first;
	bool ok = false;

	*count = 0;
	*sets_ctx = s;
	if (zj == NULL || s == NULL)
		return;
	pthread_mutex_lock(&zj->lock);
	wait_recorded(zj, to);
	if (zj->open && apex_journal_last_serial(&zj->journal, &last) && last == to &&
	    apex_journal_find(&zj->journal, from, &first) == APEX_OK && first < zj->journal.count)
		ok = read_sets(zj, first, s);
	pthread_mutex_unlock(&zj->lock);
	if (!ok)
		return;
	if (s->count > 1)
		condense_sets(s);
	*sets = (const uint8_t *const *)s->data;
	*sizes = s->sizes;
	*count = s->count;
}

static void reader_release(void *ctx, void *sets_ctx)
{
	(void)ctx;
	sets_free(sets_ctx);
}

const apex_xfr_serve_journal_t apex_journals_reader_template = {
	NULL,
	reader_changes,
	reader_release,
};
