/*
 * reflector: the floor under a UDP DNS server.
 *
 *   reflector ADDR PORT [SECONDS]
 *
 * Answers every datagram with its own bytes and the QR bit set, with
 * the same I/O pattern as apexd's UDP workers (src/apexd/udp.c): one
 * non-blocking SO_REUSEPORT socket, level-triggered readiness (epoll,
 * which is what libuv's uv_poll uses), up to 8 recvmmsg batches of 64
 * datagrams per wake-up, one sendmmsg per batch.  Its CPU time per
 * packet is the kernel's share plus the least user-space work a server
 * can do.  Stops on SIGTERM/SIGINT or after SECONDS (default 600).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64              /* APEX_UDP_BATCH */
#define QUERY_MAX 4096        /* APEX_UDP_QUERY_MAX */
#define BATCHES_PER_WAKEUP 8  /* APEX_UDP_BATCHES_PER_WAKEUP */

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

int main(int argc, char **argv)
{
	static uint8_t buffers[BATCH][QUERY_MAX];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_storage peers[BATCH];
	struct sockaddr_in addr = { .sin_family = AF_INET };
	unsigned long packets = 0;
	int one = 1;

	if (argc < 3 || inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
		fprintf(stderr, "usage: %s IPV4ADDR PORT [SECONDS]\n", argv[0]);
		return 2;
	}
	addr.sin_port = htons((uint16_t)atoi(argv[2]));
	double limit = argc > 3 ? atof(argv[3]) : 600;

	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("reflector: socket");
		return 1;
	}
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		perror("reflector: epoll");
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	struct timespec start, t;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!stopping) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - start.tv_sec) > limit)
			break;
		struct epoll_event got;
		int ready = epoll_wait(ep, &got, 1, 200);
		if (ready <= 0)
			continue;
		for (int round = 0; round < BATCHES_PER_WAKEUP; round++) {
			for (int i = 0; i < BATCH; i++) {
				iov[i].iov_base = buffers[i];
				iov[i].iov_len = QUERY_MAX;
				msgs[i].msg_hdr = (struct msghdr){
					.msg_name = &peers[i], .msg_namelen = sizeof(peers[i]),
					.msg_iov = &iov[i], .msg_iovlen = 1,
				};
			}
			int n = recvmmsg(fd, msgs, BATCH, MSG_DONTWAIT, NULL);
			if (n <= 0)
				break;
			for (int i = 0; i < n; i++) {
				iov[i].iov_len = msgs[i].msg_len;
				if (msgs[i].msg_len >= 3)
					buffers[i][2] |= 0x80;  /* QR */
			}
			for (int sent = 0; sent < n;) {
				int m = sendmmsg(fd, msgs + sent, (unsigned)(n - sent), 0);
				if (m <= 0)
					break;  /* buffer full: drop the rest, as apexd does */
				sent += m;
			}
			packets += (unsigned long)n;
			if (n < BATCH)
				break;
		}
	}
	fprintf(stderr, "reflector: %lu packets\n", packets);
	close(ep);
	close(fd);
	return 0;
}
