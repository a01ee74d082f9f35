/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zone version built from the records of sinks (zone_sink.h), whatever
 * filled them: the zone file reader (load.c) or a zone transfer
 * (zone_from_wire.c).  apex_version_begin() makes the version's shell
 * (its arena, origin and lookup key, and the name of its source for
 * messages); the caller fills sinks, hands them to apex_version_finish(),
 * which moves their records and memory into the version and builds it
 * (build.h), or gives up with apex_version_abort().
 */
#ifndef APEX_ZONE_VERSION_BUILD_H
#define APEX_ZONE_VERSION_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "zone/build.h"
#include "zone/zone_sink.h"

typedef struct apex_version_build {
	apex_arena_t *arena;   /* the version's, once built */
	apex_zone_builder_t b; /* b.zone, b.tmp, b.files, b.err */
	struct timespec start; /* CLOCK_MONOTONIC at begin */
} apex_version_build_t;

/* The shell of a version of origin read from source (a file name, or a
 * description of a transfer); messages go to err.  APEX_OK or
 * APEX_ENOMEM (v released). */
int apex_version_begin(apex_version_build_t *v, const uint8_t *origin, const char *source,
		       char *err, size_t err_size);

/*
 * Build the version from sinks[0]'s records (the other sinks' records
 * already merged into it) and every sink's memory: on success *out is the
 * version (one reference, the caller's) and APEX_OK; else APEX_ELOAD (the
 * reason in the error buffer) or APEX_ENOMEM.  v is released either way;
 * the sinks stay the caller's to free.
 */
int apex_version_finish(apex_version_build_t *v, apex_sink_t *const *sinks, size_t sink_count,
			apex_zone_t **out);

struct apex_derive_owners; /* zone/derive.h */

/*
 * Derive the version from old instead (zone/derive.h): sink holds the
 * records of the owners an IXFR changed (owners).  As for
 * apex_version_finish(), plus APEX_ENOTSUP when the change is not one a
 * derivation does (start again with a whole build).  v is released.
 */
int apex_version_derive(apex_version_build_t *v, apex_sink_t *sink, apex_zone_t *old,
			const struct apex_derive_owners *owners, apex_zone_t **out);

/* Give up a version before apex_version_finish(). */
void apex_version_abort(apex_version_build_t *v);

#endif
