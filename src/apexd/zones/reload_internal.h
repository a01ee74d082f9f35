/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parts of the reloader (reload.h) shared by reload.c (the list of
 * zones, their loads and requests), reload_diff.c (a reload derived
 * from the version served) and reconfigure.c (a new configuration's
 * zones applied).  Internal to these files.
 */
#ifndef APEXD_RELOAD_INTERNAL_H
#define APEXD_RELOAD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/daemon_config.h"
#include "process/memory_limit.h"
#include "xfr/changes.h"
#include "zone/zone.h"
#include "zones/reload_text.h"

struct apex_reloader;      /* zones/reload.h */
struct apex_managed_zone;  /* zones/reload.h */
struct apex_reload_ticket; /* zones/reload.h */

/* A new zone entry for zc with one request pending; caller owns it. */
struct apex_managed_zone *apex_reloader_zone_new(struct apex_reloader *r,
						 const apex_zone_config_t *zc);

void apex_reloader_zone_free(struct apex_managed_zone *z);

/* Under the lock: the zones' origins sorted (dns/name_refs.h), each
 * ref's index its place in r->zones; malloc'ed, NULL when out of memory. */
struct apex_name_ref *apex_reloader_sorted_zones(const apex_reloader_t *r);

/* Under the lock: index of the zone with this origin, or -1 (log N). */
ssize_t apex_reloader_find_origin(struct apex_reloader *r, const uint8_t *origin);

/* Under the lock: the zone with this id, or NULL. */
struct apex_managed_zone *apex_reloader_find_id(const struct apex_reloader *r, uint64_t id);

/* Under the lock: append z (taking it over; its id the highest yet);
 * APEX_ENOMEM leaves z to the caller. */
int apex_reloader_zones_push(struct apex_reloader *r, struct apex_managed_zone *z);

/* Under the lock: the zone at index i taken out (not freed), the others
 * kept in their order. */
void apex_reloader_zones_remove(struct apex_reloader *r, size_t i);

/* Under the lock: ask for one more load of z and note the ticket. */
void apex_reloader_request_one(struct apex_managed_zone *z, struct apex_reload_ticket *ticket);

/*
 * Before a load of file into the zone origin, not under the lock: its
 * size into *file_size (0 if it cannot be read: the load says why), and
 * on the reload thread (not at start) the claim of its estimated peak on
 * memory-limit (reload_memory.c).  loaded_size: the size of the file the last
 * successful load read (0: none).  APEX_OK, or APEX_EMEMLIMIT with the
 * refusal in err.
 */
int apex_reloader_memory_claim(struct apex_reloader *r, const char *file, const uint8_t *origin,
			       uint64_t loaded_size, uint64_t *file_size,
			       apexd_memory_claim_t *claim, char *err, size_t err_size);

/* A load picked: what it needs once the reloader's lock is released. */
typedef struct apex_load_job {
	uint64_t id, seq;
	char *file; /* a copy (NULL: out of memory) */
	uint8_t origin[APEX_NAME_MAX];
	char name[APEX_RELOAD_NAME_TEXT];
	bool secondary, zonemd_verify;
	uint64_t loaded_size; /* of the file the last successful load read */
	uint64_t file_size;   /* of the file now */
	apexd_memory_claim_t claim;
	/* a version made from the one served by the change found
	 * (reload_diff.c), derived in place or built whole: derived; the
	 * change set from it (have_set), for the journal, unless it was
	 * large enough to be freed before the derivation's peak (then the
	 * journal compares the two versions); owned (initialised by the
	 * pick) */
	apex_changes_t set;
	bool derived, have_set;
	uint32_t unchanged_serial; /* the file holds what is served: its serial */
	bool unchanged_bytes;      /* ... byte for byte: it was not parsed */
	char err[APEX_RELOAD_ERROR_MAX];
} apex_load_job_t;

/* reload.c: a loading thread's loop: load zones while there is work and,
 * once the workers run, until stopped. */
void *apex_reloader_thread_main(void *arg);

/*
 * reload_threads.c: under the lock, on a reload thread that picked a
 * zone: one thread more when another zone waits for its load and
 * verifiers may run side by side (verifier-count above 1, zones with a
 * verifier): a verification takes as long as its command, and the other
 * zones' reloads need not wait for it.
 */
void apex_reloader_more_threads(struct apex_reloader *r);

/* reload.c: the answers of *zone precomputed and its ZONEMD checked; on
 * failure (the reason in job->err) *zone is released and NULL. */
int apex_reloader_ready(apex_load_job_t *job, apex_zone_t **zone);

/* reload.c: job's file loaded whole into *zone (ready), once memory-limit
 * allows it; a negative code with the reason in job->err. */
int apex_reloader_load_whole(struct apex_reloader *r, apex_load_job_t *job, apex_zone_t **zone);

/*
 * reload_diff.c: a reload of a zone served, on the reload thread: its
 * file compared with the version served and the new version derived
 * from the change (xfr/file_diff.h, xfr/ixfr_apply.h).  APEX_OK with
 * *zone the new version, ready, and job->set its change set; or *zone
 * NULL when the file holds what is served (job->unchanged_serial).
 * APEX_ENOTSUP: nothing is served, or only a whole load says what is
 * wrong with the file: the caller loads it whole.  Else a negative code,
 * the reason in job->err.
 */
int apex_reloader_derive(struct apex_reloader *r, apex_load_job_t *job, apex_zone_t **zone);

/*
 * reload_diff.c: after a reload derived from the version served is
 * published and journaled (and its requester answered), on the reload
 * thread: the version served built compact when its chain of derived
 * versions holds more than a secondary's chain may after an IXFR
 * (zones/compact.h, xfr/version_compact.h).  A request for the zone that
 * arrives meanwhile waits for the compaction (the zone stays picked until
 * it ends, so no other reload thread loads it) rather than superseding it: reloads in a row would
 * otherwise keep the chain growing up to the derivation's own, looser
 * bound, and one compaction at a time keeps the peak at one whole build
 * beside the version served.  The next reload then derives from the
 * compact version, which holds nothing of the chain.
 */
void apex_reloader_compact(struct apex_reloader *r, const apex_load_job_t *job);

#endif
