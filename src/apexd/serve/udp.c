/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP service of one worker: recvmmsg -> apex_answer -> sendmmsg. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "serve/udp.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy/proxy_v2.h"
#include "serve/listen_socket.h"
#include "serve/worker.h"
#include "util/error.h"
#include "util/log.h"

/* Room for one IP_PKTINFO or IPV6_PKTINFO control message and the
 * SO_RXQ_OVFL one. */
#define PKTINFO_SPACE CMSG_SPACE(sizeof(struct in6_pktinfo))
_Static_assert(PKTINFO_SPACE + CMSG_SPACE(sizeof(uint32_t)) <= APEX_UDP_CONTROL_SPACE,
	       "control buffer too small");

int apex_udp_socket_open(const apex_listen_t *listen, size_t receive_buffer, size_t send_buffer,
			 char *err, size_t err_size)
{
	int fd = apex_listen_socket_open(listen, SOCK_DGRAM, err, err_size);
	if (fd < 0)
		return fd;
	int rc = apex_socket_buffers_set(fd, receive_buffer, send_buffer);
	if (rc < 0) {
		snprintf(err, err_size, "udp %s: socket buffers: %s", listen->text,
			 apex_strerror(rc));
		close(fd);
		return rc;
	}
	return fd;
}

int apex_udp_worker_init(apex_udp_worker_t *udp, struct apex_worker *worker, const int *fds,
			 const bool *proxy, size_t count, size_t answer_capacity)
{
	apex_udp_batch_t *batch;

	memset(udp, 0, sizeof(*udp));
	udp->worker = worker;
	udp->sockets = calloc(count, sizeof(*udp->sockets));
	if (udp->sockets == NULL) {
		for (size_t i = 0; i < count; i++)
			close(fds[i]);
		return APEX_ENOMEM;
	}
	udp->count = count;
	for (size_t i = 0; i < count; i++) {
		struct sockaddr_storage local;
		socklen_t len = sizeof(local);

		udp->sockets[i].fd = fds[i];
		udp->sockets[i].owner = udp;
		udp->sockets[i].proxy = proxy[i];
		udp->sockets[i].pktinfo =
			getsockname(fds[i], (struct sockaddr *)&local, &len) == 0 &&
			apex_listen_is_wildcard(&local);
	}

	batch = calloc(1, sizeof(*batch));
	if (batch == NULL)
		return APEX_ENOMEM;
	udp->batch = batch;
	batch->answer_capacity = answer_capacity;
	batch->queries = malloc((size_t)APEX_UDP_BATCH * APEX_UDP_QUERY_MAX);
	batch->answers = malloc((size_t)APEX_UDP_BATCH * answer_capacity);
	if (batch->queries == NULL || batch->answers == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < APEX_UDP_BATCH; i++) {
		batch->in_iov[i].iov_base = batch->queries + i * APEX_UDP_QUERY_MAX;
		batch->in_iov[i].iov_len = APEX_UDP_QUERY_MAX;
		batch->in[i].msg_hdr.msg_iov = &batch->in_iov[i];
		batch->in[i].msg_hdr.msg_iovlen = 1;
		batch->in[i].msg_hdr.msg_name = &batch->peer[i];
		batch->out[i].msg_hdr.msg_iov = &batch->out_iov[i];
		batch->out[i].msg_hdr.msg_iovlen = 1;
	}
	return APEX_OK;
}

/* The destination address of a received datagram as the source of its answer. */
static socklen_t pktinfo_reply(struct msghdr *in, uint8_t *out_control)
{
	struct msghdr fake = { .msg_control = out_control,
			       .msg_controllen = APEX_UDP_CONTROL_SPACE };
	struct cmsghdr *out = CMSG_FIRSTHDR(&fake);

	memset(out_control, 0, APEX_UDP_CONTROL_SPACE);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(in); c != NULL; c = CMSG_NXTHDR(in, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo info;

			memcpy(&info, CMSG_DATA(c), sizeof(info));
			info.ipi_spec_dst = info.ipi_addr;
			info.ipi_ifindex = 0; /* let routing pick the interface */
			out->cmsg_level = IPPROTO_IP;
			out->cmsg_type = IP_PKTINFO;
			out->cmsg_len = CMSG_LEN(sizeof(info));
			memcpy(CMSG_DATA(out), &info, sizeof(info));
			return CMSG_SPACE(sizeof(info));
		}
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			out->cmsg_level = IPPROTO_IPV6;
			out->cmsg_type = IPV6_PKTINFO;
			out->cmsg_len = CMSG_LEN(sizeof(struct in6_pktinfo));
			/* same address, same interface (needed for link-local) */
			memcpy(CMSG_DATA(out), CMSG_DATA(c), sizeof(struct in6_pktinfo));
			return CMSG_SPACE(sizeof(struct in6_pktinfo));
		}
	}
	return 0;
}

