/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A test hook: apexd started with APEX_TEST_CRASH_AT=POINT in its
 * environment ends at once, as if killed (_exit: no clean-up, no file
 * flushed or removed), the first time it reaches POINT, so that a test
 * can stop it exactly there and check what a restart makes of what is
 * left on disk (tests/system/test_crash.py).  The points:
 *
 *   journal-appended  an IXFR received by a secondary zone: its version
 *                     published and its change sets in the zone's
 *                     journal, the new copy of the zone not yet written
 *                     (transfers/secondary_transfer.c)
 *   journal-append-writing  an entry of a journal half written: its
 *                     header and change sets, not its checksum (any
 *                     append: an IXFR's, a reload's diff)
 *   journal-compact-writing  the oldest entries of a journal being
 *                     dropped: the new file beside it (FILE.jnl.new)
 *                     holds half of the entries kept
 *   journal-compact-renaming  the new file whole and synced, not yet
 *                     renamed over the journal
 *   journal-compacted  renamed over it, the entry that made room for
 *                     not yet appended
 *   copy-half-written  a zone's copy being written: half of its records
 *                     in FILE.xfr (flushed to it), the rest not
 *   copy-renaming     FILE.xfr whole and synced, not yet renamed over FILE
 *   reload-built      a reload's new version built, not yet published
 *   reload-publishing the same, the reloader's lock taken to publish it
 *   reload-published  published and served, its diff not yet in the
 *                     zone's journal (zones/reload.c)
 *
 * The journal-* and copy-* points are in the library (lib/xfr/journal.c,
 * lib/xfr/zone_copy.c), which reaches this hook through
 * util/crash_hook.h.
 *
 * The variable is read once at start; apexd warns that it is set.
 * Without it, a crash point costs one comparison with NULL.
 */
#ifndef APEXD_CRASH_POINT_H
#define APEXD_CRASH_POINT_H

/* The exit status of a crash point. */
#define APEXD_CRASH_POINT_STATUS 86

/* Read APEX_TEST_CRASH_AT (once, before any thread starts). */
void apexd_crash_point_init(void);

/* End the process here if APEX_TEST_CRASH_AT names point. */
void apexd_crash_point(const char *point);

#endif
