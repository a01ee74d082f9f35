/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The threads that run the secondary zones' refreshes (SOA query,
 * transfer, verification, publication), at most xfr-in-max at once.
 *
 * The transfer thread (secondary.c) schedules: it hands a zone whose time
 * has come to apex_refresh_pool_run(), which returns at once, and a thread
 * of the pool refreshes it while the others refresh other zones.  A zone
 * is refreshed by one thread at a time: it is busy from the hand-over
 * until the refresh ended, and the scheduler leaves a busy zone alone.
 * Threads start as they are needed, up to the limit, and all run at the
 * priority reload-priority gives the transfer thread.
 */
#ifndef APEXD_REFRESH_POOL_H
#define APEXD_REFRESH_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct apex_refresh_pool {
	pthread_mutex_t lock;
	pthread_cond_t work;
	/* the refresh of one item, on a thread of the pool */
	void (*run)(void *arg, void *item);
	/* after each item's refresh, with no lock held (e.g. to wake the
	 * scheduler) */
	void (*done)(void *arg, void *item);
	/* on a thread that found nothing to do for APEX_REFRESH_POOL_REST_MS,
	 * and on each thread as it stops, with no lock held (e.g. to close
	 * what the thread keeps open between refreshes); NULL: nothing */
	void (*rest)(void *arg);
	void *arg;
	bool idle; /* the threads' priority (thread_priority.h) */
	int nice;
	void **queue; /* handed over, not yet taken; owned array */
	size_t queued, capacity;
	size_t in_flight; /* handed over and not yet done */
	size_t idle_threads;
	pthread_t *threads; /* owned */
	size_t thread_count, thread_capacity;
	bool stopping;
} apex_refresh_pool_t;

#define APEX_REFRESH_POOL_REST_MS 500

/* An empty pool (no thread yet) for run, done and rest. */
void apex_refresh_pool_init(apex_refresh_pool_t *p, void (*run)(void *arg, void *item),
			    void (*done)(void *arg, void *item), void (*rest)(void *arg), void *arg,
			    bool idle, int nice);

/* Items handed over and not done yet. */
size_t apex_refresh_pool_in_flight(apex_refresh_pool_t *p);

/*
 * Hand item over, when fewer than max are in flight: a thread of the pool
 * (started now if none is idle) runs it.  Returns false when max are in
 * flight or no thread could run it (the caller tries again later).
 */
bool apex_refresh_pool_run(apex_refresh_pool_t *p, void *item, size_t max);

/* Wait for the items in flight to be done, stop and join the threads;
 * the pool can be freed after it. */
void apex_refresh_pool_stop(apex_refresh_pool_t *p);

void apex_refresh_pool_free(apex_refresh_pool_t *p);

#endif
