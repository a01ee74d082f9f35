/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the frame reader and answer writer of the AF_XDP path
 * (lib/xdp/frame.c), which read whatever arrives on the interface.
 *
 * The input is one Ethernet frame.  Oracle (a violation aborts):
 * - nothing is read outside the frame (an exact-size heap copy);
 * - a frame read as OK has its DNS message inside it, a peer of the
 *   family of its IP version, and a source port;
 * - the answer written for it (the query's message sent back as the
 *   answer) reads back as OK, with the message intact, the ports swapped,
 *   and IPv4 header and UDP checksums that verify.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "xdp/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FRAME_MAX 2048

static void frame_oracle(const char *why)
{
	fprintf(stderr, "apex fuzz oracle: %s\n", why);
	abort();
}

/* The UDP checksum of a datagram in frame f (parsed as q) verifies. */
static int udp_checksum_ok(const uint8_t *f, const apex_xdp_frame_t *q)
{
	const uint8_t *ip = f + q->l3_offset;
	size_t udp = (size_t)q->header_size - 8;
	size_t length = (size_t)q->payload_size + 8;
	uint8_t pseudo[4] = { 0, 17, (uint8_t)(length >> 8), (uint8_t)length };
	uint16_t sum =
		q->ipv6 ? apex_xdp_checksum(0, ip + 8, 32) : apex_xdp_checksum(0, ip + 12, 8);

	sum = apex_xdp_checksum(sum, pseudo, sizeof(pseudo));
	return apex_xdp_checksum(sum, f + udp, length) == 0xffff;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[FRAME_MAX];
	apex_xdp_frame_t q, back;

	if (size > FRAME_MAX)
		return 0;
	uint8_t *frame = malloc(size > 0 ? size : 1);
	if (frame == NULL)
		return 0;
	memcpy(frame, data, size);
	if (apex_xdp_frame_parse(frame, size, &q) != APEX_XDP_FRAME_OK) {
		free(frame);
		return 0;
	}
	if ((size_t)q.header_size + q.payload_size > size || q.header_size < 42)
		frame_oracle("the message lies outside the frame");
	if (q.peer.ss_family != (q.ipv6 ? AF_INET6 : AF_INET))
		frame_oracle("peer of the wrong family");

	memcpy(out + q.header_size, frame + q.header_size, q.payload_size);
	size_t n = apex_xdp_frame_reply(frame, &q, out, q.payload_size);
	if (n != (size_t)q.header_size + q.payload_size)
		frame_oracle("answer frame of the wrong size");
	if (apex_xdp_frame_parse(out, n, &back) != APEX_XDP_FRAME_OK)
		frame_oracle("the answer frame does not read back");
	if (back.header_size != q.header_size || back.payload_size != q.payload_size ||
	    memcmp(out + back.header_size, frame + q.header_size, q.payload_size) != 0)
		frame_oracle("the answer's message changed");
	size_t udp = (size_t)q.header_size - 8;
	if (memcmp(out + udp, frame + udp + 2, 2) != 0 ||
	    memcmp(out + udp + 2, frame + udp, 2) != 0)
		frame_oracle("ports not swapped");
	if (!udp_checksum_ok(out, &back))
		frame_oracle("UDP checksum of the answer does not verify");
	free(frame);
	return 0;
}
