/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp_reflector: the floor under apexd's AF_XDP path.
 *
 *   xdp_reflector [-w ROUNDS] [-p BUSY_POLL_US] [-a BYTES] IFNAME PORT [SECONDS]
 *
 * Attaches apexd's XDP program (lib/xdp/program.h) to IFNAME for UDP
 * port PORT, opens one AF_XDP socket on its queue 0 (lib/xdp/xsk_socket.h)
 * and answers every query frame with the query's own DNS bytes and the
 * QR bit set.  Everything else is what apexd's worker does
 * (src/apexd/serve/xdp.c): level-triggered readiness on the socket
 * (epoll, as libuv's uv_poll), up to ROUNDS batches of APEX_XDP_BATCH
 * frames per wake-up (default APEX_XDP_BATCHES_PER_WAKEUP), each frame
 * checked by apex_xdp_frame_parse(), its answer written into a free
 * frame with apex_xdp_frame_reply() (addresses swapped, lengths, both
 * checksums), the received frames refilled and the answers sent once per
 * batch with the same wake-up rule.  Its CPU time per query is the kernel's
 * share plus the least an AF_XDP server can do; apexd's is that plus the
 * DNS work.
 *
 * -a BYTES: every answer BYTES long (the query's bytes, then zeros), so
 * that the floor moves as many bytes as the server it is set against
 * (a root referral with DNSSEC is twenty times its query): the kernel's
 * and the rings' cost per byte is no DNS work.  Answers are never cut
 * below the query's own size.
 *
 * Needs CAP_NET_ADMIN and CAP_NET_RAW.  Stops on SIGTERM/SIGINT or after
 * SECONDS (default 600), detaching the program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "serve/xdp.h" /* APEX_XDP_BATCH, APEX_XDP_BATCHES_PER_WAKEUP */
#include "xdp/frame.h"
#include "xdp/program.h"
#include "xdp/xsk_socket.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

typedef struct reflector {
	apex_xsk_t xsk;
	uint64_t refill[APEX_XDP_BATCH];
	uint64_t tx_addr[APEX_XDP_BATCH];
	uint32_t tx_len[APEX_XDP_BATCH];
	unsigned long received, sent, invalid, no_frame;
	size_t answer_size; /* -a; 0: the query's own */
} reflector_t;

/* The answer to the frame at addr: its DNS bytes with QR set, headers
 * swapped; added to the batch's answers when there is a frame for it. */
static void reflect_frame(reflector_t *r, uint64_t addr, uint32_t len, unsigned *answers)
{
	const uint8_t *frame = apex_xsk_frame(&r->xsk, addr);
	apex_xdp_frame_t q;
	uint64_t out_addr;

	if (apex_xdp_frame_parse(frame, len, &q) != APEX_XDP_FRAME_OK || q.payload_size < 3) {
		r->invalid++;
		return;
	}
	if (!apex_xsk_take(&r->xsk, &out_addr)) {
		r->no_frame++;
		return;
	}
	uint8_t *out = apex_xsk_frame(&r->xsk, out_addr);

	size_t size = q.payload_size;

	memcpy(out + q.header_size, frame + q.header_size, size);
	out[q.header_size + 2] |= 0x80; /* QR */
	if (r->answer_size > size) {
		memset(out + q.header_size + size, 0, r->answer_size - size);
		size = r->answer_size;
	}
	r->tx_addr[*answers] = out_addr;
	r->tx_len[*answers] = (uint32_t)apex_xdp_frame_reply(frame, &q, out, size);
	(*answers)++;
}

/* One receive batch answered (apex_xdp_worker_serve() without the DNS
 * work and the statistics); returns the frames received. */
static unsigned reflect_batch(reflector_t *r)
{
	apex_xsk_t *xsk = &r->xsk;
	unsigned answers = 0;
	uint32_t idx;
	uint32_t n = apex_xsk_receive(xsk, APEX_XDP_BATCH, &idx);

	if (n == 0)
		return 0;
	r->received += n;
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *desc = xsk_ring_cons__rx_desc(&xsk->rx, idx + i);

		reflect_frame(r, desc->addr, desc->len, &answers);
		r->refill[i] = xsk_umem__extract_addr(desc->addr);
	}
	uint32_t sent = apex_xsk_end_batch(xsk, n, r->refill, r->tx_addr, r->tx_len, answers);

	r->sent += sent;
	r->no_frame += answers - sent;
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wake-ups on the socket's readiness until stopped or past limit seconds. */
static unsigned long serve(reflector_t *r, int rounds, double limit)
{
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned long wakeups = 0;
	double end = now_s() + limit;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, r->xsk.fd, &ev) < 0) {
		perror("xdp_reflector: epoll");
		if (ep >= 0)
			close(ep);
		return 0;
	}
	while (!stopping && now_s() < end) {
		struct epoll_event got;
		int k = epoll_wait(ep, &got, 1, 200); /* now and then: SIGTERM, the limit */

		if (k < 0 && errno != EINTR)
			break;
		if (k <= 0)
			continue;
		wakeups++;
		for (int round = 0; round < rounds; round++)
			if (reflect_batch(r) < APEX_XDP_BATCH)
				break;
	}
	close(ep);
	return wakeups;
}

