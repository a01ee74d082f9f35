/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frames of the AF_XDP path (lib/xdp/frame.c): queries read out of
 * Ethernet frames, malformed frames refused with their reason, and
 * answer headers whose checksums a plain RFC 1071 sum, written here
 * independently, accepts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "xdp/frame.h"

/* RFC 1071 the slow way: 16-bit big-endian words, folded at the end. */
static uint16_t slow_sum(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static const uint8_t server_mac[6] = { 0x02, 0, 0, 0, 0, 1 };
static const uint8_t client_mac[6] = { 0x02, 0, 0, 0, 0, 2 };
static const uint8_t payload[] = {
	0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01, 0x00, 0x01
}; /* odd: 17 bytes */

/* A query frame from the client: Ethernet (VLAN tag 7 if vlan), IPv4 or
 * IPv6, UDP from port 40000 to 53 with the payload, checksums right;
 * pad bytes of Ethernet padding after it.  Returns its size. */
static size_t make_query(uint8_t *f, bool ipv6, bool vlan, size_t pad)
{
	size_t l3 = vlan ? 18 : 14, ip_header = ipv6 ? 40 : 20;
	size_t udp = l3 + ip_header, udp_length = 8 + sizeof(payload);

	memset(f, 0, 2048);
	memcpy(f, server_mac, 6);
	memcpy(f + 6, client_mac, 6);
	if (vlan) {
		f[12] = 0x81, f[13] = 0x00, f[14] = 0, f[15] = 7;
	}
	f[l3 - 2] = ipv6 ? 0x86 : 0x08;
	f[l3 - 1] = ipv6 ? 0xdd : 0x00;
	uint8_t *ip = f + l3;
	if (ipv6) {
		ip[0] = 0x60, ip[4] = 0, ip[5] = (uint8_t)udp_length, ip[6] = 17, ip[7] = 64;
		inet_pton(AF_INET6, "fd00::2", ip + 8);
		inet_pton(AF_INET6, "fd00::1", ip + 24);
	} else {
		size_t total = 20 + udp_length;
		ip[0] = 0x45, ip[2] = 0, ip[3] = (uint8_t)total, ip[8] = 64, ip[9] = 17;
		inet_pton(AF_INET, "10.0.0.2", ip + 12);
		inet_pton(AF_INET, "10.0.0.1", ip + 16);
		uint16_t check = (uint16_t)~slow_sum(0, ip, 20);
		ip[10] = (uint8_t)(check >> 8), ip[11] = (uint8_t)check;
	}
	f[udp] = 40000 >> 8, f[udp + 1] = 40000 & 0xff, f[udp + 3] = 53;
	f[udp + 5] = (uint8_t)udp_length;
	memcpy(f + udp + 8, payload, sizeof(payload));
	return udp + udp_length + pad;
}

/* The UDP checksum of the frame's datagram verifies (pseudo-header included). */
static void assert_udp_checksum(const uint8_t *f, const apex_xdp_frame_t *q)
{
	const uint8_t *ip = f + q->l3_offset;
	size_t udp = q->header_size - 8, udp_length = (size_t)(f[udp + 4] << 8 | f[udp + 5]);
	uint32_t sum = q->ipv6 ? slow_sum(0, ip + 8, 32) : slow_sum(0, ip + 12, 8);

	sum += 17 + (uint32_t)udp_length;
	assert_int_not_equal(f[udp + 6] | f[udp + 7], 0);
	assert_int_equal(slow_sum(sum, f + udp, udp_length), 0xffff);
}

static void test_checksum_matches_rfc1071(void **state)
{
	uint8_t data[301];

	(void)state;
	srand(7);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)rand();
	for (size_t n = 0; n <= sizeof(data); n++) {
		/* the fast sum is in the machine's order: compare its bytes */
		uint16_t fast = apex_xdp_checksum(0, data, n), slow = htons(slow_sum(0, data, n));
		/* 0 and 0xffff are the same number in one's complement */
		if (!(fast == 0 && slow == 0xffff) && !(fast == 0xffff && slow == 0))
			assert_int_equal(fast, slow);
	}
}

