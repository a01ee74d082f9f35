/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apexd's signals, taken synchronously by the main thread (sigwait):
 * SIGTERM and SIGINT stop it, SIGUSR1 opens the log file again
 * (logrotate), SIGHUP is handed to the caller's handler (a reload of
 * every zone, zones/sighup.h).
 */
#ifndef APEXD_SIGNALS_H
#define APEXD_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/* What SIGHUP does: work that may go on after the handler returns,
 * followed by polling. */
typedef struct apexd_signal_handlers {
	/* SIGHUP received; returns true when work is left pending */
	bool (*hangup)(void *arg);
	/* every 100 ms while work is pending (signals still taken); returns
	 * true while it still is */
	bool (*poll)(void *arg);
	void *arg;
} apexd_signal_handlers_t;

/*
 * Block SIGTERM, SIGINT, SIGHUP and SIGUSR1 (their set in *set), to be
 * taken by apexd_signals_wait(): every thread created from here on
 * inherits the mask.  SIGPIPE is ignored.
 */
void apexd_signals_block(sigset_t *set);

/* Take the signals of set on this (main) thread until SIGTERM or SIGINT. */
void apexd_signals_wait(const sigset_t *set, const apexd_signal_handlers_t *on);

#endif
