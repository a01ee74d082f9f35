/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frames of apexd's AF_XDP path: reading a UDP query out of an
 * Ethernet frame, and writing the headers of its answer.
 *
 * A frame the XDP program handed over (filter.bpf.c) is Ethernet, with
 * at most one VLAN tag, then IPv4 without options and unfragmented or
 * IPv6 with no extension header, then UDP.  apex_xdp_frame_parse()
 * checks what the kernel's stack would: the lengths of every header
 * against each other and against the frame (Ethernet may pad a short
 * frame), the IPv4 header checksum, and the addresses, since the answer
 * swaps them: neither its source nor its destination may be a multicast
 * or broadcast MAC or IP address, nor an unspecified, loopback or IPv4
 * "this network" one (the kernel drops those as martians, and answers
 * no query sent to a group from a socket bound to an address).  The UDP checksum is not
 * checked, as Knot DNS's XDP path does not: senders on the same host
 * leave it to be filled in by the card (veth passes it on unfilled),
 * and Ethernet's own check has seen the frame.
 *
 * The answer goes into another frame at the same offset as the query
 * (apex_xdp_frame_t.header_size), and apex_xdp_frame_reply() writes its
 * headers in front of it: addresses and ports swapped, lengths, the
 * IPv4 header checksum and the UDP checksum (mandatory on IPv6, and set
 * on IPv4 too).  Nothing here allocates or takes a lock.
 */
#ifndef APEX_XDP_FRAME_H
#define APEX_XDP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Ethernet + VLAN tag + IPv6 + UDP: the largest header of a frame taken */
#define APEX_XDP_HEADER_MAX (14 + 4 + 40 + 8)

/* What apex_xdp_frame_parse() found wrong with a frame. */
typedef enum apex_xdp_frame_status {
	APEX_XDP_FRAME_OK = 0,
	APEX_XDP_FRAME_SHORT,        /* ends inside a header */
	APEX_XDP_FRAME_NOT_UDP,      /* not what the XDP program hands over */
	APEX_XDP_FRAME_BAD_LENGTH,   /* IP or UDP length disagrees with the frame */
	APEX_XDP_FRAME_BAD_CHECKSUM, /* IPv4 header checksum */
	APEX_XDP_FRAME_BAD_PORT,     /* port 0: no one to answer, or from */
	APEX_XDP_FRAME_BAD_ADDRESS,  /* an answer could not go back (multicast...) */
} apex_xdp_frame_status_t;

/* A parsed query frame. */
typedef struct apex_xdp_frame {
	struct sockaddr_storage peer; /* the client's address and port */
	uint16_t header_size;         /* where the DNS message starts */
	uint16_t payload_size;        /* the DNS message's size */
	uint16_t l3_offset;           /* where the IP header starts (after any VLAN tag) */
	bool ipv6;
} apex_xdp_frame_t;

/* Read frame[0..size) into out (its peer is valid only when it returns OK). */
apex_xdp_frame_status_t apex_xdp_frame_parse(const uint8_t *frame, size_t size,
					     apex_xdp_frame_t *out);

/*
 * Write into out the headers of the answer to the query frame query
 * (parsed as q), whose payload_size bytes of DNS message are already at
 * out + q->header_size.  Returns the size of the answer frame.
 */
size_t apex_xdp_frame_reply(const uint8_t *query, const apex_xdp_frame_t *q, uint8_t *out,
			    size_t payload_size);

/* The Internet checksum (RFC 1071) of data, folded, not complemented,
 * added to sum (a previous result, or 0). */
uint16_t apex_xdp_checksum(uint16_t sum, const uint8_t *data, size_t size);

#endif
