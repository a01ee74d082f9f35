/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parts of the secondary zones (secondary.h) shared by the files that
 * make them: secondary.c (the transfer thread, its schedule and the entry
 * points of the other threads), secondary_zones.c (the set of zones and
 * the settings they come from) and secondary_transfer.c (one transfer
 * received and published).  Internal to these files.
 */
#ifndef APEXD_SECONDARY_INTERNAL_H
#define APEXD_SECONDARY_INTERNAL_H

#include <stddef.h>

#include "config/daemon_config.h"
#include "process/memory_limit.h"
#include "xfr/acl.h"
#include "xfr/xfr_client.h"
#include "xfr/zone_copy.h"
#include "zone/zone.h"

struct apex_secondary;      /* transfers/secondary.h */
struct apex_secondary_zone; /* transfers/secondary.h */

/*
 * The memory a derived IXFR lets go of (mostly the replaced version's name
 * index and hash table, which the next derivation copies again: about
 * 4 MiB for the 206,000 names of the 1M-record nu.nsec3) is given back to
 * the system this long after
 * the last IXFR, not at once: an IXFR that follows within it takes its
 * copies in pages already resident instead of faulting fresh ones in on
 * its way to serving.  The replaced index itself is kept by the zone's
 * chain for that IXFR, which writes its own there (zone/index_block.h),
 * and freed at the purge.  A whole build (AXFR, compaction) gives its
 * memory back at once.
 */
#define APEX_SECONDARY_PURGE_DELAY_MS 3000
/* an AXFR of a version this large gives back what it let go of at once */
#define APEX_SECONDARY_PURGE_NOW_BYTES (16u << 20)

/* A compaction gives way to a NOTIFY (apex_secondary_compact()) this many
 * times in a row at most: the next one does not, so that NOTIFYs that
 * keep coming (a zone changed every few seconds) do not keep the chain
 * from being made compact until an IXFR must be built whole
 * (zone/derive.h's harder bound). */
#define APEX_SECONDARY_COMPACT_GIVE_WAY_MAX 3

/*
 * The copy on disk of a zone received whole whose version takes less than
 * APEX_SECONDARY_COPY_BATCH_BYTES waits for others to be synced with them
 * (xfr/zone_copy_batch.h): up to APEX_SECONDARY_COPY_BATCH of them, at
 * most APEX_SECONDARY_COPY_BATCH_MS.
 */
#define APEX_SECONDARY_COPY_BATCH_BYTES (1u << 20)
#define APEX_SECONDARY_COPY_BATCH 64
#define APEX_SECONDARY_COPY_BATCH_MS 200

/* Before the first version: retry after 1 s, doubling up to 5 minutes. */
#define FIRST_RETRY_MS 1000
/* a zone just added, whose first load is under way: looked at again after */
#define FIRST_LOAD_WAIT_MS 20
#define MAX_FIRST_RETRY_MS 300000
/* Checks made again, at the SOA retry interval, for a NOTIFY's serial the
 * primaries did not serve yet (secondary.c's announced_missing()). */
#define ANNOUNCED_RECHECKS 5

/* ---------------------------------------------------------------- secondary_zones.c */

/* The secondary zones of cfg, fresh (to be checked at once), into *out
 * (owned, one allocation: free() it; NULL when none), their names and
 * lists cfg's.  Returns 0 or APEX_ENOMEM. */
int apex_secondary_make_zones(const apex_config_t *cfg, struct apex_secondary_zone **out,
			      size_t *out_count);

/* The reloader's ids of zones (0 without a reloader). */
void apex_secondary_bind_zones(struct apex_secondary *s, struct apex_secondary_zone *zones,
			       size_t count);

/* On the scheduler, when no refresh runs: take the secondary zones
 * of the settings in force when they changed (secondary.h). */
void apex_secondary_apply_settings(struct apex_secondary *s);

/* The zone of s with this origin, or NULL; under zones_lock, or on the
 * scheduler. */
struct apex_secondary_zone *apex_secondary_find_zone(struct apex_secondary *s,
						     const uint8_t *origin);

/* ---------------------------------------------------------------- secondary_schedule.c */

