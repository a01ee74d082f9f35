/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A secondary zone's copy on disk (xfr/zone_copy.h) written, and what
 * came of it logged: by the transfer thread after each transfer (and at a
 * refresh while the copy is behind what is served), and at start by the
 * replay of a journal ahead of the copy (transfers/journal_replay.h).
 *
 * A copy that cannot be written (a full disk, a directory the server may
 * not write) changes nothing served: the version is served from memory,
 * FILE keeps the last copy written whole, and the next transfer or refresh
 * writes the copy whole again.  The failure is logged once, with the file
 * and the system's cause, until a write of that copy works again, which
 * is logged too (observe/write_failures.h).
 */
#ifndef APEXD_COPIES_H
#define APEXD_COPIES_H

#include <stdint.h>

#include "xfr/zone_copy.h"
#include "zone/zone.h"

/* Log the outcome rc of writing file, the copy of zone name at serial
 * (err: the reason of a failure, with the file). */
void apexd_copy_written(const char *name, const char *file, uint32_t serial, int rc,
			const char *err);

/* Write file, the copy of zone name, whole from version (header: its first
 * line's comment) and log the outcome.  Returns APEX_OK or the failure. */
int apexd_copy_write(const char *name, const char *file, const apex_zone_t *version,
		     const char *header);

/* The same, giving way to a transfer when give_way(ctx) says so as it
 * writes (xfr/zone_copy.h): then APEX_ECANCELED, FILE as it was, logged
 * at debug level only, for the caller to write it again later. */
int apexd_copy_write_or_give_way(const char *name, const char *file, const apex_zone_t *version,
				 const char *header, apex_give_way_fn give_way, void *ctx);

#endif
