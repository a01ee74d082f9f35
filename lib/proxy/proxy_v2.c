/* SPDX-License-Identifier: BSD-3-Clause */
/* The PROXY protocol's version 2 header (proxy_v2.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "proxy/proxy_v2.h"

#include <netinet/in.h>
#include <string.h>

#include "dns/wire.h"
#include "util/error.h"

#define SIGNATURE_SIZE 12
#define VERSION_2 0x20
#define COMMAND_LOCAL 0x0
#define COMMAND_PROXY 0x1
#define FAMILY_INET 0x10
#define FAMILY_INET6 0x20
#define TRANSPORT_STREAM 0x1
#define TRANSPORT_DGRAM 0x2
#define INET_ADDRESSES 12  /* two IPv4 addresses, two ports */
#define INET6_ADDRESSES 36 /* two IPv6 addresses, two ports */
#define TLV_FIXED 3        /* type, length */

/* The TLVs of p..end tile it exactly. */
static bool tlvs_fit(const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		if (end - p < TLV_FIXED)
			return false;
		size_t len = apex_read_u16(p + 1);

		if ((size_t)(end - p) - TLV_FIXED < len)
			return false;
		p += TLV_FIXED + len;
	}
	return true;
}

/* The addresses at p (family's layout) into h. */
static void read_addresses(const uint8_t *p, uint8_t family, apex_proxy_header_t *h)
{
	memset(&h->source, 0, sizeof(h->source));
	memset(&h->destination, 0, sizeof(h->destination));
	if (family == FAMILY_INET) {
		struct sockaddr_in *src = (struct sockaddr_in *)&h->source;
		struct sockaddr_in *dst = (struct sockaddr_in *)&h->destination;

		src->sin_family = dst->sin_family = AF_INET;
		memcpy(&src->sin_addr, p, 4);
		memcpy(&dst->sin_addr, p + 4, 4);
		memcpy(&src->sin_port, p + 8, 2); /* both in network order */
		memcpy(&dst->sin_port, p + 10, 2);
		h->source_len = sizeof(*src);
		return;
	}
	struct sockaddr_in6 *src = (struct sockaddr_in6 *)&h->source;
	struct sockaddr_in6 *dst = (struct sockaddr_in6 *)&h->destination;

	src->sin6_family = dst->sin6_family = AF_INET6;
	memcpy(&src->sin6_addr, p, 16);
	memcpy(&dst->sin6_addr, p + 16, 16);
	memcpy(&src->sin6_port, p + 32, 2);
	memcpy(&dst->sin6_port, p + 34, 2);
	h->source_len = sizeof(*src);
}

int apex_proxy_v2_parse(const uint8_t *buf, size_t len, bool stream, apex_proxy_header_t *h)
{
	size_t have = len < SIGNATURE_SIZE ? len : SIGNATURE_SIZE;

	if (memcmp(buf, APEX_PROXY_V2_SIGNATURE, have) != 0)
		return APEX_EMALFORMED; /* not a header: no need to wait for more */
	if (len < APEX_PROXY_V2_FIXED)
		return 0;
	uint8_t version = buf[12] & 0xf0, command = buf[12] & 0x0f;
	uint8_t family = buf[13] & 0xf0, transport = buf[13] & 0x0f;
	size_t body = apex_read_u16(buf + 14);

	if (version != VERSION_2 || (command != COMMAND_LOCAL && command != COMMAND_PROXY))
		return APEX_EMALFORMED;
	if (len - APEX_PROXY_V2_FIXED < body)
		return 0;
	const uint8_t *p = buf + APEX_PROXY_V2_FIXED, *end = p + body;

	memset(h, 0, sizeof(*h));
	h->size = APEX_PROXY_V2_FIXED + body;
	if (command == COMMAND_LOCAL) {
		/* its address block, whatever it is, says nothing */
		h->local = true;
		return (int)h->size;
	}
	size_t addresses = family == FAMILY_INET ? INET_ADDRESSES : INET6_ADDRESSES;

	if ((family != FAMILY_INET && family != FAMILY_INET6) ||
	    transport != (stream ? TRANSPORT_STREAM : TRANSPORT_DGRAM) || body < addresses ||
	    !tlvs_fit(p + addresses, end))
		return APEX_EMALFORMED;
	read_addresses(p, family, h);
	return (int)h->size;
}

bool apex_proxy_allowed(const apex_prefix_t *allow, size_t count, const struct sockaddr *sender)
{
	for (size_t i = 0; i < count; i++)
		if (apex_prefix_match(&allow[i], sender))
			return true;
	return count == 0;
}
