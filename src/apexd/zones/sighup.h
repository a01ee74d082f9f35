/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What SIGHUP does: a reload of every zone, queued for the reload thread
 * like `apexctl reload`, and followed until its loads are done.  systemd
 * hears RELOADING=1 when it is queued, READY=1 once they are.  The
 * handlers of process/signals.h, their arg an apexd_sighup_t.
 */
#ifndef APEXD_SIGHUP_H
#define APEXD_SIGHUP_H

#include <stdbool.h>
#include <stddef.h>

#include "zones/reload.h"

typedef struct apexd_sighup {
	apex_reloader_t *reloader;
	apex_reload_ticket_t *tickets; /* of the loads not finished yet */
	size_t pending;                /* how many */
} apexd_sighup_t;

/* A SIGHUP: every zone reloaded (a reload still pending is no longer
 * followed).  Returns true while loads are pending. */
bool apexd_sighup_reload(void *arg);

/* Whether the loads are still pending; READY=1 once they are done. */
bool apexd_sighup_poll(void *arg);

/* Free the tickets left. */
void apexd_sighup_free(apexd_sighup_t *s);

#endif
