/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reload threads once the workers run (reload.h): one, and more while
 * zones wait and verifiers may run side by side.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "zones/reload.h"

#include <pthread.h>
#include <string.h>

#include "util/error.h"
#include "util/grow.h"
#include "util/log.h"
#include "zones/reload_internal.h"
#include "zones/verify_check.h"

/* Under the lock: one more reload thread; false when none could start. */
static bool add_thread(apex_reloader_t *r)
{
	pthread_t *grown =
		apex_grow(r->threads, &r->thread_capacity, r->thread_count, sizeof(*grown), 4);
	int err;

	if (grown == NULL)
		return false;
	r->threads = grown;
	err = pthread_create(&r->threads[r->thread_count], NULL, apex_reloader_thread_main, r);
	if (err != 0) {
		apex_error("reload thread: %s", apex_strerror(-err));
		return false;
	}
	r->thread_count++;
	return true;
}

/* Under the lock: whether a zone waits for a load no thread has begun. */
static bool another_waits(const apex_reloader_t *r)
{
	for (size_t i = 0; i < r->count; i++)
		if (!r->zones[i]->loading && r->zones[i]->requested > r->zones[i]->done)
			return true;
	return false;
}

void apex_reloader_more_threads(apex_reloader_t *r)
{
	if (r->live && !r->stopping && r->thread_count < apexd_verify_parallel() &&
	    another_waits(r))
		add_thread(r);
}

int apex_reloader_start(apex_reloader_t *r)
{
	bool ok;

	pthread_mutex_lock(&r->lock);
	r->live = true;
	r->stopping = false;
	ok = add_thread(r);
	pthread_mutex_unlock(&r->lock);
	return ok ? APEX_OK : APEX_ENOMEM;
}

void apex_reloader_stop(apex_reloader_t *r)
{
	size_t count;

	pthread_mutex_lock(&r->lock);
	r->stopping = true;
	pthread_cond_broadcast(&r->work);
	count = r->thread_count; /* no thread is added once stopping */
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < count; i++)
		pthread_join(r->threads[i], NULL);
	pthread_mutex_lock(&r->lock);
	r->thread_count = 0;
	pthread_mutex_unlock(&r->lock);
}
