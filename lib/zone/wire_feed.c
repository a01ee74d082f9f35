/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Records handed to a version builder on a thread of its own (see
 * wire_feed.h).  The batches form a ring: the receiving thread fills the
 * slot after the last queued one and queues it; the feed's thread adds
 * the records of the first queued slot, then frees it.  Both take the
 * lock only to queue or free a slot, once per batch.
 *
 * The thread (and the ring's other batches) start only when the first
 * batch is full: a zone whose records fit in one batch (most of the
 * thousands of a catalog's members) is added at the end on the receiving
 * thread, without a thread made and joined for it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include "zone/wire_feed.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/wire.h"
#include "util/error.h"

typedef struct batch {
	uint8_t *data; /* FEED_BATCH_BYTES; owned */
	size_t used;
} batch_t;

struct apex_wire_feed {
	apex_zone_from_wire_t *w; /* the builder's thread's until it ends */
	pthread_t thread;
	bool started, threadless; /* threadless: no thread could start, added here */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	batch_t batches[FEED_BATCHES];
	/* under lock: queued slots head .. head + count (mod FEED_BATCHES) */
	unsigned head, count;
	unsigned fill; /* the receiving thread's: the slot it fills, head + count */
	bool ended, stop;
	int rc; /* the builder's first error */
};

/* Each record in a batch: owner, type, TTL, RDATA length, RDATA. */
static int add_batch(apex_wire_feed_t *f, const batch_t *b)
{
	const uint8_t *p = b->data, *end = b->data + b->used;

	while (p < end) {
		const uint8_t *owner = p;
		p += apex_name_size(owner);
		uint16_t type = apex_read_u16(p), rdlength = apex_read_u16(p + 6);
		uint32_t ttl = apex_read_u32(p + 2);
		int rc = apex_zone_from_wire_add(f->w, owner, type, ttl, p + 8, rdlength);
		if (rc < 0)
			return rc;
		p += 8u + rdlength;
	}
	return APEX_OK;
}

static void *feed_main(void *arg)
{
	apex_wire_feed_t *f = arg;

	pthread_setname_np(pthread_self(), "apexd-xfr-feed");
	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (f->count == 0 && !f->ended && !f->stop)
			pthread_cond_wait(&f->cond, &f->lock);
		if (f->stop || f->count == 0)
			break;
		const batch_t *b = &f->batches[f->head];
		pthread_mutex_unlock(&f->lock);
		int rc = add_batch(f, b);
		pthread_mutex_lock(&f->lock);
		f->head = (f->head + 1) % FEED_BATCHES;
		f->count--;
		if (rc < 0) {
			f->rc = rc;
			f->stop = true;
		}
		pthread_cond_broadcast(&f->cond);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int apex_wire_feed_begin(apex_wire_feed_t **out, const uint8_t *origin, const char *source,
			 char *err, size_t err_size)
{
	apex_wire_feed_t *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (f == NULL)
		return APEX_ENOMEM;
	if ((f->batches[0].data = malloc(FEED_BATCH_BYTES)) == NULL)
		goto nomem;
	if (apex_zone_from_wire_begin(&f->w, origin, source, err, err_size) != APEX_OK)
		goto nomem;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	*out = f;
	return APEX_OK;
nomem:
	free(f->batches[0].data);
	free(f);
	return APEX_ENOMEM;
}

/* The slot being filled, queued; wait for the next to be free (left by
 * the feed's thread).  The builder's error if it failed. */
static int queue_batch(apex_wire_feed_t *f)
{
	int rc;

	pthread_mutex_lock(&f->lock);
	if (f->rc == APEX_OK) {
		f->count++;
		f->fill = (f->fill + 1) % FEED_BATCHES;
		pthread_cond_broadcast(&f->cond);
		while (f->count == FEED_BATCHES && f->rc == APEX_OK)
			pthread_cond_wait(&f->cond, &f->lock);
	}
	rc = f->rc;
	pthread_mutex_unlock(&f->lock);
	f->batches[f->fill].used = 0;
	return rc;
}

/* The first batch is full: the ring's other batches and the thread, or
 * (either failing) the records added here from now on, the first batch's
 * at once.  The builder's error if it failed. */
static int start_thread(apex_wire_feed_t *f)
{
	for (unsigned i = 1; i < FEED_BATCHES && !f->threadless; i++)
		f->threadless = (f->batches[i].data = malloc(FEED_BATCH_BYTES)) == NULL;
	if (!f->threadless)
		f->started = pthread_create(&f->thread, NULL, feed_main, f) == 0;
	f->threadless = !f->started;
	if (f->threadless) {
		f->rc = add_batch(f, &f->batches[0]);
		f->batches[0].used = 0;
		return f->rc;
	}
	return queue_batch(f); /* the first batch, to the thread */
}

int apex_wire_feed_add(apex_wire_feed_t *f, const uint8_t *owner, uint16_t type, uint32_t ttl,
		       const uint8_t *rdata, uint16_t rdlength)
{
	size_t n = apex_name_size(owner), size = n + 8u + rdlength;

	if (f->threadless) {
		int rc = f->rc < 0
				 ? f->rc
				 : apex_zone_from_wire_add(f->w, owner, type, ttl, rdata, rdlength);
		if (rc < 0)
			f->rc = rc;
		return rc;
	}
	batch_t *b = &f->batches[f->fill];
	if (b->used + size > FEED_BATCH_BYTES) {
		int rc = f->started ? queue_batch(f) : start_thread(f);
		if (rc < 0)
			return rc;
		if (f->threadless)
			return apex_wire_feed_add(f, owner, type, ttl, rdata, rdlength);
		b = &f->batches[f->fill];
	}
	uint8_t *p = b->data + b->used;
	memcpy(p, owner, n);
	apex_write_u16(p + n, type);
	apex_write_u32(p + n + 2, ttl);
	apex_write_u16(p + n + 6, rdlength);
	memcpy(p + n + 8, rdata, rdlength);
	b->used += size;
	return APEX_OK;
}

/* End the thread (after the queued batches unless stop; without a
 * thread, the first batch's records added here), free f but its builder;
 * the builder's error. */
static int end_thread(apex_wire_feed_t *f, bool stop)
{
	int rc;

	if (!f->started && !f->threadless && !stop && f->batches[0].used > 0)
		f->rc = add_batch(f, &f->batches[0]);
	if (f->started) {
		pthread_mutex_lock(&f->lock);
		if (!stop && f->rc == APEX_OK && f->batches[f->fill].used > 0)
			f->count++; /* the last batch */
		f->ended = true;
		f->stop = f->stop || stop;
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->thread, NULL);
	}
	rc = f->rc;
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	for (unsigned i = 0; i < FEED_BATCHES; i++)
		free(f->batches[i].data);
	return rc;
}

int apex_wire_feed_end(apex_wire_feed_t *f, apex_zone_from_wire_t **builder)
{
	int rc = end_thread(f, false);

	*builder = NULL;
	if (rc < 0)
		apex_zone_from_wire_abort(f->w);
	else
		*builder = f->w;
	free(f);
	return rc;
}

void apex_wire_feed_abort(apex_wire_feed_t *f)
{
	(void)end_thread(f, true);
	apex_zone_from_wire_abort(f->w);
	free(f);
}
