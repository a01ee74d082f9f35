/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reflector_uring: the reflector (reflector.c) on io_uring.
 *
 *   reflector_uring [-o sendmsg|send|sendmmsg] [-k] [-n BUFFERS]
 *                   [-t MIN_WAIT_US] [-c] ADDR PORT [SECONDS]
 *
 * Answers every datagram with its own bytes and the QR bit set, like
 * reflector.c, but receives with one multishot IORING_OP_RECVMSG into a
 * ring of provided buffers (Linux 6.0 and later) instead of epoll +
 * recvmmsg.  Each answer is sent from the buffer it was received into:
 *   -o sendmsg   one IORING_OP_SENDMSG per answer, submitted together
 *                with the next wait (default)
 *   -o send      one IORING_OP_SEND with the peer in addr2 (sendto)
 *   -o sendmmsg  one sendmmsg(2) per batch of completions
 *   -k           with sendmsg or send: MSG_DONTWAIT and
 *                IOSQE_CQE_SKIP_SUCCESS, so an answer either goes out
 *                inline or fails with a completion: no completion per
 *                answer, and its buffer is free once the submitting
 *                io_uring_enter() returns
 * The ring is set up with IORING_SETUP_SINGLE_ISSUER and
 * IORING_SETUP_DEFER_TASKRUN (-c: IORING_SETUP_COOP_TASKRUN instead), so
 * receives complete only inside io_uring_enter(), in one batch.
 * -t US asks the kernel to wait at least US microseconds for more than
 * one completion (min_wait, Linux 6.12 and later).
 *
 * Raw system calls and <linux/io_uring.h> only: no liburing.  Measured
 * against reflector.c in doc/performance.md ("The kernel").  Stops on
 * SIGTERM/SIGINT or after SECONDS (default 600).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if !defined(IORING_RECV_MULTISHOT) || !defined(IORING_SETUP_DEFER_TASKRUN) || \
	!defined(__NR_io_uring_setup)
/* Kernel headers older than Linux 6.1: nothing to measure. */
int main(void)
{
	fprintf(stderr, "reflector_uring: built without io_uring multishot receive "
			"(kernel headers older than Linux 6.1)\n");
	return 1;
}
#else

#define QUERY_MAX 4096 /* APEX_UDP_QUERY_MAX */
#define NAME_SPACE ((unsigned)sizeof(struct sockaddr_storage))
/* one provided buffer: recvmsg_out header, peer address, datagram */
#define BUFFER_SIZE (sizeof(struct io_uring_recvmsg_out) + NAME_SPACE + QUERY_MAX)
#define BUFFERS_MAX 4096
#define SQ_ENTRIES 1024
#define CQ_ENTRIES 8192
#define BUFFER_GROUP 0
#define RECV_TAG UINT64_MAX /* user_data of the multishot receive */

enum send_mode { SEND_MSG, SEND_TO, SEND_MMSG };

/* The layout of io_uring_getevents_arg since Linux 6.12 (pad became min_wait_usec). */
struct getevents_arg {
	uint64_t sigmask;
	uint32_t sigmask_sz;
	uint32_t min_wait_usec;
	uint64_t ts;
};

#ifndef IORING_FEAT_MIN_TIMEOUT
#define IORING_FEAT_MIN_TIMEOUT (1U << 15)
#endif

struct ring {
	int fd;
	unsigned sq_mask, cq_mask;
	unsigned *sq_head, *sq_tail, *sq_array;
	unsigned *cq_head, *cq_tail;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	unsigned sq_local_tail; /* SQEs prepared, not yet published */
	unsigned to_submit;
};

