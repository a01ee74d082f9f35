/* SPDX-License-Identifier: BSD-3-Clause */
/* Detaching apexd from its terminal (unless -f). */
#ifndef APEXD_DAEMONIZE_H
#define APEXD_DAEMONIZE_H

/*
 * Detach from the terminal: fork (the parent exits 0), new session,
 * working directory "/", stdin and stdout to /dev/null.  stderr is kept:
 * apexd logs there, so point it at a file or a log collector.  Called
 * before any thread exists.  All paths in the config are absolute by now.
 * Returns APEX_OK, or a negative apex code once the failure is logged.
 */
int apexd_daemonize(void);

#endif
