/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A ring of frames from one producer to one consumer, without a lock:
 * a worker pushes its dnstap frames, the writer thread takes them.
 *
 * Frames lie in a byte buffer of a power-of-two size, each after a 4-byte
 * length, one after the other; a frame that does not fit before the end
 * of the buffer goes at its start, behind a wrap mark.  head (bytes ever
 * pushed) is written only by the producer, tail (bytes ever taken) only
 * by the consumer, each on its own cache line; a push that finds no room
 * fails at once, so the producer never waits.
 */
#ifndef APEX_DNSTAP_RING_H
#define APEX_DNSTAP_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct apex_dnstap_ring {
	_Alignas(64) atomic_size_t head; /* the producer's */
	_Alignas(64) atomic_size_t tail; /* the consumer's */
	_Alignas(64) uint8_t *data;      /* size bytes, owned */
	size_t size;                     /* a power of two */
} apex_dnstap_ring_t;

/* A ring of size bytes (a power of two, at least 4096); APEX_OK or APEX_ENOMEM. */
int apex_dnstap_ring_init(apex_dnstap_ring_t *ring, size_t size);
void apex_dnstap_ring_free(apex_dnstap_ring_t *ring);

/* The largest frame a push takes: a quarter of the ring. */
static inline size_t apex_dnstap_ring_max_frame(const apex_dnstap_ring_t *ring)
{
	return ring->size / 4 - 4;
}

/* Producer: copy frame[0..size) in; false when there is no room (or it is too large). */
bool apex_dnstap_ring_push(apex_dnstap_ring_t *ring, const uint8_t *frame, size_t size);

/*
 * Consumer: the frame at the cursor *at (start it at
 * apex_dnstap_ring_tail()), in place with its size, moving *at past it;
 * NULL when there is none yet.  The frames stay valid until released.
 */
const uint8_t *apex_dnstap_ring_next(apex_dnstap_ring_t *ring, size_t *at, size_t *size);

/* Consumer: where the unread frames start. */
static inline size_t apex_dnstap_ring_tail(const apex_dnstap_ring_t *ring)
{
	return atomic_load_explicit(&ring->tail, memory_order_relaxed);
}

/* Consumer: give the room of every frame before the cursor at back. */
void apex_dnstap_ring_release(apex_dnstap_ring_t *ring, size_t at);

#endif
