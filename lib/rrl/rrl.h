/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Response rate limiting (RRL) of UDP responses per source prefix.
 *
 * Every UDP response is charged to the prefix of its destination (the
 * query's source address cut to ipv4_prefix or ipv6_prefix bits).  A
 * prefix has a token bucket refilled at `rate` responses per second and
 * holding at most one second's worth; a response with no token left is
 * limited: dropped, except every slip-th limited response of that
 * prefix, which is sent as an empty truncated (TC) reply so that a real
 * client behind a spoofed prefix can retry over TCP (slip 0: drop every
 * one; slip 1: slip every one).  Prefixes in the whitelist are never
 * limited.
 *
 * One apex_rrl_t belongs to one thread: its table is allocated at
 * apex_rrl_init() and then only read and written by that thread, so
 * nothing is allocated and no lock is taken per response.  The table is
 * a keyed hash (SipHash with a random key, so that an attacker cannot
 * aim collisions at a victim's entry) with short linear probing; when
 * all probed slots are taken, the one refilled longest ago is reused.
 */
#ifndef APEX_RRL_RRL_H
#define APEX_RRL_RRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util/prefix.h"
#include "util/siphash.h"

typedef struct apex_rrl_config {
	unsigned rate;                  /* responses per second per prefix; 0 = RRL off */
	unsigned slip;                  /* every slip-th limited response is a TC reply; 0 = none */
	unsigned ipv4_prefix;           /* bits, 1..32 (default 24) */
	unsigned ipv6_prefix;           /* bits, 1..128 (default 56) */
	size_t table_size;              /* entries (rounded up to a power of two) */
	const apex_prefix_t *whitelist; /* util/prefix.h */
	size_t whitelist_count;
} apex_rrl_config_t;

typedef struct apex_rrl_entry {
	uint8_t key[17];   /* family byte + prefix bytes; key[0] == 0: empty */
	uint32_t limited;  /* limited responses so far (for slip) */
	uint64_t stamp_ms; /* when tokens was last refilled */
	uint64_t tokens;   /* in 1/1000 of a response */
} apex_rrl_entry_t;

typedef struct apex_rrl {
	const apex_rrl_config_t *config;
	uint64_t rate;             /* this table's share of config->rate, >= 1 */
	apex_rrl_entry_t *entries; /* owned */
	size_t mask;
	uint8_t key[APEX_SIPHASH_KEY_SIZE];
} apex_rrl_t;

typedef enum {
	APEX_RRL_SEND = 0, /* not limited */
	APEX_RRL_DROP,     /* limited: send nothing */
	APEX_RRL_SLIP,     /* limited: send a TC reply (apex_rrl_slip_response()) */
} apex_rrl_action_t;

/*
 * Prepare rrl for cfg (which must outlive it), enforcing
 * ceil(cfg->rate / shares) responses per second: with one table per
 * worker thread, shares is the number of workers.  Allocates the table
 * (free it with apex_rrl_free()).  With cfg->rate 0 nothing is
 * allocated and every response is sent.
 */
int apex_rrl_init(apex_rrl_t *rrl, const apex_rrl_config_t *cfg, unsigned shares);

void apex_rrl_free(apex_rrl_t *rrl);

static inline bool apex_rrl_enabled(const apex_rrl_t *rrl)
{
	return rrl->entries != NULL;
}

/* Charge one response to addr's prefix at now_ms (a monotonic clock). */
apex_rrl_action_t apex_rrl_account(apex_rrl_t *rrl, const struct sockaddr *addr, uint64_t now_ms);

/*
 * Turn the response msg[0..size) into its slipped form in place: the
 * header with TC set and no records but the question.  Returns the new
 * size (0 if msg is not a response apex could have written).
 */
size_t apex_rrl_slip_response(uint8_t *msg, size_t size);

#endif
