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
