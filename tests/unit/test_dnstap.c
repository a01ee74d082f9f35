/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/dnstap: the frame ring and the dnstap encoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <cmocka.h>

#include "dnstap/dnstap.pb-c.h"
#include "dnstap/message.h"
#include "dnstap/ring.h"
#include "util/error.h"

/* A frame of n bytes that tells its sequence number. */
static size_t make_frame(uint8_t *buf, uint32_t seq)
{
	size_t n = 4 + (seq * 7919u) % 700; /* varying sizes, some crossing the end */
	for (size_t i = 4; i < n; i++)
		buf[i] = (uint8_t)(seq + i);
	memcpy(buf, &seq, 4);
	return n;
}

static void check_frame(const uint8_t *frame, size_t size, uint32_t seq)
{
	uint8_t expect[1024];
	size_t n = make_frame(expect, seq);
	assert_int_equal(size, n);
	assert_memory_equal(frame, expect, n);
}

static void test_ring_order_wrap_and_full(void **state)
{
	(void)state;
	apex_dnstap_ring_t ring;
	uint8_t buf[4096];
	uint32_t pushed = 0, read = 0;

	assert_int_equal(apex_dnstap_ring_init(&ring, 4096), APEX_OK);
	assert_false(apex_dnstap_ring_push(&ring, buf, apex_dnstap_ring_max_frame(&ring) + 1));
	/* many rounds through the buffer: every frame back in order, intact */
	for (int round = 0; round < 200; round++) {
		while (apex_dnstap_ring_push(&ring, buf, make_frame(buf, pushed)))
			pushed++;
		/* full: a push fails at once, and nothing is lost */
		size_t at = apex_dnstap_ring_tail(&ring), size;
		const uint8_t *frame;
		unsigned taken = 0;
		while ((frame = apex_dnstap_ring_next(&ring, &at, &size)) != NULL && taken++ < 3)
			check_frame(frame, size, read++);
		if (frame != NULL) /* the fourth was looked at but not taken */
			at -= (4 + size + 3) & ~(size_t)3;
		apex_dnstap_ring_release(&ring, at);
	}
	size_t at = apex_dnstap_ring_tail(&ring), size;
	const uint8_t *frame;
	while ((frame = apex_dnstap_ring_next(&ring, &at, &size)) != NULL)
		check_frame(frame, size, read++);
	apex_dnstap_ring_release(&ring, at);
	assert_int_equal(read, pushed);
	assert_true(pushed > 600);
	apex_dnstap_ring_free(&ring);
}

/* One producer and one consumer at once: every frame the producer could
 * push arrives whole and in order (TSan sees the ring's ordering). */
enum { FRAMES = 200000 };
static apex_dnstap_ring_t shared;
static atomic_size_t accepted_count;
static atomic_bool produced;

static void *producer(void *arg)
{
	uint8_t buf[1024];
	(void)arg;
	for (uint32_t seq = 0; seq < FRAMES; seq++) {
		if (apex_dnstap_ring_push(&shared, buf, make_frame(buf, seq)))
			atomic_fetch_add(&accepted_count, 1);
	}
	atomic_store(&produced, true);
	return NULL;
}

static void test_ring_concurrent(void **state)
{
	(void)state;
	pthread_t thread;
	size_t got = 0;
	uint32_t last = 0;

	assert_int_equal(apex_dnstap_ring_init(&shared, 1 << 16), APEX_OK);
	atomic_init(&accepted_count, 0);
	atomic_init(&produced, false);
	assert_int_equal(pthread_create(&thread, NULL, producer, NULL), 0);
	for (;;) {
		bool done = atomic_load(&produced); /* read before the ring: nothing comes after */
		size_t at = apex_dnstap_ring_tail(&shared), size;
		const uint8_t *frame = apex_dnstap_ring_next(&shared, &at, &size);
		if (frame == NULL) {
			if (done)
				break;
			continue;
		}
		uint32_t seq;
		memcpy(&seq, frame, 4);
		assert_true(got == 0 || seq > last);
		check_frame(frame, size, seq);
		last = seq;
		got++;
		apex_dnstap_ring_release(&shared, at);
	}
	pthread_join(thread, NULL);
	assert_int_equal(got, atomic_load(&accepted_count));
	assert_true(got > 0);
	apex_dnstap_ring_free(&shared);
}