struct buffers {
	struct io_uring_buf_ring *ring;
	unsigned count, mask;
	unsigned short tail;
	uint8_t *memory;         /* count * BUFFER_SIZE */
	struct msghdr *send_msg; /* per buffer: the answer being sent */
	struct iovec *send_iov;
};

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static int ring_setup(struct ring *r, unsigned flags, unsigned *features)
{
	struct io_uring_params p = { .flags = flags | IORING_SETUP_CQSIZE,
				     .cq_entries = CQ_ENTRIES };

	r->fd = (int)syscall(__NR_io_uring_setup, SQ_ENTRIES, &p);
	if (r->fd < 0)
		return -1;
	*features = p.features;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		errno = ENOSYS;
		return -1;
	}
	size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	size_t size = sq_size > cq_size ? sq_size : cq_size;
	uint8_t *rings = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
			      IORING_OFF_SQ_RING);
	if (rings == MAP_FAILED)
		return -1;
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED)
		return -1;
	r->sq_head = (unsigned *)(rings + p.sq_off.head);
	r->sq_tail = (unsigned *)(rings + p.sq_off.tail);
	r->sq_mask = *(unsigned *)(rings + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(rings + p.sq_off.array);
	r->cq_head = (unsigned *)(rings + p.cq_off.head);
	r->cq_tail = (unsigned *)(rings + p.cq_off.tail);
	r->cq_mask = *(unsigned *)(rings + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(rings + p.cq_off.cqes);
	for (unsigned i = 0; i < p.sq_entries; i++)
		r->sq_array[i] = i; /* SQE i sits in slot i */
	r->sq_local_tail = *r->sq_tail;
	return 0;
}

/* Submit what is prepared and wait for at least wait_nr completions (0: don't wait). */
static int ring_enter(struct ring *r, unsigned wait_nr, unsigned min_wait_us)
{
	struct __kernel_timespec ts = { .tv_nsec = 200 * 1000 * 1000 };
	struct getevents_arg arg = { .min_wait_usec = min_wait_us, .ts = (uint64_t)(uintptr_t)&ts };
	unsigned flags = wait_nr ? IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG : 0;

	__atomic_store_n(r->sq_tail, r->sq_local_tail, __ATOMIC_RELEASE);
	int n = (int)syscall(__NR_io_uring_enter, r->fd, r->to_submit, wait_nr, flags,
			     wait_nr ? &arg : NULL, sizeof(arg));
	if (n >= 0)
		r->to_submit -= (unsigned)n < r->to_submit ? (unsigned)n : r->to_submit;
	else if (errno == ETIME || errno == EINTR || errno == EAGAIN || errno == EBUSY)
		return 0;
	return n;
}

/* The next free SQE, submitting the prepared ones first if the ring is full. */
static struct io_uring_sqe *ring_sqe(struct ring *r)
{
	if (r->sq_local_tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) > r->sq_mask) {
		if (ring_enter(r, 0, 0) < 0)
			return NULL;
	}
	struct io_uring_sqe *sqe = &r->sqes[r->sq_local_tail & r->sq_mask];
	memset(sqe, 0, sizeof(*sqe));
	r->sq_local_tail++;
	r->to_submit++;
	return sqe;
}

static uint8_t *buffer_at(const struct buffers *b, unsigned id)
{
	return b->memory + (size_t)id * BUFFER_SIZE;
}

static void buffer_give(struct buffers *b, unsigned id)
{
	struct io_uring_buf *slot = &b->ring->bufs[b->tail & b->mask];

	slot->addr = (uint64_t)(uintptr_t)buffer_at(b, id);
	slot->len = BUFFER_SIZE;
	slot->bid = (uint16_t)id;
	b->tail++;
}

static void buffers_publish(struct buffers *b)
{
	__atomic_store_n(&b->ring->tail, b->tail, __ATOMIC_RELEASE);
}

static int buffers_setup(struct ring *r, struct buffers *b, unsigned count)
{
	size_t ring_size = count * sizeof(struct io_uring_buf);

	b->count = count;
	b->mask = count - 1;
	b->ring = mmap(NULL, ring_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b->memory = mmap(NULL, (size_t)count * BUFFER_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	b->send_msg = calloc(count, sizeof(*b->send_msg));
	b->send_iov = calloc(count, sizeof(*b->send_iov));
	if (b->ring == MAP_FAILED || b->memory == MAP_FAILED || b->send_msg == NULL ||
	    b->send_iov == NULL)
		return -1;
	struct io_uring_buf_reg reg = {
		.ring_addr = (uint64_t)(uintptr_t)b->ring,
		.ring_entries = count,
		.bgid = BUFFER_GROUP,
	};
	if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_PBUF_RING, &reg, 1) < 0)
		return -1;
	b->tail = 0;
	for (unsigned i = 0; i < count; i++)
		buffer_give(b, i);
	buffers_publish(b);
	return 0;
}

