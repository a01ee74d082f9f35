/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/xfr_client: a secondary's exchanges with a primary keep one
 * connection open for the next (RFC 5936 section 4.1), and a kept
 * connection the primary let go costs nothing but a new one.  The
 * primary is a thread of this test on 127.0.0.1 that counts the
 * connections it accepts and the requests it reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns/rrtype.h"
#include "util/error.h"
#include "xfr/xfr_client.h"
#include "wire_msg.h"

/* How the primary treats each connection. */
typedef enum mode {
	KEEP_OPEN,   /* answer every request, as Knot DNS, NSD and BIND do */
	CLOSE_AFTER, /* close after each answer */
	DROP_SECOND, /* read a second request, then close without answering */
} mode_t_;

typedef struct primary {
	int listener;
	int stop[2]; /* a pipe: readable to end the thread */
	mode_t_ mode;
	atomic_int accepted, requests;
	pthread_t thread;
	struct sockaddr_in addr;
} primary_t;

/* n bytes of fd into buf; false at the end of the stream. */
static bool read_all(int fd, uint8_t *buf, size_t n)
{
	while (n > 0) {
		ssize_t got = read(fd, buf, n);

		if (got <= 0)
			return false;
		buf += got;
		n -= (size_t)got;
	}
	return true;
}

static void soa(msg_t *m)
{
	msg_put_name(m, "example.");
	msg_put_u16(m, APEX_TYPE_SOA);
	msg_put_u16(m, APEX_CLASS_IN);
	msg_put_u32(m, 3600);
	msg_put_u16(m, 4 + 6 + 20);
	msg_put_name(m, "ns.");
	msg_put_name(m, "host.");
	msg_put_u32(m, 7);
	msg_put_u32(m, 7200);
	msg_put_u32(m, 3600);
	msg_put_u32(m, 1209600);
	msg_put_u32(m, 300);
	m->ancount++;
}

/* The answer to request (a question for example.): its SOA, and for an
 * AXFR one A record and the SOA again; with its length in front. */
static void answer(int fd, const uint8_t *request, size_t size)
{
	uint16_t qtype = apex_read_u16(request + 12 + 9);
	uint8_t a[4] = { 192, 0, 2, 1 };
	msg_t m;

	assert_true(size >= 12 + 9 + 4);
	memset(&m, 0, sizeof(m));
	msg_put(&m, request, 2); /* the request's ID */
	msg_put_u16(&m, APEX_FLAG_QR | APEX_FLAG_AA);
	msg_put_u16(&m, 1);
	msg_put_u16(&m, 0);
	msg_put_u16(&m, 0);
	msg_put_u16(&m, 0);
	msg_put(&m, request + 12, 9 + 4); /* the question */
	soa(&m);
	if (qtype == APEX_TYPE_AXFR) {
		msg_put_name(&m, "www.example.");
		msg_put_u16(&m, APEX_TYPE_A);
		msg_put_u16(&m, APEX_CLASS_IN);
		msg_put_u32(&m, 3600);
		msg_put_u16(&m, 4);
		msg_put(&m, a, 4);
		m.ancount++;
		soa(&m);
	}
	apex_write_u16(m.data + APEX_HDR_ANCOUNT, m.ancount);
	uint8_t out[2 + sizeof(m.data)];
	apex_write_u16(out, (uint16_t)m.size);
	memcpy(out + 2, m.data, m.size);
	assert_int_equal(write(fd, out, 2 + m.size), (ssize_t)(2 + m.size));
}

/* One connection, served until the client or the mode closes it. */
static void serve(primary_t *p, int fd)
{
	for (int n = 0;; n++) {
		uint8_t len[2], request[1024];
		size_t size;

		if (!read_all(fd, len, 2))
			break;
		size = apex_read_u16(len);
		if (size > sizeof(request) || !read_all(fd, request, size))
			break;
		atomic_fetch_add(&p->requests, 1);
		if (p->mode == DROP_SECOND && n == 1)
			break;
		answer(fd, request, size);
		if (p->mode == CLOSE_AFTER)
			break;
	}
	close(fd);
}

static void *primary_main(void *arg)
{
	primary_t *p = arg;

	for (;;) {
		struct pollfd fds[2] = { { p->listener, POLLIN, 0 }, { p->stop[0], POLLIN, 0 } };
		int fd;

		if (poll(fds, 2, -1) < 0 || fds[1].revents != 0)
			break;
		if ((fd = accept(p->listener, NULL, NULL)) < 0)
			continue;
		atomic_fetch_add(&p->accepted, 1);
		serve(p, fd); /* one client at a time: the test's */
	}
	return NULL;
}

static void primary_start(primary_t *p, mode_t_ mode)
{
	socklen_t len = sizeof(p->addr);

	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->listener = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(p->listener >= 0);
	p->addr.sin_family = AF_INET;
	p->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(p->listener, (struct sockaddr *)&p->addr, sizeof(p->addr)), 0);
	assert_int_equal(getsockname(p->listener, (struct sockaddr *)&p->addr, &len), 0);
	assert_int_equal(listen(p->listener, 8), 0);
	assert_int_equal(pipe(p->stop), 0);
	assert_int_equal(pthread_create(&p->thread, NULL, primary_main, p), 0);
}

static void primary_stop(primary_t *p)
{
	assert_int_equal(write(p->stop[1], "x", 1), 1);
	pthread_join(p->thread, NULL);
	close(p->listener);
	close(p->stop[0]);
	close(p->stop[1]);
}

