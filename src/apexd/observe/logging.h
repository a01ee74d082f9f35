/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apexd's log as configured: log-target, log-facility and log-level (-v
 * overrides the level).  A log file is opened as apexd starts (as root,
 * say) and given to the user it will run as, so that SIGUSR1 can open it
 * again after logrotate moved it.
 */
#ifndef APEXD_LOGGING_H
#define APEXD_LOGGING_H

#include <stdbool.h>

#include "config/daemon_config.h"
#include "process/privs.h"

/* Log as cfg says (at debug level if verbose), to a file given to privs'
 * user.  Returns APEX_OK, or a negative apex code once the failure is
 * logged. */
int apexd_logging_start(const apex_config_t *cfg, bool verbose, const apex_privs_t *privs);

/* After the chroot (if cfg has one): the log file's path as seen inside
 * it, for SIGUSR1 (a file outside it is warned about). */
void apexd_logging_rebase(const apex_config_t *cfg);

#endif
