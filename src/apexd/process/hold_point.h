/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A test hook: apexd started with APEX_TEST_HOLD_AT=POINT:FILE in its
 * environment holds the thread that reaches POINT there while FILE
 * exists (at most 120 s), after creating FILE.held to say so, so that a
 * test can act while a thread is held in a given state (a lock held) and
 * check that the others go on (tests/system/test_secondary.py).  The
 * points:
 *
 *   secondary-zones-swapping  the transfer thread applying a reconfig's
 *                     secondary zones, the write side of its zones_lock
 *                     held (transfers/secondary_zones.c)
 *   journal-recording  the reload thread between a reload's publication
 *                     and its journal record (wiring.c), for
 *                     tests/system/test_primary.py
 *
 * The variable is read once at start; apexd warns that it is set.
 * Without it, a hold point costs one comparison with NULL.
 */
#ifndef APEXD_HOLD_POINT_H
#define APEXD_HOLD_POINT_H

/* Read APEX_TEST_HOLD_AT (once, before any thread starts). */
void apexd_hold_point_init(void);

/* Hold the calling thread here while APEX_TEST_HOLD_AT names point and
 * its file exists. */
void apexd_hold_point(const char *point);

#endif
