/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parts of the reloader (reload.h) shared by reload.c (the list of
 * zones, their loads and requests) and reconfigure.c (a new
 * configuration's zones applied).  Internal to these files.
 */
#ifndef APEXD_RELOAD_INTERNAL_H
#define APEXD_RELOAD_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "config/daemon_config.h"

struct apex_reloader;      /* zones/reload.h */
struct apex_managed_zone;  /* zones/reload.h */
struct apex_reload_ticket; /* zones/reload.h */

/* A new zone entry for zc with one request pending; caller owns it. */
struct apex_managed_zone *apex_reloader_zone_new(struct apex_reloader *r,
						 const apex_zone_config_t *zc);

void apex_reloader_zone_free(struct apex_managed_zone *z);

/* Under the lock: index of the zone with this origin, or -1. */
ssize_t apex_reloader_find_origin(const struct apex_reloader *r, const uint8_t *origin);

/* Under the lock: append z (taking it over); APEX_ENOMEM leaves z to the caller. */
int apex_reloader_zones_push(struct apex_reloader *r, struct apex_managed_zone *z);

/* Under the lock: ask for one more load of z and note the ticket. */
void apex_reloader_request_one(struct apex_managed_zone *z, struct apex_reload_ticket *ticket);

#endif
