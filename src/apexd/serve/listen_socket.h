/* SPDX-License-Identifier: BSD-3-Clause */
/* The sockets a worker listens on: one per worker and address (SO_REUSEPORT). */
#ifndef APEX_APEXD_LISTEN_SOCKET_H
#define APEX_APEXD_LISTEN_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "config/daemon_config.h"

/*
 * A non-blocking, close-on-exec socket of type SOCK_DGRAM or SOCK_STREAM
 * bound to listen's address, with SO_REUSEPORT (each worker binds its own
 * socket to the same address and the kernel spreads clients over them),
 * IPV6_V6ONLY for IPv6 and, for TCP, SO_REUSEADDR.  UDP sockets on a
 * wildcard address also receive the destination address (IP_PKTINFO /
 * IPV6_RECVPKTINFO) so answers leave from the address queried, and
 * every UDP socket reports the kernel's drops (SO_RXQ_OVFL).
 * Returns the descriptor (owned by the caller), or the failure as -errno
 * with err set to "udp|tcp ADDR: what failed: reason".
 */
int apex_listen_socket_open(const apex_listen_t *listen, int type, char *err, size_t err_size);

/*
 * Size fd's receive and send buffers (bytes; 0 leaves one as it is).
 * While the process is privileged the sizes are forced past the kernel's
 * maximum (net.core.rmem_max, wmem_max), else the kernel caps them there.
 * Returns 0 or the failure as -errno.
 */
int apex_socket_buffers_set(int fd, size_t receive, size_t send);

/* The sizes the kernel reports for fd's buffers: twice what was asked
 * (it counts its bookkeeping), capped as above. */
void apex_socket_buffers_get(int fd, size_t *receive, size_t *send);

/* True for 0.0.0.0 and ::. */
bool apex_listen_is_wildcard(const struct sockaddr_storage *addr);

#endif
