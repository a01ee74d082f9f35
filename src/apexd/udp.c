/* UDP service of one worker: recvmmsg -> apex_answer -> sendmmsg. */
#ifdef HAVE_CONFIG_H
#include <config.h>  /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "udp.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "listen_socket.h"
#include "server.h"
#include "util/error.h"
#include "util/log.h"

/* Room for one IP_PKTINFO or IPV6_PKTINFO control message. */
#define PKTINFO_SPACE CMSG_SPACE(sizeof(struct in6_pktinfo))
_Static_assert(PKTINFO_SPACE <= APEX_UDP_CONTROL_SPACE, "control buffer too small");

int apex_udp_socket_open(const apex_listen_t *listen, char *err, size_t err_size)
{
	return apex_listen_socket_open(listen, SOCK_DGRAM, err, err_size);
}

int apex_udp_worker_init(apex_udp_worker_t *udp, struct apex_worker *worker, const int *fds,
			 size_t count, size_t answer_capacity)
{
	apex_udp_batch_t *batch;

	memset(udp, 0, sizeof(*udp));
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
		udp->sockets[i].worker = worker;
		udp->sockets[i].pktinfo =
			getsockname(fds[i], (struct sockaddr *)&local, &len) == 0 && apex_listen_is_wildcard(&local);
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
	struct msghdr fake = { .msg_control = out_control, .msg_controllen = APEX_UDP_CONTROL_SPACE };
	struct cmsghdr *out = CMSG_FIRSTHDR(&fake);

	memset(out_control, 0, APEX_UDP_CONTROL_SPACE);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(in); c != NULL; c = CMSG_NXTHDR(in, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo info;

			memcpy(&info, CMSG_DATA(c), sizeof(info));
			info.ipi_spec_dst = info.ipi_addr;
			info.ipi_ifindex = 0;  /* let routing pick the interface */
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

/* One recvmmsg batch on one socket; returns datagrams received (0: nothing, <0: error). */
static int serve_batch(apex_udp_socket_t *sock)
{
	apex_worker_t *worker = sock->worker;
	apex_udp_batch_t *b = worker->udp.batch;
	bool pktinfo = sock->pktinfo;
	const apex_zoneset_t *zones;
	unsigned answers = 0, lost;
	struct timespec wall;
	uint64_t now_ms = 0;
	int n;

	for (unsigned i = 0; i < APEX_UDP_BATCH; i++) {
		b->in[i].msg_hdr.msg_namelen = sizeof(b->peer[i]);
		b->in[i].msg_hdr.msg_flags = 0;
		b->in[i].msg_hdr.msg_control = pktinfo ? b->in_control[i] : NULL;
		b->in[i].msg_hdr.msg_controllen = pktinfo ? APEX_UDP_CONTROL_SPACE : 0;
	}
	n = recvmmsg(sock->fd, b->in, APEX_UDP_BATCH, MSG_DONTWAIT, NULL);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		return n < 0 ? -errno : 0;
	}

	/* between batches: pick up a newly published zoneset, if any */
	zones = apex_worker_zones(worker);
	/* one clock read per batch for server cookies and rate limiting */
	clock_gettime(CLOCK_REALTIME, &wall);
	if (apex_rrl_enabled(&worker->rrl)) {
		struct timespec mono;

		clock_gettime(CLOCK_MONOTONIC, &mono);
		now_ms = (uint64_t)mono.tv_sec * 1000 + (uint64_t)mono.tv_nsec / 1000000;
	}
	APEX_STAT_ADD(worker->stats.udp_queries, (unsigned)n);
	APEX_STAT_ADD(worker->stats.udp_batches, 1);
	APEX_STAT_ADD(worker->stats.batch_fill[apex_stats_fill_index((unsigned)n)], 1);
	for (int i = 0; i < n; i++) {
		struct msghdr *in = &b->in[i].msg_hdr;
		uint8_t *answer = b->answers + (size_t)i * b->answer_capacity;
		apex_answer_info_t info = { 0 };
		apex_answer_client_t client;
		size_t size = 0;

		apex_answer_client_set(&client, &b->peer[i], (uint32_t)wall.tv_sec);
		if ((in->msg_flags & MSG_TRUNC) == 0)
			size = apex_answer_from(zones, &worker->server->answer_config,
						APEX_TRANSPORT_UDP, &client,
						b->queries + (size_t)i * APEX_UDP_QUERY_MAX,
						b->in[i].msg_len, answer, b->answer_capacity, &info);
		apex_worker_count(worker, &info, size);
		if (size == 0)
			continue;
		if (apex_rrl_enabled(&worker->rrl)) {
			apex_rrl_action_t act = apex_rrl_account(&worker->rrl, in->msg_name, now_ms);

			if (act == APEX_RRL_SLIP)
				size = apex_rrl_slip_response(answer, size);
			if (act == APEX_RRL_DROP || size == 0) {
				APEX_STAT_ADD(worker->stats.rrl_dropped, 1);
				continue;
			}
			if (act == APEX_RRL_SLIP)
				APEX_STAT_ADD(worker->stats.rrl_slipped, 1);
		}

		struct msghdr *out = &b->out[answers].msg_hdr;
		out->msg_name = in->msg_name;
		out->msg_namelen = in->msg_namelen;
		b->out_iov[answers].iov_base = answer;
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
		apex_warning("worker %u: udp poll error: %s", sock->worker->index, uv_strerror(status));
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
		apex_warning("worker %u: recvmmsg: %s", sock->worker->index, strerror(-n));
}

int apex_udp_worker_start(apex_udp_worker_t *udp, uv_loop_t *loop)
{
	for (size_t i = 0; i < udp->count; i++) {
		apex_udp_socket_t *sock = &udp->sockets[i];
		int rc = uv_poll_init(loop, &sock->poll, sock->fd);

		if (rc < 0) {
			apex_error("udp poll: %s", uv_strerror(rc));
			return APEX_EIO;
		}
		sock->polling = true;
		sock->poll.data = sock;
		rc = uv_poll_start(&sock->poll, UV_READABLE, on_readable);
		if (rc < 0) {
			apex_error("udp poll: %s", uv_strerror(rc));
			return APEX_EIO;
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