static void test_encode(void **state)
{
	(void)state;
	static const uint8_t addr6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t msg[] = { 0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0 };
	apex_dnstap_event_t ev = {
		.response = true,
		.protocol = APEX_DNSTAP_TCP,
		.client_addr = addr6,
		.client_addr_size = 16,
		.client_port = 53000,
		.query_sec = 1795660000,
		.query_nsec = 123456789,
		.response_sec = 1795660001,
		.response_nsec = 5,
		.message = msg,
		.message_size = sizeof(msg),
		.identity = "ns1.example",
		.version = "apexd test",
	};
	uint8_t out[512];

	size_t n = apex_dnstap_encode(&ev, out, sizeof(out));
	assert_true(n > sizeof(msg) + 16);
	assert_int_equal(apex_dnstap_encode(&ev, out, n - 1), 0);

	Dnstap__Dnstap *d = dnstap__dnstap__unpack(NULL, n, out);
	assert_non_null(d);
	assert_int_equal(d->type, DNSTAP__DNSTAP__TYPE__MESSAGE);
	assert_true(d->has_identity && d->identity.len == 11);
	assert_memory_equal(d->identity.data, "ns1.example", 11);
	assert_true(d->has_version && d->version.len == 10);
	Dnstap__Message *m = d->message;
	assert_non_null(m);
	assert_int_equal(m->type, DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE);
	assert_int_equal(m->socket_family, DNSTAP__SOCKET_FAMILY__INET6);
	assert_int_equal(m->socket_protocol, DNSTAP__SOCKET_PROTOCOL__TCP);
	assert_true(m->has_query_address && m->query_address.len == 16);
	assert_memory_equal(m->query_address.data, addr6, 16);
	assert_int_equal(m->query_port, 53000);
	assert_int_equal(m->query_time_sec, 1795660000);
	assert_int_equal(m->query_time_nsec, 123456789);
	assert_int_equal(m->response_time_sec, 1795660001);
	assert_int_equal(m->response_time_nsec, 5);
	assert_true(m->has_response_message && !m->has_query_message);
	assert_int_equal(m->response_message.len, sizeof(msg));
	assert_memory_equal(m->response_message.data, msg, sizeof(msg));
	dnstap__dnstap__free_unpacked(d, NULL);

	/* a query over UDP/IPv4, no identity */
	static const uint8_t addr4[4] = { 192, 0, 2, 7 };
	ev = (apex_dnstap_event_t){ .protocol = APEX_DNSTAP_UDP,
				    .client_addr = addr4,
				    .client_addr_size = 4,
				    .client_port = 1,
				    .message = msg,
				    .message_size = 12 };
	n = apex_dnstap_encode(&ev, out, sizeof(out));
	d = dnstap__dnstap__unpack(NULL, n, out);
	assert_non_null(d);
	assert_false(d->has_identity || d->has_version);
	assert_int_equal(d->message->type, DNSTAP__MESSAGE__TYPE__AUTH_QUERY);
	assert_int_equal(d->message->socket_family, DNSTAP__SOCKET_FAMILY__INET);
	assert_int_equal(d->message->socket_protocol, DNSTAP__SOCKET_PROTOCOL__UDP);
	assert_true(d->message->has_query_message && !d->message->has_response_message);
	assert_false(d->message->has_response_time_sec);
	dnstap__dnstap__free_unpacked(d, NULL);
}

