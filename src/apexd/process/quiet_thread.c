/* SPDX-License-Identifier: BSD-3-Clause */
/* Threads that take no signal. */
#include "process/quiet_thread.h"

#include <signal.h>

int apex_quiet_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;

	/* the new thread inherits the mask of the one that creates it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}
