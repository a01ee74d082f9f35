/* SPDX-License-Identifier: BSD-3-Clause */
/* apexd's signals (signals.h). */
#include "process/signals.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "util/log.h"

void apexd_signals_block(sigset_t *set)
{
	/* Signals are taken synchronously by the main thread (sigwait); every
	 * thread created from here on inherits the mask. */
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN); /* a peer that closed its TCP end yields EPIPE, not death */
}

/* SIGUSR1: the log file opened again (logrotate moved it). */
static void reopen_log(void)
{
	char err[600];

	if (apex_log_reopen(err, sizeof(err)) < 0)
		apex_error("SIGUSR1: %s; logging on to the file open before", err);
	else
		apex_info("SIGUSR1 received: log file opened again");
}

void apexd_signals_wait(const sigset_t *set, const apexd_signal_handlers_t *on)
{
	bool pending = false;
	const struct timespec tick = { 0, 100 * 1000 * 1000 };

	for (;;) {
		int sig = pending ? sigtimedwait(set, NULL, &tick) : sigwaitinfo(set, NULL);

		if (sig < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (pending)
				pending = on->poll(on->arg);
			continue;
		}
		if (sig < 0) {
			apex_error("sigwait: %s", strerror(errno));
			break;
		}
		if (sig == SIGUSR1) {
			reopen_log();
			continue;
		}
		if (sig == SIGHUP) {
			pending = on->hangup(on->arg);
			continue;
		}
		apex_info("%s received: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		break;
	}
}
