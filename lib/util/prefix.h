/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Network prefixes: "ADDR" or "ADDR/LEN", IPv4 or IPv6, and whether an
 * address lies in one (the rrl-whitelist, and the access lists of zone
 * transfers and NOTIFY).
 */
#ifndef APEX_UTIL_PREFIX_H
#define APEX_UTIL_PREFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct apex_prefix {
	int family;       /* AF_INET or AF_INET6 */
	uint8_t addr[16]; /* network byte order, bits past len zero */
	uint8_t len;      /* prefix length in bits */
} apex_prefix_t;

/* Keep the first bits of addr[0..size), zero the rest.  Inline: response
 * rate limiting keys every UDP answer with it. */
static inline void apex_prefix_mask(uint8_t *addr, size_t size, unsigned bits)
{
	for (size_t i = 0; i < size; i++) {
		if (bits >= 8) {
			bits -= 8;
			continue;
		}
		addr[i] &= (uint8_t)(0xFFu << (8 - bits));
		bits = 0;
	}
}

/*
 * Parse "ADDR" (every bit) or "ADDR/LEN".  APEX_OK, or APEX_EINVAL with
 * *why (may be NULL) a static reason: "not an IPv4 or IPv6 address" or
 * "bad prefix length after '/'".
 */
int apex_prefix_parse(const char *text, apex_prefix_t *out, const char **why);

/* Whether addr (AF_INET or AF_INET6) lies in p. */
bool apex_prefix_match(const apex_prefix_t *p, const struct sockaddr *addr);

#endif
