/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The served zones' lifecycle: initial load, reload and reconfiguration.
 *
 * The reloader keeps the list of configured zones with their state
 * (loading, loaded, failed and why) and one reload thread.  A reload
 * of a zone served compares its file with the version served and derives
 * the new version from the change, as an IXFR is applied, on that thread
 * (reload_diff.c): a file unchanged costs no version at all.  Otherwise
 * (the first load, a change a derivation does not do) it parses and
 * builds the whole new version beside the one served.  Either is
 * published in one step; the workers pick it up between batches.  The reload thread then waits (bounded) until
 * the workers have let go of the old version, drops the last reference
 * itself, so the old version is freed there and not on a worker, and
 * returns the freed memory to the system.  One zone is loaded at a time,
 * so memory is bounded by the old and new versions of the largest zone.
 *
 * Requests are counted per zone: `requested` grows with every request,
 * `done` is set to the value `requested` had when the load that just
 * finished began.  A request made while a load of the same zone runs is
 * therefore not satisfied by it (the file may have changed since it was
 * read) but by the next load, and any number of such requests share
 * that one next load: coalesced, never lost.
 *
 * All functions are thread-safe unless noted.
 */
#ifndef APEXD_RELOAD_H
#define APEXD_RELOAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config/daemon_config.h"
#include "dns/name.h"
#include "serve/server.h"
#include "xfr/changes.h"
#include "zones/reload_text.h"

typedef enum {
	APEX_ZONE_LOADING = 0, /* a load is queued or running */
	APEX_ZONE_LOADED,      /* the last load succeeded */
	APEX_ZONE_FAILED,      /* the last load failed (an older version may still be served) */
} apex_zone_state_t;

/* A configured zone.  Owned by the reloader, read under its lock. */
typedef struct apex_managed_zone {
	uint64_t id; /* unique, never reused */
	char *name;  /* canonical text, e.g. "example." */
	/* apex_name_hash() of origin: thousands of zones matched by it at
	 * each reconfig (a catalog's change) without reading each name */
	uint32_t origin_hash;
	uint8_t origin[APEX_NAME_MAX];
	char *file;
	bool secondary;     /* kept from primaries (request-xfr): the file is its copy */
	bool zonemd_verify; /* its ZONEMD is checked before a version is served */
	/* a secondary zone whose copy does not exist yet (never loaded): not
	 * a failure, it is served after its first transfer */
	bool awaiting_transfer;
	apex_zone_state_t state;
	bool loading;                      /* a thread is loading it now */
	char error[APEX_RELOAD_ERROR_MAX]; /* why the last load failed */
	struct timespec failed_at;         /* CLOCK_REALTIME of that failure */
	uint64_t requested, done;          /* request sequence numbers */
	uint64_t loads, failures;          /* counts of finished loads */
	/* the size of the file its last successful load read (0: none yet),
	 * which memory-limit's estimate of the next load scales from */
	uint64_t file_size;
	/* failed because memory-limit refused a transfer: the next version
	 * published (a transfer, a load) clears the error */
	bool refused;
} apex_managed_zone_t;

/* A request's claim on one zone's future load (apex_reloader_ticket_done()). */
typedef struct apex_reload_ticket {
	uint64_t zone_id;
	uint64_t seq;
} apex_reload_ticket_t;

/* What a finished ticket found. */
typedef struct apex_reload_result {
	bool removed; /* the zone was removed meanwhile */
	bool ok;
	/* ok: a secondary zone with no copy yet, served after its first
	 * transfer (not a failure of the load) */
	bool awaiting_transfer;
	char name[APEX_RELOAD_NAME_TEXT];
	char error[APEX_RELOAD_ERROR_MAX]; /* when !ok */
} apex_reload_result_t;

typedef struct apex_reloader {
	apex_server_t *server;
	pthread_mutex_t lock;
	pthread_cond_t work; /* a request came, or stop */
	/* the reload threads: one, and up to verifier-count while zones
	 * verified wait (reload_threads.c) */
	pthread_t *threads;
	size_t thread_count, thread_capacity;
	bool stopping;
	bool live; /* workers run: wake them after a publish */
	bool idle; /* the reload thread runs under SCHED_IDLE */
	int nice;  /* else at this nice value (reload-priority) */
	/* in the order of their ids (pushed in it, removed keeping it), so
	 * that a zone is found by id in log N (reload.c) */
	apex_managed_zone_t **zones;
	size_t count;
	size_t capacity;
	/* the zones by origin (dns/name_refs.h), made again when stale */
	struct apex_name_ref *by_origin;
	bool by_origin_stale;
	uint64_t next_id;
	/* zones taken out so far (read without the lock): while it does not
	 * move, every zone the transfer thread found is configured still */
	atomic_ulong removals;
	size_t next_pick; /* round-robin start of the next pick */
	/* Called (without the lock) after every finished load, from the
	 * thread that loaded; set before apex_reloader_start(). */
	void (*notify)(void *arg);
	void *notify_arg;
	/* Called (without the lock) after a new version is published once the
	 * workers run, with the version it replaced (NULL: none); both stay
	 * referenced during the call, and the change sets that lead from old
	 * to version (count 0: the version was loaded whole).  Set before
	 * apex_reloader_start(). */
	void (*published)(void *arg, const apex_zone_t *old, const apex_zone_t *version,
			  const apex_changes_t *sets, size_t count);
	void *published_arg;
	/* memory-limit (process/memory_limit.h), checked before each load of
	 * the reload thread (not the loads at start); NULL: none.  Set before
	 * apex_reloader_start(). */
	struct apexd_memory_limit *memory_limit;
	/* The versions of the first load (apex_reloader_load_initial()),
	 * published together once every zone is loaded: one zone table set
	 * built, not one per zone (each would copy the table of all zones).
	 * Each holds a reference; under the lock. */
	apex_zone_t **first;
	size_t first_count, first_capacity;
} apex_reloader_t;

