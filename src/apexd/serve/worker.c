/* SPDX-License-Identifier: BSD-3-Clause */
/* The answer path of one worker (see worker.h). */
#include "serve/worker.h"

#include <string.h>
#include <time.h>

#include "util/error.h"

int apex_worker_init(apex_worker_t *worker, unsigned index, apex_zonetable_t *table,
		     const apex_answer_config_t *cfg, const apex_rrl_config_t *rrl, unsigned shares)
{
	memset(worker, 0, sizeof(*worker));
	worker->index = index;
	worker->zonetable = table;
	worker->answer_config = cfg;
	/* RRL: one table per worker, each enforcing its share of the rate
	 * (doc/architecture.md, "Response rate limiting") */
	int rc = apex_rrl_init(&worker->rrl, rrl, shares);
	if (rc < 0)
		return rc;
	worker->zones = apex_zonetable_acquire(table, &worker->generation);
	return worker->zones != NULL ? APEX_OK : APEX_ENOMEM;
}

void apex_worker_free(apex_worker_t *worker)
{
	if (worker->zones != NULL)
		apex_zoneset_release(worker->zones);
	worker->zones = NULL;
	apex_rrl_free(&worker->rrl);
}

static uint64_t elapsed_ns(const struct timespec *t0, const struct timespec *t1)
{
	return (uint64_t)((t1->tv_sec - t0->tv_sec) * 1000000000LL + (t1->tv_nsec - t0->tv_nsec));
}

/* The stall buckets: under 1 ms, under 10 ms, under 100 ms, under 1 s, more. */
static unsigned stall_bucket(uint64_t ns)
{
	unsigned b = 0;
	for (uint64_t limit = 1000000; b < APEX_STATS_STALL_BUCKETS - 1 && ns >= limit; limit *= 10)
		b++;
	return b;
}

void apex_worker_batch(apex_worker_t *worker, bool backlog)
{
	apex_zonetable_t *table = worker->zonetable;
	struct timespec wall, mono;

	if (apex_zonetable_generation(table) != worker->generation) {
		apex_zoneset_t *old = worker->zones;
		struct timespec t0, t1;

		/* only here, on a generation change, is the rwlock taken: time it */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		worker->zones = apex_zonetable_acquire(table, &worker->generation);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		APEX_STAT_ADD(worker->stats.lock_wait_ns, elapsed_ns(&t0, &t1));
		APEX_STAT_ADD(worker->stats.zone_pickups, 1);
		apex_zoneset_release(old);
	}
	/* One clock read per batch: the wall clock (for cookie timestamps,
	 * in seconds) only once per second of the monotonic one. */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	if (mono.tv_sec != worker->wall_read_at) {
		clock_gettime(CLOCK_REALTIME, &wall);
		worker->now = (uint32_t)wall.tv_sec;
		worker->wall_read_at = mono.tv_sec;
	}
	worker->now_ms = (uint64_t)mono.tv_sec * 1000 + (uint64_t)mono.tv_nsec / 1000000;

	/* A full batch found queries waiting: the time since the batch
	 * before is how long the worker did not read its socket. */
	uint64_t now_ns = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
	if (backlog && worker->last_batch_ns != 0) {
		uint64_t gap = now_ns - worker->last_batch_ns;
		APEX_STAT_ADD(worker->stats.stalls[stall_bucket(gap)], 1);
		if (gap > atomic_load_explicit(&worker->stats.stall_max_ns, memory_order_relaxed))
			atomic_store_explicit(&worker->stats.stall_max_ns, gap,
					      memory_order_relaxed);
	}
	worker->last_batch_ns = now_ns;
}
