/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pid file (pid-file:, -P): written as root before the privilege
 * drop, in a directory made ready for the run user (run_dir.h), and
 * given to that user, as NSD does, so that it can be removed at exit.
 */
#ifndef APEXD_PID_FILE_H
#define APEXD_PID_FILE_H

#include "process/privs.h"

/* Write this process's id to path.  Returns APEX_OK, or a negative apex
 * code once the failure is logged. */
int apexd_pid_file_write(const char *path, const apex_privs_t *privs);

/* Remove the pid file at path, as seen inside chroot_dir (NULL: none);
 * a failure is a warning. */
void apexd_pid_file_remove(const char *path, const char *chroot_dir);

#endif
