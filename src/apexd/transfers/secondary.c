/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Secondary zones kept up to date from their primaries (secondary.h): the
 * transfer thread and its schedule (refresh, retry, expiry), and what the
 * other threads call: NOTIFY from the workers, apexctl's refresh and
 * reports.  The set of zones is in secondary_zones.c, one transfer in
 * secondary_transfer.c.
 */
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

#include "dns/serial.h"
#include "dns/wire.h"
#include "transfers/secondary_internal.h"
#include "zones/reload.h"
#include "process/memory.h"
#include "process/thread_priority.h"
#include "serve/worker.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/notify_in.h"
#include "xfr/xfr_client.h"
#include "xfr/zone_copy_batch.h"
#include "zone/index_block.h"

static void refresh_handed(void *arg, void *item);
static void refresh_ended(void *arg, void *item);

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
	apex_refresh_pool_init(&s->pool, refresh_handed, refresh_ended, apex_secondary_rest, s,
			       s->applied->cfg->reload_idle, (int)s->applied->cfg->reload_nice);
	int rc = apex_secondary_make_zones(s->applied->cfg, &s->zones, &s->count);
	if (rc < 0)
		return rc;
	/* client certificates read while privileged */
	if ((rc = apex_tls_clients_build(&s->tls_clients, s->applied->cfg)) < 0)
		return rc;
	s->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->notify_fd < 0 || s->stop_fd < 0)
		return apex_errno();
	return apex_secondary_copies_init(s);
}

