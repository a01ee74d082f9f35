/* SPDX-License-Identifier: BSD-3-Clause */
/* Response rate limiting: per-prefix token buckets in a per-thread table. */
#include "rrl/rrl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "dns/wire.h"
#include "util/error.h"

#define PROBES 4

int apex_rrl_init(apex_rrl_t *rrl, const apex_rrl_config_t *cfg, unsigned shares)
{
	size_t size = 1;

	memset(rrl, 0, sizeof(*rrl));
	rrl->config = cfg;
	if (cfg->rate == 0)
		return APEX_OK;
	if (shares == 0)
		shares = 1;
	rrl->rate = (cfg->rate + shares - 1) / shares;
	while (size < cfg->table_size && size < ((size_t)1 << 30))
		size <<= 1;
	if (size < PROBES)
		size = PROBES;
	int rc = apex_random_bytes(rrl->key, sizeof(rrl->key));
	if (rc < 0)
		return rc;
	rrl->entries = calloc(size, sizeof(*rrl->entries));
	if (rrl->entries == NULL)
		return APEX_ENOMEM;
	rrl->mask = size - 1;
	return APEX_OK;
}

void apex_rrl_free(apex_rrl_t *rrl)
{
	free(rrl->entries);
	rrl->entries = NULL;
}

/* The table key of addr: family byte, then the prefix (masked) bytes. */
static void make_key(const apex_rrl_config_t *cfg, const struct sockaddr *addr, uint8_t key[17])
{
	memset(key, 0, 17);
	if (addr->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)addr)->sin_addr, 4);
		apex_prefix_mask(key + 1, 4, cfg->ipv4_prefix);
	} else {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)addr)->sin6_addr;

		key[0] = 6;
		memcpy(key + 1, a6, 16);
		apex_prefix_mask(key + 1, 16, cfg->ipv6_prefix);
	}
}

static bool whitelisted(const apex_rrl_config_t *cfg, const struct sockaddr *addr)
{
	for (size_t i = 0; i < cfg->whitelist_count; i++) {
		if (apex_prefix_match(&cfg->whitelist[i], addr))
			return true;
	}
	return false;
}

apex_rrl_action_t apex_rrl_account(apex_rrl_t *rrl, const struct sockaddr *addr, uint64_t now_ms)
{
	const apex_rrl_config_t *cfg = rrl->config;
	uint64_t full = rrl->rate * 1000;
	apex_rrl_entry_t *e = NULL, *oldest = NULL;
	uint8_t key[17];
	size_t slot;

	if (rrl->entries == NULL || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
		return APEX_RRL_SEND;
	make_key(cfg, addr, key);
	slot = (size_t)apex_siphash24(rrl->key, key, sizeof(key));
	for (unsigned i = 0; i < PROBES; i++) {
		apex_rrl_entry_t *c = &rrl->entries[(slot + i) & rrl->mask];

		if (c->key[0] != 0 && memcmp(c->key, key, sizeof(key)) == 0) {
			e = c;
			break;
		}
		if (oldest == NULL || c->key[0] == 0 ||
		    (oldest->key[0] != 0 && c->stamp_ms < oldest->stamp_ms))
			oldest = c;
	}
	if (e == NULL) {
		/* a new prefix starts with a full bucket */
		e = oldest;
		memcpy(e->key, key, sizeof(key));
		e->limited = 0;
		e->stamp_ms = now_ms;
		e->tokens = full;
	} else if (now_ms > e->stamp_ms) {
		uint64_t elapsed = now_ms - e->stamp_ms;

		e->tokens = elapsed >= 1000 ? full : e->tokens + elapsed * rrl->rate;
		if (e->tokens > full)
			e->tokens = full;
		e->stamp_ms = now_ms;
	}
	if (e->tokens >= 1000) {
		e->tokens -= 1000;
		return APEX_RRL_SEND;
	}
	if (whitelisted(cfg, addr))
		return APEX_RRL_SEND;
	e->limited++;
	if (cfg->slip > 0 && e->limited % cfg->slip == 0)
		return APEX_RRL_SLIP;
	return APEX_RRL_DROP;
}

size_t apex_rrl_slip_response(uint8_t *msg, size_t size)
{
	size_t pos = APEX_HEADER_SIZE;
	uint16_t qdcount;

	if (size < APEX_HEADER_SIZE)
		return 0;
	qdcount = apex_read_u16(msg + APEX_HDR_QDCOUNT);
	if (qdcount > 1)
		return 0;
	if (qdcount == 1) {
		/* apex writes the question name uncompressed */
		for (;;) {
			if (pos >= size || (msg[pos] & 0xC0) != 0)
				return 0;
			if (msg[pos] == 0)
				break;
			pos += 1 + (size_t)msg[pos];
		}
		pos += 1 + 4;
		if (pos > size)
			return 0;
	}
	apex_write_u16(msg + APEX_HDR_FLAGS, apex_read_u16(msg + APEX_HDR_FLAGS) | APEX_FLAG_TC);
	apex_write_u16(msg + APEX_HDR_ANCOUNT, 0);
	apex_write_u16(msg + APEX_HDR_NSCOUNT, 0);
	apex_write_u16(msg + APEX_HDR_ARCOUNT, 0);
	return pos;
}
