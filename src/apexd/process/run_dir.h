/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The directory of the files apexd creates as root before the privilege
 * drop and removes at exit, after it: the pid file and the control
 * socket.  Removing a file takes write permission on its directory, so
 * that directory must be one the run user can write, as NSD's is: apexd's
 * own run directory (APEX_RUN_DIR, configure's runstatedir + /apex) is
 * created for the run user when missing, or given to it when root owns
 * it (systemd's RuntimeDirectory= makes it root's); any other directory
 * must exist, and one the user cannot write is warned about.
 */
#ifndef APEXD_RUN_DIR_H
#define APEXD_RUN_DIR_H

#include <stddef.h>

#include "process/privs.h"

/*
 * Make the directory of `path` (a file that `what` names in messages,
 * e.g. "pid file") ready for it, for a server that runs as privs.
 * Returns APEX_OK, or APEX_ENOENT (the directory does not exist) or
 * another negative apex code with the reason in err; a directory the run
 * user cannot write is logged as a warning, not an error.  Runs as root
 * before the privilege drop.
 */
int apexd_run_dir_prepare(const char *path, const char *what, const apex_privs_t *privs, char *err,
			  size_t err_size);

#endif