void apex_secondary_free(apex_secondary_t *s)
{
	apex_zone_copy_batch_free(s->copies); /* what waits, settled */
	free(s->zones);                       /* they own nothing: their names are the config's */
	apex_refresh_pool_free(&s->pool);
	apex_tls_clients_free(&s->tls_clients);
	apex_settings_put(s->applied);
	if (s->notify_fd >= 0)
		close(s->notify_fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	pthread_rwlock_destroy(&s->zones_lock);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
}

void apex_secondary_settings_changed(apex_secondary_t *s)
{
	uint64_t one = 1;

	atomic_store(&s->recheck, true);
	if (write(s->notify_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		apex_warning("secondary zones: notify eventfd: %s", strerror(errno));
}

int apex_secondary_refresh(apex_secondary_t *s, const uint8_t *origin, bool full)
{
	uint64_t one = 1;

	pthread_rwlock_rdlock(&s->zones_lock);
	apex_secondary_zone_t *z = apex_secondary_find_zone(s, origin);
	if (z != NULL) {
		if (full)
			atomic_store(&z->force, true);
		atomic_store(&z->notified, true);
	}
	pthread_rwlock_unlock(&s->zones_lock);
	if (z == NULL)
		return APEX_ENOENT;
	atomic_fetch_add(&s->asked, 1);
	atomic_store(&s->recheck, true);
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
	apex_secondary_zone_t *z = apex_secondary_find_zone(s, origin);
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

void apex_secondary_totals(apex_secondary_t *s, apex_secondary_totals_t *out)
{
	*out = (apex_secondary_totals_t){ .notifies_dropped = atomic_load(&s->notifies_dropped) };
	pthread_rwlock_rdlock(&s->zones_lock);
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->count; i++) {
		const apex_secondary_status_t *st = &s->zones[i].status;

		out->transfers += st->transfers;
		out->failures += st->failures;
		out->notifies_ahead += st->notifies_ahead;
		out->notifies_ahead_given_up += st->notifies_ahead_given_up;
	}
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < s->count; i++) {
		out->notifies_accepted += atomic_load(&s->zones[i].notifies_accepted);
		out->notifies_refused += atomic_load(&s->zones[i].notifies_refused);
	}
	pthread_rwlock_unlock(&s->zones_lock);
}

bool apex_secondary_has(apex_secondary_t *s, const uint8_t *origin)
{
	pthread_rwlock_rdlock(&s->zones_lock);
	bool has = apex_secondary_find_zone(s, origin) != NULL;
	pthread_rwlock_unlock(&s->zones_lock);
	return has;
}

/* ---------------------------------------------------------------- NOTIFY */

static const apex_acl_entry_t *zone_acl(void *ctx, const uint8_t *zone, size_t *count,
					void **ctx_zone)
{
	apex_secondary_zone_t *z = apex_secondary_find_zone(ctx, zone);

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

	/* A worker never waits for the transfer thread, which holds the write
	 * side while it swaps a reconfig's zones (secondary_zones.c) at its
	 * low priority: the NOTIFY is then dropped unanswered and counted, and
	 * the primary sends it again (RFC 1996 §3.6), finding the swap over. */
	if (pthread_rwlock_tryrdlock(&s->zones_lock) != 0) {
		atomic_fetch_add_explicit(&s->notifies_dropped, 1, memory_order_relaxed);
		return 0;
	}
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
		atomic_store(&z->notified_serial, res.has_serial ? (1ULL << 32) | res.serial : 0);
		atomic_store(&z->notified_us, apex_monotonic_us());
		atomic_store(&z->notified, true);
		atomic_fetch_add(&s->asked, 1);
		atomic_store(&s->recheck, true);
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

/* ---------------------------------------------------------------- refresh */

uint32_t apex_secondary_expire_granted(uint32_t soa_expire, int64_t option)
{
	return option >= 0 && option < (int64_t)soa_expire ? (uint32_t)option : soa_expire;
}

void apex_secondary_mark_expire(apex_zone_t *zone, uint32_t seconds)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	atomic_store_explicit(&zone->expire_at, (uint64_t)now.tv_sec + seconds,
			      memory_order_relaxed);
}

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

/*
 * Whether z should be transferred from e (force: whatever its serial):
 * whether its serial is newer than serial, asking it (SOA query) unless a
 * NOTIFY just said so (*hint: its serial with bit 32 set, taken
 * for the first primary only).  Then the IXFR asked goes out at once, and
 * its answer's own SOA decides: an IXFR answered by the SOA alone, or by a
 * serial not newer, changes nothing (secondary_transfer.c).  *failed: the
 * SOA query failed (err says why), false returned.  *expire: the SOA
 * answer's EDNS EXPIRE value, -1 when none (or no SOA query).
 */
static bool primary_newer(apex_secondary_t *s, apex_secondary_zone_t *z, const apex_acl_entry_t *e,
			  uint32_t serial, bool force, uint64_t *hint, bool *failed,
			  int64_t *expire, char *err, size_t err_size)
{
	apex_xfr_primary_t primary;
	apex_xfr_timeouts_t t;
	uint32_t theirs;

	*failed = false;
	*expire = -1;
	if (!force && (*hint >> 32) != 0 && apex_serial_newer((uint32_t)*hint, serial)) {
		apex_debug("zone %s: NOTIFY said serial %u: asking %s for it at once", z->name,
			   (uint32_t)*hint, e->text);
		*hint = 0;
		return true;
	}
	*hint = 0;
	apex_secondary_primary_of(s, e, &primary);
	apex_secondary_timeouts_of(s, &t);
	if (apex_xfr_client_soa(&primary, z->origin, &t, &theirs, expire, err, err_size) < 0) {
		*failed = true;
		return false;
	}
	if (!force && !apex_serial_newer(theirs, serial)) {
		apex_debug("zone %s: serial %u is current (%s has %u)", z->name, serial, e->text,
			   theirs);
		return false;
	}
	return true;
}

/*
 * After a successful check: z's copy is good for the SOA expire time
 * expire_s (0: for ever), or for what the answer's EDNS EXPIRE option gave
 * (expire_option, -1: none), counted from asked (CLOCK_MONOTONIC ms), when
 * the query that was answered went out, not from now: a transfer and its
 * publication take time, and a copy of a copy must not outlive the copy it
 * came from (RFC 7314 section 4).  The version served answers the option
 * with the time left.
 */
static void renew_expiry(apex_secondary_t *s, apex_secondary_zone_t *z, uint64_t asked,
			 uint64_t now, uint32_t expire_s, int64_t expire_option)
{
	apex_zone_t *served = apex_server_served_version(s->server, z->origin);
	uint32_t granted = apex_secondary_expire_granted(expire_s, expire_option);
	uint64_t until = asked + (uint64_t)granted * 1000;

	/* Another secondary's copy (an EXPIRE option) may have less time left
	 * than the one refreshed before: it never shortens ours. */
	if (expire_option >= 0 && z->expire_at > until)
		until = z->expire_at;
	z->expire_at = expire_s > 0 ? until : 0;
	if (served != NULL && expire_s > 0)
		apex_secondary_mark_expire(served,
					   until > now ? (uint32_t)((until - now) / 1000) : 0);
	apex_zone_unref(served);
}

/*
 * A refresh or retry interval of ms, taken up to a tenth shorter: the
 * zones loaded or transferred together at start-up would otherwise come
 * due together at every refresh, thousands in one storm.  Checking
 * earlier than the SOA says is always allowed (RFC 1035 section 4.3.5).
 */
static uint64_t spread(uint64_t ms)
{
	uint64_t noise = apex_monotonic_us() * 0x9E3779B97F4A7C15ULL;

	return ms - (noise >> 32) % (ms / 10 + 1);
}

/*
 * Whether z is to be checked again soon, at the SOA retry interval
 * (retry_s), rather than at the next refresh: a NOTIFY said a serial
 * (z->announced) that the check just made did not find.  A primary made of
 * several servers may answer from one that does not have it yet: NSD's
 * old server processes go on answering for a moment after its reload, the
 * one that sends the NOTIFY, and the servers of a distribution cluster
 * behind one address are updated one after another.  The refresh timer
 * (an hour or a day) would otherwise leave the change unserved, with
 * nothing more to come from the primary, whose NOTIFY was answered.
 * ANNOUNCED_RECHECKS checks at most: a primary that never serves what
 * its NOTIFY said is then left to the refresh timer.
 */
static bool announced_missing(apex_secondary_t *s, apex_secondary_zone_t *z, uint32_t retry_s)
{
	if (z->announced_left == 0)
		return false;

	apex_zone_t *served = apex_server_served_version(s->server, z->origin);
	bool found = served != NULL && !apex_serial_newer(z->announced, served->serial);
	uint32_t serial = served != NULL ? served->serial : 0;

	apex_zone_unref(served);
	if (found) {
		z->announced_left = 0;
		return false;
	}
	pthread_mutex_lock(&s->lock);
	if (z->announced_left == ANNOUNCED_RECHECKS + 1)
		z->status.notifies_ahead++; /* the check the NOTIFY asked for */
	if (z->announced_left == 1)
		z->status.notifies_ahead_given_up++;
	pthread_mutex_unlock(&s->lock);
	if (--z->announced_left == 0) {
		apex_warning("zone %s: a NOTIFY said serial %u, the primaries still serve %u after "
			     "%d checks: left to the refresh timer",
			     z->name, z->announced, serial, ANNOUNCED_RECHECKS + 1);
		return false;
	}
	apex_info("zone %s: a NOTIFY said serial %u, the primaries serve %u: checked again "
		  "in %u s (SOA retry), %d of %d",
		  z->name, z->announced, serial, retry_s > 0 ? retry_s : 60,
		  ANNOUNCED_RECHECKS + 1 - z->announced_left, ANNOUNCED_RECHECKS);
	return true;
}

/*
 * Check z with its primaries in order, transferring it when a primary has
 * a newer serial or nothing is served, and schedule the next check.
 */
static void refresh(apex_secondary_t *s, apex_secondary_zone_t *z)
{
	apex_zone_t *current = apex_server_served_version(s->server, z->origin);
	uint32_t refresh_s = 0, retry_s = 0, expire_s = 0, serial = 0;
	int64_t expire_option = -1; /* the EDNS EXPIRE of the answer that made ok */
	uint64_t asked = 0;         /* when the primary that made ok was asked (ms) */
	char err[512] = "no primary answered";
	bool ok = false, up_to_date = false, have_version = current != NULL;
	bool force = atomic_exchange(&z->force, false);
	uint64_t hint = atomic_exchange(&z->notified_serial, 0);

	z->check_notified_us = atomic_exchange(&z->notified_us, 0);
	z->check_began_us = apex_monotonic_us();

	if (have_version && atomic_load(&current->expired))
		force = true; /* an expired zone is transferred whole, whatever the serial */
	if (have_version) {
		serial = current->serial;
		soa_timers(current, &refresh_s, &retry_s, &expire_s);
		if ((hint >> 32) != 0 && apex_serial_newer((uint32_t)hint, serial)) {
			z->announced = (uint32_t)hint;
			/* this check, then ANNOUNCED_RECHECKS more */
			z->announced_left = ANNOUNCED_RECHECKS + 1;
		}
	}
	for (size_t i = 0; i < z->primary_count && !ok; i++) {
		const apex_acl_entry_t *e = &z->primaries[i];
		bool failed;

		asked = apex_monotonic_ms();
		if (have_version && !primary_newer(s, z, e, serial, force, &hint, &failed,
						   &expire_option, err, sizeof(err))) {
			if (failed) {
				apex_warning("zone %s: SOA query: %s", z->name, err);
				/* zone-status shows why no transfer came (as for a
				 * transfer that failed; not counted as one) */
				pthread_mutex_lock(&s->lock);
				snprintf(z->status.last_result, sizeof(z->status.last_result),
					 "failed: SOA query: %.218s", err);
				pthread_mutex_unlock(&s->lock);
				continue;
			}
			ok = up_to_date = true;
			break;
		}
		z->check_newer_us = apex_monotonic_us();
		/* current is dropped once a new version is published */
		int rc = apex_secondary_transfer_any(s, z, e,
						     have_version && !force ? current : NULL,
						     &current, err, sizeof(err));
		if (rc == APEX_OK) {
			apex_zone_t *now_served = apex_server_served_version(s->server, z->origin);

			ok = true;
			expire_option = z->expire_option;
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
			if (rc == APEX_EMEMLIMIT) {
				/* the zone's error too; another primary would be refused alike */
				if (s->reloader != NULL)
					apex_reloader_refused(s->reloader, z->reloader_id, err);
				break;
			}
		}
	}

	apex_zone_unref(current);
	if (up_to_date)
		apex_secondary_copy_again(s, z);
	pthread_mutex_lock(&s->lock);
	clock_gettime(CLOCK_REALTIME, &z->status.last_check);
	if (ok && !z->status.expired && have_version && z->status.last_result[0] == '\0')
		snprintf(z->status.last_result, sizeof(z->status.last_result),
			 "serial %u is current", serial);
	pthread_mutex_unlock(&s->lock);
	uint64_t now = apex_monotonic_ms();
	if (ok) {
		uint32_t in_s =
			announced_missing(s, z, retry_s) ? (retry_s > 0 ? retry_s : 60) : refresh_s;

		z->next_check = now + spread((uint64_t)in_s * 1000);
		renew_expiry(s, z, asked, now, expire_s, expire_option);
		z->retry_ms = FIRST_RETRY_MS;
	} else if (have_version) {
		z->next_check = now + spread((uint64_t)(retry_s > 0 ? retry_s : 60) * 1000);
	} else {
		z->next_check = now + z->retry_ms;
		if (z->retry_ms < MAX_FIRST_RETRY_MS)
			z->retry_ms *= 2;
	}
}

/* On a thread of the pool: refresh the zone handed over, then let the
 * scheduler have it again. */
static void refresh_handed(void *arg, void *item)
{
	apex_secondary_zone_t *z = item;

	if (!apex_secondary_awaits_first_load(arg, z))
		refresh(arg, z);
	apex_secondary_compact(arg, z); /* if an IXFR was derived */
	apex_secondary_schedule_ended(arg, z);
	atomic_store(&z->busy, false);
}

/* A refresh ended: the scheduler looks again (at its zone, at a reconfig
 * waiting for the refreshes to end, at one more refresh it may hand over). */
static void refresh_ended(void *arg, void *item)
{
	apex_secondary_t *s = arg;
	uint64_t one = 1;

	(void)item;
	if (write(s->notify_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		apex_warning("secondary zones: notify eventfd: %s", strerror(errno));
}

/* The scheduler: hands the zones whose time has come to the pool. */
/* The index blocks of the zones derived since the last purge, dropped
 * with it (zone/index_block.h): kept for an IXFR that follows soon, not
 * for good.  A zone whose refresh is under way keeps its own. */
static void drop_index_blocks(apex_secondary_t *s)
{
	for (size_t i = 0; i < s->count; i++) {
		apex_secondary_zone_t *z = &s->zones[i];
		if (atomic_load(&z->busy) || !atomic_exchange(&z->index_kept, false))
			continue;
		apex_zone_t *zone = apex_server_served_version(s->server, z->origin);
		if (zone != NULL)
			apex_index_block_drop(zone);
		apex_zone_unref(zone);
	}
}

static void *secondary_main(void *arg)
{
	apex_secondary_t *s = arg;

	pthread_setname_np(pthread_self(), "apexd-xfr");
	apex_thread_lower_priority("transfer thread", s->applied->cfg->reload_idle,
				   (int)s->applied->cfg->reload_nice);
	apex_secondary_bind_zones(s, s->zones, s->count);
	for (;;) {
		/* a reconfig's zones are taken once no refresh runs: none is
		 * handed over meanwhile, those under way end first */
		bool reconfigured = apex_settings_generation(s->settings) != s->applied->generation;
		bool applied = false;

		if (reconfigured && apex_refresh_pool_in_flight(&s->pool) == 0) {
			apex_secondary_apply_settings(s);
			reconfigured = false;
			applied = true;
		}
		uint64_t now = apex_monotonic_ms();
		uint64_t next = apex_secondary_schedule(s, now, reconfigured, applied);
		struct pollfd pfd[2] = { { .fd = s->stop_fd, .events = POLLIN },
					 { .fd = s->notify_fd, .events = POLLIN } };
		uint64_t count;

		now = apex_monotonic_ms();
		next = apex_secondary_copies_due(s, now, next);
		uint64_t purge_due = s->purge_due;
		if (purge_due != 0 && purge_due <= now) {
			drop_index_blocks(s);
			apex_memory_purge(); /* no IXFR since: what it let go of goes back */
			s->purge_due = purge_due = 0;
		}
		if (purge_due != 0 && purge_due < next)
			next = purge_due;
		int n = poll(pfd, 2, next > now ? (int)(next - now) : 0);
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			/* the refreshes under way are abandoned (stop_fd cancels
			 * their exchanges); a copy lagging the version served is
			 * written before the process goes */
			apex_refresh_pool_stop(&s->pool);
			apex_secondary_flush_all(s, s->zones, s->count, "at stop");
			break;
		}
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
