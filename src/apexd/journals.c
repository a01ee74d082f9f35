/* SPDX-License-Identifier: BSD-3-Clause */
/* The journals of the served zones (journals.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "journals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/serial.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/condense.h"
#include "xfr/diff.h"

int apex_journals_init(apex_journals_t *js, const apex_config_t *cfg)
{
	char err[512], path[4096];

	memset(js, 0, sizeof(*js));
	if (cfg->journal_size == 0 || cfg->zone_count == 0)
		return APEX_OK;
	js->zones = calloc(cfg->zone_count, sizeof(*js->zones));
	if (js->zones == NULL)
		return APEX_ENOMEM;
	js->count = cfg->zone_count;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const apex_zone_config_t *zc = &cfg->zones[i];
		apex_zone_journal_t *zj = &js->zones[i];
		apex_journal_recovery_t rec;

		/* only a zone that may be transferred out needs its history */
		if (zc->provide_xfr_count == 0)
			continue;
		memcpy(zj->origin, zc->origin, apex_name_size(zc->origin));
		zj->name = strdup(zc->name);
		pthread_mutex_init(&zj->lock, NULL);
		if (zj->name == NULL)
			return APEX_ENOMEM;
		snprintf(path, sizeof(path), "%s.jnl", zc->file);
		if (apex_journal_open(&zj->journal, path, zc->origin, cfg->journal_size, false,
				      &rec, err, sizeof(err)) < 0) {
			apex_warning("zone %s: no journal (IXFR answered with the whole zone): %s",
				     zc->name, err);
			continue;
		}
		zj->open = true;
		if (rec.dropped_bytes > 0)
			apex_warning("zone %s: journal %s: %llu damaged bytes at its end dropped",
				     zc->name, path, (unsigned long long)rec.dropped_bytes);
	}
	return APEX_OK;
}

void apex_journals_free(apex_journals_t *js)
{
	for (size_t i = 0; i < js->count; i++) {
		if (js->zones[i].open)
			apex_journal_close(&js->zones[i].journal);
		if (js->zones[i].name != NULL)
			pthread_mutex_destroy(&js->zones[i].lock);
		free(js->zones[i].name);
	}
	free(js->zones);
	memset(js, 0, sizeof(*js));
}

static apex_zone_journal_t *find(apex_journals_t *js, const uint8_t *origin)
{
	for (size_t i = 0; i < js->count; i++) {
		if (js->zones[i].open && apex_name_equal(js->zones[i].origin, origin))
			return &js->zones[i];
	}
	return NULL;
}

/* Under zj's lock: append the change set, or clear the history it breaks. */
static void append(apex_zone_journal_t *zj, const apex_changes_t *set)
{
	char err[512];
	uint32_t last;
	bool chained = !apex_journal_last_serial(&zj->journal, &last) || last == set->serial_from;

	if (!chained && apex_journal_clear(&zj->journal, err, sizeof(err)) < 0)
		apex_warning("zone %s: journal: %s", zj->name, err);
	if (apex_journal_append(&zj->journal, set->serial_from, set->serial_to, set->data,
				set->size, err, sizeof(err)) < 0) {
		apex_warning("zone %s: journal: %s; its history is cleared", zj->name, err);
		if (apex_journal_clear(&zj->journal, err, sizeof(err)) < 0)
			apex_warning("zone %s: journal: %s", zj->name, err);
		return;
	}
	apex_info("zone %s: journal: serial %u to %u, %zu removed, %zu added", zj->name,
		  set->serial_from, set->serial_to, set->removed, set->added);
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

void apex_journals_record(apex_journals_t *js, const apex_zone_t *old, const apex_zone_t *version,
			  const apex_changes_t *sets, size_t count)
{
	apex_zone_journal_t *zj = find(js, version->origin);
	apex_changes_t set;
	char err[512];

	if (zj == NULL)
		return;
	pthread_mutex_lock(&zj->lock);
	if (old == NULL || !apex_serial_newer(version->serial, old->serial)) {
		/* no history to the new version (a first load, a serial not newer) */
		if (apex_journal_clear(&zj->journal, err, sizeof(err)) < 0)
			apex_warning("zone %s: journal: %s", zj->name, err);
		pthread_mutex_unlock(&zj->lock);
		return;
	}
	if (sets_lead(sets, count, old->serial, version->serial)) {
		for (size_t i = 0; i < count; i++)
			append(zj, &sets[i]);
		pthread_mutex_unlock(&zj->lock);
		return;
	}
	apex_changes_init(&set);
	if (apex_xfr_diff(old, version, &set) == APEX_OK)
		append(zj, &set);
	else
		apex_warning("zone %s: journal: the difference could not be computed", zj->name);
	apex_changes_free(&set);
	pthread_mutex_unlock(&zj->lock);
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
	if (apex_journal_last_serial(&zj->journal, &last) && last == to &&
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
