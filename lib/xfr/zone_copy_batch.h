/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copies of small zones on disk (zone_copy.h) settled together: each is
 * written and flushed by its transfer, then a batch of them is synced by
 * one syncfs(2) for each file system they are on, and each renamed over
 * its file.  An fsync(2) of each copy costs a journal commit each: for
 * the thousands of members of a catalog transferred at start, more than
 * their transfers.
 *
 * A copy waits until the batch holds max of them (settled at once, by
 * the thread that adds the last) or until delay_ms after the oldest was
 * added (settled by whoever calls apex_zone_copy_batch_settle() once
 * apex_zone_copy_batch_due() has come: the transfer scheduler).  Until
 * then FILE keeps the copy before: a crash loses the copies waiting, as
 * one before their commit would.  A sync that fails falls back to an
 * fsync(2) of each copy, whose failure is that copy's alone.
 *
 * Thread-safe: copies are added from any thread; one batch settles at a
 * time, and a settle of one path waits for one under way.
 */
#ifndef APEX_XFR_ZONE_COPY_BATCH_H
#define APEX_XFR_ZONE_COPY_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "xfr/zone_copy.h"

/* Told of each copy settled: the name and serial given to
 * apex_zone_copy_batch_add(), the copy's file, and APEX_OK or the failure
 * with the file and cause in err (apex_zone_copy_commit()'s). */
typedef void (*apex_zone_copy_settled_fn)(void *arg, const char *name, const char *path,
					  uint32_t serial, int rc, const char *err);

typedef struct apex_zone_copy_batch apex_zone_copy_batch_t;

/* A batch of at most max copies (at least 1), each waiting at most
 * delay_ms, settled copies told to settled(arg, ...).  NULL when out of
 * memory.  Freed by apex_zone_copy_batch_free(). */
apex_zone_copy_batch_t *apex_zone_copy_batch_new(size_t max, uint64_t delay_ms,
						 apex_zone_copy_settled_fn settled, void *arg);

/* Settle what waits, then free b (NULL: nothing). */
void apex_zone_copy_batch_free(apex_zone_copy_batch_t *b);

/* c, every record written, flushed and handed to b (c is released): it
 * waits, or is settled at once on this thread when it failed, when b is
 * full with it, or when out of memory.  name (copied) and serial are for
 * the settled function; now_ms is CLOCK_MONOTONIC milliseconds. */
void apex_zone_copy_batch_add(apex_zone_copy_batch_t *b, apex_zone_copy_t *c, const char *name,
			      uint32_t serial, uint64_t now_ms);

/* When the oldest copy waiting is due (CLOCK_MONOTONIC milliseconds), or
 * 0 when none waits. */
uint64_t apex_zone_copy_batch_due(apex_zone_copy_batch_t *b);

/* Settle the copies waiting: all of them; with path, only when one of
 * them is a copy of path (then all), so that a new copy of path may
 * begin (it would truncate the waiting one's file). */
void apex_zone_copy_batch_settle(apex_zone_copy_batch_t *b, const char *path);

/* Drop the copies of path waiting, if any, once a settle under way has
 * ended: each is aborted (its FILE.xfr removed), not renamed over path,
 * nor told.  For a zone no longer served whose files are being removed:
 * settled later, its copy would fail to be renamed, or bring the file
 * back.  Returns how many were dropped. */
size_t apex_zone_copy_batch_drop(apex_zone_copy_batch_t *b, const char *path);

#endif