/*
 * On the scheduler at now: hand the zones whose time has come to the pool
 * (none while hold: a reconfiguration waits), expire those past their
 * expiry, flush the copies due; by a whole pass over the zones when whole,
 * hold or anything but the end of refreshes asks for one, else from where
 * the last pass stopped.  Returns when to look again at the latest.
 */
uint64_t apex_secondary_schedule(struct apex_secondary *s, uint64_t now, bool hold, bool whole);

/* On z's refresh thread as it ends, before z is the scheduler's again:
 * the times z's refresh left taken into the scheduler's next wake-up. */
void apex_secondary_schedule_ended(struct apex_secondary *s, const struct apex_secondary_zone *z);

/* ---------------------------------------------------------------- secondary_transfer.c */

/* The primary e as the transfer client takes it, with the connection
 * the calling thread keeps (plain TCP). */
void apex_secondary_primary_of(const struct apex_secondary *s, const apex_acl_entry_t *e,
			       apex_xfr_primary_t *p);

/* The pool's rest (refresh_pool.h): the calling thread's kept connection
 * closed. */
void apex_secondary_rest(void *arg);

/* The time limits of an exchange with a primary, cancelled by a stop. */
void apex_secondary_timeouts_of(const struct apex_secondary *s, apex_xfr_timeouts_t *t);

/*
 * Transfer z from e and publish it: by IXFR from current when there is
 * one and e allows it, falling back to AXFR when the primary refuses IXFR
 * or its change sets do not apply to what is served.  *held: the caller's
 * reference to the version served when its check began (or NULL), dropped
 * once the new version is published.  Returns APEX_OK (also when up to
 * date), or an apex code with the reason in err.
 */
int apex_secondary_transfer_any(struct apex_secondary *s, struct apex_secondary_zone *z,
				const apex_acl_entry_t *e, apex_zone_t *current, apex_zone_t **held,
				char *err, size_t err_size);

/* A secondary's version is good for seconds more from now: the time left
 * that its EDNS EXPIRE answers count down (apex_zone_t's expire_at). */
void apex_secondary_mark_expire(apex_zone_t *zone, uint32_t seconds);

/*
 * How long a copy refreshed or transferred from a server is good for
 * (RFC 7314 section 4): the EDNS EXPIRE value that server answered
 * (option; -1: none), so that a copy taken from another secondary expires
 * when that secondary's does rather than a whole expire period later; at
 * most the SOA's expire field (soa_expire); soa_expire without an option.
 */
uint32_t apex_secondary_expire_granted(uint32_t soa_expire, int64_t option);

/* After a check that found z current: when the last write of z's copy
 * failed (a full disk), write the copy whole again from the version
 * served, so that it does not wait for the next change (copies.h). */
void apex_secondary_copy_again(struct apex_secondary *s, struct apex_secondary_zone *z);

/* ---------------------------------------------------------------- secondary_copy.c */

/* The batch of s's copies received whole (s->copies); APEX_OK or
 * APEX_ENOMEM. */
int apex_secondary_copies_init(struct apex_secondary *s);

/* The copy of z received whole, every record written from version: to
 * the batch when the version is small, else committed now; its outcome
 * logged (copies.h). */
void apex_secondary_commit_copy(struct apex_secondary *s, struct apex_secondary_zone *z,
				apex_zone_copy_t *copy, const apex_zone_t *version);

/* Before a copy of z begins: the one of z waiting in the batch settled
 * (the new one would truncate its file). */
void apex_secondary_copy_settle(struct apex_secondary *s, const struct apex_secondary_zone *z);

/* Write z's copy now, whole, from version (served, or the one an IXFR is
 * replacing); why is said in its header and the debug log.  The one
 * place a secondary's lagging copy is flushed. */
void apex_secondary_flush_copy(struct apex_secondary *s, struct apex_secondary_zone *z,
			       const apex_zone_t *version, const char *why);

/* Before an IXFR's change sets (bytes of them) go to the journal, old
 * still served: z's lagging copy written from old when the appends would
 * drop the sets that lead from the copy's serial. */
