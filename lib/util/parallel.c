/* SPDX-License-Identifier: BSD-3-Clause */
#include <pthread.h>
#include <stdbool.h>

#include "util/error.h"
#include "util/parallel.h"

#define PARTS_MAX 64

typedef struct part {
	apex_parallel_fn fn;
	void *ctx;
	size_t begin, end;
	int rc;
	pthread_t thread;
	bool started;
} part_t;

static void *part_main(void *arg)
{
	part_t *p = arg;
	p->rc = p->fn(p->ctx, p->begin, p->end);
	return NULL;
}

size_t apex_parallel_parts(unsigned threads, size_t n, size_t max, size_t min_part)
{
	size_t parts = threads > 1 ? threads : 1;
	if (min_part == 0)
		min_part = 1;
	if (parts > max)
		parts = max;
	if (parts > n / min_part)
		parts = n / min_part > 0 ? n / min_part : 1;
	return parts;
}

int apex_parallel_for(size_t count, unsigned threads, size_t min_part, apex_parallel_fn fn,
		      void *ctx)
{
	if (min_part == 0)
		min_part = 1;
	size_t n = threads == 0 ? 1 : threads;
	if (n > PARTS_MAX)
		n = PARTS_MAX;
	if (n > count / min_part)
		n = count / min_part;
	if (n <= 1)
		return fn(ctx, 0, count);

	part_t parts[PARTS_MAX];
	for (size_t i = 0; i < n; i++) {
		parts[i] = (part_t){ .fn = fn,
				     .ctx = ctx,
				     .begin = count / n * i,
				     .end = i + 1 == n ? count : count / n * (i + 1) };
	}
	for (size_t i = 1; i < n; i++)
		parts[i].started =
			pthread_create(&parts[i].thread, NULL, part_main, &parts[i]) == 0;
	part_main(&parts[0]);
	int rc = APEX_OK;
	for (size_t i = 0; i < n; i++) {
		if (i > 0) {
			if (parts[i].started)
				pthread_join(parts[i].thread, NULL);
			else
				part_main(&parts[i]); /* no thread: run it here */
		}
		if (rc == APEX_OK && parts[i].rc != APEX_OK)
			rc = parts[i].rc;
	}
	return rc;
}
