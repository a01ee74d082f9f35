/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The question a long piece of work off the query path asks between its
 * steps (a zone's copy written, a version built compact): whether to give
 * way to something more urgent that waits for the same thread, a NOTIFY
 * above all.  On true the work is given up as on a failure, with
 * APEX_ECANCELED, and its caller does it again later.
 */
#ifndef APEX_UTIL_GIVE_WAY_H
#define APEX_UTIL_GIVE_WAY_H

#include <stdbool.h>

/* true: give way now.  ctx is the asker's. */
typedef bool (*apex_give_way_fn)(void *ctx);

#endif
