/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Secondary zones: the threads that keep them up to date from their
 * primaries (request-xfr in apex.conf(5)).
 *
 * One thread, never a worker, schedules: when a zone's time has come it
 * hands it to the refresh pool (refresh_pool.h), whose threads run the
 * exchanges with the primaries, up to xfr-in-max zones at once and one
 * refresh of a zone at a time.  For each zone the refresh asks the
 * primary for the SOA serial when the zone's SOA
 * refresh timer runs out, or at once when a NOTIFY came (RFC 1996), and
 * transfers the zone when the primary's serial is newer (RFC 1982
 * arithmetic) or when nothing is served yet.  The records are checked as
 * they arrive (xfr/xfr_in.h), written to the zone's file beside the old
 * copy and built into a new version (zone/zone_from_wire.h); only a
 * transfer that completed and built is published, through the zone table
 * as a reload is, and its copy renamed over the file.  A failed exchange
 * tries the next primary, then again after the SOA retry time; after the
 * SOA expire time without a successful refresh the zone is withdrawn.
 *
 * The workers never wait for it: they only see the version it publishes,
 * and hand it a NOTIFY through apex_secondary_notify(), which never blocks.
 */
#ifndef APEXD_SECONDARY_H
#define APEXD_SECONDARY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config/daemon_config.h"
#include "serve/server.h"
#include "transfers/refresh_pool.h"
#include "transfers/tls_clients.h"
#include "zones/settings.h"
#include "xfr/changes.h"

/* What the last exchange for a zone did, for logs and apexctl. */
typedef struct apex_secondary_status {
	bool expired; /* withdrawn after SOA expire */
	uint64_t transfers, failures;
	struct timespec last_check;    /* CLOCK_REALTIME of the last check; 0: none */
	struct timespec last_transfer; /* CLOCK_REALTIME of the last good transfer; 0: none */
	char last_result[256];         /* "AXFR serial 5 from 127.0.0.1@53: 12 records, 0.01 s" */
	/* filled by apex_secondary_report() */
	uint64_t next_check_ms; /* from now */
	uint64_t expire_in_ms;  /* from now; 0: no expiry pending */
	uint64_t notifies_accepted, notifies_refused;
	/* Accepted NOTIFYs whose serial the primaries did not serve at the
	 * check it asked for (ahead), and of those, the ones still not served
	 * after ANNOUNCED_RECHECKS more checks (given up: left to the refresh
	 * timer); secondary.c's announced_missing() */
	uint64_t notifies_ahead, notifies_ahead_given_up;
} apex_secondary_status_t;

typedef struct apex_secondary_zone {
	/* What the scheduler's pass reads of every zone, at each refresh
	 * that ends: first, together, so that a pass over thousands of zones
	 * (a catalog's members) reads a cache line of each, not three. */
	/* when to act (CLOCK_MONOTONIC milliseconds): written by the scheduler
	 * or, while the zone is busy, by its refresh alone; read by
	 * zone-status (apex_secondary_report()) too */
	_Atomic uint64_t next_check;
	_Atomic uint64_t expire_at; /* 0: no expiry pending */
	/* The copy on disk (FILE) when it lags the version served: an IXFR's
	 * copy waits for copy-flush-interval while the journal holds the sets
	 * from copy_serial on (secondary_copy.c).  copy_due: when to write it
	 * (CLOCK_MONOTONIC milliseconds), 0 when it does not lag. */
	uint64_t copy_due;
	/* handed to a thread of the refresh pool and not done yet: the
	 * scheduler leaves the zone alone (refresh_pool.h) */
	atomic_bool busy;
	atomic_bool notified; /* a NOTIFY came (or apexctl refresh): check now */
	/* an IXFR was derived since the last purge: the zone's chain may keep
	 * an index block (zone/index_block.h), dropped at the purge */
	atomic_bool index_kept;
	/* found no longer configured (the reloader has not that id): the
	 * scheduler leaves it alone until a reconfig's zones replace it */
	bool gone;
	/* the zone's config's, in the snapshot the zones were made from
	 * (applied): not copied, a quarter of a kilobyte for each of
	 * thousands of zones made again at every change of a catalog */
	const char *name;
	const uint8_t *origin;
	const char *file;
	/* the reloader's id of the configured zone this one keeps (reload.h),
	 * set by the scheduler, read by it and by the zone's refresh (never
	 * at once with a swap of the zones): a zone removed and added again
	 * by reconfigs has a new one, and is kept afresh */
	uint64_t reloader_id;
	/* the lists of the snapshot the zones were made from (applied): not
	 * copied, half a kilobyte an entry for thousands of zones */
	const apex_acl_entry_t *primaries;
	size_t primary_count;
	const apex_acl_entry_t *allow_notify;
	size_t allow_notify_count;
	bool zonemd_verify; /* a transfer's ZONEMD is checked before it is served */
	/* the EDNS EXPIRE value (RFC 7314) of the last transfer's answer; -1:
	 * none.  Read by refresh() after a transfer that went well. */
	int64_t expire_option;
	uint64_t retry_ms; /* the next retry interval when nothing is served */
	uint32_t copy_serial;
	/* Its version served to be built compact at the end of its refresh
	 * (apex_secondary_compact()), how many times in a row that gave way,
	 * and whether the last gave way between parts (zones/compact.h): the
	 * refresh's own, as announced below. */
	bool compact_wanted;
	bool compact_parts_gave_way;
	uint8_t compact_gave_way;
	/* A NOTIFY's serial the primaries did not serve yet (announced) and
	 * how many checks are left to find it, the one under way included (0:
	 * none pending): the refresh's own, secondary.c's announced_missing(). */
	uint32_t announced;
	uint8_t announced_left;
	/* the serial a NOTIFY's SOA said, with bit 32 set; 0: none (said) */
	atomic_ullong notified_serial;
	atomic_bool force; /* apexctl retransfer: transfer even if not newer */
	/* CLOCK_MONOTONIC microseconds of the last NOTIFY accepted (by a
	 * worker), 0: none since the last check */
	atomic_ullong notified_us;
	/* The check under way, for the log of its path to serving (the
	 * transfer thread's): the NOTIFY that asked for it (0: none), the
	 * check begun, the primary found newer (microseconds) */
	uint64_t check_notified_us, check_began_us, check_newer_us;
	atomic_ullong notifies_accepted, notifies_refused; /* counted by the workers */
	apex_secondary_status_t status;                    /* under the lock */
} apex_secondary_zone_t;

