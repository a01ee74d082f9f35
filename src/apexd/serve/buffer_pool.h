/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffers of one size that one thread takes and gives back: a worker's
 * TCP connections take their input and output buffers here when a
 * message arrives and give them back once it is answered (tcp.c), so an
 * idle connection holds none.  No lock: a pool belongs to one worker's
 * loop.
 *
 * The buffers given back wait on a free list (linked through their own
 * first bytes) for the next take: in steady state nothing is allocated.
 * A burst takes as many buffers as are held at once, and the pool keeps
 * them while they are used; apex_buffer_pool_trim(), called now and then,
 * frees those that stayed on the list the whole time since the trim
 * before, beyond the few it always keeps, so the memory of a burst goes
 * back to the allocator after it.
 */
#ifndef APEXD_SERVE_BUFFER_POOL_H
#define APEXD_SERVE_BUFFER_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct apex_buffer_pool {
	size_t size;                    /* bytes of every buffer */
	unsigned keep;                  /* free buffers a trim leaves on the list */
	unsigned idle;                  /* free buffers on the list */
	unsigned low;                   /* fewest on the list since the last trim */
	unsigned taken;                 /* buffers out (taken, not given back) */
	struct apex_buffer_free *first; /* the free list */
} apex_buffer_pool_t;

/* An empty pool of buffers of size bytes (at least a pointer's), keeping
 * up to keep of them free through a trim. */
void apex_buffer_pool_init(apex_buffer_pool_t *pool, size_t size, unsigned keep);

/* A buffer of pool->size bytes, its content undefined: a free one, else a
 * new one.  NULL: out of memory. */
uint8_t *apex_buffer_pool_take(apex_buffer_pool_t *pool);

/* buf, taken from pool, back on its free list.  NULL is ignored. */
void apex_buffer_pool_give(apex_buffer_pool_t *pool, uint8_t *buf);

/* *held given back (if any) and set to NULL. */
static inline void apex_buffer_pool_release(apex_buffer_pool_t *pool, uint8_t **held)
{
	apex_buffer_pool_give(pool, *held);
	*held = NULL;
}

/* The free buffers that none of the takes since the last trim needed,
 * beyond pool->keep, freed.  Returns how many. */
unsigned apex_buffer_pool_trim(apex_buffer_pool_t *pool);

/* Every free buffer freed (those still out are the takers' to give back
 * first: they would leak). */
void apex_buffer_pool_free(apex_buffer_pool_t *pool);

#endif
