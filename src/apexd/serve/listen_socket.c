/* SPDX-License-Identifier: BSD-3-Clause */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "serve/listen_socket.h"

#include <errno.h>
#include <stdint.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/error.h"

static int set_int_option(int fd, int level, int name, int value)
{
	return setsockopt(fd, level, name, &value, sizeof(value));
}

bool apex_listen_is_wildcard(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET)
		return ((const struct sockaddr_in *)addr)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (addr->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return false;
}

int apex_listen_socket_open(const apex_listen_t *listen, int type, char *err, size_t err_size)
{
	int family = listen->addr.ss_family;
	const char *proto = type == SOCK_DGRAM ? "udp" : "tcp";
	const char *what = "socket";
	int failure;
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		goto fail;
	if (type == SOCK_STREAM) {
		what = "SO_REUSEADDR";
		if (set_int_option(fd, SOL_SOCKET, SO_REUSEADDR, 1) < 0)
			goto fail;
	}
	what = "SO_REUSEPORT";
	if (set_int_option(fd, SOL_SOCKET, SO_REUSEPORT, 1) < 0)
		goto fail;
	if (family == AF_INET6) {
		what = "IPV6_V6ONLY";
		if (set_int_option(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1) < 0)
			goto fail;
	}
	/* the kernel's count of datagrams it dropped for this socket, on
	 * every datagram received (read per batch: udp.c) */
	what = "SO_RXQ_OVFL";
	if (type == SOCK_DGRAM && set_int_option(fd, SOL_SOCKET, SO_RXQ_OVFL, 1) < 0)
		goto fail;
	if (type == SOCK_DGRAM && apex_listen_is_wildcard(&listen->addr)) {
		what = "IP_PKTINFO";
		if (family == AF_INET ? set_int_option(fd, IPPROTO_IP, IP_PKTINFO, 1) < 0
				      : set_int_option(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1) < 0)
			goto fail;
	}
	what = "bind";
	if (bind(fd, (const struct sockaddr *)&listen->addr, listen->addr_len) < 0)
		goto fail;
	return fd;
fail:
	failure = apex_errno();
	snprintf(err, err_size, "%s %s: %s: %s", proto, listen->text, what, apex_strerror(failure));
	if (fd >= 0)
		close(fd);
	return failure;
}

/* One buffer of fd: forced past net.core.[rw]mem_max when the process may
 * (CAP_NET_ADMIN, before the privilege drop), else within it. */
static int set_buffer(int fd, int force_name, int name, size_t size)
{
	int value = size > (size_t)(INT32_MAX / 2) ? INT32_MAX / 2 : (int)size;

	if (setsockopt(fd, SOL_SOCKET, force_name, &value, sizeof(value)) == 0)
		return APEX_OK;
	if (setsockopt(fd, SOL_SOCKET, name, &value, sizeof(value)) == 0)
		return APEX_OK;
	return apex_errno();
}

int apex_socket_buffers_set(int fd, size_t receive, size_t send)
{
	int rc = APEX_OK;

	if (receive > 0)
		rc = set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, receive);
	if (rc == APEX_OK && send > 0)
		rc = set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, send);
	return rc;
}

void apex_socket_buffers_get(int fd, size_t *receive, size_t *send)
{
	int value = 0;
	socklen_t len = sizeof(value);

	*receive = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &len) == 0 ? (size_t)value : 0;
	len = sizeof(value);
	*send = getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, &len) == 0 ? (size_t)value : 0;
}