typedef struct apex_secondary {
	apex_server_t *server;
	/* The settings in force (a reconfig replaces them), and the snapshot
	 * the zones were made from: their primaries and allow-notify lists
	 * are its own, and point at its keys.  The scheduler alone applies new settings, when
	 * no refresh runs, swapping zones, count and applied under zones_lock;
	 * the workers (NOTIFY) and the control thread read them under it.
	 * The scheduler and the refreshes read them without it: nobody writes
	 * while a refresh runs. */
	apex_settings_holder_t *settings;
	apex_settings_t *applied;
	/* the TLS client contexts of applied's tls-auth: clauses */
	apex_tls_clients_t tls_clients;
	apex_secondary_zone_t *zones;
	size_t count;
	pthread_rwlock_t zones_lock;
	pthread_mutex_t lock; /* the zones' status; never taken by a worker */
	int notify_fd;        /* eventfd: a NOTIFY came */
	/* NOTIFYs a worker dropped unanswered rather than wait for zones_lock
	 * (apex_secondary_notify()); the primary sends them again */
	atomic_ullong notifies_dropped;
	int stop_fd;      /* eventfd: stop, abandoning an exchange under way */
	pthread_t thread; /* the scheduler */
	bool thread_started;
	apex_refresh_pool_t pool; /* the refreshes themselves, xfr-in-max at once */
	/* The scheduler's passes (secondary_schedule.c): a whole pass asked
	 * for by a NOTIFY or apexctl refresh (set before the eventfd is
	 * written); the earliest time a refresh that ended since the last
	 * whole pass left (UINT64_MAX: none); the scheduler's own: the zone
	 * the next pass resumes at (SIZE_MAX: none waits for the pool) and
	 * the time the last whole pass found. */
	atomic_bool recheck;
	/* NOTIFYs taken and refreshes asked for, counted: a copy this thread
	 * writes gives way when the count moves (secondary_copy.c) */
	_Atomic uint64_t asked;
	_Atomic uint64_t ended_min;
	size_t resume_at;
	uint64_t pass_next;
	/* When to give the allocator's unused pages back after a derived IXFR
	 * (CLOCK_MONOTONIC milliseconds; 0: none pending; the transfer
	 * scheduler's, set by the refreshes): the next IXFR within
	 * APEX_SECONDARY_PURGE_DELAY_MS reuses them (secondary_transfer.c). */
	_Atomic uint64_t purge_due;
	/* the copies of small zones received whole, settled together
	 * (xfr/zone_copy_batch.h; secondary_copy.c); NULL: each on its own */
	struct apex_zone_copy_batch *copies;
	/* a test hook (APEX_TEST_COPY_GIVE_WAY_MS): a copy written on the
	 * scheduler pauses that long each time it asks whether to give way,
	 * so that a test's NOTIFY finds it under way; 0: never */
	unsigned copy_give_way_pause_ms;
	/* APEX_TEST_COMPACT_GIVE_WAY_MS: a compaction at the end of a
	 * refresh (apex_secondary_compact()) pauses that long before it
	 * first asks; 0: never */
	unsigned compact_give_way_pause_ms;
	/* APEX_TEST_COMPACT_LAST_GIVE_WAY_MS: a compaction in parts pauses
	 * that long after its last part, before it asks whether to give way
	 * ahead of its last step; 0: never */
	unsigned compact_last_give_way_pause_ms;
	/* The configured zones: a secondary zone a reconfiguration removed is
	 * no longer kept.  Set before the start (NULL: every zone stays). */
	struct apex_reloader *reloader;
	/* The reloader's removals (apex_reloader_removals()) when the
	 * scheduler last checked every zone to be configured still; ULONG_MAX
	 * when zones were bound since: their check is due. */
	unsigned long removals_seen;
	/* Called after a transfer is published, with the change sets when it
	 * was an IXFR applied to old (else NULL, 0); set before the start. */
	void (*published)(void *arg, const apex_zone_t *old, const apex_zone_t *version,
			  const apex_changes_t *sets, size_t count);
	void *published_arg;
	/* Whether the zone's journal holds the change sets from serial on,
	 * and still will once bytes more are appended (journals.h's
	 * apex_journals_chains()); arg: published_arg.  NULL: no journal, the
	 * copy is written after each transfer.  Set before the start. */
	bool (*journal_chains)(void *arg, const uint8_t *origin, uint32_t serial, uint64_t bytes);
	/* memory-limit (process/memory_limit.h), checked before and during
	 * each transfer; NULL: none.  Set before the start. */
	struct apexd_memory_limit *memory_limit;
} apex_secondary_t;