void apex_secondary_copy_before_journal(struct apex_secondary *s, struct apex_secondary_zone *z,
					const apex_zone_t *old, uint64_t bytes);

/* At the end of z's refresh, after an IXFR derived (or an earlier call
 * that gave way): z's version served built compact when its chain holds
 * too much (zones/compact.h), off the path of the IXFR that made it.
 * It gives way to a NOTIFY of z that comes meanwhile, and is done after
 * the refresh that NOTIFY asks for. */
void apex_secondary_compact(struct apex_secondary *s, struct apex_secondary_zone *z);

/* An IXFR from old_serial to version is published and journaled: z's
 * copy left to lag until copy-flush-interval when the journal holds the
 * sets from the copy's serial on, else written from version now. */
void apex_secondary_copy_after_ixfr(struct apex_secondary *s, struct apex_secondary_zone *z,
				    const apex_zone_t *version, uint32_t old_serial);

/* On the scheduler, in a whole pass: flush the copies whose time has come
 * (of zones no refresh holds); returns the earlier of next and the next
 * copy's time.  A copy written thus gives way to a NOTIFY taken or a
 * refresh asked for meanwhile (s->asked): it stays due, now is returned,
 * and the pass that follows at once starts the refresh first. */
uint64_t apex_secondary_flush_due(struct apex_secondary *s, uint64_t now, uint64_t next);

/* On the scheduler, at each wake-up: settle the batch of copies when due;
 * returns the earlier of next and its time. */
uint64_t apex_secondary_copies_due(struct apex_secondary *s, uint64_t now, uint64_t next);

/* Flush every lagging copy of zones[0..count) from the version served
 * (at stop). */
void apex_secondary_flush_all(struct apex_secondary *s, struct apex_secondary_zone *zones,
			      size_t count, const char *why);

/* ---------------------------------------------------------------- transfer_memory.c */

/*
 * memory-limit for one transfer: its claim, raised as the records
 * arrive.  An AXFR is claimed at its start as large as the version
 * served (if any), then checked again every few thousand records; the
 * change sets of an IXFR, once received, as what a derivation in place
 * takes, and as a whole build before one (the guard of
 * apex_ixfr_version_guarded()).
 */
typedef struct apex_transfer_memory {
	struct apexd_memory_limit *limit; /* NULL: none */
	apexd_memory_claim_t claim;
	const apex_zone_t *served; /* the version served when the check began, or NULL */
	const char *zone;          /* its name, for messages */
	uint64_t next_check;       /* records received at which to check again */
	uint64_t added, removed;   /* records of the change sets of an IXFR */
	bool refused;
	char err[512]; /* why memory-limit refused it */
} apex_transfer_memory_t;

/* Begin t for a transfer of zone (name) while served is served (NULL: none). */
void apex_transfer_memory_begin(apex_transfer_memory_t *t, struct apexd_memory_limit *limit,
				const char *zone, const apex_zone_t *served);

/* Before an AXFR is asked for: as large as the version served. */
int apex_transfer_memory_axfr(apex_transfer_memory_t *t);

/* As a whole zone arrives: records and bytes received so far. */
int apex_transfer_memory_progress(apex_transfer_memory_t *t, uint64_t records, uint64_t bytes);

/* Change sets received, before they are applied to t->served. */
int apex_transfer_memory_ixfr(apex_transfer_memory_t *t, const apex_changes_t *sets, size_t count);

/* The guard of apex_ixfr_version_guarded(): a whole build of the sets of
 * the last apex_transfer_memory_ixfr() (ctx: t). */
int apex_transfer_memory_whole(void *ctx, char *err, size_t err_size);

/* The transfer is over: its claim given back. */
void apex_transfer_memory_end(apex_transfer_memory_t *t);

/*
 * On a thread of the pool, before a refresh: whether z is a zone a
 * reconfig, a catalog or zone-add just added, whose copy (if it has one)
 * is about to be loaded; then its next check is set shortly after, once
 * that load has finished, rather than a whole transfer started meanwhile
 * (secondary_zones.c).
 */
bool apex_secondary_awaits_first_load(apex_secondary_t *s, apex_secondary_zone_t *z);

#endif
