/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket: a Unix stream socket (mode 0600) served on a
 * libuv loop of its own, on a thread of its own, never on a worker.
 * One request per connection (doc/control-protocol.md): the client
 * sends one line, apexd replies and closes.  A request line must arrive
 * within APEX_CONTROL_READ_TIMEOUT seconds; reload and reconfig replies
 * wait for their zone loads, however long they take.
 */
#ifndef APEXD_CONTROL_H
#define APEXD_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

#include "control/commands.h"

#define APEX_CONTROL_READ_TIMEOUT 10 /* seconds */
#define APEX_CONTROL_MAX_CONNECTIONS 64

typedef struct apex_control apex_control_t;

/*
 * Create the socket at path (a stale socket left by a dead apexd is
 * replaced; a live one is an error), start the control thread and
 * return the new control server in *out.  ctx is copied.  On failure
 * returns a negative APEX_E* code with the reason in err.
 */
int apex_control_start(apex_control_t **out, const char *path, const apex_command_context_t *ctx,
		       char *err, size_t err_size);

/*
 * apex_control_start() in two steps, for a start that drops privileges
 * in between: apex_control_open() creates the socket (chowned to
 * owner:group unless both are -1) but starts no thread;
 * apex_control_run() starts the thread.  A control server that was
 * opened but never run is released with apex_control_stop().
 */
int apex_control_open(apex_control_t **out, const char *path, const apex_command_context_t *ctx,
		      uid_t owner, gid_t group, char *err, size_t err_size);
int apex_control_run(apex_control_t *ctl, char *err, size_t err_size);

/* The reloader's notify callback (arg: the apex_control_t): a zone load finished. */
void apex_control_notify(void *arg);

/* Stop the thread, close every connection, remove the socket file and free ctl. */
void apex_control_stop(apex_control_t *ctl);

#endif
