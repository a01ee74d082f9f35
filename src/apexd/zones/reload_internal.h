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
struct apexd_memory_claim; /* process/memory_limit.h */

/* A new zone entry for zc with one request pending; caller owns it. */
struct apex_managed_zone *apex_reloader_zone_new(struct apex_reloader *r,
						 const apex_zone_config_t *zc);

void apex_reloader_zone_free(struct apex_managed_zone *z);

/* Under the lock: index of the zone with this origin, or -1. */
ssize_t apex_reloader_find_origin(const struct apex_reloader *r, const uint8_t *origin);

/* Under the lock: the zone with this id, or NULL. */
struct apex_managed_zone *apex_reloader_find_id(const struct apex_reloader *r, uint64_t id);

/* Under the lock: append z (taking it over); APEX_ENOMEM leaves z to the caller. */
int apex_reloader_zones_push(struct apex_reloader *r, struct apex_managed_zone *z);

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
			       struct apexd_memory_claim *claim, char *err, size_t err_size);

#endif
