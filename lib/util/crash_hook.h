/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Crash points inside the library, for the daemon's crash tests: the
 * library names the moments of a write where a crash matters (a journal
 * rewrite half done, a zone copy before its rename, ...) and calls
 * apex_crash_hook there; the daemon sets it when a test asks for a crash
 * point (src/apexd/process/crash_point.h lists the points), and the hook
 * ends the process if the point is the one asked for.
 *
 * NULL by default: a point then costs one load and one comparison.  Set
 * once, before any thread starts, and read only after; never called on
 * the query path.
 */
#ifndef APEX_UTIL_CRASH_HOOK_H
#define APEX_UTIL_CRASH_HOOK_H

#include <stdbool.h>
#include <stddef.h>

extern void (*apex_crash_hook)(const char *point);

/* Whether crash points are armed (some work, such as a flush that makes a
 * crash point's state visible on disk, is done only then). */
static inline bool apex_crash_points_armed(void)
{
	return apex_crash_hook != NULL;
}

/* The crash point named point: ends the process if it is the one asked for. */
static inline void apex_crash_at(const char *point)
{
	if (apex_crash_hook != NULL)
		apex_crash_hook(point);
}

#endif