static void test_parse_ipv4(void **state)
{
	uint8_t f[2048];
	apex_xdp_frame_t q;

	(void)state;
	/* Ethernet pads a short frame to 60 bytes: the IP length decides */
	size_t size = make_query(f, false, false, 4);
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_OK);
	assert_false(q.ipv6);
	assert_int_equal(q.l3_offset, 14);
	assert_int_equal(q.header_size, 42);
	assert_int_equal(q.payload_size, sizeof(payload));
	const struct sockaddr_in *peer = (const struct sockaddr_in *)&q.peer;
	assert_int_equal(peer->sin_family, AF_INET);
	assert_int_equal(ntohs(peer->sin_port), 40000);
	assert_int_equal(ntohl(peer->sin_addr.s_addr), 0x0a000002);
}

static void test_parse_ipv6_vlan(void **state)
{
	uint8_t f[2048];
	apex_xdp_frame_t q;

	(void)state;
	size_t size = make_query(f, true, true, 0);
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_OK);
	assert_true(q.ipv6);
	assert_int_equal(q.l3_offset, 18);
	assert_int_equal(q.header_size, 18 + 40 + 8);
	assert_int_equal(q.payload_size, sizeof(payload));
	const struct sockaddr_in6 *peer = (const struct sockaddr_in6 *)&q.peer;
	uint8_t want[16];
	inet_pton(AF_INET6, "fd00::2", want);
	assert_int_equal(peer->sin6_family, AF_INET6);
	assert_int_equal(ntohs(peer->sin6_port), 40000);
	assert_memory_equal(&peer->sin6_addr, want, 16);
}

/* Every truncation of a good frame is refused, never read past. */
static void test_truncated(void **state)
{
	uint8_t f[2048];
	apex_xdp_frame_t q;

	(void)state;
	for (int v6 = 0; v6 <= 1; v6++) {
		for (int vlan = 0; vlan <= 1; vlan++) {
			size_t size = make_query(f, v6, vlan, 0);

			for (size_t n = 0; n < size; n++) {
				uint8_t *copy = malloc(n > 0 ? n : 1); /* ASan sees overreads */
				memcpy(copy, f, n);
				assert_int_not_equal(apex_xdp_frame_parse(copy, n, &q),
						     APEX_XDP_FRAME_OK);
				free(copy);
			}
		}
	}
}

static void test_malformed(void **state)
{
	uint8_t f[2048];
	apex_xdp_frame_t q;
	size_t size;

	(void)state;
	size = make_query(f, false, false, 0);
	f[14 + 10] ^= 1; /* IPv4 header checksum */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_CHECKSUM);

	size = make_query(f, false, false, 0);
	f[14 + 3] += 1; /* IP total length beyond the frame */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_LENGTH);

	size = make_query(f, false, false, 0);
	f[34 + 5] += 1; /* UDP length beyond the IP payload */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_LENGTH);

	size = make_query(f, false, false, 0);
	f[34 + 5] = 7; /* UDP length shorter than its header */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_LENGTH);

	size = make_query(f, true, false, 0);
	f[14 + 5] += 1; /* IPv6 payload length beyond the frame */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_LENGTH);

	size = make_query(f, false, false, 0);
	f[14] = 0x46; /* IPv4 options: the kernel's */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_NOT_UDP);

	size = make_query(f, false, false, 0);
	f[14 + 6] = 0x20; /* more fragments */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_NOT_UDP);

	size = make_query(f, false, false, 0);
	f[14 + 7] = 1; /* a later fragment */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_NOT_UDP);

	size = make_query(f, true, false, 0);
	f[14 + 6] = 44; /* IPv6 fragment header */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_NOT_UDP);

	size = make_query(f, false, false, 0);
	f[14 + 9] = 6; /* TCP */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_NOT_UDP);

	size = make_query(f, false, false, 0);
	f[12] = 0x08, f[13] = 0x06; /* ARP */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_NOT_UDP);

	size = make_query(f, false, false, 0);
	f[34] = f[35] = 0; /* source port 0 */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_PORT);

	size = make_query(f, false, false, 0);
	f[36] = f[37] = 0; /* destination port 0 */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_PORT);
}

/* Addresses an answer could not swap back: the kernel drops these as
 * martians; an answer frame is never addressed to or from a group MAC. */
