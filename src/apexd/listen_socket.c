/* SPDX-License-Identifier: BSD-3-Clause */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "listen_socket.h"

#include <errno.h>
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
