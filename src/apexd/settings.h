/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transfer settings in force: the keys, and each zone's primaries
 * (request-xfr), allow-notify, provide-xfr and notify lists, which a
 * reconfig (apexctl reconfig) replaces while apexd runs.
 *
 * A snapshot is an immutable apex_config_t, reference-counted: whoever
 * uses it (the transfer thread for an exchange, an outgoing transfer, the
 * notify thread for a round, a worker answering a signed message or a
 * NOTIFY) takes a reference for that use, so that a reconfig never frees
 * keys or lists under it.  The holder's mutex is held only to take a
 * reference or to swap the pointer: never while a transfer runs, so a
 * worker that takes it never waits for one.  Plain queries never take it.
 */
#ifndef APEXD_SETTINGS_H
#define APEXD_SETTINGS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "daemon_config.h"

typedef struct apex_settings {
	atomic_uint refs;
	bool owned; /* cfg was handed over (a reconfig): freed with the snapshot */
	const apex_config_t *cfg;
	unsigned generation; /* 1 for the start-up configuration, +1 per reconfig */
} apex_settings_t;

typedef struct apex_settings_holder {
	pthread_mutex_t lock;
	apex_settings_t *current;
} apex_settings_holder_t;

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

/* The generation of the settings in force (a cheap check for a change). */
unsigned apex_settings_generation(apex_settings_holder_t *h);

#endif
