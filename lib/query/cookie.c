/* SPDX-License-Identifier: BSD-3-Clause */
/* RFC 9018 server cookies: making and verifying them. */
#include "query/cookie.h"

#include <string.h>

#include "dns/wire.h"
#include "util/siphash.h"

#define COOKIE_VERSION 1
#define HASH_INPUT_MAX (APEX_COOKIE_CLIENT_SIZE + 8 + 16)

/* The hash over client cookie, the 8 bytes of version/reserved/timestamp and the address. */
static uint64_t cookie_hash(const uint8_t *secret, const uint8_t *client, const uint8_t *head,
			    const uint8_t *addr, size_t addr_size)
{
	uint8_t in[HASH_INPUT_MAX];

	if (addr_size > 16)
		addr_size = 16;
	memcpy(in, client, APEX_COOKIE_CLIENT_SIZE);
	memcpy(in + APEX_COOKIE_CLIENT_SIZE, head, 8);
	memcpy(in + APEX_COOKIE_CLIENT_SIZE + 8, addr, addr_size);
	return apex_siphash24(secret, in, APEX_COOKIE_CLIENT_SIZE + 8 + addr_size);
}

/* RFC 9018 section 4.4: the hash is stored in network byte order of the SipHash output bytes. */
static void put_hash(uint8_t *p, uint64_t h)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(h >> (8 * i)); /* SipHash's output is little-endian */
}

void apex_cookie_make(const uint8_t secret[APEX_COOKIE_SECRET_SIZE],
		      const uint8_t client[APEX_COOKIE_CLIENT_SIZE], const uint8_t *addr,
		      size_t addr_size, uint32_t now, uint8_t out[APEX_COOKIE_SERVER_SIZE])
{
	out[0] = COOKIE_VERSION;
	out[1] = out[2] = out[3] = 0;
	apex_write_u32(out + 4, now);
	put_hash(out + 8, cookie_hash(secret, client, out, addr, addr_size));
}

apex_cookie_status_t apex_cookie_verify(const uint8_t secret[APEX_COOKIE_SECRET_SIZE],
					const uint8_t client[APEX_COOKIE_CLIENT_SIZE],
					const uint8_t *server, size_t server_size,
					const uint8_t *addr, size_t addr_size, uint32_t now)
{
	uint8_t expect[8];
	uint8_t diff = 0;
	uint32_t stamp;

	if (server_size != APEX_COOKIE_SERVER_SIZE || server[0] != COOKIE_VERSION)
		return APEX_COOKIE_INVALID;
	stamp = apex_read_u32(server + 4);
	/* serial-number arithmetic on 32-bit timestamps (RFC 9018 4.3) */
	if ((int32_t)(now - stamp) > APEX_COOKIE_MAX_AGE ||
	    (int32_t)(stamp - now) > APEX_COOKIE_MAX_SKEW)
		return APEX_COOKIE_INVALID;
	put_hash(expect, cookie_hash(secret, client, server, addr, addr_size));
	for (int i = 0; i < 8; i++)
		diff |= (uint8_t)(expect[i] ^ server[8 + i]); /* no early exit: constant time */
	return diff == 0 ? APEX_COOKIE_VALID : APEX_COOKIE_INVALID;
}
