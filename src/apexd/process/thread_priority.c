/* SPDX-License-Identifier: BSD-3-Clause */
/* The priority of the threads that build zone versions (thread_priority.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "process/thread_priority.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config/daemon_config.h"
#include "util/log.h"

/*
 * idle (the default): SCHED_IDLE.  A worker that wakes up preempts it at
 * once, and a reload only gets the CPU time no worker wants.  At nice 10
 * a reload still takes about a tenth of a CPU a busy worker shares with
 * it (measured: a saturated worker answered 85 to 90% of its steady rate
 * while the 1M-record nu. zone reloaded at nice 10, 96 to 99% under
 * SCHED_IDLE).  The price: with every CPU kept busy by the workers the
 * reload gets next to no CPU time (it finishes when the load drops), and
 * an unprivileged thread cannot leave SCHED_IDLE again.
 *
 * nice N: SCHED_OTHER at nice N: a reload always progresses, with about
 * 1/(1 + 1.25^N) of a busy CPU.
 *
 * Threads created from here on (the zone loader's parser threads) inherit
 * both the policy and the nice value: pthread_create's default is
 * PTHREAD_INHERIT_SCHED, and Linux copies them to every new thread.
 */
void apex_thread_lower_priority(const char *what, bool idle, int nice)
{
	const char *who = what != NULL ? what : "transfer thread";

	if (idle) {
		struct sched_param param = { .sched_priority = 0 };
		int err = pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);

		if (err == 0 && what == NULL)
			return;
		if (err == 0) {
			apex_info("%s: scheduling policy idle (reload-priority idle): it uses only "
				  "CPU time the workers leave",
				  what);
			return;
		}
		apex_warning("%s: cannot set scheduling policy idle: %s; nice %d instead", who,
			     strerror(err), APEX_CONFIG_DEFAULT_RELOAD_NICE);
		if (setpriority(PRIO_PROCESS, (id_t)gettid(), APEX_CONFIG_DEFAULT_RELOAD_NICE) != 0)
			apex_warning("%s: cannot set nice %d: %s", who,
				     APEX_CONFIG_DEFAULT_RELOAD_NICE, strerror(errno));
		return;
	}
	if (nice > 0 && setpriority(PRIO_PROCESS, (id_t)gettid(), nice) != 0) {
		apex_warning("%s: cannot set nice %d: %s", who, nice, strerror(errno));
		return;
	}
	if (what != NULL)
		apex_info("%s: nice %d (reload-priority %d)", what, nice, nice);
}
