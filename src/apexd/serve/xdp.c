/* SPDX-License-Identifier: BSD-3-Clause */
/* AF_XDP service of the workers: receive ring -> apex_worker_answer -> transmit ring. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "serve/xdp.h"

#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>

#include "serve/worker.h"
#include "xdp/frame.h"
#include "util/error.h"
#include "util/log.h"

/* The largest answer to the query frame q: it must fit in a frame, and
 * on the wire in the interface's MTU (nothing fragments it on the way out). */
static inline size_t answer_room(const apex_xdp_worker_t *xdp, const apex_xdp_frame_t *q)
{
	size_t room = xdp->answer_capacity;
	size_t in_frame = APEX_XSK_FRAME_SIZE - q->header_size;
	size_t ip_headers = (size_t)(q->header_size - q->l3_offset);

	if (room > in_frame)
		room = in_frame;
	if (xdp->mtu > ip_headers && room > xdp->mtu - ip_headers)
		room = xdp->mtu - ip_headers;
	return room;
}

/*
 * Answer the frame at addr (len bytes) into a free frame, added to the
 * batch's answers (*answers of them so far) when there is one to send.
 * read: the frame as read ahead (read_ahead()), its query's lookahead in
 * ahead; NULL, NULL: not read ahead.
 */
static inline void answer_frame(apex_xdp_worker_t *xdp, uint64_t addr, uint32_t len,
				const apex_xdp_frame_t *read, bool read_ok,
				apex_answer_ahead_t *ahead, unsigned *answers)
{
	apex_worker_t *worker = xdp->worker;
	const uint8_t *frame = apex_xsk_frame(&xdp->xsk, addr);
	apex_xdp_frame_t parsed;
	const apex_xdp_frame_t *q = read;
	uint64_t out_addr;

	if (q == NULL) {
		read_ok = apex_xdp_frame_parse(frame, len, &parsed) == APEX_XDP_FRAME_OK;
		q = &parsed;
	}
	if (!read_ok) {
		APEX_STAT_ADD(worker->stats.xdp_invalid, 1);
		apex_worker_drop(worker); /* counted as a query received and dropped */
		return;
	}
	if (!apex_xsk_take(&xdp->xsk, &out_addr)) {
		APEX_STAT_ADD(worker->stats.xdp_no_frame, 1);
		APEX_STAT_ADD(worker->stats.dropped, 1);
		return;
	}
	uint8_t *out = apex_xsk_frame(&xdp->xsk, out_addr);
	size_t size = apex_worker_answer_ahead(worker, APEX_TRANSPORT_UDP, &q->peer, ahead,
					       frame + q->header_size, q->payload_size,
					       out + q->header_size, answer_room(xdp, q), NULL);
	if (size == 0) {
		apex_xsk_give_back(&xdp->xsk, out_addr);
		return;
	}
	xdp->tx_addr[*answers] = out_addr;
	xdp->tx_len[*answers] = (uint32_t)apex_xdp_frame_reply(frame, q, out, size);
	(*answers)++;
}

/*
 * The lookahead of the frames after frame i of the n received from idx,
 * before i is answered, as serve/udp.c's read_ahead(): the frame
 * APEX_AHEAD_BEGIN later read (its headers, kept for its answer) and its
 * query begun, the later steps of those before it.
 */
static inline void read_ahead(apex_xdp_worker_t *xdp, uint32_t idx, int i, int n)
{
	int j = i + APEX_AHEAD_BEGIN;
	const uint8_t *next = NULL;
	size_t next_size = 0;

	if (j >= 0 && j < n) {
		const struct xdp_desc *desc =
			xsk_ring_cons__rx_desc(&xdp->xsk.rx, idx + (uint32_t)j);
		const uint8_t *frame = apex_xsk_frame(&xdp->xsk, desc->addr);
		apex_xdp_frame_t *f = &xdp->frames[j % APEX_AHEAD_RING];
		bool ok = apex_xdp_frame_parse(frame, desc->len, f) == APEX_XDP_FRAME_OK;

		xdp->frame_ok[j % APEX_AHEAD_RING] = ok;
		next = ok ? frame + f->header_size : frame;
		next_size = ok ? f->payload_size : 0; /* not a query: not read ahead */
	}
	apex_answer_ahead_step(xdp->ahead, xdp->worker->zones, i, n, next, next_size);
}