/* Send answers out[0..count), retrying partial sends; returns how many were lost. */
static unsigned send_batch(int fd, struct mmsghdr *out, unsigned count)
{
	unsigned sent = 0, lost = 0;
	int retries = 0;

	while (sent < count) {
		int n = sendmmsg(fd, out + sent, count - sent, 0);

		if (n > 0) {
			sent += (unsigned)n;
			continue;
		}
		if (n < 0 && errno == EINTR && retries++ < 4)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
			/* send buffer full: drop the rest of this batch rather than block */
			lost += count - sent;
			break;
		}
		/* this one datagram cannot be sent (e.g. unreachable peer): skip it */
		lost++;
		sent++;
	}
	return lost;
}

/*
 * The kernel's count of the datagrams it dropped for this socket (its
 * receive queue was full), as the last datagram of a batch carries it
 * (SO_RXQ_OVFL): what it grew by since the last batch goes to the
 * worker's statistics.  Nothing is asked of the kernel for it.
 */
static void count_kernel_drops(apex_udp_socket_t *sock, apex_worker_t *worker, struct msghdr *last)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(last); c != NULL; c = CMSG_NXTHDR(last, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t drops;

			memcpy(&drops, CMSG_DATA(c), sizeof(drops));
			if (drops != sock->kernel_drops) {
				APEX_STAT_ADD(worker->stats.kernel_drops,
					      drops - sock->kernel_drops);
				sock->kernel_drops = drops;
			}
			return;
		}
	}
}

/*
 * The lookahead of the datagrams after datagram i of n, before i is
 * answered (query/answer_ahead.h).  In a zone of a million names each
 * query's lookup misses the caches several times; asked for this way,
 * the misses of several queries overlap.
 */
static inline void read_ahead(apex_udp_batch_t *b, const apex_zoneset_t *zones, int i, int n)
{
	int j = i + APEX_AHEAD_BEGIN;
	bool in = j >= 0 && j < n;
	apex_answer_ahead_step(b->ahead, zones, i, n,
			       in ? b->queries + (size_t)j * APEX_UDP_QUERY_MAX : NULL,
			       in ? b->in[j].msg_len : 0);
}

/* The answer of datagram i into its slot of the batch, read ahead into
 * ahead (NULL: not read ahead); 0: nothing to send. */
static inline size_t answer_datagram(apex_worker_t *worker, apex_udp_batch_t *b,
				     apex_answer_ahead_t *ahead, unsigned i)
{
	if (b->in[i].msg_hdr.msg_flags & MSG_TRUNC) {
		apex_worker_drop(worker); /* larger than any query we take */
		return 0;
	}
	return apex_worker_answer_ahead(
		worker, APEX_TRANSPORT_UDP, &b->peer[i], ahead,
		b->queries + (size_t)i * APEX_UDP_QUERY_MAX, b->in[i].msg_len,
		b->answers + (size_t)i * b->answer_capacity, b->answer_capacity, NULL);
}

/*
 * The answer of datagram i on a proxy-protocol-port: its sender checked
 * against allow-proxy, its PROXY v2 header read, the query after it
 * answered as from the client the header names (RRL, ACLs, cookies,
 * statistics and dnstap see that client); the answer goes back to the
 * sender, the proxy.  0: dropped, and counted.
 */
static size_t answer_proxied(apex_udp_worker_t *udp, apex_udp_batch_t *b, unsigned i)
{
	apex_worker_t *worker = udp->worker;
	const uint8_t *data = b->queries + (size_t)i * APEX_UDP_QUERY_MAX;
	size_t size = b->in[i].msg_len;
	apex_proxy_header_t h;

	if (b->in[i].msg_hdr.msg_flags & MSG_TRUNC) {
		apex_worker_drop(worker);
		return 0;
	}
	if (!apex_proxy_allowed(udp->allow_proxy, udp->allow_proxy_count,
				(const struct sockaddr *)&b->peer[i])) {
		APEX_STAT_ADD(worker->stats.proxy_not_allowed[APEX_STATS_PROXY_UDP], 1);
		return 0;
	}
	if (apex_proxy_v2_parse(data, size, false, &h) <= 0) {
		APEX_STAT_ADD(worker->stats.proxy_malformed[APEX_STATS_PROXY_UDP], 1);
		return 0;
	}
	return apex_worker_answer(worker, APEX_TRANSPORT_UDP, h.local ? &b->peer[i] : &h.source,
				  data + h.size, size - h.size,
				  b->answers + (size_t)i * b->answer_capacity, b->answer_capacity,
				  NULL);
}

