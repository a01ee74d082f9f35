/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The difference between two versions of a zone (xfr/diff.h) appended
 * to the zone's journal (xfr/journal.h), as a reload records it.
 *
 * Where to is derived from from (zone/derive.h), the difference is sized
 * first, by a walk of the owners the two do not share that stops at the
 * journal's bound, and then written into the journal's entry in pieces
 * as the second walk makes them: it never lies whole in memory.  That
 * matters because the journal is written after the new version is
 * published, while the old one is still held: at 10M records a reload of
 * a tenth of the zone differs by 107 MiB, which on top of both versions
 * was the reload's highest point.  Otherwise (a version built whole) the
 * difference is made whole, beside two versions that share nothing, and
 * appended.
 */
#ifndef APEX_XFR_JOURNAL_DIFF_H
#define APEX_XFR_JOURNAL_DIFF_H

#include <stddef.h>

#include "xfr/journal.h"
#include "zone/zone.h"

/*
 * Append to j the change from version from to version to (of the same
 * zone; j ends at from's serial or is empty).  APEX_OK, with the records
 * removed and added in *removed and *added; APEX_ESPACE when the change
 * is larger than j keeps (j emptied, as apex_journal_append() does with
 * such a set); or another negative code with err saying why (j as
 * before).
 */
int apex_journal_append_diff(apex_journal_t *j, const apex_zone_t *from, const apex_zone_t *to,
			     size_t *removed, size_t *added, char *err, size_t err_size);

#endif