/* Arm the multishot receive; its msghdr only gives the layout of each buffer. */
static int arm_receive(struct ring *r, int fd)
{
	static struct msghdr layout = { .msg_namelen = NAME_SPACE };
	struct io_uring_sqe *sqe = ring_sqe(r);

	if (sqe == NULL)
		return -1;
	sqe->opcode = IORING_OP_RECVMSG;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)&layout;
	sqe->len = 1;
	sqe->ioprio = IORING_RECV_MULTISHOT;
	sqe->flags = IOSQE_BUFFER_SELECT;
	sqe->buf_group = BUFFER_GROUP;
	sqe->user_data = RECV_TAG;
	return 0;
}

/* Queue the answer held in buffer id (its own query with QR set). */
static int queue_send(struct ring *r, struct buffers *b, int fd, unsigned id, enum send_mode mode,
		      int skip)
{
	uint8_t *buf = buffer_at(b, id);
	struct io_uring_recvmsg_out out;
	struct msghdr *msg = &b->send_msg[id];
	struct iovec *iov = &b->send_iov[id];

	memcpy(&out, buf, sizeof(out));
	uint8_t *name = buf + sizeof(out);
	uint8_t *payload = name + NAME_SPACE + out.controllen;
	if ((out.flags & MSG_TRUNC) || out.namelen > NAME_SPACE || out.payloadlen < 3)
		return 1;   /* not answered: the caller recycles the buffer */
	payload[2] |= 0x80; /* QR */
	iov->iov_base = payload;
	iov->iov_len = out.payloadlen;
	*msg = (struct msghdr){
		.msg_name = name, .msg_namelen = out.namelen, .msg_iov = iov, .msg_iovlen = 1
	};
	if (mode == SEND_MMSG)
		return 0; /* sent by the caller's sendmmsg */

	struct io_uring_sqe *sqe = ring_sqe(r);
	if (sqe == NULL)
		return -1;
	sqe->fd = fd;
	sqe->user_data = id;
	if (skip) {
		sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
		sqe->msg_flags = MSG_DONTWAIT; /* fail now rather than wait for room */
	}
	if (mode == SEND_MSG) {
		sqe->opcode = IORING_OP_SENDMSG;
		sqe->addr = (uint64_t)(uintptr_t)msg;
		sqe->len = 1;
	} else {
		sqe->opcode = IORING_OP_SEND;
		sqe->addr = (uint64_t)(uintptr_t)payload;
		sqe->len = out.payloadlen;
		sqe->addr2 = (uint64_t)(uintptr_t)name;
		sqe->addr_len = (uint16_t)out.namelen;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct ring r;
	static struct buffers b;
	static struct mmsghdr batch[CQ_ENTRIES];
	static unsigned batch_id[CQ_ENTRIES];
	struct sockaddr_in addr = { .sin_family = AF_INET };
	enum send_mode mode = SEND_MSG;
	unsigned buffer_count = 1024, min_wait_us = 0, features = 0;
	unsigned setup = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	unsigned long packets = 0, send_errors = 0, rearms = 0, waits = 0;
	unsigned sends_queued = 0;              /* answers submitted by the next io_uring_enter */
	static unsigned in_flight[BUFFERS_MAX]; /* -k: buffers of answers being submitted */
	unsigned in_flight_count = 0;
	int skip = 0;
	int one = 1, c;

	while ((c = getopt(argc, argv, "o:kn:t:c")) != -1) {
		switch (c) {
		case 'o':
			mode = strcmp(optarg, "send") == 0       ? SEND_TO
			       : strcmp(optarg, "sendmmsg") == 0 ? SEND_MMSG
								 : SEND_MSG;
			if (mode == SEND_MSG && strcmp(optarg, "sendmsg") != 0)
				return 2;
			break;
		case 'k': skip = 1; break;
		case 'n': buffer_count = (unsigned)atoi(optarg); break;
		case 't': min_wait_us = (unsigned)atoi(optarg); break;
		case 'c': setup = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN; break;
		default: return 2;
		}
	}
	if (argc - optind < 2 || inet_pton(AF_INET, argv[optind], &addr.sin_addr) != 1 ||
	    buffer_count < 2 || buffer_count > BUFFERS_MAX || (buffer_count & (buffer_count - 1))) {
		fprintf(stderr,
			"usage: %s [-o sendmsg|send|sendmmsg] [-k] [-n BUFFERS (power of 2)] "
			"[-t MIN_WAIT_US] [-c] IPV4ADDR PORT [SECONDS]\n",
			argv[0]);
		return 2;
	}
	addr.sin_port = htons((uint16_t)atoi(argv[optind + 1]));
	double limit = argc - optind > 2 ? atof(argv[optind + 2]) : 600;

	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("reflector_uring: socket");
		return 1;
	}
	if (ring_setup(&r, setup, &features) < 0 || buffers_setup(&r, &b, buffer_count) < 0) {
		perror("reflector_uring: io_uring");
		return 1;
	}
	if (min_wait_us > 0 && !(features & IORING_FEAT_MIN_TIMEOUT)) {
		fprintf(stderr, "reflector_uring: this kernel has no min_wait\n");
		return 1;
	}
	if (arm_receive(&r, fd) < 0)
		return 1;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	struct timespec start, t;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!stopping) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - start.tv_sec) > limit)
			break;
		/* One system call: submit the answers of the last round and wait
		 * for one more query.  The answers complete inline (a UDP send
		 * does not wait), so their completions are counted in. */
		if (ring_enter(&r, skip ? 1 : sends_queued + 1, min_wait_us) < 0) {
			perror("reflector_uring: io_uring_enter");
			return 1;
		}
		waits++;
		sends_queued = 0;
		/* -k: every answer submitted has been sent or has failed by now */
		if (r.to_submit == 0) {
			for (unsigned i = 0; i < in_flight_count; i++)
				buffer_give(&b, in_flight[i]);
			in_flight_count = 0;
		}
		unsigned head = *r.cq_head, tail = __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE);
		unsigned batched = 0;
		int rearm = 0;

		for (; head != tail; head++) {
			const struct io_uring_cqe *cqe = &r.cqes[head & r.cq_mask];

			if (cqe->user_data != RECV_TAG) {
				/* an answer went out (or not): its buffer is free again */
				if (cqe->res < 0)
					send_errors++;
				if (!skip)
					buffer_give(&b, (unsigned)cqe->user_data);
				continue;
			}
			if (!(cqe->flags & IORING_CQE_F_MORE))
				rearm = 1; /* e.g. -ENOBUFS: every buffer is in flight */
			if (cqe->res < 0 || !(cqe->flags & IORING_CQE_F_BUFFER)) {
				if (cqe->res < 0 && cqe->res != -ENOBUFS) {
					fprintf(stderr, "reflector_uring: recvmsg: %s\n",
						strerror(-cqe->res));
					return 1;
				}
				continue;
			}
			unsigned id = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
			int rc = queue_send(&r, &b, fd, id, mode, skip);

			packets++;
			if (rc < 0)
				return 1;
			if (rc > 0)
				buffer_give(&b, id);
			else if (skip && mode != SEND_MMSG)
				in_flight[in_flight_count++] = id;
			else if (mode != SEND_MMSG)
				sends_queued++;
			else {
				batch[batched].msg_hdr = b.send_msg[id];
				batch_id[batched++] = id;
			}
		}
		__atomic_store_n(r.cq_head, head, __ATOMIC_RELEASE);
		if (mode == SEND_MMSG && batched > 0) {
			for (unsigned sent = 0; sent < batched;) {
				int m = sendmmsg(fd, batch + sent, batched - sent, 0);
				if (m <= 0) {
					send_errors += batched - sent;
					break;
				}
				sent += (unsigned)m;
			}
			for (unsigned i = 0; i < batched; i++)
				buffer_give(&b, batch_id[i]);
		}
		buffers_publish(&b);
		if (rearm) {
			rearms++;
			if (arm_receive(&r, fd) < 0)
				return 1;
		}
	}
	fprintf(stderr,
		"reflector_uring: %lu packets, %lu waits (%.1f packets per wait), "
		"%lu send errors, %lu re-arms\n",
		packets, waits, waits ? (double)packets / (double)waits : 0.0, send_errors, rearms);
	close(r.fd);
	close(fd);
	return 0;
}
#endif
