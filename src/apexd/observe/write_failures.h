/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The files the daemon writes as it serves: a secondary zone's copy and a
 * zone's journal.  On a full disk every transfer fails to write them, and
 * the log must say so without filling up: a failure is logged once, with
 * the file and its cause, and not again while the same file keeps failing
 * for the same cause (a repeat goes to the debug level only); the first
 * write of that file that works again is logged too, so that the operator
 * sees writing resumed.  Nothing served waits for these files: versions
 * are served from memory whatever becomes of them.
 *
 * The state is one entry per file that is failing, by its path (a zone's
 * copy and its journal are two files); any thread may call these.
 */
#ifndef APEXD_WRITE_FAILURES_H
#define APEXD_WRITE_FAILURES_H

#include <stdbool.h>

/* A write of path failed with rc (an apex code, util/error.h).  True when
 * it is to be logged: the file was not failing, or failed otherwise. */
bool apexd_write_failed(const char *path, int rc);

/* A write of path worked.  True when it had failed (log that it resumed). */
bool apexd_write_worked(const char *path);

/* Whether the last write of path failed: the file is behind what is
 * served, to be written again at the next occasion. */
bool apexd_write_behind(const char *path);

#endif
