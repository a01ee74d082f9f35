/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A secondary's copy of a zone on disk: the records of a transfer written
 * as a zone file, so that a restart serves the zone at once, even with
 * every primary down.
 *
 * The records go to "FILE.xfr" as they arrive; apex_zone_copy_commit()
 * syncs it and renames it over FILE, so FILE is always either the old
 * copy or the new one, whole.  apex_zone_copy_abort() removes the
 * partial file.  Records are written as text, one per line, with
 * absolute owner names: the common types by xfr/record_text.h, the rest
 * by ldns.
 */
#ifndef APEX_XFR_ZONE_COPY_H
#define APEX_XFR_ZONE_COPY_H

#include <stdint.h>
#include <stdio.h>

#include "xfr/changes.h"
#include "zone/zone.h"

typedef struct apex_zone_copy {
	FILE *fp;
	char *path;     /* FILE; owned */
	char *tmp_path; /* FILE.xfr; owned */
	char *text;     /* one record's line (APEX_RECORD_TEXT_MAX); owned */
	uint64_t records;
} apex_zone_copy_t;

/* Start a copy to path; header is written first as a comment line.
 * APEX_OK, or an apex code with the reason in err. */
int apex_zone_copy_begin(apex_zone_copy_t *c, const char *path, const char *header, char *err,
			 size_t err_size);

/* Write one record (class IN). */
int apex_zone_copy_add(apex_zone_copy_t *c, const apex_rr_t *rr);

/* Write every record of zone (its SOA first), as the copy of a version
 * derived rather than received whole (an IXFR applied). */
int apex_zone_copy_version(apex_zone_copy_t *c, const apex_zone_t *zone);

/* Sync and rename over the file; c is released either way. */
int apex_zone_copy_commit(apex_zone_copy_t *c, char *err, size_t err_size);

/* Remove the partial file; c is released. */
void apex_zone_copy_abort(apex_zone_copy_t *c);

#endif
