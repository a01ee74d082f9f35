/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running one function over the parts of a range on several threads,
 * for the zone loader and builder: the work of the part [begin, end)
 * must not touch what another part writes.
 */
#ifndef APEX_UTIL_PARALLEL_H
#define APEX_UTIL_PARALLEL_H

#include <stddef.h>

/* Work on [begin, end) of the range; returns APEX_OK or an error code. */
typedef int (*apex_parallel_fn)(void *ctx, size_t begin, size_t end);

/*
 * Split [0, count) into at most `threads` contiguous parts of about the
 * same size (none smaller than min_part, so that small ranges stay on
 * this thread) and call fn on each, the first on the calling thread, the
 * others on threads started for the call and joined before it returns.
 * If a thread cannot be started, its part runs on the calling thread.
 * Returns APEX_OK, or the error of the first part (in range order) that
 * failed; every part runs either way.
 */
int apex_parallel_for(size_t count, unsigned threads, size_t min_part, apex_parallel_fn fn,
		      void *ctx);

/* How many parts to split n items into: one per thread, at most max,
 * none smaller than min_part (so that a small range stays one part), and
 * at least one.  For callers that keep per-part state. */
size_t apex_parallel_parts(unsigned threads, size_t n, size_t max, size_t min_part);

#endif
