/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proxy/proxy_v2: the PROXY protocol v2 header.  Headers as HAProxy's
 * specification lays them out (IPv4 over UDP, IPv6 over TCP with TLVs,
 * LOCAL) read with their client; every strict prefix of a header over a
 * stream asks for more; a header over the other transport, version 1's
 * text, another version or command, a family without addresses (UNSPEC,
 * UNIX), a length shorter than the addresses, and TLVs that overrun or
 * fall short are malformed.  allow-proxy's check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "proxy/proxy_v2.h"
#include "util/error.h"

/* A header: signature, ver_cmd, fam, the body (its length written). */
static size_t header(uint8_t *out, uint8_t ver_cmd, uint8_t fam, const uint8_t *body,
		     size_t body_size)
{
	memcpy(out, APEX_PROXY_V2_SIGNATURE, 12);
	out[12] = ver_cmd;
	out[13] = fam;
	out[14] = (uint8_t)(body_size >> 8);
	out[15] = (uint8_t)body_size;
	if (body_size > 0)
		memcpy(out + 16, body, body_size);
	return 16 + body_size;
}

/* 192.0.2.7:5300 -> 198.51.100.1:53 */
static const uint8_t inet_body[12] = { 192, 0, 2, 7, 198, 51, 100, 1, 0x14, 0xb4, 0, 53 };

static void test_ipv4_udp(void **state)
{
	uint8_t buf[64 + 4];
	apex_proxy_header_t h;
	size_t n = header(buf, 0x21, 0x12, inet_body, sizeof(inet_body));
	const struct sockaddr_in *src = (const struct sockaddr_in *)&h.source;
	const struct sockaddr_in *dst = (const struct sockaddr_in *)&h.destination;
	char text[INET_ADDRSTRLEN];

	(void)state;
	memcpy(buf + n, "\x12\x34\x00\x00", 4); /* the DNS message begins */
	assert_int_equal(apex_proxy_v2_parse(buf, n + 4, false, &h), 28);
	assert_int_equal(h.size, 28);
	assert_false(h.local);
	assert_int_equal(src->sin_family, AF_INET);
	assert_int_equal(h.source_len, sizeof(struct sockaddr_in));
	assert_string_equal(inet_ntop(AF_INET, &src->sin_addr, text, sizeof(text)), "192.0.2.7");
	assert_int_equal(ntohs(src->sin_port), 5300);
	assert_string_equal(inet_ntop(AF_INET, &dst->sin_addr, text, sizeof(text)), "198.51.100.1");
	assert_int_equal(ntohs(dst->sin_port), 53);
	/* the same header over a stream is one of the wrong transport */
	assert_int_equal(apex_proxy_v2_parse(buf, n, true, &h), APEX_EMALFORMED);
}

/* 2001:db8::7 port 4242 -> 2001:db8::53 port 53, with two TLVs */
static size_t ipv6_tcp(uint8_t *buf)
{
	uint8_t body[36 + 7 + 3];

	memset(body, 0, sizeof(body));
	inet_pton(AF_INET6, "2001:db8::7", body);
	inet_pton(AF_INET6, "2001:db8::53", body + 16);
	body[32] = 0x10, body[33] = 0x92; /* 4242 */
	body[35] = 53;
	/* PP2_TYPE_AUTHORITY "ns.tld", an empty PP2_TYPE_NOOP */
	memcpy(body + 36, "\x02\x00\x04ns.t", 7);
	memcpy(body + 43, "\x04\x00\x00", 3);
	return header(buf, 0x21, 0x21, body, sizeof(body));
}

static void test_ipv6_tcp_with_tlvs(void **state)
{
	uint8_t buf[128];
	apex_proxy_header_t h;
	size_t n = ipv6_tcp(buf);
	const struct sockaddr_in6 *src = (const struct sockaddr_in6 *)&h.source;
	char text[INET6_ADDRSTRLEN];

	(void)state;
	assert_int_equal(apex_proxy_v2_parse(buf, n, true, &h), (int)n);
	assert_int_equal(src->sin6_family, AF_INET6);
	assert_int_equal(h.source_len, sizeof(struct sockaddr_in6));
	assert_string_equal(inet_ntop(AF_INET6, &src->sin6_addr, text, sizeof(text)),
			    "2001:db8::7");
	assert_int_equal(ntohs(src->sin6_port), 4242);
}

