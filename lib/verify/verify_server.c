/* SPDX-License-Identifier: BSD-3-Clause */
/* The listener a verifier queries (verify_server.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "verify/verify_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns/rrtype.h"
#include "tsig/tsig.h"
#include "util/error.h"
#include "xfr/acl.h"
#include "xfr/tcp_stream.h"
#include "xfr/xfr_serve.h"

#define MESSAGE_MAX 65535
/* a whole exchange on one connection: the verifier's timeout ends it sooner */
#define CONNECTION_MAX_MS (3600u * 1000u)

/* Everyone who reaches a loopback port of this server may transfer the
 * version: 0.0.0.0/0 and ::/0 (the sockets are bound to loopback only). */
typedef struct transfer_policy {
	apex_zone_t *version;
	apex_acl_entry_t any[2];
} transfer_policy_t;

/* apex_xfr_serve_zone_fn: the version, when the request names its zone. */
static bool zone_of(void *ctx, const uint8_t *zone, apex_zone_t **version,
		    const apex_acl_entry_t **acl, size_t *acl_count)
{
	transfer_policy_t *p = ctx;

	if (!apex_name_equal(zone, p->version->origin))
		return false;
	apex_zone_ref(p->version);
	*version = p->version;
	*acl = p->any;
	*acl_count = 2;
	return true;
}

/* A socket of type bound to addr (port 0: the kernel's choice, or the
 * port given); its descriptor, or -1. */
static int bind_socket(int family, int type, const char *addr, uint16_t port, uint16_t *bound)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &sin6->sin6_addr);
		len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		inet_pton(AF_INET, addr, &sin->sin_addr);
		len = sizeof(*sin);
	}
	if (fd < 0)
		return -1;
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 16) != 0) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		close(fd);
		return -1;
	}
	*bound = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					  : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/* UDP and TCP on one loopback address and one port: a UDP port is taken
 * first, then TCP on the same number (tried a few times, as another
 * process may hold that TCP port).  Whether a is bound. */
static bool bind_address(apex_verify_address_t *a, int family, const char *text)
{
	a->family = family;
	snprintf(a->text, sizeof(a->text), "%s", text);
	for (int attempt = 0; attempt < 16; attempt++) {
		uint16_t port = 0, same = 0;

		a->udp = bind_socket(family, SOCK_DGRAM, text, 0, &port);
		if (a->udp < 0)
			return false;
		a->tcp = bind_socket(family, SOCK_STREAM, text, port, &same);
		if (a->tcp >= 0) {
			a->port = port;
			return true;
		}
		close(a->udp);
	}
	a->udp = -1;
	return false;
}

/* One UDP query answered; the socket is non-blocking. */
static void serve_udp(apex_verify_server_t *s, int fd)
{
	uint8_t *query = s->query, *answer = s->answer;
	struct sockaddr_storage peer;
	socklen_t peer_len = sizeof(peer);
	ssize_t n = recvfrom(fd, query, MESSAGE_MAX, 0, (struct sockaddr *)&peer, &peer_len);
	apex_answer_info_t info;

	if (n <= 0)
		return;
	apex_zoneset_t *set = apex_zonetable_acquire(&s->table, NULL);
	size_t size = apex_answer(set, &s->answer_config, APEX_TRANSPORT_UDP, query, (size_t)n,
				  answer, MESSAGE_MAX, &info);
	apex_zoneset_release(set);
	if (size > 0 && !info.dropped &&
	    sendto(fd, answer, size, 0, (struct sockaddr *)&peer, peer_len) >= 0)
		atomic_fetch_add(&s->queries, 1);
}

/* An AXFR or IXFR request (msg) answered with the whole version, to the
 * end of the connection's exchange. */
static void serve_transfer(apex_verify_server_t *s, int fd, const struct sockaddr *peer,
			   const uint8_t *msg, size_t size, const apex_xfr_timeouts_t *t)
{
	transfer_policy_t policy = { .version = s->version };
	apex_xfr_serve_conn_t conn = { .fd = fd };
	apex_tsig_keyring_t ring;
	apex_xfr_serve_result_t res;
	char why[256];

	memset(&ring, 0, sizeof(ring));
	if (apex_acl_entry_parse(&policy.any[0], "0.0.0.0/0 NOKEY", false, why, sizeof(why)) < 0 ||
	    apex_acl_entry_parse(&policy.any[1], "::/0 NOKEY", false, why, sizeof(why)) < 0)
		return;
	if (apex_xfr_serve(&conn, peer, "the verifier", msg, size, &ring, zone_of, &policy, NULL, t,
			   &res, why, sizeof(why)) == APEX_OK)
		atomic_fetch_add(&s->queries, 1);
}

/* One TCP connection served until the verifier closes it, stalls or the
 * server stops; a transfer ends it. */