/* The client's view of p, keeping its connection in kept (NULL: none). */
static void primary_of(const primary_t *p, apex_xfr_kept_t *kept, apex_xfr_primary_t *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(&out->addr, &p->addr, sizeof(p->addr));
	out->addr_len = sizeof(p->addr);
	out->text = "127.0.0.1";
	out->kept = kept;
}

/* What a transfer handed its handler: the records, and when it was told
 * the request was sent (the records received by then). */
typedef struct received {
	int records;
	int requested;
	int records_when_requested;
} received_t;

static int on_record(void *ctx, const apex_rr_t *rr)
{
	(void)rr;
	((received_t *)ctx)->records++;
	return APEX_OK;
}

static void on_requested(void *ctx)
{
	received_t *r = ctx;

	r->requested++;
	r->records_when_requested = r->records;
}

static const apex_xfr_timeouts_t timeouts = { 2000, 2000, 5000, -1 };

/* An AXFR of example. from primary: its two records received (the
 * closing SOA ends the stream), the handler told that the request was
 * sent before any of them (each time it was sent). */
static void axfr_ok(const apex_xfr_primary_t *primary)
{
	uint8_t origin[APEX_NAME_MAX];
	received_t got = { 0, 0, -1 };
	apex_xfr_in_handler_t handler = { &got, on_record, NULL, on_requested };
	apex_xfr_in_limits_t limits = { 0, 0 };
	apex_xfr_in_t x;
	char err[256] = "";

	assert_true(apex_name_from_str("example.", origin) > 0);
	int rc = apex_xfr_client_transfer(primary, origin, APEX_TYPE_AXFR, 0, &handler, &limits,
					  &timeouts, &x, err, sizeof(err));
	if (rc != APEX_OK)
		fail_msg("transfer: %s", err);
	assert_int_equal(got.records, 2);
	assert_true(got.requested >= 1); /* twice when sent again */
	assert_int_equal(got.records_when_requested, 0);
	apex_xfr_in_free(&x);
}

static void soa_ok(const apex_xfr_primary_t *primary)
{
	uint8_t origin[APEX_NAME_MAX];
	uint32_t serial = 0;
	int64_t expire;
	char err[256] = "";

	assert_true(apex_name_from_str("example.", origin) > 0);
	if (apex_xfr_client_soa(primary, origin, &timeouts, &serial, &expire, err, sizeof(err)) !=
	    APEX_OK)
		fail_msg("SOA query: %s", err);
	assert_int_equal(serial, 7);
}

static void exchanges_share_a_connection(void **state)
{
	apex_xfr_kept_t kept = APEX_XFR_KEPT_NONE;
	apex_xfr_primary_t primary;
	primary_t p;

	(void)state;
	primary_start(&p, KEEP_OPEN);
	primary_of(&p, &kept, &primary);
	soa_ok(&primary);
	axfr_ok(&primary);
	axfr_ok(&primary);
	assert_true(kept.fd >= 0);
	apex_xfr_kept_close(&kept, 60000); /* not that old: stays */
	assert_true(kept.fd >= 0);
	apex_xfr_kept_close(&kept, 0);
	assert_int_equal(kept.fd, -1);
	primary_stop(&p);
	assert_int_equal(atomic_load(&p.accepted), 1);
	assert_int_equal(atomic_load(&p.requests), 3);
}

static void without_kept_each_has_its_own(void **state)
{
	apex_xfr_primary_t primary;
	primary_t p;

	(void)state;
	primary_start(&p, KEEP_OPEN);
	primary_of(&p, NULL, &primary);
	axfr_ok(&primary);
	axfr_ok(&primary);
	primary_stop(&p);
	assert_int_equal(atomic_load(&p.accepted), 2);
}

static void a_connection_closed_by_the_primary_is_replaced(void **state)
{
	apex_xfr_kept_t kept = APEX_XFR_KEPT_NONE;
	apex_xfr_primary_t primary;
	primary_t p;

	(void)state;
	primary_start(&p, CLOSE_AFTER);
	primary_of(&p, &kept, &primary);
	axfr_ok(&primary);
	usleep(50000); /* the primary's close has arrived */
	axfr_ok(&primary);
	soa_ok(&primary);
	apex_xfr_kept_close(&kept, 0);
	primary_stop(&p);
	assert_int_equal(atomic_load(&p.accepted), 3);
	assert_int_equal(atomic_load(&p.requests), 3); /* none sent on a closed one */
}

static void a_request_left_unanswered_is_sent_again(void **state)
{
	apex_xfr_kept_t kept = APEX_XFR_KEPT_NONE;
	apex_xfr_primary_t primary;
	primary_t p;

	(void)state;
	primary_start(&p, DROP_SECOND);
	primary_of(&p, &kept, &primary);
	axfr_ok(&primary);
	axfr_ok(&primary); /* dropped on the kept one, answered on a new one */
	soa_ok(&primary);  /* the same again */
	apex_xfr_kept_close(&kept, 0);
	primary_stop(&p);
	assert_int_equal(atomic_load(&p.accepted), 3);
	assert_int_equal(atomic_load(&p.requests), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exchanges_share_a_connection),
		cmocka_unit_test(without_kept_each_has_its_own),
		cmocka_unit_test(a_connection_closed_by_the_primary_is_replaced),
		cmocka_unit_test(a_request_left_unanswered_is_sent_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