/* One recvmmsg batch on one socket; returns datagrams received (0: nothing, <0: error). */
static int serve_batch(apex_udp_socket_t *sock)
{
	apex_udp_worker_t *udp = sock->owner;
	apex_worker_t *worker = udp->worker;
	apex_udp_batch_t *b = udp->batch;
	bool pktinfo = sock->pktinfo;
	unsigned answers = 0, lost;
	int n;

	for (unsigned i = 0; i < APEX_UDP_BATCH; i++) {
		b->in[i].msg_hdr.msg_namelen = sizeof(b->peer[i]);
		b->in[i].msg_hdr.msg_flags = 0;
		b->in[i].msg_hdr.msg_control = b->in_control[i];
		b->in[i].msg_hdr.msg_controllen = APEX_UDP_CONTROL_SPACE;
	}
	n = recvmmsg(sock->fd, b->in, APEX_UDP_BATCH, MSG_DONTWAIT, NULL);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		return n < 0 ? -errno : 0;
	}

	/* between batches: a newly published zoneset, the clock */
	apex_worker_batch(worker, (unsigned)n == APEX_UDP_BATCH);
	count_kernel_drops(sock, worker, &b->in[n - 1].msg_hdr);
	APEX_STAT_ADD(worker->stats.udp_queries, (unsigned)n);
	APEX_STAT_ADD(worker->stats.udp_batches, 1);
	APEX_STAT_ADD(worker->stats.batch_fill[apex_stats_fill_index((unsigned)n)], 1);
	/* queries read ahead only where a zone's name table is large */
	bool ahead = !sock->proxy && worker->zones->read_ahead;
	if (ahead) {
		for (int i = -APEX_AHEAD_BEGIN; i < 0; i++)
			read_ahead(b, worker->zones, i, n);
	}
	for (unsigned i = 0; i < (unsigned)n; i++) {
		struct msghdr *in = &b->in[i].msg_hdr;
		size_t size;

		if (__builtin_expect(sock->proxy, 0)) {
			size = answer_proxied(udp, b, i);
		} else if (ahead) {
			read_ahead(b, worker->zones, (int)i, n);
			size = answer_datagram(worker, b, &b->ahead[i % APEX_AHEAD_RING], i);
		} else {
			size = answer_datagram(worker, b, NULL, i);
		}

		if (size == 0)
			continue;
		struct msghdr *out = &b->out[answers].msg_hdr;
		out->msg_name = in->msg_name;
		out->msg_namelen = in->msg_namelen;
		b->out_iov[answers].iov_base = b->answers + (size_t)i * b->answer_capacity;
		b->out_iov[answers].iov_len = size;
		out->msg_control = NULL;
		out->msg_controllen = 0;
		if (pktinfo) {
			socklen_t len = pktinfo_reply(in, b->out_control[answers]);

			if (len > 0) {
				out->msg_control = b->out_control[answers];
				out->msg_controllen = len;
			}
		}
		answers++;
	}
	if (answers > 0) {
		lost = send_batch(sock->fd, b->out, answers);
		if (lost > 0)
			APEX_STAT_ADD(worker->stats.dropped, lost);
	}
	return n;
}

static void on_readable(uv_poll_t *handle, int status, int events)
{
	apex_udp_socket_t *sock = handle->data;
	int n = 0;

	(void)events;
	if (status < 0) {
		apex_warning("worker %u: udp poll error: %s", sock->owner->worker->index,
			     apex_strerror(status));
		return;
	}
	/* Drain a bounded number of full batches, then let the loop serve the
	 * other sockets and TCP; level-triggered polling brings us back. */
	for (int round = 0; round < APEX_UDP_BATCHES_PER_WAKEUP; round++) {
		n = serve_batch(sock);
		if (n < APEX_UDP_BATCH)
			break;
	}
	if (n < 0)
		apex_warning("worker %u: recvmmsg: %s", sock->owner->worker->index,
			     apex_strerror(n));
}

int apex_udp_worker_start(apex_udp_worker_t *udp, uv_loop_t *loop)
{
	for (size_t i = 0; i < udp->count; i++) {
		apex_udp_socket_t *sock = &udp->sockets[i];
		int rc = uv_poll_init(loop, &sock->poll, sock->fd);

		if (rc < 0) {
			apex_error("udp poll: %s", apex_strerror(rc));
			return rc;
		}
		sock->polling = true;
		sock->poll.data = sock;
		rc = uv_poll_start(&sock->poll, UV_READABLE, on_readable);
		if (rc < 0) {
			apex_error("udp poll: %s", apex_strerror(rc));
			return rc;
		}
	}
	return APEX_OK;
}

void apex_udp_worker_stop(apex_udp_worker_t *udp)
{
	for (size_t i = 0; i < udp->count; i++) {
		apex_udp_socket_t *sock = &udp->sockets[i];

		if (sock->polling && !uv_is_closing((uv_handle_t *)&sock->poll))
			uv_close((uv_handle_t *)&sock->poll, NULL);
	}
}

void apex_udp_worker_free(apex_udp_worker_t *udp)
{
	for (size_t i = 0; i < udp->count; i++) {
		if (udp->sockets[i].fd >= 0)
			close(udp->sockets[i].fd);
	}
	free(udp->sockets);
	if (udp->batch != NULL) {
		free(udp->batch->queries);
		free(udp->batch->answers);
		free(udp->batch);
	}
	memset(udp, 0, sizeof(*udp));
}