static void serve_tcp(apex_verify_server_t *s, int listen_fd)
{
	uint8_t *query = s->query, *answer = s->answer;
	struct sockaddr_storage peer;
	socklen_t peer_len = sizeof(peer);
	int fd = accept4(listen_fd, (struct sockaddr *)&peer, &peer_len,
			 SOCK_CLOEXEC | SOCK_NONBLOCK);
	apex_xfr_timeouts_t t = { 0, APEX_VERIFY_SERVER_IDLE_MS, CONNECTION_MAX_MS, s->stop_fd };
	apex_tcp_stream_t io;
	char err[256];
	size_t n;

	if (fd < 0)
		return;
	apex_tcp_stream_init(&io, fd, &t, "the verifier", err, sizeof(err));
	while (apex_tcp_stream_recv_message(&io, query, &n) == APEX_OK) {
		uint16_t qtype = apex_xfr_request_type(query, n);
		apex_answer_info_t info;

		if (qtype == APEX_TYPE_AXFR || qtype == APEX_TYPE_IXFR) {
			serve_transfer(s, fd, (struct sockaddr *)&peer, query, n, &t);
			break;
		}
		apex_zoneset_t *set = apex_zonetable_acquire(&s->table, NULL);
		size_t size = apex_answer(set, &s->answer_config, APEX_TRANSPORT_TCP, query, n,
					  answer, MESSAGE_MAX, &info);
		apex_zoneset_release(set);
		if (size == 0 || info.dropped)
			break;
		if (apex_tcp_stream_send_message(&io, answer, size) != APEX_OK)
			break;
		atomic_fetch_add(&s->queries, 1);
	}
	close(fd);
}

static void *server_main(void *arg)
{
	apex_verify_server_t *s = arg;
	struct pollfd pfd[5];
	int n = 0;

	pthread_setname_np(pthread_self(), "apexd-verify");
	for (int i = 0; i < s->addr_count; i++) {
		pfd[n++] = (struct pollfd){ .fd = s->addrs[i].udp, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = s->addrs[i].tcp, .events = POLLIN };
	}
	pfd[n++] = (struct pollfd){ .fd = s->stop_fd, .events = POLLIN };
	for (;;) {
		if (poll(pfd, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[n - 1].revents != 0)
			break;
		for (int i = 0; i < n - 1; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			if (i % 2 == 0)
				serve_udp(s, pfd[i].fd);
			else
				serve_tcp(s, pfd[i].fd);
		}
	}
	return NULL;
}

static void close_all(apex_verify_server_t *s)
{
	for (int i = 0; i < s->addr_count; i++) {
		close(s->addrs[i].udp);
		close(s->addrs[i].tcp);
	}
	s->addr_count = 0;
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	s->stop_fd = -1;
	apex_zonetable_destroy(&s->table);
	s->version = NULL;
	free(s->query);
	free(s->answer);
	s->query = s->answer = NULL;
}

int apex_verify_server_start(apex_verify_server_t *s, apex_zone_t *version, char *err,
			     size_t err_size)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->stop_fd = -1;
	apex_answer_config_init(&s->answer_config);
	if ((rc = apex_zonetable_init(&s->table)) < 0)
		return apex_fail(err, err_size, rc, "verifier listener: %s", apex_strerror(rc));
	apex_zone_ref(version); /* the table's */
	if ((rc = apex_zonetable_publish(&s->table, version)) < 0) {
		apex_zone_unref(version);
		apex_zonetable_destroy(&s->table);
		return apex_fail(err, err_size, rc, "verifier listener: %s", apex_strerror(rc));
	}
	s->version = version; /* the table holds it until the end */
	if (bind_address(&s->addrs[s->addr_count], AF_INET6, "::1"))
		s->addr_count++;
	if (bind_address(&s->addrs[s->addr_count], AF_INET, "127.0.0.1"))
		s->addr_count++;
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->query = malloc(MESSAGE_MAX);
	s->answer = malloc(MESSAGE_MAX);
	if (s->addr_count == 0) {
		close_all(s);
		return apex_fail(err, err_size, APEX_EIO,
				 "verifier listener: no loopback address could be bound");
	}
	if (s->stop_fd < 0 || s->query == NULL || s->answer == NULL) {
		close_all(s);
		return apex_fail(err, err_size, APEX_ENOMEM, "verifier listener: out of memory");
	}
	if ((rc = pthread_create(&s->thread, NULL, server_main, s)) != 0) {
		close_all(s);
		return apex_fail(err, err_size, -rc, "verifier listener: %s", strerror(rc));
	}
	s->running = true;
	return APEX_OK;
}

void apex_verify_server_stop(apex_verify_server_t *s)
{
	uint64_t one = 1;

	if (!s->running)
		return;
	if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(s->thread); /* cannot happen with an eventfd */
	pthread_join(s->thread, NULL);
	s->running = false;
	close_all(s);
}
