/* SPDX-License-Identifier: BSD-3-Clause */
/* Query frames in, answer headers out (frame.h). */
#include "frame.h"

#include <netinet/in.h>
#include <string.h>

#define ETH_HEADER 14
#define VLAN_TAG 4
#define IPV4_HEADER 20
#define IPV6_HEADER 40
#define UDP_HEADER 8
#define PROTO_UDP 17
#define HOP_LIMIT 64

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void put_be16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/*
 * Summed in the machine's byte order, 8 bytes at a time with the carry
 * added back: the one's-complement sum does not depend on the order
 * (RFC 1071, 2.B), so the result is stored as it is, with memcpy.
 */
uint16_t apex_xdp_checksum(uint16_t start, const uint8_t *data, size_t size)
{
	uint64_t sum = start;
	uint64_t w8;
	uint32_t w4;
	uint16_t w2;

	for (; size >= 8; data += 8, size -= 8) {
		memcpy(&w8, data, 8);
		sum += w8;
		sum += sum < w8;
	}
	if (size >= 4) {
		memcpy(&w4, data, 4);
		sum += w4;
		sum += sum < w4;
		data += 4;
		size -= 4;
	}
	if (size >= 2) {
		memcpy(&w2, data, 2);
		sum += w2;
		sum += sum < w2;
		data += 2;
		size -= 2;
	}
	if (size == 1) {
		w2 = 0; /* the odd byte is the first of a word padded with zero */
		memcpy(&w2, data, 1);
		sum += w2;
		sum += sum < w2;
	}
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)sum;
}

/* An IPv4 address an answer may come from or go to: not 0/8, 127/8,
 * multicast or above. */
static inline bool ipv4_address_ok(const uint8_t *addr)
{
	return addr[0] != 0 && addr[0] != 127 && addr[0] < 224;
}

/* An IPv6 address an answer may come from or go to: not multicast, :: or ::1. */
static inline bool ipv6_address_ok(const uint8_t *addr)
{
	static const uint8_t zero[15] = { 0 };

	if (addr[0] == 0xff)
		return false;
	return memcmp(addr, zero, 15) != 0 || addr[15] > 1;
}

/* The IPv4 part of apex_xdp_frame_parse(): sets the UDP bounds. */
static apex_xdp_frame_status_t parse_ipv4(const uint8_t *ip, size_t avail, apex_xdp_frame_t *out,
					  size_t *udp_avail)
{
	struct sockaddr_in *peer = (struct sockaddr_in *)&out->peer;

	if (avail < IPV4_HEADER)
		return APEX_XDP_FRAME_SHORT;
	/* version 4 without options, UDP, neither a fragment nor the first of several */
	if (ip[0] != 0x45 || ip[9] != PROTO_UDP || (ip[6] & 0x3f) != 0 || ip[7] != 0)
		return APEX_XDP_FRAME_NOT_UDP;
	size_t total = be16(ip + 2);
	if (total < IPV4_HEADER + UDP_HEADER || total > avail)
		return APEX_XDP_FRAME_BAD_LENGTH;
	if (apex_xdp_checksum(0, ip, IPV4_HEADER) != 0xffff)
		return APEX_XDP_FRAME_BAD_CHECKSUM;
	if (!ipv4_address_ok(ip + 12) || !ipv4_address_ok(ip + 16))
		return APEX_XDP_FRAME_BAD_ADDRESS;
	memset(peer, 0, sizeof(*peer));
	peer->sin_family = AF_INET;
	memcpy(&peer->sin_addr, ip + 12, 4);
	out->ipv6 = false;
	*udp_avail = total - IPV4_HEADER;
	return APEX_XDP_FRAME_OK;
}

/* The IPv6 part of apex_xdp_frame_parse(). */
static apex_xdp_frame_status_t parse_ipv6(const uint8_t *ip, size_t avail, apex_xdp_frame_t *out,
					  size_t *udp_avail)
{
	struct sockaddr_in6 *peer = (struct sockaddr_in6 *)&out->peer;

	if (avail < IPV6_HEADER)
		return APEX_XDP_FRAME_SHORT;
	if ((ip[0] >> 4) != 6 || ip[6] != PROTO_UDP)
		return APEX_XDP_FRAME_NOT_UDP;
	size_t payload = be16(ip + 4);
	if (payload < UDP_HEADER || payload > avail - IPV6_HEADER)
		return APEX_XDP_FRAME_BAD_LENGTH;
	if (!ipv6_address_ok(ip + 8) || !ipv6_address_ok(ip + 24))
		return APEX_XDP_FRAME_BAD_ADDRESS;
	memset(peer, 0, sizeof(*peer));
	peer->sin6_family = AF_INET6;
	memcpy(&peer->sin6_addr, ip + 8, 16);
	out->ipv6 = true;
	*udp_avail = payload;
	return APEX_XDP_FRAME_OK;
}

