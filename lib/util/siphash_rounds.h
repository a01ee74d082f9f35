/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4's round and its little-endian reads, shared by the one-shot
 * hash (util/siphash.c) and the one fed in pieces (util/siphash_stream.c).
 * Internal to those two files.
 */
#ifndef APEX_UTIL_SIPHASH_ROUNDS_H
#define APEX_UTIL_SIPHASH_ROUNDS_H

#include <stdint.h>

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t read_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#define SIPROUND                   \
	do {                       \
		v0 += v1;          \
		v1 = rotl(v1, 13); \
		v1 ^= v0;          \
		v0 = rotl(v0, 32); \
		v2 += v3;          \
		v3 = rotl(v3, 16); \
		v3 ^= v2;          \
		v0 += v3;          \
		v3 = rotl(v3, 21); \
		v3 ^= v0;          \
		v2 += v1;          \
		v1 = rotl(v1, 17); \
		v1 ^= v2;          \
		v2 = rotl(v2, 32); \
	} while (0)

#define SIPHASH_V0 0x736f6d6570736575ULL
#define SIPHASH_V1 0x646f72616e646f6dULL
#define SIPHASH_V2 0x6c7967656e657261ULL
#define SIPHASH_V3 0x7465646279746573ULL

#endif
