/* SPDX-License-Identifier: BSD-3-Clause */
/* Buffers of one size, taken and given back on one thread (buffer_pool.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "serve/buffer_pool.h"

#include <stdlib.h>
#include <string.h>

/* A free buffer: its first bytes link it to the next. */
typedef struct apex_buffer_free {
	struct apex_buffer_free *next;
} free_buffer_t;

void apex_buffer_pool_init(apex_buffer_pool_t *pool, size_t size, unsigned keep)
{
	memset(pool, 0, sizeof(*pool));
	pool->size = size < sizeof(free_buffer_t) ? sizeof(free_buffer_t) : size;
	pool->keep = keep;
}

uint8_t *apex_buffer_pool_take(apex_buffer_pool_t *pool)
{
	free_buffer_t *b = pool->first;

	if (b != NULL) {
		pool->first = b->next;
		pool->idle--;
		if (pool->idle < pool->low)
			pool->low = pool->idle;
	} else {
		b = malloc(pool->size);
		if (b == NULL)
			return NULL;
	}
	pool->taken++;
	return (uint8_t *)b;
}

void apex_buffer_pool_give(apex_buffer_pool_t *pool, uint8_t *buf)
{
	free_buffer_t *b = (free_buffer_t *)buf;

	if (b == NULL)
		return;
	b->next = pool->first;
	pool->first = b;
	pool->idle++;
	pool->taken--;
}

unsigned apex_buffer_pool_trim(apex_buffer_pool_t *pool)
{
	unsigned surplus = pool->low > pool->keep ? pool->low - pool->keep : 0;
	free_buffer_t **link = &pool->first;

	/* the ones given back last, still warm in the cache, stay */
	for (unsigned i = surplus; i < pool->idle; i++)
		link = &(*link)->next;
	while (*link != NULL) {
		free_buffer_t *b = *link;

		*link = b->next;
		free(b);
	}
	pool->idle -= surplus;
	pool->low = pool->idle;
	return surplus;
}

void apex_buffer_pool_free(apex_buffer_pool_t *pool)
{
	while (pool->first != NULL) {
		free_buffer_t *b = pool->first;

		pool->first = b->next;
		free(b);
	}
	pool->idle = 0;
	pool->low = 0;
}