/* The frame protobuf-c packs for ev, from the schema's generated code. */
static size_t pack_reference(const apex_dnstap_event_t *ev, uint8_t *out)
{
	Dnstap__Dnstap frame = DNSTAP__DNSTAP__INIT;
	Dnstap__Message m = DNSTAP__MESSAGE__INIT;
	ProtobufCBinaryData message = { ev->message_size, (uint8_t *)ev->message };

	frame.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
	frame.message = &m;
	if (ev->identity != NULL) {
		frame.has_identity = true;
		frame.identity =
			(ProtobufCBinaryData){ strlen(ev->identity), (uint8_t *)ev->identity };
	}
	if (ev->version != NULL) {
		frame.has_version = true;
		frame.version =
			(ProtobufCBinaryData){ strlen(ev->version), (uint8_t *)ev->version };
	}
	m.type = ev->response ? DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE
			      : DNSTAP__MESSAGE__TYPE__AUTH_QUERY;
	m.has_socket_family = m.has_socket_protocol = m.has_query_address = true;
	m.socket_family = ev->client_addr_size == 16 ? DNSTAP__SOCKET_FAMILY__INET6
						     : DNSTAP__SOCKET_FAMILY__INET;
	m.socket_protocol = (Dnstap__SocketProtocol)ev->protocol;
	m.query_address = (ProtobufCBinaryData){ ev->client_addr_size, (uint8_t *)ev->client_addr };
	m.has_query_port = m.has_query_time_sec = m.has_query_time_nsec = true;
	m.query_port = ev->client_port;
	m.query_time_sec = ev->query_sec;
	m.query_time_nsec = ev->query_nsec;
	if (ev->response) {
		m.has_response_time_sec = m.has_response_time_nsec = m.has_response_message = true;
		m.response_time_sec = ev->response_sec;
		m.response_time_nsec = ev->response_nsec;
		m.response_message = message;
	} else {
		m.has_query_message = true;
		m.query_message = message;
	}
	return dnstap__dnstap__pack(&frame, out);
}

/* apex's frames are byte for byte protobuf-c's (both write the fields in
 * number order), for message sizes around each varint length's bounds,
 * both families and transports, large and small numbers. */
static void test_encode_matches_protobuf_c(void **state)
{
	(void)state;
	static uint8_t msg[70000], mine[70200], theirs[70200];
	static const uint8_t addr6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 9 };
	static const uint8_t addr4[4] = { 198, 51, 100, 1 };
	static const size_t sizes[] = { 0, 1, 12, 127, 128, 300, 16383, 16384, 65535 };
	unsigned cases = 0;

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 131);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int variant = 0; variant < 8; variant++) {
			apex_dnstap_event_t ev = {
				.response = variant & 1,
				/* DNS over TLS's DOT (3) beside UDP */
				.protocol = (variant >> 1) & 1 ? APEX_DNSTAP_DOT : APEX_DNSTAP_UDP,
				.client_addr = (variant & 4) ? addr6 : addr4,
				.client_addr_size = (variant & 4) ? 16 : 4,
				.client_port = (uint16_t)(variant * 9000 + 1),
				.query_sec = variant & 2 ? 1795660000u : 5u,
				.query_nsec = 999999999u - (uint32_t)variant,
				.response_sec = 4000000000u + (uint64_t)variant,
				.response_nsec = (uint32_t)variant,
				.message = msg,
				.message_size = sizes[s],
				.identity = variant & 1 ? "ns1.example" : NULL,
				.version = variant & 2 ? NULL : "apexd test",
			};
			size_t n = apex_dnstap_encode(&ev, mine, sizeof(mine));
			size_t m = pack_reference(&ev, theirs);
			assert_int_equal(n, m);
			assert_memory_equal(mine, theirs, n);
			cases++;
		}
	}
	assert_int_equal(cases, 72);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_order_wrap_and_full),
		cmocka_unit_test(test_ring_concurrent),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_encode_matches_protobuf_c),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
