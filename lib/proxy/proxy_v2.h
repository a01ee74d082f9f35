/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PROXY protocol's version 2 header (HAProxy's specification, section
 * 2.2), as a load balancer puts it in front of each UDP datagram and at
 * the start of each TCP connection to say who its client is: NSD's
 * proxy-protocol-port, Knot DNS's and BIND's.
 *
 * The header is read, not trusted blindly: the signature, version 2, a
 * known command, an address family of IPv4 or IPv6 with the transport
 * the header came over (UDP: DGRAM, TCP: STREAM), addresses that fit its
 * length, and type-length-value fields (TLVs) that fill the rest exactly;
 * anything else is malformed.  A LOCAL command (the proxy's own health
 * check) carries no client: the connection's own addresses stand.  The
 * TLVs are skipped: none changes how a query is answered.
 */
#ifndef APEX_PROXY_PROXY_V2_H
#define APEX_PROXY_PROXY_V2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util/prefix.h"

#define APEX_PROXY_V2_SIGNATURE "\r\n\r\n\0\r\nQUIT\n"
#define APEX_PROXY_V2_FIXED 16 /* signature, version and command, family, length */

typedef struct apex_proxy_header {
	bool local; /* LOCAL: no client in it, the connection's addresses stand */
	/* PROXY: the client's address and port, and the address it reached */
	struct sockaddr_storage source, destination;
	socklen_t source_len;
	size_t size; /* of the whole header: where the DNS data begins */
} apex_proxy_header_t;

/*
 * Read the header at the start of buf (len bytes received so far) that
 * came over a stream (TCP) or not (UDP).  Returns the header's size (h
 * filled), 0 when the bytes so far are a header's beginning but not all
 * of it (a stream: read more), or APEX_EMALFORMED.
 */
int apex_proxy_v2_parse(const uint8_t *buf, size_t len, bool stream, apex_proxy_header_t *h);

/* Whether sender may send headers: it is in one of the count prefixes of
 * allow (allow-proxy), or count is 0 (anyone may). */
bool apex_proxy_allowed(const apex_prefix_t *allow, size_t count, const struct sockaddr *sender);

#endif
