/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UDP service of one worker: one SO_REUSEPORT socket per listen address,
 * watched by the worker's libuv loop and drained with recvmmsg, each
 * query answered into the worker's own preallocated buffers, the
 * answers sent back with sendmmsg.  Nothing is allocated per query.
 */
#ifndef APEXD_UDP_H
#define APEXD_UDP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "config/daemon_config.h"
#include "query/answer_ahead.h"
#include "util/prefix.h"

struct apex_worker;
struct apex_udp_worker;

#define APEX_UDP_BATCH 64             /* datagrams per recvmmsg/sendmmsg */
#define APEX_UDP_QUERY_MAX 4096       /* larger datagrams are dropped */
#define APEX_UDP_BATCHES_PER_WAKEUP 8 /* then yield to TCP and the other sockets */
#define APEX_UDP_CONTROL_SPACE 64     /* >= CMSG_SPACE(sizeof(struct in6_pktinfo)) */

typedef struct apex_udp_socket {
	uv_poll_t poll;
	int fd;                /* -1 when closed */
	bool polling;          /* poll handle initialised (close it before fd) */
	bool pktinfo;          /* wildcard bind: answer from the query's destination */
	bool proxy;            /* a proxy-protocol-port's: each datagram has a PROXY v2 header */
	uint32_t kernel_drops; /* the kernel's drop count last read (SO_RXQ_OVFL) */
	struct apex_udp_worker *owner;
} apex_udp_socket_t;

/* Buffers of one batch, reused for every batch of the worker. */
typedef struct apex_udp_batch {
	struct mmsghdr in[APEX_UDP_BATCH];
	struct mmsghdr out[APEX_UDP_BATCH];
	struct iovec in_iov[APEX_UDP_BATCH];
	struct iovec out_iov[APEX_UDP_BATCH];
	struct sockaddr_storage peer[APEX_UDP_BATCH];
	/* control messages: the kernel's drop count (SO_RXQ_OVFL), and
	 * IP_PKTINFO / IPV6_PKTINFO (wildcard binds only) */
	uint8_t in_control[APEX_UDP_BATCH][APEX_UDP_CONTROL_SPACE];
	uint8_t out_control[APEX_UDP_BATCH][APEX_UDP_CONTROL_SPACE];
	uint8_t *queries; /* APEX_UDP_BATCH * APEX_UDP_QUERY_MAX */
	uint8_t *answers; /* APEX_UDP_BATCH * answer_capacity */
	size_t answer_capacity;
	/* the queries read ahead of their answers, datagram i in
	 * ahead[i % APEX_AHEAD_RING] (query/answer_ahead.h) */
	apex_answer_ahead_t ahead[APEX_AHEAD_RING];
} apex_udp_batch_t;

typedef struct apex_udp_worker {
	struct apex_worker *worker; /* the answer path (worker.h) */
	apex_udp_socket_t *sockets; /* one per listen address */
	size_t count;
	apex_udp_batch_t *batch;
	/* allow-proxy: who may send PROXY v2 headers (none: anyone); the
	 * configuration's, set by the server after init */
	const apex_prefix_t *allow_proxy;
	size_t allow_proxy_count;
} apex_udp_worker_t;

/*
 * A new non-blocking UDP socket bound to listen with SO_REUSEPORT (and
 * IPV6_V6ONLY for IPv6), its buffers sized (bytes; 0: the kernel's
 * default; see apex_socket_buffers_set()).  Returns the fd, or a negative
 * apex code with the reason in err.
 */
int apex_udp_socket_open(const apex_listen_t *listen, size_t receive_buffer, size_t send_buffer,
			 char *err, size_t err_size);

/*
 * Set up the worker's UDP state for count listen addresses, answering
 * through worker (which must outlive it), taking over
 * the fds (closed by apex_udp_worker_free() even on failure) and
 * allocating the batch buffers.  proxy[i]: fds[i] is a
 * proxy-protocol-port's.  answer_capacity is the largest UDP response
 * (at least 512).
 */
int apex_udp_worker_init(apex_udp_worker_t *udp, struct apex_worker *worker, const int *fds,
			 const bool *proxy, size_t count, size_t answer_capacity);

/* Register the sockets with the worker's loop. */
int apex_udp_worker_start(apex_udp_worker_t *udp, uv_loop_t *loop);

/* Stop watching the sockets (on the worker's loop thread). */
void apex_udp_worker_stop(apex_udp_worker_t *udp);

/* Close the sockets and free the buffers (after the loop has ended). */
void apex_udp_worker_free(apex_udp_worker_t *udp);

#endif