/* Take the zones of cfg (copied); nothing is loaded yet. */
int apex_reloader_init(apex_reloader_t *r, apex_server_t *server, const apex_config_t *cfg);

/* Stop the thread if it runs and free everything (published versions stay in the table). */
void apex_reloader_free(apex_reloader_t *r);

/*
 * Load every zone, in parallel threads when there are several, before
 * the workers start.  *loaded receives how many are served, *awaiting
 * how many secondary zones have no copy yet (served after their first
 * transfer: not a failure).
 */
int apex_reloader_load_initial(apex_reloader_t *r, size_t *loaded, size_t *awaiting);

/* Start the reload thread (the workers run from now on).  When zones have
 * a verifier and verifier-count is above 1, up to that many threads
 * reload zones side by side, started as a reload finds zones waiting. */
int apex_reloader_start(apex_reloader_t *r);

/* Stop the reload threads: loads under way are finished first. */
void apex_reloader_stop(apex_reloader_t *r);

/*
 * Request a reload of the zone with this origin (wire format), or of
 * every zone when origin is NULL.  If tickets is not NULL it receives a
 * new array (the caller frees it) of one ticket per zone, *count their
 * number.  APEX_ENOENT: no such zone.
 */
int apex_reloader_request(apex_reloader_t *r, const uint8_t *origin, apex_reload_ticket_t **tickets,
			  size_t *count);

/* Whether the load a ticket waits for has finished; if so, its result. */
bool apex_reloader_ticket_done(apex_reloader_t *r, const apex_reload_ticket_t *ticket,
			       apex_reload_result_t *result);

/*
 * Apply the zones of a new configuration: zones no longer in it are
 * removed from the table at once, new zones and zones whose file
 * changed are queued for loading (tickets as for apex_reloader_request,
 * possibly none).  What changed is described in *added, *removed and
 * *changed (counts).
 */
int apex_reloader_reconfigure(apex_reloader_t *r, const apex_config_t *cfg,
			      apex_reload_ticket_t **tickets, size_t *count, size_t *added,
			      size_t *removed, size_t *changed);

/*
 * Call fn(zone, arg) for every configured zone in name order (or only
 * the one with this origin; APEX_ENOENT if there is none), under the
 * reloader's lock: fn must not call back into the reloader.
 */
int apex_reloader_foreach(apex_reloader_t *r, const uint8_t *origin,
			  void (*fn)(const apex_managed_zone_t *zone, void *arg), void *arg);

/* Whether the zone with that id is configured still.  Ids are never
 * reused: a zone removed and added again has a new one.  A search of the
 * ids, not of the origins: the transfer thread asks it of every zone due. */
bool apex_reloader_has_id(apex_reloader_t *r, uint64_t id);

/* How many zones were taken out so far (without the lock). */
unsigned long apex_reloader_removals(apex_reloader_t *r);

/* Whether the zone with that id was added (by a reconfig, a catalog or
 * zone-add) and its first load has not finished yet. */
bool apex_reloader_first_load_pending(apex_reloader_t *r, uint64_t id);

/* The ids of the configured zones with these origins (0 for one not
 * configured), into ids (one lock, one probe for each of the reloader's
 * zones). */
int apex_reloader_zone_ids(apex_reloader_t *r, const uint8_t *const *origins, size_t count,
			   uint64_t *ids);

/*
 * Publish a version of the configured zone zone_id built elsewhere (by a
 * transfer), taking over the caller's reference to zone, unless that
 * zone was removed meanwhile: APEX_ENOENT, and the reference stays the
 * caller's.  Under the reloader's lock, so that a reconfig removing the
 * zone either comes first (nothing is published) or removes this version.
 * A zone awaiting its first transfer (no copy yet) is then loaded.
 */
int apex_reloader_publish(apex_reloader_t *r, uint64_t zone_id, apex_zone_t *zone);

/*
 * As apex_reloader_publish(), and only if the version of zone's origin
 * served now is expected (which the caller holds): -ESTALE, the reference
 * staying the caller's, when another version replaced it meanwhile.
 */
int apex_reloader_publish_over(apex_reloader_t *r, uint64_t zone_id, const apex_zone_t *expected,
			       apex_zone_t *zone);

/*
 * A transfer of the configured zone zone_id was refused by memory-limit
 * (err says why): the zone's state is failed with err, as for a load
 * that failed, until the next version of it is published.
 */
void apex_reloader_refused(apex_reloader_t *r, uint64_t zone_id, const char *err);

/* Number of configured zones. */
size_t apex_reloader_count(apex_reloader_t *r);

/*
 * Replace every zone's file path by rebase(base, path) (a suffix of
 * path), e.g. its path inside a chroot (privs.h).
 */
void apex_reloader_rebase(apex_reloader_t *r,
			  const char *(*rebase)(const char *base, const char *path),
			  const char *base);

#endif