unsigned apex_xdp_worker_serve(apex_xdp_worker_t *xdp)
{
	apex_worker_t *worker = xdp->worker;
	apex_xsk_t *xsk = &xdp->xsk;
	unsigned answers = 0;
	uint32_t idx;
	uint32_t n = apex_xsk_receive(xsk, APEX_XDP_BATCH, &idx);

	if (n == 0)
		return 0;
	/* between batches: a newly published zoneset, the clock */
	apex_worker_batch(worker, n == APEX_XDP_BATCH);
	APEX_STAT_ADD(worker->stats.xdp_received, n);
	APEX_STAT_ADD(worker->stats.udp_queries, n);
	APEX_STAT_ADD(worker->stats.udp_batches, 1);
	APEX_STAT_ADD(worker->stats.batch_fill[apex_stats_fill_index(n)], 1);
	/* queries read ahead only where a zone's name table is large */
	bool ahead = worker->zones->read_ahead;
	if (ahead) {
		for (int i = -APEX_AHEAD_BEGIN; i < 0; i++)
			read_ahead(xdp, idx, i, (int)n);
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *desc = xsk_ring_cons__rx_desc(&xsk->rx, idx + i);

		if (ahead) {
			unsigned r = i % APEX_AHEAD_RING;

			read_ahead(xdp, idx, (int)i, (int)n);
			answer_frame(xdp, desc->addr, desc->len, &xdp->frames[r], xdp->frame_ok[r],
				     &xdp->ahead[r], &answers);
		} else {
			answer_frame(xdp, desc->addr, desc->len, NULL, false, NULL, &answers);
		}
		xdp->refill[i] = xsk_umem__extract_addr(desc->addr);
	}
	uint32_t sent = apex_xsk_end_batch(xsk, n, xdp->refill, xdp->tx_addr, xdp->tx_len, answers);

	APEX_STAT_ADD(worker->stats.xdp_sent, sent);
	if (sent < answers) {
		APEX_STAT_ADD(worker->stats.xdp_no_frame, answers - sent);
		APEX_STAT_ADD(worker->stats.dropped, answers - sent);
	}
	return n;
}

static void on_readable(uv_poll_t *handle, int status, int events)
{
	apex_xdp_worker_t *xdp = handle->data;

	(void)events;
	if (status < 0) {
		apex_warning("worker %u: xdp poll error: %s", xdp->worker->index,
			     apex_strerror(status));
		return;
	}
	for (int round = 0; round < APEX_XDP_BATCHES_PER_WAKEUP; round++)
		if (apex_xdp_worker_serve(xdp) < APEX_XDP_BATCH)
			break;
}

int apex_xdp_worker_start(apex_xdp_worker_t *xdp, uv_loop_t *loop)
{
	if (!xdp->open)
		return APEX_OK;
	int rc = uv_poll_init(loop, &xdp->poll, xdp->xsk.fd);
	if (rc < 0) {
		apex_error("xdp poll: %s", apex_strerror(rc));
		return rc;
	}
	xdp->polling = true;
	xdp->poll.data = xdp;
	rc = uv_poll_start(&xdp->poll, UV_READABLE, on_readable);
	if (rc < 0)
		apex_error("xdp poll: %s", apex_strerror(rc));
	return rc;
}

void apex_xdp_worker_stop(apex_xdp_worker_t *xdp)
{
	if (xdp->polling && !uv_is_closing((uv_handle_t *)&xdp->poll))
		uv_close((uv_handle_t *)&xdp->poll, NULL);
}

/* The distinct ports of the listen addresses that serve UDP (not the TLS
 * ones, nor the proxy-protocol-ports, whose headers the sockets read),
 * host order; returns their count. */
static size_t listen_ports(const apex_config_t *cfg, uint16_t *ports, size_t max)
{
	size_t count = 0;

	for (size_t i = 0; i < cfg->listen_count; i++) {
		const struct sockaddr_storage *addr = &cfg->listens[i].addr;

		if (cfg->listens[i].transport != APEX_LISTEN_PLAIN || cfg->listens[i].proxy)
			continue;
		uint16_t port = ntohs(addr->ss_family == AF_INET6
					      ? ((const struct sockaddr_in6 *)addr)->sin6_port
					      : ((const struct sockaddr_in *)addr)->sin_port);
		size_t j = 0;

		while (j < count && ports[j] != port)
			j++;
		if (j == count && count < max)
			ports[count++] = port;
	}
	return count;
}