static void bad_ipv4_address(const char *addr, size_t offset)
{
	uint8_t f[2048];
	apex_xdp_frame_t q;
	size_t size = make_query(f, false, false, 0);

	inet_pton(AF_INET, addr, f + 14 + offset);
	f[14 + 10] = f[14 + 11] = 0;
	uint16_t check = (uint16_t)~slow_sum(0, f + 14, 20);
	f[14 + 10] = (uint8_t)(check >> 8), f[14 + 11] = (uint8_t)check;
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_ADDRESS);
}

static void bad_ipv6_address(const char *addr, size_t offset)
{
	uint8_t f[2048];
	apex_xdp_frame_t q;
	size_t size = make_query(f, true, false, 0);

	inet_pton(AF_INET6, addr, f + 14 + offset);
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_ADDRESS);
}

static void test_bad_address(void **state)
{
	uint8_t f[2048];
	apex_xdp_frame_t q;

	(void)state;
	static const char *const v4[] = { "0.0.0.0", "127.0.0.1", "224.0.0.1", "255.255.255.255" };
	static const char *const v6[] = { "::", "::1", "ff02::1" };
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		bad_ipv4_address(v4[i], 12); /* source */
		bad_ipv4_address(v4[i], 16); /* destination */
	}
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		bad_ipv6_address(v6[i], 8);
		bad_ipv6_address(v6[i], 24);
	}
	size_t size = make_query(f, false, false, 0);
	f[6] = 0x01; /* a multicast source MAC */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_ADDRESS);
	size = make_query(f, false, false, 0);
	memset(f, 0xff, 6); /* sent to the broadcast MAC */
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_BAD_ADDRESS);
	/* and the ordinary ones pass */
	size = make_query(f, true, false, 0);
	inet_pton(AF_INET6, "fe80::1", f + 14 + 8);
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_OK);
	inet_pton(AF_INET6, "::2", f + 14 + 8);
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_OK);
}

/* The answer frame: addresses and ports swapped, lengths and checksums
 * right, and it reads back as a frame itself. */
static void check_reply(bool ipv6, bool vlan)
{
	uint8_t f[2048], out[2048];
	apex_xdp_frame_t q, back;
	static const uint8_t answer[] = { 0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0, 0,
					  0,    0,    0,    0,    0, 1, 0, 1 };

	size_t size = make_query(f, ipv6, vlan, 0);
	assert_int_equal(apex_xdp_frame_parse(f, size, &q), APEX_XDP_FRAME_OK);
	memset(out, 0xee, sizeof(out)); /* whatever the frame held before */
	memcpy(out + q.header_size, answer, sizeof(answer));
	size_t n = apex_xdp_frame_reply(f, &q, out, sizeof(answer));
	assert_int_equal(n, q.header_size + sizeof(answer));
	assert_memory_equal(out, client_mac, 6);
	assert_memory_equal(out + 6, server_mac, 6);
	assert_memory_equal(out + 12, f + 12, q.l3_offset - 12);
	const uint8_t *ip = out + q.l3_offset, *qip = f + q.l3_offset;
	if (ipv6) {
		assert_memory_equal(ip + 8, qip + 24, 16);
		assert_memory_equal(ip + 24, qip + 8, 16);
	} else {
		assert_memory_equal(ip + 12, qip + 16, 4);
		assert_memory_equal(ip + 16, qip + 12, 4);
		assert_int_equal(slow_sum(0, ip, 20), 0xffff);
		assert_int_equal(ip[6], 0x40); /* DF: never fragmented on the way */
	}
	size_t udp = q.header_size - 8;
	assert_memory_equal(out + udp, f + udp + 2, 2);
	assert_memory_equal(out + udp + 2, f + udp, 2);
	assert_udp_checksum(out, &q);
	assert_int_equal(apex_xdp_frame_parse(out, n, &back), APEX_XDP_FRAME_OK);
	assert_int_equal(back.payload_size, sizeof(answer));
	assert_memory_equal(out + back.header_size, answer, sizeof(answer));
}

static void test_reply(void **state)
{
	(void)state;
	check_reply(false, false);
	check_reply(true, false);
	check_reply(false, true);
	check_reply(true, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checksum_matches_rfc1071),
		cmocka_unit_test(test_parse_ipv4),
		cmocka_unit_test(test_parse_ipv6_vlan),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bad_address),
		cmocka_unit_test(test_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