/* Take the secondary zones (those with request-xfr) of the settings in
 * force; none is an empty set.  settings must outlive it.  Returns 0 or an
 * apex code. */
int apex_secondary_init(apex_secondary_t *s, apex_server_t *server,
			apex_settings_holder_t *settings);

/*
 * The settings were replaced (a reconfig): the scheduler takes the
 * new secondary zones between two exchanges.  A zone kept keeps its state
 * and timers; one whose primaries changed, and a new one, are checked at
 * once; a zone no longer secondary is left alone.  Never blocks.
 */
void apex_secondary_settings_changed(apex_secondary_t *s);

/*
 * Replace every zone's file path by rebase(base, path) (a suffix of
 * path), e.g. its path inside a chroot (privs.h).  Before
 * apex_secondary_start().
 */
void apex_secondary_rebase(apex_secondary_t *s,
			   const char *(*rebase)(const char *base, const char *path),
			   const char *base);

/* Start the thread (once the workers run); it sleeps while there is no
 * secondary zone, until a reconfig brings one. */
int apex_secondary_start(apex_secondary_t *s);

/* Stop the thread: an exchange under way is abandoned. */
void apex_secondary_stop(apex_secondary_t *s);

void apex_secondary_free(apex_secondary_t *s);

/*
 * Answer a NOTIFY (a worker's notify hook, worker.h): checked against the
 * zone's allow-notify list and TSIG; when accepted, the transfer thread is
 * woken to check the zone at once.  Never waits for a transfer (a read
 * lock the transfer thread holds only to swap the zones).  With no
 * secondary zone at all, APEX_WORKER_NOTIFY_PASS: the worker answers it as
 * any other message (NOTIMP).  ctx: the apex_secondary_t.
 */
size_t apex_secondary_notify(void *ctx, const struct sockaddr_storage *peer, const uint8_t *msg,
			     size_t size, uint8_t *out, size_t out_capacity);

/* apexctl refresh (full: retransfer): check origin now (full: and transfer
 * it whole whatever the serial).  APEX_ENOENT: not a secondary zone. */
int apex_secondary_refresh(apex_secondary_t *s, const uint8_t *origin, bool full);

/* The state of secondary zone origin, its primaries (texts, "; " between
 * them) into primaries; false when it is not a secondary zone. */
bool apex_secondary_report(apex_secondary_t *s, const uint8_t *origin, apex_secondary_status_t *out,
			   char *primaries, size_t primaries_size);

/* The totals of every secondary zone (apex_secondary_totals()). */
typedef struct apex_secondary_totals {
	uint64_t transfers, failures;
	uint64_t notifies_accepted, notifies_refused;
	uint64_t notifies_dropped; /* while the transfer thread swapped its zones */
	uint64_t notifies_ahead, notifies_ahead_given_up; /* apex_secondary_status_t's */
} apex_secondary_totals_t;

/* The totals of every secondary zone: transfers, failures, NOTIFYs. */
void apex_secondary_totals(apex_secondary_t *s, apex_secondary_totals_t *out);

/* Whether origin is a secondary zone here. */
bool apex_secondary_has(apex_secondary_t *s, const uint8_t *origin);

/* The copy of file (a zone no longer served, whose files are about to be
 * removed) dropped if it waits to be synced with others
 * (xfr/zone_copy_batch.h), so that it is not renamed over file after it
 * was removed.  Any thread. */
void apex_secondary_drop_copy(apex_secondary_t *s, const char *file);

#endif
