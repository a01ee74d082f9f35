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

/*
 * What a filtered parse (apex_zone_load_filtered()) does with the records
 * of a file.  drop is asked for each record, checked as a load checks it,
 * from several parser threads at once: 1 drops it, 0 keeps it, a
 * negative code ends the parse.  restart: the file is parsed again from
 * its start on one thread (a parallel parse found an error, or could not
 * be trusted): forget what drop saw.  kept is given every record kept,
 * in file order, once the whole file is parsed; its error ends the
 * parse.  Owner names and RDATA are borrowed for the call.
 */
typedef struct apex_load_filter {
	int (*drop)(void *ctx, const uint8_t *owner, uint16_t type, uint32_t ttl,
		    const uint8_t *rdata, size_t rdlength);
	void (*restart)(void *ctx);
	int (*kept)(void *ctx, const uint8_t *owner, uint16_t type, uint32_t ttl,
		    const uint8_t *rdata, size_t rdlength);
	void *ctx;
} apex_load_filter_t;

/*
 * Parse the master file `file` for the zone origin as apex_zone_load()
 * does (the same threads, checks and "FILE:LINE: reason" errors), but
 * build no version: each record goes to filter (above).  The memory it
 * takes is that of the records kept.  digest (NULL: not wanted) receives
 * the file's SHA-256 as apex_zone_load() keeps it in the version
 * (zone/file_digest.h; not valid if the parse failed or read an
 * $INCLUDE).  Returns APEX_OK, APEX_ELOAD with err, APEX_ENOMEM or the
 * filter's error.
 */
int apex_zone_load_filtered(const char *file, const uint8_t *origin,
			    const apex_load_filter_t *filter, apex_file_digest_t *digest, char *err,
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
