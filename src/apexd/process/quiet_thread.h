/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Threads that take no signal: every signal apexd handles is waited for
 * by the main thread in sigwait() (main.c), so each thread it starts
 * (workers, control, metrics, dnstap's writer) blocks them all.
 */
#ifndef APEXD_QUIET_THREAD_H
#define APEXD_QUIET_THREAD_H

#include <pthread.h>

/* pthread_create() of fn(arg) with every signal blocked; 0 or -errno. */
int apex_quiet_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif
