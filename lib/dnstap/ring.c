/* SPDX-License-Identifier: BSD-3-Clause */
/* A lock-free ring of frames, one producer and one consumer. */
#include "dnstap/ring.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

/* The length word of the mark that sends the reader back to the start. */
#define WRAP_MARK UINT32_MAX

/* Room a frame of size bytes takes: its length word, the bytes, aligned to 4. */
static size_t frame_room(size_t size)
{
	return (4 + size + 3) & ~(size_t)3;
}

int apex_dnstap_ring_init(apex_dnstap_ring_t *ring, size_t size)
{
	atomic_init(&ring->head, 0);
	atomic_init(&ring->tail, 0);
	ring->size = size;
	ring->data = malloc(size);
	return ring->data != NULL ? APEX_OK : APEX_ENOMEM;
}

void apex_dnstap_ring_free(apex_dnstap_ring_t *ring)
{
	free(ring->data);
	ring->data = NULL;
}

bool apex_dnstap_ring_push(apex_dnstap_ring_t *ring, const uint8_t *frame, size_t size)
{
	size_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
	size_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
	size_t need = frame_room(size), at = head & (ring->size - 1);
	size_t before_end = ring->size - at; /* a multiple of 4: every offset is */
	size_t skip = need > before_end ? before_end : 0;
	uint32_t length = (uint32_t)size;

	if (size > apex_dnstap_ring_max_frame(ring) || head + skip + need - tail > ring->size)
		return false;
	if (skip > 0) {
		const uint32_t mark = WRAP_MARK;
		memcpy(ring->data + at, &mark, 4);
		at = 0;
	}
	memcpy(ring->data + at, &length, 4);
	memcpy(ring->data + at + 4, frame, size);
	atomic_store_explicit(&ring->head, head + skip + need, memory_order_release);
	return true;
}

const uint8_t *apex_dnstap_ring_next(apex_dnstap_ring_t *ring, size_t *cursor, size_t *size)
{
	size_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
	uint32_t length;

	for (;;) {
		if (*cursor == head)
			return NULL;
		size_t at = *cursor & (ring->size - 1);
		memcpy(&length, ring->data + at, 4);
		if (length == WRAP_MARK) {
			*cursor += ring->size - at;
			continue;
		}
		*size = length;
		*cursor += frame_room(length);
		return ring->data + at + 4;
	}
}

void apex_dnstap_ring_release(apex_dnstap_ring_t *ring, size_t cursor)
{
	atomic_store_explicit(&ring->tail, cursor, memory_order_release);
}