apex_xdp_frame_status_t apex_xdp_frame_parse(const uint8_t *frame, size_t size,
					     apex_xdp_frame_t *out)
{
	size_t l3 = ETH_HEADER, udp_avail = 0;
	apex_xdp_frame_status_t status;

	if (size < ETH_HEADER)
		return APEX_XDP_FRAME_SHORT;
	if ((frame[0] | frame[6]) & 1) /* a group (multicast, broadcast) MAC */
		return APEX_XDP_FRAME_BAD_ADDRESS;
	uint16_t proto = be16(frame + 12);
	if (proto == 0x8100 || proto == 0x88a8) { /* 802.1Q, 802.1ad: one tag */
		if (size < ETH_HEADER + VLAN_TAG)
			return APEX_XDP_FRAME_SHORT;
		proto = be16(frame + 16);
		l3 += VLAN_TAG;
	}
	if (proto == 0x0800)
		status = parse_ipv4(frame + l3, size - l3, out, &udp_avail);
	else if (proto == 0x86dd)
		status = parse_ipv6(frame + l3, size - l3, out, &udp_avail);
	else
		return APEX_XDP_FRAME_NOT_UDP;
	if (status != APEX_XDP_FRAME_OK)
		return status;

	size_t udp = l3 + (out->ipv6 ? IPV6_HEADER : IPV4_HEADER);
	size_t udp_length = be16(frame + udp + 4);
	if (udp_length < UDP_HEADER || udp_length > udp_avail)
		return APEX_XDP_FRAME_BAD_LENGTH;
	uint16_t port; /* network byte order, as the socket address keeps it */
	memcpy(&port, frame + udp, 2);
	if (port == 0 || (frame[udp + 2] | frame[udp + 3]) == 0)
		return APEX_XDP_FRAME_BAD_PORT;
	if (out->ipv6)
		((struct sockaddr_in6 *)&out->peer)->sin6_port = port;
	else
		((struct sockaddr_in *)&out->peer)->sin_port = port;
	out->l3_offset = (uint16_t)l3;
	out->header_size = (uint16_t)(udp + UDP_HEADER);
	out->payload_size = (uint16_t)(udp_length - UDP_HEADER);
	return APEX_XDP_FRAME_OK;
}

/* The IP header of the answer at ip, from the query's at qip; returns
 * the partial checksum of the UDP pseudo-header's addresses. */
static uint16_t reply_ip(const uint8_t *qip, uint8_t *ip, bool ipv6, size_t udp_length)
{
	if (ipv6) {
		ip[0] = 0x60; /* version 6, traffic class and flow label 0 */
		ip[1] = ip[2] = ip[3] = 0;
		put_be16(ip + 4, udp_length);
		ip[6] = PROTO_UDP;
		ip[7] = HOP_LIMIT;
		memcpy(ip + 8, qip + 24, 16);
		memcpy(ip + 24, qip + 8, 16);
		return apex_xdp_checksum(0, ip + 8, 32);
	}
	ip[0] = 0x45;
	ip[1] = 0;
	put_be16(ip + 2, IPV4_HEADER + udp_length);
	/* DF set, as RFC 9715 recommends to DNS responders: never fragmented
	 * on the way, an atomic datagram, whose identification nothing reads
	 * (RFC 6864), so 0 */
	ip[4] = ip[5] = 0;
	ip[6] = 0x40;
	ip[7] = 0;
	ip[8] = HOP_LIMIT;
	ip[9] = PROTO_UDP;
	ip[10] = ip[11] = 0;
	memcpy(ip + 12, qip + 16, 4);
	memcpy(ip + 16, qip + 12, 4);
	uint16_t check = (uint16_t)~apex_xdp_checksum(0, ip, IPV4_HEADER);
	memcpy(ip + 10, &check, 2);
	return apex_xdp_checksum(0, ip + 12, 8);
}

size_t apex_xdp_frame_reply(const uint8_t *query, const apex_xdp_frame_t *q, uint8_t *out,
			    size_t payload_size)
{
	size_t udp_length = payload_size + UDP_HEADER;
	size_t udp = q->header_size - UDP_HEADER;
	uint8_t pseudo[4] = { 0, PROTO_UDP, 0, 0 };

	memcpy(out, query + 6, 6); /* to the sender's MAC address, from ours */
	memcpy(out + 6, query, 6);
	memcpy(out + 12, query + 12, (size_t)q->l3_offset - 12); /* type, VLAN tag */
	uint16_t sum = reply_ip(query + q->l3_offset, out + q->l3_offset, q->ipv6, udp_length);

	memcpy(out + udp, query + udp + 2, 2); /* ports swapped */
	memcpy(out + udp + 2, query + udp, 2);
	put_be16(out + udp + 4, udp_length);
	out[udp + 6] = out[udp + 7] = 0;
	/* pseudo-header: addresses, protocol, UDP length (RFC 768, RFC 8200 8.1) */
	put_be16(pseudo + 2, udp_length);
	sum = apex_xdp_checksum(sum, pseudo, sizeof(pseudo));
	uint16_t check = (uint16_t)~apex_xdp_checksum(sum, out + udp, udp_length);
	if (check == 0)
		check = 0xffff; /* 0 would mean no checksum */
	memcpy(out + udp + 6, &check, 2);
	return q->header_size + payload_size;
}