int main(int argc, char **argv)
{
	int rounds = APEX_XDP_BATCHES_PER_WAKEUP, busy_poll_us = 0, answer_size = 0, c;

	while ((c = getopt(argc, argv, "w:p:a:")) != -1) {
		if (c == 'p' && (busy_poll_us = atoi(optarg)) > 0)
			continue;
		/* the largest DNS message a frame holds after the largest headers */
		if (c == 'a' && (answer_size = atoi(optarg)) > 0 &&
		    answer_size <= APEX_XSK_FRAME_SIZE - APEX_XDP_HEADER_MAX)
			continue;
		if (c != 'w' || (rounds = atoi(optarg)) < 1) {
			rounds = -1;
			break;
		}
	}
	if (rounds < 1 || argc - optind < 2 || atoi(argv[optind + 1]) <= 0 ||
	    atoi(argv[optind + 1]) > 65535) {
		fprintf(stderr,
			"usage: %s [-w ROUNDS] [-p BUSY_POLL_US] [-a BYTES (at most %d)] IFNAME "
			"PORT [SECONDS]\n",
			argv[0], APEX_XSK_FRAME_SIZE - APEX_XDP_HEADER_MAX);
		return 2;
	}
	const char *ifname = argv[optind];
	uint16_t port = (uint16_t)atoi(argv[optind + 1]);
	double limit = argc - optind > 2 ? atof(argv[optind + 2]) : 600;
	static reflector_t r; /* its rings' arrays: not on the stack */

	r.answer_size = (size_t)answer_size;
	apex_xdp_program_t prog;
	char err[256];
	int status = 1;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (apex_xdp_program_attach(&prog, ifname, &port, 1, err, sizeof(err)) < 0) {
		fprintf(stderr, "xdp_reflector: %s: %s\n", ifname, err);
		return 1;
	}
	if (apex_xsk_open(&r.xsk, ifname, 0, err, sizeof(err)) < 0) {
		fprintf(stderr, "xdp_reflector: %s\n", err);
	} else if (busy_poll_us > 0 &&
		   apex_xsk_busy_poll(&r.xsk, busy_poll_us, APEX_XDP_BATCH, err, sizeof(err)) < 0) {
		fprintf(stderr, "xdp_reflector: %s\n", err);
	} else if (apex_xdp_program_add_socket(&prog, 0, r.xsk.fd) < 0) {
		fprintf(stderr, "xdp_reflector: %s: cannot add the socket to the program\n",
			ifname);
	} else {
		fprintf(stderr, "xdp_reflector: %s port %u, %s XDP\n", ifname, port,
			prog.native ? "native" : "generic");
		unsigned long wakeups = serve(&r, rounds, limit);

		fprintf(stderr,
			"xdp_reflector: %lu frames received, %lu answers sent, %lu invalid, "
			"%lu without a free frame, %lu wake-ups\n",
			r.received, r.sent, r.invalid, r.no_frame, wakeups);
		status = 0;
	}
	apex_xsk_close(&r.xsk);
	apex_xdp_program_detach(&prog);
	return status;
}
