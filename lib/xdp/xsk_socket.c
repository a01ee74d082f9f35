/* SPDX-License-Identifier: BSD-3-Clause */
/* One AF_XDP socket and its UMEM (xsk_socket.h). */
#include "xsk_socket.h"

#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_xdp.h>

#include "util/error.h"

#define AREA_SIZE ((size_t)APEX_XSK_FRAMES * APEX_XSK_FRAME_SIZE)

/* Give the first half of the frames to the fill ring, the rest to the free stack. */
static int fill_all(apex_xsk_t *xsk)
{
	uint32_t idx;

	if (xsk_ring_prod__reserve(&xsk->fill, APEX_XSK_RING_SIZE, &idx) != APEX_XSK_RING_SIZE)
		return APEX_EIO;
	for (uint32_t i = 0; i < APEX_XSK_RING_SIZE; i++)
		*xsk_ring_prod__fill_addr(&xsk->fill, idx + i) = (uint64_t)i * APEX_XSK_FRAME_SIZE;
	xsk_ring_prod__submit(&xsk->fill, APEX_XSK_RING_SIZE);
	for (uint32_t i = 0; i < APEX_XSK_RING_SIZE; i++)
		xsk->free[i] = (uint64_t)(APEX_XSK_RING_SIZE + i) * APEX_XSK_FRAME_SIZE;
	xsk->free_count = APEX_XSK_RING_SIZE;
	return APEX_OK;
}

int apex_xsk_open(apex_xsk_t *xsk, const char *ifname, unsigned queue, char *err, size_t err_size)
{
	struct xsk_umem_config umem_config = {
		.fill_size = APEX_XSK_RING_SIZE,
		.comp_size = APEX_XSK_RING_SIZE,
		.frame_size = APEX_XSK_FRAME_SIZE,
		.frame_headroom = 0,
	};
	struct xsk_socket_config config = {
		.rx_size = APEX_XSK_RING_SIZE,
		.tx_size = APEX_XSK_RING_SIZE,
		/* the program is apexd's own (program.h), not libxdp's */
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	int rc;

	memset(xsk, 0, sizeof(*xsk));
	xsk->fd = -1;
	xsk->queue = queue;
	xsk->area =
		mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (xsk->area == MAP_FAILED) {
		xsk->area = NULL;
		return apex_fail(err, err_size, APEX_ENOMEM, "%s queue %u: no memory for frames",
				 ifname, queue);
	}
	rc = xsk_umem__create(&xsk->umem, xsk->area, AREA_SIZE, &xsk->fill, &xsk->completion,
			      &umem_config);
	if (rc < 0) {
		xsk->umem = NULL;
		return apex_fail(err, err_size, rc, "%s queue %u: AF_XDP frames: %s", ifname, queue,
				 apex_strerror(rc));
	}
	rc = xsk_socket__create(&xsk->socket, ifname, queue, xsk->umem, &xsk->rx, &xsk->tx,
				&config);
	if (rc < 0) {
		xsk->socket = NULL;
		return apex_fail(err, err_size, rc, "%s queue %u: AF_XDP socket: %s%s", ifname,
				 queue, apex_strerror(rc),
				 rc == -EPERM ? " (needs CAP_NET_RAW)" : "");
	}
	xsk->fd = xsk_socket__fd(xsk->socket);
	if ((rc = fill_all(xsk)) < 0)
		return apex_fail(err, err_size, rc, "%s queue %u: AF_XDP fill ring", ifname, queue);
	return APEX_OK;
}

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

int apex_xsk_busy_poll(apex_xsk_t *xsk, int usecs, int budget, char *err, size_t err_size)
{
	static const struct {
		int name;
		const char *text;
	} options[] = {
		{ SO_PREFER_BUSY_POLL, "SO_PREFER_BUSY_POLL" },
		{ SO_BUSY_POLL, "SO_BUSY_POLL" },
		{ SO_BUSY_POLL_BUDGET, "SO_BUSY_POLL_BUDGET" },
	};
	int values[] = { 1, usecs, budget };

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (setsockopt(xsk->fd, SOL_SOCKET, options[i].name, &values[i],
			       sizeof(values[i])) < 0) {
			int rc = -errno;

			return apex_fail(err, err_size, rc, "queue %u: %s: %s", xsk->queue,
					 options[i].text, apex_strerror(rc));
		}
	return APEX_OK;
}

void apex_xsk_close(apex_xsk_t *xsk)
{
	if (xsk->socket != NULL)
		xsk_socket__delete(xsk->socket);
	if (xsk->umem != NULL)
		xsk_umem__delete(xsk->umem);
	if (xsk->area != NULL)
		munmap(xsk->area, AREA_SIZE);
	memset(xsk, 0, sizeof(*xsk));
	xsk->fd = -1;
}

void apex_xsk_refill(apex_xsk_t *xsk, const uint64_t *addrs, uint32_t n)
{
	uint32_t idx;

	if (n == 0 || xsk_ring_prod__reserve(&xsk->fill, n, &idx) != n)
		return; /* cannot happen: the ring has room for every buffer */
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&xsk->fill, idx + i) = addrs[i];
	xsk_ring_prod__submit(&xsk->fill, n);
	/* a zero-copy driver waiting for buffers is woken by a receive call */
	if (xsk_ring_prod__needs_wakeup(&xsk->fill))
		recvfrom(xsk->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

uint32_t apex_xsk_send(apex_xsk_t *xsk, const uint64_t *addrs, const uint32_t *lens, uint32_t n)
{
	uint32_t idx, queued = xsk_ring_prod__reserve(&xsk->tx, n, &idx);

	for (uint32_t i = 0; i < queued; i++) {
		struct xdp_desc *desc = xsk_ring_prod__tx_desc(&xsk->tx, idx + i);

		desc->addr = addrs[i];
		desc->len = lens[i];
	}
	for (uint32_t i = queued; i < n; i++)
		apex_xsk_give_back(xsk, addrs[i]);
	if (queued > 0)
		xsk_ring_prod__submit(&xsk->tx, queued);
	/* copy mode sends only in a send call; zero-copy when the driver asks */
	if (xsk_ring_prod__needs_wakeup(&xsk->tx))
		sendto(xsk->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	return queued;
}

unsigned apex_xsk_mtu(const char *ifname)
{
	struct ifreq req;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unsigned mtu = 0;

	if (fd < 0)
		return 0;
	memset(&req, 0, sizeof(req));
	snprintf(req.ifr_name, sizeof(req.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFMTU, &req) == 0 && req.ifr_mtu > 0)
		mtu = (unsigned)req.ifr_mtu;
	close(fd);
	return mtu;
}

/* Counted in sysfs (queues/rx-N), which every driver has, where the
 * ethtool channel query is optional for a driver. */
unsigned apex_xsk_queue_count(const char *ifname)
{
	char path[64 + IF_NAMESIZE];
	unsigned count = 0;
	struct dirent *entry;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	dir = opendir(path);
	if (dir == NULL)
		return 1;
	while ((entry = readdir(dir)) != NULL)
		if (strncmp(entry->d_name, "rx-", 3) == 0)
			count++;
	closedir(dir);
	return count > 0 ? count : 1;
}
