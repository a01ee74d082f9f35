/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transfer settings in force: the keys, and each zone's primaries
 * (request-xfr), allow-notify, provide-xfr and notify lists, which a
 * reconfig (apexctl reconfig) replaces while apexd runs.
 *
 * A snapshot is an immutable apex_config_t, reference-counted: whoever
 * uses it (the transfer thread for an exchange, an outgoing transfer, the
 * notify thread for a round) takes a reference for that use, so that a
 * reconfig never frees keys or lists under it.  The holder's mutex is
 * held only to take a reference or to swap the pointer, never while a
 * transfer runs.  A worker keeps its own reference for signed answers
 * (apex_settings_cache_t), taken again only after a reconfig: its query
 * path takes no lock and writes no shared line.
 */
#ifndef APEXD_SETTINGS_H
#define APEXD_SETTINGS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "config/daemon_config.h"

typedef struct apex_settings {
	atomic_uint refs;
	bool owned; /* cfg was handed over (a reconfig): freed with the snapshot */
	const apex_config_t *cfg;
	unsigned generation; /* 1 for the start-up configuration, +1 per reconfig */
} apex_settings_t;

typedef struct apex_settings_holder {
	pthread_mutex_t lock;
	apex_settings_t *current;
	/* current->generation, readable without the lock: written only by a
	 * reconfig, so a reader's cache line stays shared between them */
	atomic_uint generation;
} apex_settings_holder_t;

/*
 * One thread's own reference to the settings in force (a worker's, for
 * signed answers), taken again only when a reconfig replaced them: the
 * check is one load of the holder's generation, so the query path takes
 * no lock and writes no shared line.  Zero-initialise it with the holder.
 */
typedef struct apex_settings_cache {
	apex_settings_holder_t *holder;
	apex_settings_t *current; /* NULL until first used */
} apex_settings_cache_t;

/* Hold the start-up configuration cfg, which the caller keeps alive
 * until apex_settings_holder_free().  Returns 0 or APEX_ENOMEM. */
int apex_settings_holder_init(apex_settings_holder_t *h, const apex_config_t *cfg);

/* Drop the holder's reference (snapshots still referenced live on). */
void apex_settings_holder_free(apex_settings_holder_t *h);

/* The settings in force, with a reference: apex_settings_put() it. */
apex_settings_t *apex_settings_get(apex_settings_holder_t *h);

/* Drop a reference taken by apex_settings_get(); NULL is ignored. */
void apex_settings_put(apex_settings_t *s);

/*
 * Put *cfg (a configuration read by a reconfig) in force: it is moved
 * into a new snapshot (*cfg is left empty, to be freed or reused) and
 * those using the old one finish with it.  Returns 0 or APEX_ENOMEM
 * (then *cfg is untouched).
 */
int apex_settings_replace(apex_settings_holder_t *h, apex_config_t *cfg);

/* The generation of the settings in force (one atomic load, no lock). */
unsigned apex_settings_generation(apex_settings_holder_t *h);

/* The configuration in force, through c (refreshed when it changed):
 * valid until the next call on c or apex_settings_cache_free(). */
const apex_config_t *apex_settings_cached(apex_settings_cache_t *c);

/* Drop c's reference (once the thread using it has stopped). */
void apex_settings_cache_free(apex_settings_cache_t *c);

#endif
