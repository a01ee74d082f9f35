/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the PROXY v2 header reader (lib/proxy/proxy_v2.c),
 * which reads the first bytes of every datagram and connection on a
 * proxy-protocol-port, from whoever sends them.
 *
 * The input is read as a datagram and as the start of a stream.  Oracle
 * (a violation aborts):
 * - nothing is read outside the input (an exact-size heap copy);
 * - a header read is at least 16 bytes and no longer than the input, is
 *   read the same without what follows it, and a PROXY command's names
 *   an IPv4 or IPv6 client with its address size;
 * - over a stream, strict prefixes of a header read ask for more.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_v2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void proxy_oracle(const char *why)
{
	fprintf(stderr, "apex fuzz oracle: %s\n", why);
	abort();
}

/* A header h read (size rc) from an input of len bytes. */
static void check_header(int rc, const apex_proxy_header_t *h, size_t len)
{
	if (rc < 16 || (size_t)rc > len || h->size != (size_t)rc)
		proxy_oracle("a header's size outside the input");
	if (h->local)
		return;
	if (!(h->source.ss_family == AF_INET && h->source_len == sizeof(struct sockaddr_in)) &&
	    !(h->source.ss_family == AF_INET6 && h->source_len == sizeof(struct sockaddr_in6)))
		proxy_oracle("a PROXY header without an IPv4 or IPv6 client");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	apex_proxy_header_t h, again;
	uint8_t *buf = malloc(size > 0 ? size : 1);

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	for (int stream = 0; stream < 2; stream++) {
		int rc = apex_proxy_v2_parse(buf, size, stream, &h);

		if (rc <= 0)
			continue;
		check_header(rc, &h, size);
		for (size_t len = 0; stream && len < (size_t)rc; len += 1 + len / 8)
			if (apex_proxy_v2_parse(buf, len, true, &again) != 0)
				proxy_oracle("a prefix of a header not read as its beginning");
		if (apex_proxy_v2_parse(buf, (size_t)rc, stream, &again) != rc ||
		    again.local != h.local ||
		    memcmp(&again.source, &h.source, sizeof(h.source)) != 0)
			proxy_oracle("a header read differently without what follows it");
	}
	free(buf);
	return 0;
}
