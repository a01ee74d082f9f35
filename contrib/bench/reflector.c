/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reflector: the floor under a UDP DNS server.
 *
 *   reflector [-b BATCH] [-w ROUNDS] [-m epoll|block] [-r RCVBUF] [-s SNDBUF]
 *             [-p BUSY_POLL_US] [-P] [-d DELAY_US] [-a BYTES] ADDR PORT [SECONDS]
 *
 * Answers every datagram with its own bytes and the QR bit set.  By
 * default with the same I/O pattern as apexd's UDP workers
 * (src/apexd/serve/udp.c): one non-blocking SO_REUSEPORT socket,
 * level-triggered readiness (epoll, which is what libuv's uv_poll
 * uses), up to 8 recvmmsg batches of 64 datagrams per wake-up, one
 * sendmmsg per batch.  Its CPU time per packet is the kernel's share
 * plus the least user-space work a server can do.
 *
 * The options are the variants of that pattern measured in
 * doc/performance.md ("The kernel"):
 *   -b BATCH   datagrams per recvmmsg/sendmmsg (1..1024, default 64)
 *   -w ROUNDS  recvmmsg batches per wake-up at most (default 8)
 *   -m block   no epoll: a blocking socket and recvmmsg(MSG_WAITFORONE)
 *   -r, -s     SO_RCVBUF / SO_SNDBUF in bytes (capped by net.core.*mem_max)
 *   -p US      SO_BUSY_POLL (and -P: SO_PREFER_BUSY_POLL)
 *   -d US      after a wake-up, sleep US microseconds before receiving,
 *              so that a fuller batch is waiting
 *   -a BYTES   every answer BYTES long (the query's bytes, then zeros),
 *              so that the floor moves as many bytes as the server it is
 *              set against; never below the query's own size
 * Stops on SIGTERM/SIGINT or after SECONDS (default 600).
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif

#define BATCH_MAX 1024
#define QUERY_MAX 4096 /* APEX_UDP_QUERY_MAX */

struct options {
	int batch;          /* APEX_UDP_BATCH */
	int rounds;         /* APEX_UDP_BATCHES_PER_WAKEUP */
	int blocking;       /* recvmmsg(MSG_WAITFORONE) on a blocking socket */
	int rcvbuf, sndbuf; /* 0: the system's default */
	int busy_poll_us;
	int prefer_busy_poll;
	long delay_us;
	int answer_size; /* -a; 0: the query's own */
};

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	int c;

	*o = (struct options){ .batch = 64, .rounds = 8 };
	while ((c = getopt(argc, argv, "b:w:m:r:s:p:Pd:a:")) != -1) {
		switch (c) {
		case 'b': o->batch = atoi(optarg); break;
		case 'w': o->rounds = atoi(optarg); break;
		case 'm':
			if (strcmp(optarg, "block") == 0)
				o->blocking = 1;
			else if (strcmp(optarg, "epoll") != 0)
				return -1;
			break;
		case 'r': o->rcvbuf = atoi(optarg); break;
		case 's': o->sndbuf = atoi(optarg); break;
		case 'p': o->busy_poll_us = atoi(optarg); break;
		case 'P': o->prefer_busy_poll = 1; break;
		case 'd': o->delay_us = atol(optarg); break;
		case 'a': o->answer_size = atoi(optarg); break;
		default: return -1;
		}
	}
	if (o->batch < 1 || o->batch > BATCH_MAX || o->rounds < 1 || o->delay_us < 0 ||
	    o->delay_us > 100000 || o->answer_size < 0 || o->answer_size > QUERY_MAX)
		return -1;
	return 0;
}

