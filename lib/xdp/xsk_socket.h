/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One AF_XDP socket on one receive queue, with its own UMEM (the frames
 * the kernel and apexd hand each other) and its four rings, through
 * libxdp's xsk functions.
 *
 * Frames go round two ways.  A received frame's buffer goes back to the
 * fill ring as soon as its query is answered, so the fill ring always
 * holds APEX_XSK_RING_SIZE buffers.  The other frames form a stack of
 * free buffers for answers: taken by apex_xsk_take(), handed to the
 * transmit ring, and back on the stack once the completion ring returns
 * them (apex_xsk_reclaim()).  Everything is allocated when the socket is
 * opened; nothing is allocated or locked per frame.
 */
#ifndef APEX_XDP_XSK_SOCKET_H
#define APEX_XDP_XSK_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xdp/xsk.h>

#define APEX_XSK_FRAME_SIZE 2048 /* the smallest frame AF_XDP takes */
#define APEX_XSK_RING_SIZE 2048  /* descriptors in each ring */
/* the fill ring's buffers, and as many for answers */
#define APEX_XSK_FRAMES (2 * APEX_XSK_RING_SIZE)

typedef struct apex_xsk {
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons completion;
	uint8_t *area;                     /* APEX_XSK_FRAMES frames (mmap) */
	uint64_t free[APEX_XSK_RING_SIZE]; /* free answer frames (their offsets) */
	uint32_t free_count;
	struct xsk_umem *umem;
	struct xsk_socket *socket;
	int fd; /* -1: not open */
	unsigned queue;
} apex_xsk_t;

/*
 * Open an AF_XDP socket on queue of the interface ifname, binding it as
 * copy or zero-copy as the driver allows; the XDP program is attached by
 * the caller (program.h).  Returns 0, or a negative apex code with the
 * reason in err; apex_xsk_close() in every case.
 */
int apex_xsk_open(apex_xsk_t *xsk, const char *ifname, unsigned queue, char *err, size_t err_size);

/*
 * Busy polling on the socket (the kernel's preferred busy polling): a
 * wait on it runs the queue's NAPI poll in the caller for up to usecs
 * microseconds, budget frames at a time, instead of leaving it to the
 * interrupt's softirq.  Returns 0, or a negative apex code with the
 * reason in err (a kernel before 5.11 has no SO_PREFER_BUSY_POLL).
 */
int apex_xsk_busy_poll(apex_xsk_t *xsk, int usecs, int budget, char *err, size_t err_size);

/* Close the socket and free its frames (safe on one that failed to open). */
void apex_xsk_close(apex_xsk_t *xsk);

/* The frame at offset addr. */
static inline uint8_t *apex_xsk_frame(const apex_xsk_t *xsk, uint64_t addr)
{
	return xsk->area + addr;
}

/* Put the frames the kernel has sent back on the free stack. */
static inline void apex_xsk_reclaim(apex_xsk_t *xsk)
{
	uint32_t idx;
	uint32_t n = xsk_ring_cons__peek(&xsk->completion, APEX_XSK_RING_SIZE, &idx);

	for (uint32_t i = 0; i < n; i++)
		xsk->free[xsk->free_count++] = xsk_umem__extract_addr(
			*xsk_ring_cons__comp_addr(&xsk->completion, idx + i));
	if (n > 0)
		xsk_ring_cons__release(&xsk->completion, n);
}

/* A free frame for an answer into *addr; false: none (all in flight). */
static inline bool apex_xsk_take(apex_xsk_t *xsk, uint64_t *addr)
{
	if (xsk->free_count == 0) {
		apex_xsk_reclaim(xsk);
		if (xsk->free_count == 0)
			return false;
	}
	*addr = xsk->free[--xsk->free_count];
	return true;
}

/* Give back a frame taken and not sent. */
static inline void apex_xsk_give_back(apex_xsk_t *xsk, uint64_t addr)
{
	xsk->free[xsk->free_count++] = addr;
}

/*
 * Return the received frames addrs[0..n) to the fill ring (it always has
 * room: it holds no more buffers than it was given at the start).
 */
void apex_xsk_refill(apex_xsk_t *xsk, const uint64_t *addrs, uint32_t n);

/*
 * Queue frames (addrs[i], lens[i]) for sending and tell the kernel;
 * returns how many were queued (the rest are given back: the transmit
 * ring is full).
 */
uint32_t apex_xsk_send(apex_xsk_t *xsk, const uint64_t *addrs, const uint32_t *lens, uint32_t n);

/*
 * A batch of at most max received frames: their count, the first one's
 * index in the receive ring in *idx (read each with
 * xsk_ring_cons__rx_desc()).  The frames the kernel has sent since the
 * last batch are reclaimed first, so that the batch's answers find free
 * frames.
 */
static inline uint32_t apex_xsk_receive(apex_xsk_t *xsk, uint32_t max, uint32_t *idx)
{
	uint32_t n = xsk_ring_cons__peek(&xsk->rx, max, idx);

	if (n > 0)
		apex_xsk_reclaim(xsk);
	return n;
}

/*
 * End a batch of n frames from apex_xsk_receive(): release them from the
 * receive ring, give their buffers (received[0..n)) back to the fill
 * ring, and queue the batch's answers (addrs[i], lens[i]) for sending;
 * returns how many of the answers were queued (apex_xsk_send()).
 */
static inline uint32_t apex_xsk_end_batch(apex_xsk_t *xsk, uint32_t n, const uint64_t *received,
					  const uint64_t *addrs, const uint32_t *lens,
					  uint32_t answers)
{
	xsk_ring_cons__release(&xsk->rx, n);
	apex_xsk_refill(xsk, received, n);
	return answers > 0 ? apex_xsk_send(xsk, addrs, lens, answers) : 0;
}

/* The interface's MTU, or 0 when it cannot be read. */
unsigned apex_xsk_mtu(const char *ifname);

/* The interface's receive queue count (at least 1). */
unsigned apex_xsk_queue_count(const char *ifname);

#endif
