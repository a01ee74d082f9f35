/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A secondary zone's copy on disk after an IXFR (secondary_internal.h):
 * left to lag the version served while the zone's journal holds the sets
 * from the copy's serial on, and written whole from the version served
 * when copy-flush-interval has passed, at stop, before the journal would
 * drop the sets the copy needs, and at once when no journal holds them.
 * A crash while the copy lags loses nothing: at start the journal is
 * replayed over the copy (journal_replay.h).
 *
 * The copy of a small zone received whole (a catalog's member) waits in
 * a batch to be synced with others (xfr/zone_copy_batch.h): a crash
 * before loses it, and the next start asks the primary again.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "transfers/copies.h"
#include "transfers/secondary.h"
#include "transfers/secondary_internal.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/zone_copy_batch.h"

/* A copy of the batch settled: logged as any other (copies.h). */
static void copy_settled(void *arg, const char *name, const char *path, uint32_t serial, int rc,
			 const char *err)
{
	(void)arg;
	apexd_copy_written(name, path, serial, rc, err);
}

/* A test hook's value in milliseconds into *ms, with the warning that
 * says it is set (name=MS, then what); *ms untouched when it is not. */
static void test_hook_ms(const char *name, const char *what, uint64_t *ms)
{
	const char *value = getenv(name);

	if (value == NULL || value[0] == '\0')
		return;
	*ms = strtoull(value, NULL, 10);
	apex_warning("%s=%llu: a test hook; %s", name, (unsigned long long)*ms, what);
}

int apex_secondary_copies_init(apex_secondary_t *s)
{
	uint64_t ms = APEX_SECONDARY_COPY_BATCH_MS, copy_pause = 0, compact_pause = 0,
		 last_pause = 0;

	/* copies that wait longer, so that a test sees them settled at
	 * stop rather than when due */
	test_hook_ms("APEX_TEST_COPY_BATCH_MS",
		     "the copies of small zones received whole wait that long to be synced", &ms);
	test_hook_ms("APEX_TEST_COPY_GIVE_WAY_MS",
		     "a copy written after copy-flush-interval pauses that long each time it "
		     "asks whether to give way to a transfer",
		     &copy_pause);
	test_hook_ms("APEX_TEST_COMPACT_GIVE_WAY_MS",
		     "a secondary zone's compaction pauses that long before it first asks "
		     "whether to give way to a NOTIFY",
		     &compact_pause);
	test_hook_ms("APEX_TEST_COMPACT_LAST_GIVE_WAY_MS",
		     "a secondary zone's compaction in parts pauses that long after its last "
		     "part, before it asks whether to give way ahead of its last step",
		     &last_pause);
	s->copy_give_way_pause_ms = (unsigned)copy_pause;
	s->compact_give_way_pause_ms = (unsigned)compact_pause;
	s->compact_last_give_way_pause_ms = (unsigned)last_pause;
	s->copies = apex_zone_copy_batch_new(APEX_SECONDARY_COPY_BATCH, ms, copy_settled, NULL);
	return s->copies != NULL ? APEX_OK : APEX_ENOMEM;
}

void apex_secondary_commit_copy(apex_secondary_t *s, apex_secondary_zone_t *z,
				apex_zone_copy_t *copy, const apex_zone_t *version)
{
	char err[512];
	int rc;

	(void)apex_zone_copy_version(copy, version); /* a failure is the commit's */
	if (s->copies != NULL && version->memory < APEX_SECONDARY_COPY_BATCH_BYTES) {
		apex_zone_copy_batch_add(s->copies, copy, z->name, version->serial,
					 apex_monotonic_ms());
		return;
	}
	rc = apex_zone_copy_commit(copy, err, sizeof(err));
	apexd_copy_written(z->name, z->file, version->serial, rc, err);
}

void apex_secondary_copy_settle(apex_secondary_t *s, const apex_secondary_zone_t *z)
{
	if (s->copies != NULL && z->file != NULL)
		apex_zone_copy_batch_settle(s->copies, z->file);
}

void apex_secondary_drop_copy(apex_secondary_t *s, const char *file)
{
	if (s->copies != NULL && apex_zone_copy_batch_drop(s->copies, file) > 0)
		apex_debug("%s: the copy waiting to be synced is dropped: its zone is gone", file);
}

/* What a copy written on the scheduler gives way to: a NOTIFY taken or
 * a refresh asked for since it began (s->asked moved). */
typedef struct give_way {
	apex_secondary_t *s;
	uint64_t asked; /* s->asked when the copy began */
} give_way_t;

static bool asked_since(void *ctx)
{
	const give_way_t *g = ctx;

	if (g->s->copy_give_way_pause_ms != 0) /* a test's hook */
		usleep(g->s->copy_give_way_pause_ms * 1000u);
	return atomic_load_explicit(&g->s->asked, memory_order_relaxed) != g->asked;
}

/* apex_secondary_flush_copy(), giving way as g says (NULL: never): then
 * APEX_ECANCELED and the copy still due. */
static int flush_copy(apex_secondary_t *s, apex_secondary_zone_t *z, const apex_zone_t *version,
		      const char *why, give_way_t *g)
{
	char header[300];
	uint64_t due = z->copy_due;

	apex_secondary_copy_settle(s, z);
	z->copy_due = 0;
	snprintf(header, sizeof(header), "zone %s, serial %u, written %s", z->name, version->serial,
		 why);
	apex_debug("zone %s: writing the copy %s at serial %u (%s)", z->name, z->file,
		   version->serial, why);
	/* logged there */
	int rc = apexd_copy_write_or_give_way(z->name, z->file, version, header,
					      g != NULL ? asked_since : NULL, g);
	if (rc == APEX_ECANCELED)
		z->copy_due = due;
	return rc;
}

void apex_secondary_flush_copy(apex_secondary_t *s, apex_secondary_zone_t *z,
			       const apex_zone_t *version, const char *why)
{
	(void)flush_copy(s, z, version, why, NULL);
}

/* Flush z's copy from the version served now, if it lags (g as
 * flush_copy()'s). */
static int flush_served(apex_secondary_t *s, apex_secondary_zone_t *z, const char *why,
			give_way_t *g)
{
	apex_zone_t *zone;

	if (z->copy_due == 0)
		return APEX_OK;
	zone = apex_server_served_version(s->server, z->origin);
	if (zone == NULL) {
		z->copy_due = 0; /* nothing served any more: nothing to write */
		return APEX_OK;
	}
	int rc = flush_copy(s, z, zone, why, g);
	apex_zone_unref(zone);
	return rc;
}

/* Whether the journal holds z's sets from serial on, with bytes more. */
static bool journal_chains(apex_secondary_t *s, const apex_secondary_zone_t *z, uint32_t serial,
			   uint64_t bytes)
{
	return s->journal_chains != NULL &&
	       s->journal_chains(s->published_arg, z->origin, serial, bytes);
}

void apex_secondary_copy_before_journal(apex_secondary_t *s, apex_secondary_zone_t *z,
					const apex_zone_t *old, uint64_t bytes)
{
	if (z->copy_due != 0 && !journal_chains(s, z, z->copy_serial, bytes))
		apex_secondary_flush_copy(s, z, old,
					  "before the journal drops the changes it lacks");
}

void apex_secondary_copy_after_ixfr(apex_secondary_t *s, apex_secondary_zone_t *z,
				    const apex_zone_t *version, uint32_t old_serial)
{
	unsigned interval = s->applied->cfg->copy_flush_interval;

	if (z->copy_due == 0)
		z->copy_serial = old_serial; /* the copy was up to date until now */
	if (interval == 0 || !journal_chains(s, z, z->copy_serial, 0)) {
		apex_secondary_flush_copy(s, z, version, "after the transfer");
		return;
	}
	if (z->copy_due == 0)
		z->copy_due = apex_monotonic_ms() + (uint64_t)interval * 1000;
}

uint64_t apex_secondary_flush_due(apex_secondary_t *s, uint64_t now, uint64_t next)
{
	for (size_t i = 0; i < s->count; i++) {
		apex_secondary_zone_t *z = &s->zones[i];

		if (atomic_load(&z->busy))
			continue; /* its refresh writes the copy, or looks again after */
		/* a copy of 1M records is about a second of this thread: a
		 * NOTIFY that comes meanwhile is not kept waiting for it */
		if (z->copy_due != 0 && z->copy_due <= now) {
			give_way_t g = { s, atomic_load(&s->asked) };
			if (flush_served(s, z, "after copy-flush-interval", &g) == APEX_ECANCELED)
				return now;
			now = apex_monotonic_ms();
		}
		if (z->copy_due != 0 && z->copy_due < next)
			next = z->copy_due;
	}
	return next;
}

uint64_t apex_secondary_copies_due(apex_secondary_t *s, uint64_t now, uint64_t next)
{
	uint64_t due = s->copies != NULL ? apex_zone_copy_batch_due(s->copies) : 0;

	if (due != 0 && due <= now) {
		apex_zone_copy_batch_settle(s->copies, NULL);
		due = 0;
	}
	return due != 0 && due < next ? due : next;
}

void apex_secondary_flush_all(apex_secondary_t *s, apex_secondary_zone_t *zones, size_t count,
			      const char *why)
{
	for (size_t i = 0; i < count; i++)
		(void)flush_served(s, &zones[i], why, NULL);
	if (s->copies != NULL)
		apex_zone_copy_batch_settle(s->copies, NULL);
}
