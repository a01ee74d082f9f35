/* SPDX-License-Identifier: BSD-3-Clause */
/* Network prefixes (prefix.h). */
#include "util/prefix.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static int invalid(const char **why, const char *reason)
{
	if (why != NULL)
		*why = reason;
	return APEX_EINVAL;
}

int apex_prefix_parse(const char *text, apex_prefix_t *out, const char **why)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(text, '/');
	size_t host_len = slash != NULL ? (size_t)(slash - text) : strlen(text);
	unsigned long len;
	char *end;

	memset(out, 0, sizeof(*out));
	if (host_len == 0 || host_len >= sizeof(host))
		return invalid(why, "not an IPv4 or IPv6 address");
	memcpy(host, text, host_len);
	host[host_len] = '\0';
	if (inet_pton(AF_INET, host, out->addr) == 1) {
		out->family = AF_INET;
		len = 32;
	} else if (inet_pton(AF_INET6, host, out->addr) == 1) {
		out->family = AF_INET6;
		len = 128;
	} else {
		return invalid(why, "not an IPv4 or IPv6 address");
	}
	if (slash != NULL) {
		unsigned long max = len;

		if (slash[1] < '0' || slash[1] > '9')
			return invalid(why, "bad prefix length after '/'");
		len = strtoul(slash + 1, &end, 10);
		if (*end != '\0' || len > max)
			return invalid(why, "bad prefix length after '/'");
	}
	out->len = (uint8_t)len;
	apex_prefix_mask(out->addr, out->family == AF_INET ? 4 : 16, out->len);
	return APEX_OK;
}

bool apex_prefix_match(const apex_prefix_t *p, const struct sockaddr *addr)
{
	uint8_t a[16];
	size_t size;

	if (p->family != addr->sa_family)
		return false;
	if (p->family == AF_INET) {
		size = 4;
		memcpy(a, &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else {
		size = 16;
		memcpy(a, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
	}
	apex_prefix_mask(a, size, p->len);
	return memcmp(a, p->addr, size) == 0;
}