static int set_int(int fd, int level, int name, int value, const char *what)
{
	if (setsockopt(fd, level, name, &value, sizeof(value)) < 0) {
		fprintf(stderr, "reflector: %s: %s\n", what, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_socket(const struct sockaddr_in *addr, const struct options *o)
{
	int type = SOCK_DGRAM | SOCK_CLOEXEC | (o->blocking ? 0 : SOCK_NONBLOCK);
	int fd = socket(AF_INET, type, 0);

	if (fd < 0 || set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT") < 0)
		return -1;
	if (o->rcvbuf > 0 && set_int(fd, SOL_SOCKET, SO_RCVBUF, o->rcvbuf, "SO_RCVBUF") < 0)
		return -1;
	if (o->sndbuf > 0 && set_int(fd, SOL_SOCKET, SO_SNDBUF, o->sndbuf, "SO_SNDBUF") < 0)
		return -1;
	if (o->busy_poll_us > 0 &&
	    set_int(fd, SOL_SOCKET, SO_BUSY_POLL, o->busy_poll_us, "SO_BUSY_POLL") < 0)
		return -1;
	if (o->prefer_busy_poll &&
	    set_int(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL") < 0)
		return -1;
	if (o->blocking) {
		/* wake up now and then to see SIGTERM and the time limit */
		struct timeval tv = { .tv_usec = 200000 };

		if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
			return -1;
	}
	if (bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0)
		return -1;
	return fd;
}

static void show_buffers(int fd)
{
	int rcv = 0, snd = 0;
	socklen_t len = sizeof(rcv);

	getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, &len);
	len = sizeof(snd);
	getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, &len);
	fprintf(stderr, "reflector: SO_RCVBUF %d, SO_SNDBUF %d\n", rcv, snd);
}

/* One recvmmsg batch answered with sendmmsg; returns datagrams received. */
static int reflect_batch(int fd, int batch, int flags, int answer_size)
{
	static uint8_t buffers[BATCH_MAX][QUERY_MAX];
	static struct mmsghdr msgs[BATCH_MAX];
	static struct iovec iov[BATCH_MAX];
	static struct sockaddr_storage peers[BATCH_MAX];

	for (int i = 0; i < batch; i++) {
		iov[i].iov_base = buffers[i];
		iov[i].iov_len = QUERY_MAX;
		msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &peers[i],
			.msg_namelen = sizeof(peers[i]),
			.msg_iov = &iov[i],
			.msg_iovlen = 1,
		};
	}
	int n = recvmmsg(fd, msgs, (unsigned)batch, flags, NULL);
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		iov[i].iov_len = msgs[i].msg_len;
		if (msgs[i].msg_len >= 3)
			buffers[i][2] |= 0x80; /* QR */
		if ((unsigned)answer_size > msgs[i].msg_len) {
			memset(buffers[i] + msgs[i].msg_len, 0,
			       (unsigned)answer_size - msgs[i].msg_len);
			iov[i].iov_len = (size_t)answer_size;
		}
	}
	for (int sent = 0; sent < n;) {
		int m = sendmmsg(fd, msgs + sent, (unsigned)(n - sent), 0);
		if (m <= 0)
			break; /* buffer full: drop the rest, as apexd does */
		sent += m;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct options o;
	unsigned long packets = 0, wakeups = 0;
	int ep = -1;

	if (parse_options(argc, argv, &o) < 0 || argc - optind < 2 ||
	    inet_pton(AF_INET, argv[optind], &addr.sin_addr) != 1) {
		fprintf(stderr,
			"usage: %s [-b BATCH] [-w ROUNDS] [-m epoll|block] [-r RCVBUF] "
			"[-s SNDBUF] [-p BUSY_POLL_US] [-P] [-d DELAY_US] [-a BYTES] IPV4ADDR "
			"PORT [SECONDS]\n",
			argv[0]);
		return 2;
	}
	addr.sin_port = htons((uint16_t)atoi(argv[optind + 1]));
	double limit = argc - optind > 2 ? atof(argv[optind + 2]) : 600;

	int fd = open_socket(&addr, &o);
	if (fd < 0) {
		perror("reflector: socket");
		return 1;
	}
	show_buffers(fd);
	if (!o.blocking) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			perror("reflector: epoll");
			return 1;
		}
	}
	/* a short sleep must stay short: the default timer slack is 50 us */
	if (o.delay_us > 0 && prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0) < 0)
		perror("reflector: PR_SET_TIMERSLACK");
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	struct timespec start, t;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!stopping) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - start.tv_sec) > limit)
			break;
		if (o.blocking) {
			/* sleeps in the kernel until one datagram, then takes what is there */
			int n = reflect_batch(fd, o.batch, MSG_WAITFORONE, o.answer_size);

			packets += (unsigned long)n;
			wakeups += n > 0;
			continue;
		}
		struct epoll_event got;
		if (epoll_wait(ep, &got, 1, 200) <= 0)
			continue;
		wakeups++;
		if (o.delay_us > 0) {
			struct timespec d = { .tv_nsec = o.delay_us * 1000 };

			nanosleep(&d, NULL);
		}
		for (int round = 0; round < o.rounds; round++) {
			int n = reflect_batch(fd, o.batch, MSG_DONTWAIT, o.answer_size);

			packets += (unsigned long)n;
			if (n < o.batch)
				break;
		}
	}
	fprintf(stderr, "reflector: %lu packets, %lu wake-ups (%.1f packets per wake-up)\n",
		packets, wakeups, wakeups ? (double)packets / (double)wakeups : 0.0);
	if (ep >= 0)
		close(ep);
	close(fd);
	return 0;
}
