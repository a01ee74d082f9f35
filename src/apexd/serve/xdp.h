/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AF_XDP service of apexd (xdp-interface:): the XDP program on the
 * interface, and for each worker whose index is a receive queue of it,
 * one AF_XDP socket watched by the worker's libuv loop.
 *
 * A worker drains its socket's receive ring in batches, reads each
 * query out of its frame (xdp/frame.h), answers it with
 * apex_worker_answer(), exactly as a datagram from its UDP socket, into
 * a free frame, writes the answer's headers and queues it on the
 * transmit ring.  The received frame goes straight back to the fill
 * ring.  Frames that are not UDP to a served port, TCP, fragments and
 * IPv4 with options never reach it: the program passes them to the
 * kernel, whose sockets (udp.c, tcp.c) answer as usual.
 */
#ifndef APEXD_XDP_H
#define APEXD_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config/daemon_config.h"
#include "query/answer_ahead.h"
#include "xdp/frame.h"
#include "xdp/program.h"
#include "xdp/xsk_socket.h"

struct apex_worker;

#define APEX_XDP_BATCH 64             /* frames per receive batch */
#define APEX_XDP_BATCHES_PER_WAKEUP 8 /* then yield to the other handles */

/* One worker's AF_XDP socket. */
typedef struct apex_xdp_worker {
	struct apex_worker *worker; /* the answer path (worker.h) */
	apex_xsk_t xsk;
	uv_poll_t poll;
	bool open;    /* xsk is open */
	bool polling; /* poll handle initialised */
	unsigned mtu; /* of the interface: an answer frame fits in it */
	size_t answer_capacity;
	/* one batch: received buffers to refill, answers to send */
	uint64_t refill[APEX_XDP_BATCH];
	uint64_t tx_addr[APEX_XDP_BATCH];
	uint32_t tx_len[APEX_XDP_BATCH];
	/* where the zoneset reads ahead (query/answer_ahead.h): frame i of
	 * the batch read at frames[i % APEX_AHEAD_RING] (frame_ok: it is a
	 * query's) and its query at ahead[i % APEX_AHEAD_RING] */
	apex_xdp_frame_t frames[APEX_AHEAD_RING];
	bool frame_ok[APEX_AHEAD_RING];
	apex_answer_ahead_t ahead[APEX_AHEAD_RING];
} apex_xdp_worker_t;

/* The program on the interface, shared by the workers' sockets. */
typedef struct apex_xdp_service {
	apex_xdp_program_t program;
	bool attached;
	const char *ifname; /* the configuration's */
	unsigned queues;    /* the interface's receive queues */
	unsigned mtu;       /* the interface's MTU (0: unknown) */
	unsigned busy_poll; /* xdp-busy-poll, microseconds (0: none) */
	unsigned sockets;   /* workers with an AF_XDP socket */
	uint16_t ports[64]; /* the served UDP ports, host order */
	size_t port_count;
} apex_xdp_service_t;

/*
 * Attach the XDP program to cfg->xdp_interface for the ports of the
 * listen addresses.  On failure the reason is logged and apexd serves on
 * its sockets alone: returns false.
 */
bool apex_xdp_service_attach(apex_xdp_service_t *service, const apex_config_t *cfg);

/*
 * Open the AF_XDP socket of worker (on the queue of its index) and give
 * it to the program; answers are at most answer_capacity bytes (the
 * socket path's largest UDP answer).  Returns 0, 1 when the interface
 * has no queue for this worker (it serves on sockets alone), or a
 * negative apex code, logged.  apex_xdp_worker_close() in every case.
 */
int apex_xdp_worker_open(apex_xdp_service_t *service, apex_xdp_worker_t *xdp,
			 struct apex_worker *worker, size_t answer_capacity);

/* Close a worker's socket (safe when it has none). */
void apex_xdp_worker_close(apex_xdp_worker_t *xdp);

/* Log what is served through XDP, of workers workers. */
void apex_xdp_service_log(const apex_xdp_service_t *service, unsigned workers);

/* Detach the program (after the workers' sockets are closed, or before:
 * the kernel stops redirecting at once). */
void apex_xdp_service_detach(apex_xdp_service_t *service);

/* The kernel's counts for one worker: frames its queue passed to the
 * kernel, and frames dropped for its socket.  Read by the collector. */
void apex_xdp_worker_kernel_counts(const apex_xdp_service_t *service, const apex_xdp_worker_t *xdp,
				   uint64_t *passed, uint64_t *dropped);

/* Watch the worker's socket (if it has one) on its loop. */
int apex_xdp_worker_start(apex_xdp_worker_t *xdp, uv_loop_t *loop);

/* Stop watching it (on the worker's loop thread). */
void apex_xdp_worker_stop(apex_xdp_worker_t *xdp);

/*
 * Serve one batch of frames from the receive ring; returns how many
 * were taken.  The poll callback calls it; the tests call it directly.
 */
unsigned apex_xdp_worker_serve(apex_xdp_worker_t *xdp);

#endif