static void test_every_prefix_asks_for_more(void **state)
{
	uint8_t buf[128];
	apex_proxy_header_t h;
	size_t n = ipv6_tcp(buf);

	(void)state;
	for (size_t len = 0; len < n; len++)
		assert_int_equal(apex_proxy_v2_parse(buf, len, true, &h), 0);
}

static void test_local_command(void **state)
{
	uint8_t buf[64];
	apex_proxy_header_t h;
	size_t n = header(buf, 0x20, 0x00, NULL, 0);

	(void)state;
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), 16);
	assert_true(h.local);
	/* addresses after LOCAL are skipped, whatever they are */
	n = header(buf, 0x20, 0x11, inet_body, sizeof(inet_body));
	assert_int_equal(apex_proxy_v2_parse(buf, n, true, &h), 28);
	assert_true(h.local);
}

static void test_malformed(void **state)
{
	uint8_t buf[128], body[16];
	apex_proxy_header_t h;
	size_t n;

	(void)state;
	/* version 1's text: wrong at once, no need to wait */
	assert_int_equal(apex_proxy_v2_parse((const uint8_t *)"PROXY TCP4 ", 11, true, &h),
			 APEX_EMALFORMED);
	/* a DNS query on a proxy port */
	assert_int_equal(apex_proxy_v2_parse((const uint8_t *)"\x12\x34\x01\x00", 4, false, &h),
			 APEX_EMALFORMED);
	n = header(buf, 0x11, 0x12, inet_body, sizeof(inet_body)); /* version 1 */
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), APEX_EMALFORMED);
	n = header(buf, 0x22, 0x12, inet_body, sizeof(inet_body)); /* command 2 */
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), APEX_EMALFORMED);
	n = header(buf, 0x21, 0x02, inet_body, sizeof(inet_body)); /* UNSPEC */
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), APEX_EMALFORMED);
	n = header(buf, 0x21, 0x32, inet_body, sizeof(inet_body)); /* UNIX */
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), APEX_EMALFORMED);
	n = header(buf, 0x21, 0x10, inet_body, sizeof(inet_body)); /* transport UNSPEC */
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), APEX_EMALFORMED);
	n = header(buf, 0x21, 0x12, inet_body, 8); /* shorter than its addresses */
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), APEX_EMALFORMED);
	n = header(buf, 0x21, 0x22, inet_body, sizeof(inet_body)); /* IPv6: 36 bytes needed */
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), APEX_EMALFORMED);
	/* TLVs: one cut short, one whose length runs past the header */
	memcpy(body, inet_body, 12);
	memcpy(body + 12, "\x04\x00", 2);
	n = header(buf, 0x21, 0x12, body, 14);
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), APEX_EMALFORMED);
	memcpy(body + 12, "\x04\x00\x02\x00", 4);
	n = header(buf, 0x21, 0x12, body, 16);
	assert_int_equal(apex_proxy_v2_parse(buf, n, false, &h), APEX_EMALFORMED);
	/* a datagram cut short is not waited for by the caller: 0 */
	n = header(buf, 0x21, 0x12, inet_body, sizeof(inet_body));
	assert_int_equal(apex_proxy_v2_parse(buf, n - 1, false, &h), 0);
}

static void test_allowed(void **state)
{
	apex_prefix_t allow[2];
	struct sockaddr_in in4 = { .sin_family = AF_INET };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };

	(void)state;
	assert_int_equal(apex_prefix_parse("127.0.0.2", &allow[0], NULL), APEX_OK);
	assert_int_equal(apex_prefix_parse("2001:db8::/32", &allow[1], NULL), APEX_OK);
	inet_pton(AF_INET, "127.0.0.2", &in4.sin_addr);
	assert_true(apex_proxy_allowed(allow, 2, (struct sockaddr *)&in4));
	inet_pton(AF_INET, "127.0.0.1", &in4.sin_addr);
	assert_false(apex_proxy_allowed(allow, 2, (struct sockaddr *)&in4));
	assert_true(apex_proxy_allowed(NULL, 0, (struct sockaddr *)&in4)); /* anyone */
	inet_pton(AF_INET6, "2001:db8:1::1", &in6.sin6_addr);
	assert_true(apex_proxy_allowed(allow, 2, (struct sockaddr *)&in6));
	inet_pton(AF_INET6, "2001:db9::1", &in6.sin6_addr);
	assert_false(apex_proxy_allowed(allow, 2, (struct sockaddr *)&in6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_udp),
		cmocka_unit_test(test_ipv6_tcp_with_tlvs),
		cmocka_unit_test(test_every_prefix_asks_for_more),
		cmocka_unit_test(test_local_command),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_allowed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