bool apex_xdp_service_attach(apex_xdp_service_t *service, const apex_config_t *cfg)
{
	char err[256];

	memset(service, 0, sizeof(*service));
	service->ifname = cfg->xdp_interface;
	service->queues = apex_xsk_queue_count(service->ifname);
	service->mtu = apex_xsk_mtu(service->ifname);
	service->busy_poll = cfg->xdp_busy_poll;
	service->port_count = listen_ports(cfg, service->ports,
					   sizeof(service->ports) / sizeof(service->ports[0]));
	if (apex_xdp_program_attach(&service->program, service->ifname, service->ports,
				    service->port_count, err, sizeof(err)) < 0) {
		apex_warning("xdp-interface %s: %s: serving on sockets only", service->ifname, err);
		return false;
	}
	service->attached = true;
	return true;
}

int apex_xdp_worker_open(apex_xdp_service_t *service, apex_xdp_worker_t *xdp,
			 struct apex_worker *worker, size_t answer_capacity)
{
	unsigned queue = worker->index;
	char err[256] = "";
	int rc;

	memset(xdp, 0, sizeof(*xdp));
	xdp->worker = worker;
	xdp->xsk.fd = -1;
	if (queue >= service->queues || queue >= APEX_XDP_QUEUES_MAX)
		return 1;
	rc = apex_xsk_open(&xdp->xsk, service->ifname, queue, err, sizeof(err));
	xdp->open = true; /* closed by apex_xdp_worker_close() even half open */
	if (rc == APEX_OK &&
	    (rc = apex_xdp_program_add_socket(&service->program, queue, xdp->xsk.fd)) < 0)
		snprintf(err, sizeof(err), "queue %u: %s", queue, apex_strerror(rc));
	if (rc < 0) {
		apex_warning("xdp-interface %s: worker %u: %s: serving on sockets only",
			     service->ifname, queue, err);
		return rc;
	}
	/* busy polling is an optimisation: a kernel without it still serves */
	if (service->busy_poll > 0 && apex_xsk_busy_poll(&xdp->xsk, (int)service->busy_poll,
							 APEX_XDP_BATCH, err, sizeof(err)) < 0)
		apex_warning("xdp-busy-poll: %s %s: without busy polling", service->ifname, err);
	xdp->mtu = service->mtu;
	xdp->answer_capacity = answer_capacity;
	service->sockets++;
	return APEX_OK;
}

void apex_xdp_worker_close(apex_xdp_worker_t *xdp)
{
	if (xdp->open)
		apex_xsk_close(&xdp->xsk);
	xdp->open = false;
}

void apex_xdp_service_log(const apex_xdp_service_t *service, unsigned workers)
{
	apex_info("xdp-interface %s: XDP program attached (%s mode); %u of %u workers answer "
		  "UDP port%s %u%s through AF_XDP (the interface has %u receive queues)%s",
		  service->ifname, service->program.native ? "native" : "generic", service->sockets,
		  workers, service->port_count > 1 ? "s" : "",
		  service->port_count > 0 ? service->ports[0] : 0,
		  service->port_count > 1 ? " and more" : "", service->queues,
		  service->busy_poll > 0 ? "; busy polling" : "");
}

void apex_xdp_service_detach(apex_xdp_service_t *service)
{
	if (service->attached)
		apex_xdp_program_detach(&service->program);
	service->attached = false;
	service->sockets = 0;
}

void apex_xdp_worker_kernel_counts(const apex_xdp_service_t *service, const apex_xdp_worker_t *xdp,
				   uint64_t *passed, uint64_t *dropped)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);

	*passed = *dropped = 0;
	if (!service->attached)
		return;
	*passed = apex_xdp_program_passed(&service->program, xdp->worker->index);
	if (xdp->open && xdp->xsk.fd >= 0 &&
	    getsockopt(xdp->xsk.fd, SOL_XDP, XDP_STATISTICS, &st, &len) == 0)
		*dropped =
			st.rx_dropped + st.rx_ring_full + st.rx_invalid_descs + st.tx_invalid_descs;
}
