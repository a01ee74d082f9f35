/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A secondary's copy of a zone on disk: the records of a transfer written
 * as a zone file, so that a restart serves the zone at once, even with
 * every primary down.
 *
 * The records go to "FILE.xfr" as they arrive; apex_zone_copy_commit()
 * flushes, syncs and closes it and only then renames it over FILE, so
 * FILE is always either the old copy or the new one, whole: never a copy
 * cut short by a full disk.  apex_zone_copy_abort() removes the partial
 * file.  Records are written as text, one per line, with absolute owner
 * names: the common types by xfr/record_text.h, the rest by ldns.
 *
 * The first failure (a file that cannot be created, a write, a sync or a
 * close that fails: a full disk, a directory the server may not write)
 * gives the copy up at once: FILE.xfr is removed, so that a partial copy
 * does not hold the space, the later records are not written, and
 * apex_zone_copy_commit() returns that failure, the errno the system
 * gave (-ENOSPC, -EACCES, ...), with the file in its message.  A caller
 * whose version does not depend on the copy (a transfer goes on being
 * served from memory) may thus go on adding records and look at the
 * outcome once, at the commit.
 */
#ifndef APEX_XFR_ZONE_COPY_H
#define APEX_XFR_ZONE_COPY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/give_way.h"
#include "xfr/changes.h"
#include "zone/zone.h"

typedef struct apex_zone_copy {
	FILE *fp;       /* NULL once given up or finished */
	char *path;     /* FILE; owned */
	char *tmp_path; /* FILE.xfr; owned */
	char *text;     /* one record's line (APEX_RECORD_TEXT_MAX); owned */
	uint64_t records;
	uint64_t half; /* records of a version at half way (a crash point), or 0 */
	int error;     /* the first failure (an apex code); the copy is given up */
} apex_zone_copy_t;

/* Start a copy to path; header is written first as a comment line.
 * APEX_OK, or the failure with the reason in err; either way c is to be
 * released by apex_zone_copy_commit() or apex_zone_copy_abort() (on a
 * failure, adding to it does nothing and the commit returns the failure). */
int apex_zone_copy_begin(apex_zone_copy_t *c, const char *path, const char *header, char *err,
			 size_t err_size);

/* Start a copy written to fp, an open stream (a pipe to a verifier)
 * rather than a file: the records as to a file, no header, nothing
 * renamed; fp is the copy's, closed by apex_zone_copy_close_stream().
 * APEX_OK, or APEX_ENOMEM (the copy is given up, fp closed). */
int apex_zone_copy_stream(apex_zone_copy_t *c, FILE *fp);

/* Flush and close a stream's copy; c is released.  APEX_OK, or the
 * first failure (-EPIPE when the reader went away). */
int apex_zone_copy_close_stream(apex_zone_copy_t *c);

/* Write one record (class IN).  APEX_OK, or the copy's failure (it is
 * given up: see above). */
int apex_zone_copy_add(apex_zone_copy_t *c, const apex_rr_t *rr);

/* Write every record of zone (its SOA first), as the copy of a version
 * derived rather than received whole (an IXFR applied). */
int apex_zone_copy_version(apex_zone_copy_t *c, const apex_zone_t *zone);

/* The same, asking give_way(ctx) before the first record and at every
 * APEX_ZONE_COPY_GIVE_WAY_EVERY-th whether to give way: if it says so,
 * the copy is given up (its partial file removed, FILE untouched) with
 * APEX_ECANCELED, for the caller to write it again later.  So that the
 * copy of a large zone (about a second for 1M records) does not hold up
 * a transfer waiting for the same thread. */
#define APEX_ZONE_COPY_GIVE_WAY_EVERY 4096
int apex_zone_copy_version_or_give_way(apex_zone_copy_t *c, const apex_zone_t *zone,
				       apex_give_way_fn give_way, void *ctx);

/* Flush, sync, close and rename over the file; c is released either way.
 * APEX_OK, or the copy's failure with the file and the cause in err: FILE
 * is then left as it was and FILE.xfr removed. */
int apex_zone_copy_commit(apex_zone_copy_t *c, char *err, size_t err_size);

/* Flush what c holds to the system (no sync): APEX_OK, or the copy's
 * failure (it is given up).  For a batch (zone_copy_batch.h), which syncs
 * many copies at once and then commits each by
 * apex_zone_copy_commit_synced(). */
int apex_zone_copy_flush(apex_zone_copy_t *c);

/* apex_zone_copy_commit() for a copy whose file the caller synced after
 * apex_zone_copy_flush() (syncfs(2)): closed and renamed, not synced again. */
int apex_zone_copy_commit_synced(apex_zone_copy_t *c, char *err, size_t err_size);

/* Remove the partial file; c is released (also one released already). */
void apex_zone_copy_abort(apex_zone_copy_t *c);

#endif
