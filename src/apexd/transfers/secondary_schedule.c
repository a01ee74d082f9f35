/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The scheduler's passes over the secondary zones (secondary_internal.h).
 *
 * A whole pass reads every zone; with thousands (a catalog's members
 * transferred at start, xfr-in-max at a time) one at each refresh that
 * ends cost more than the transfers' own CPU.  So a wake-up by the end of
 * refreshes alone resumes handing out the zones due from where the last
 * pass stopped, and a whole pass is made only when something else may
 * have changed: a NOTIFY or apexctl refresh (s->recheck, asked again
 * while the zone it is for is still busy with a refresh), settings or a
 * reloader's removals, the time the last pass found, or a time a refresh
 * that ended left earlier than that (s->ended_min: a retry, an expiry, a
 * copy due).
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include <stdint.h>

#include "transfers/secondary.h"
#include "transfers/secondary_internal.h"
#include "transfers/refresh_pool.h"
#include "util/clock.h"
#include "util/log.h"
#include "zones/reload.h"

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
 * or removed it and added it again: then the new settings make it anew).
 * Asked of every zone, once, after the reloader took zones out. */
static bool configured(apex_secondary_t *s, const apex_secondary_zone_t *z)
{
	return s->reloader == NULL || apex_reloader_has_id(s->reloader, z->reloader_id);
}

/*
 * A whole pass over the zones at now: hand the zones whose time has come
 * to the pool (while it takes them: held when a reconfiguration waits;
 * the first it refused is where the next pass resumes), expire those past
 * their expiry, and return when to look again at the latest.  removals:
 * the reloader's count now (each zone is checked against the reloader
 * only when it took zones out since the last pass).
 */
static uint64_t whole_pass(apex_secondary_t *s, uint64_t now, bool hold, unsigned long removals)
{
	uint64_t next = now + 3600 * 1000;
	size_t max = s->applied->cfg->xfr_in_max;
	bool verify = s->removals_seen != removals;

	s->resume_at = SIZE_MAX;

	for (size_t i = 0; i < s->count; i++) {
		apex_secondary_zone_t *z = &s->zones[i];

		if (verify && !z->gone && !configured(s, z)) {
			z->gone = true; /* removed: left alone */
			z->expire_at = 0;
		}
		if (z->gone)
			continue;
		if (atomic_load(&z->busy)) {
			/* A refresh wakes the scheduler when it ends; a NOTIFY
			 * that came meanwhile (this pass the one it asked for)
			 * is for the pass after it: that one is whole, and
			 * finds the zone no longer busy.  The refresh under way
			 * may have asked before the primary had what the
			 * NOTIFY says. */
			if (atomic_load_explicit(&z->notified, memory_order_relaxed))
				atomic_store(&s->recheck, true);
			continue;
		}
		/* read before the exchange: a pass writes no line of a zone
		 * that was not notified */
		if (atomic_load_explicit(&z->notified, memory_order_relaxed) &&
		    atomic_exchange(&z->notified, false))
			z->next_check = now;
		check_expiry(s, z, now);
		if (z->next_check <= now && !hold) {
			atomic_store(&z->busy, true);
			if (apex_refresh_pool_run(&s->pool, z, max))
				continue;
			atomic_store(&z->busy, false);
			/* xfr-in-max in flight: the others due wait for the pass
			 * after the next refresh ends, without trying; it
			 * resumes here */
			hold = true;
			s->resume_at = i;
			if (apex_refresh_pool_in_flight(&s->pool) == 0 && now + 1000 < next)
				next = now + 1000; /* no thread could start: try again */
		}
		if (z->next_check > now && z->next_check < next)
			next = z->next_check;
		if (z->expire_at != 0 && z->expire_at < next)
			next = z->expire_at;
	}
	s->removals_seen = removals;
	return next;
}

/* Hand out the zones due from where the last pass stopped, until the
 * pool takes no more (there the next resumes) or the zones end. */
static void resume(apex_secondary_t *s, uint64_t now)
{
	size_t max = s->applied->cfg->xfr_in_max;

	for (size_t i = s->resume_at; i < s->count; i++) {
		apex_secondary_zone_t *z = &s->zones[i];

		if (z->gone || atomic_load(&z->busy) || z->next_check > now)
			continue;
		atomic_store(&z->busy, true);
		if (apex_refresh_pool_run(&s->pool, z, max))
			continue;
		atomic_store(&z->busy, false);
		s->resume_at = i;
		if (apex_refresh_pool_in_flight(&s->pool) == 0 && now + 1000 < s->pass_next)
			s->pass_next = now + 1000; /* no thread could start: a whole pass then */
		return;
	}
	s->resume_at = SIZE_MAX;
}

uint64_t apex_secondary_schedule(apex_secondary_t *s, uint64_t now, bool hold, bool whole)
{
	unsigned long removals = s->reloader != NULL ? apex_reloader_removals(s->reloader) : 0;

	whole = whole || hold || atomic_exchange(&s->recheck, false) ||
		removals != s->removals_seen || now >= s->pass_next ||
		atomic_load(&s->ended_min) <= now;
	if (!whole) {
		if (s->resume_at != SIZE_MAX)
			resume(s, now);
		uint64_t ended = atomic_load(&s->ended_min);
		return ended < s->pass_next ? ended : s->pass_next;
	}
	/* kept: a refresh that told its times may not have let go of its
	 * zone yet (the pass leaves a busy zone alone) */
	uint64_t ended = atomic_exchange(&s->ended_min, UINT64_MAX);
	uint64_t next = whole_pass(s, now, hold, removals);
	next = apex_secondary_flush_due(s, apex_monotonic_ms(), next);
	s->pass_next = ended < next ? ended : next;
	return s->pass_next;
}

void apex_secondary_schedule_ended(apex_secondary_t *s, const apex_secondary_zone_t *z)
{
	uint64_t at = z->next_check, cur = atomic_load(&s->ended_min);

	if (z->expire_at != 0 && z->expire_at < at)
		at = z->expire_at;
	if (z->copy_due != 0 && z->copy_due < at)
		at = z->copy_due;
	while (at < cur && !atomic_compare_exchange_weak(&s->ended_min, &cur, at))
		;
}
