/* SPDX-License-Identifier: BSD-3-Clause */
/* The threads that refresh secondary zones (refresh_pool.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/refresh_pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "process/thread_priority.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/log.h"

void apex_refresh_pool_init(apex_refresh_pool_t *p, void (*run)(void *arg, void *item),
			    void (*done)(void *arg, void *item), void (*rest)(void *arg), void *arg,
			    bool idle, int nice)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	p->run = run;
	p->done = done;
	p->rest = rest;
	p->arg = arg;
	p->idle = idle;
	p->nice = nice;
}

size_t apex_refresh_pool_in_flight(apex_refresh_pool_t *p)
{
	pthread_mutex_lock(&p->lock);
	size_t n = p->in_flight;
	pthread_mutex_unlock(&p->lock);
	return n;
}

static void *pool_main(void *arg)
{
	apex_refresh_pool_t *p = arg;

	pthread_setname_np(pthread_self(), "apexd-xfr-in");
	apex_thread_lower_priority("transfer thread", p->idle, p->nice);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		bool rested = p->rest == NULL;

		while (p->queued == 0 && !p->stopping) {
			p->idle_threads++;
			if (rested) {
				pthread_cond_wait(&p->work, &p->lock);
				p->idle_threads--;
				continue;
			}
			/* a while without work: rest once, then wait for it */
			struct timespec until;
			int err;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += APEX_REFRESH_POOL_REST_MS * 1000000L;
			until.tv_sec += until.tv_nsec / 1000000000L;
			until.tv_nsec %= 1000000000L;
			err = pthread_cond_timedwait(&p->work, &p->lock, &until);
			p->idle_threads--;
			if (err == ETIMEDOUT && p->queued == 0 && !p->stopping) {
				pthread_mutex_unlock(&p->lock);
				p->rest(p->arg);
				pthread_mutex_lock(&p->lock);
				rested = true;
			}
		}
		if (p->queued == 0)
			break; /* stopping, nothing left */
		void *item = p->queue[0];

		memmove(p->queue, p->queue + 1, --p->queued * sizeof(*p->queue));
		pthread_mutex_unlock(&p->lock);
		p->run(p->arg, item);
		pthread_mutex_lock(&p->lock);
		p->in_flight--;
		pthread_cond_broadcast(&p->work); /* apex_refresh_pool_stop() waits for it */
		pthread_mutex_unlock(&p->lock);
		if (p->done != NULL)
			p->done(p->arg, item);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	if (p->rest != NULL)
		p->rest(p->arg);
	return NULL;
}

/* Under the lock: one thread more; false when none could start. */
static bool add_thread(apex_refresh_pool_t *p)
{
	pthread_t *grown =
		apex_grow(p->threads, &p->thread_capacity, p->thread_count, sizeof(*grown), 4);
	int err;

	if (grown == NULL)
		return false;
	p->threads = grown;
	if ((err = pthread_create(&p->threads[p->thread_count], NULL, pool_main, p)) != 0) {
		apex_warning("transfer threads: cannot start one more: %s", apex_strerror(-err));
		return false;
	}
	p->thread_count++;
	return true;
}

bool apex_refresh_pool_run(apex_refresh_pool_t *p, void *item, size_t max)
{
	bool ok = false;

	pthread_mutex_lock(&p->lock);
	if (p->in_flight >= max || p->stopping)
		goto out;
	if (p->idle_threads <= p->queued && !add_thread(p) && p->thread_count == 0)
		goto out;
	if (p->queued == p->capacity) {
		void **grown = apex_grow(p->queue, &p->capacity, p->queued, sizeof(*grown), 8);
		if (grown == NULL)
			goto out;
		p->queue = grown;
	}
	p->queue[p->queued++] = item;
	p->in_flight++;
	pthread_cond_broadcast(&p->work);
	ok = true;
out:
	pthread_mutex_unlock(&p->lock);
	return ok;
}

void apex_refresh_pool_stop(apex_refresh_pool_t *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->in_flight > 0)
		pthread_cond_wait(&p->work, &p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < p->thread_count; i++)
		pthread_join(p->threads[i], NULL);
	p->thread_count = 0;
}

void apex_refresh_pool_free(apex_refresh_pool_t *p)
{
	free(p->threads);
	free(p->queue);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	memset(p, 0, sizeof(*p));
}
