/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NOTIFY out: a zone's secondaries (notify: in apex.conf(5)) are told of
 * every new serial, from a thread of its own.
 *
 * Whoever publishes a new version (the reload thread, the transfer
 * thread) calls apex_notifier_changed(); the notifier thread then sends
 * a NOTIFY to every target of the zone, signed with the target's key,
 * retried with back-off (1, 2, 4 s) until answered, and logs a target that
 * never answers.  A change that comes while the targets of a zone are
 * being notified is sent again afterwards with the newest serial.
 */
#ifndef APEXD_NOTIFIER_H
#define APEXD_NOTIFIER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/daemon_config.h"
#include "serve/server.h"
#include "zones/settings.h"

typedef struct apex_notifier {
	apex_server_t *server;
	/* the notify lists and keys in force (a round keeps those it began
	 * with: a reconfig changes the targets of the next) */
	apex_settings_holder_t *settings;
	/* the zones with a change to announce, under lock (each at most once) */
	uint8_t (*pending)[APEX_NAME_MAX];
	size_t pending_count, pending_capacity;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	int stop_fd; /* eventfd: abandon the NOTIFY under way */
	pthread_t thread;
	bool thread_started;
	atomic_ullong sent, failed;
	/* The notifier thread's: the zones with notify targets of the
	 * settings of targets_generation (0: none yet), sorted by origin, so
	 * that a publication among thousands of zones is not a pass over all. */
	struct apex_name_ref *targets;
	size_t targets_count;
	unsigned targets_generation;
} apex_notifier_t;

/* settings must outlive it.  Returns 0 or an apex code. */
int apex_notifier_init(apex_notifier_t *n, apex_server_t *server, apex_settings_holder_t *settings);

/* Start the thread (it sleeps while no zone has a change to announce). */
int apex_notifier_start(apex_notifier_t *n);

void apex_notifier_stop(apex_notifier_t *n);

void apex_notifier_free(apex_notifier_t *n);

/* apexctl notify: notify origin's targets now.  APEX_ENOENT: it has none. */
int apex_notifier_notify_now(apex_notifier_t *n, const uint8_t *origin);

/* A new version of origin is served: notify its targets (those in force
 * when it is sent).  Never blocks for long (locks held for a lookup). */
void apex_notifier_changed(apex_notifier_t *n, const uint8_t *origin);

#endif
