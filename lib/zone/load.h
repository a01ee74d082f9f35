/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading a zone version from an RFC 1035 master file (through ldns). */
#ifndef APEX_ZONE_LOAD_H
#define APEX_ZONE_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "zone/zone.h"

/*
 * Load the master file `file` for the zone `origin` (wire format) and
 * build a complete immutable version (apex_zone_build()).  $ORIGIN,
 * $TTL, $INCLUDE, relative names and RFC 3597 unknown types are read.
 *
 * On success returns APEX_OK and *out is a new version with one
 * reference, owned by the caller (release with apex_zone_unref()).
 * On failure returns APEX_ELOAD (or APEX_ENOMEM), *out is NULL and err
 * holds "FILE:LINE: reason" (or "FILE: reason").  Warnings (missing
 * glue, RRsets with differing TTLs) are logged, not fatal.
 */
int apex_zone_load(const char *file, const uint8_t *origin, apex_zone_t **out, char *err,
		   size_t err_size);

/* The phases of a load, for its progress: the file read and its records
 * parsed; the version built. */
typedef enum {
	APEX_LOAD_PARSED,
	APEX_LOAD_BUILT,
} apex_load_phase_t;

/*
 * Told of each load's phases (a zone file's or a transfer's): the file
 * (or the transfer's name for it), the records and the seconds the phase
 * took, and the threads it used.  Called on the loading thread; set once
 * before any load (NULL: nobody).
 */
typedef void (*apex_load_progress_t)(const char *file, apex_load_phase_t phase, size_t records,
				     double seconds, size_t threads);
void apex_load_set_progress(apex_load_progress_t fn);

#endif
