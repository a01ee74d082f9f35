/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SHA-1 (sha1.h).  Two block functions: the portable one below, and one
 * with the x86 SHA extensions (SHA-NI), used when the CPU has them: a
 * zone load hashes every name of an NSEC3 zone twice, and SHA-NI does a
 * block in a fraction of the time.  The CPU is asked once, before
 * main() (detect_sha_ni()); afterwards the choice only reads that
 * answer, so the query path may call this without writing anything.
 */
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHA_NI_CODE 1
#endif
#include <stdbool.h>

#include "dns/sha1.h"

static inline uint32_t rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

static void sha1_block_portable(uint32_t state[5], const uint8_t block[64])
{
	uint32_t w[80];
	for (int i = 0; i < 16; i++)
		w[i] = ((uint32_t)block[4 * i] << 24) | ((uint32_t)block[4 * i + 1] << 16) |
		       ((uint32_t)block[4 * i + 2] << 8) | (uint32_t)block[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);

	uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
	for (int i = 0; i < 80; i++) {
		uint32_t f, k;
		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5A827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ED9EBA1;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8F1BBCDC;
		} else {
			f = b ^ c ^ d;
			k = 0xCA62C1D6;
		}
		uint32_t t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = t;
	}
	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
	state[4] += e;
}

#ifdef HAVE_SHA_NI_CODE
/*
 * One block with SHA-NI, after Intel's reference sequence.  The message
 * schedule, w[t] = rol1(w[t-3] ^ w[t-8] ^ w[t-14] ^ w[t-16]), is made
 * four words at a time: group g (rounds 4g..4g+3) from groups g-4..g-1
 * by msg1, xor and msg2.  Then each group: nexte adds the rotated a of
 * four rounds back (e) to its words, rnds4 does the four rounds with
 * the function and constant of group g / 5; two e registers alternate.
 */
__attribute__((target("sha,sse4.1,ssse3"))) static void sha1_block_shani(uint32_t state[5],
									 const uint8_t block[64])
{
	const __m128i bswap = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
	const __m128i abcd_start = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)state), 0x1B);
	const __m128i e_start = _mm_set_epi32((int)state[4], 0, 0, 0);
	__m128i w[20];
	for (int g = 0; g < 4; g++)
		w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(block + 16 * g)), bswap);
	for (int g = 4; g < 20; g++)
		w[g] = _mm_sha1msg2_epu32(
			_mm_xor_si128(_mm_sha1msg1_epu32(w[g - 4], w[g - 3]), w[g - 2]), w[g - 1]);

	__m128i abcd = abcd_start;
	__m128i e0 = _mm_add_epi32(e_start, w[0]); /* group 0: e as it is */
	__m128i e1 = abcd;
	abcd = _mm_sha1rnds4_epu32(abcd, e0, 0);
#define GROUP(g, f, e_this, e_other)                \
	e_this = _mm_sha1nexte_epu32(e_this, w[g]); \
	e_other = abcd;                             \
	abcd = _mm_sha1rnds4_epu32(abcd, e_this, f)
	GROUP(1, 0, e1, e0);
	GROUP(2, 0, e0, e1);
	GROUP(3, 0, e1, e0);
	GROUP(4, 0, e0, e1);
	GROUP(5, 1, e1, e0);
	GROUP(6, 1, e0, e1);
	GROUP(7, 1, e1, e0);
	GROUP(8, 1, e0, e1);
	GROUP(9, 1, e1, e0);
	GROUP(10, 2, e0, e1);
	GROUP(11, 2, e1, e0);
	GROUP(12, 2, e0, e1);
	GROUP(13, 2, e1, e0);
	GROUP(14, 2, e0, e1);
	GROUP(15, 3, e1, e0);
	GROUP(16, 3, e0, e1);
	GROUP(17, 3, e1, e0);
	GROUP(18, 3, e0, e1);
	GROUP(19, 3, e1, e0);
#undef GROUP
	/* The new state: e from the a of round 76 (in e0), plus the old. */
	e0 = _mm_sha1nexte_epu32(e0, e_start);
	abcd = _mm_shuffle_epi32(_mm_add_epi32(abcd, abcd_start), 0x1B);
	_mm_storeu_si128((__m128i *)state, abcd);
	state[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}
#endif

#ifdef HAVE_SHA_NI_CODE
/* Whether the CPU has SHA-NI and SSE4.1; written only by detect_sha_ni(). */
static bool have_sha_ni;

/* Runs before main(), so no thread ever sees this being written.  cpuid
 * directly: not every compiler's __builtin_cpu_supports() knows "sha". */
__attribute__((constructor)) static void detect_sha_ni(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1))
		return;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA))
		have_sha_ni = true;
}
#endif

static void sha1_block(uint32_t state[5], const uint8_t block[64])
{
#ifdef HAVE_SHA_NI_CODE
	if (have_sha_ni) {
		sha1_block_shani(state, block);
		return;
	}
#endif
	sha1_block_portable(state, block);
}

void apex_sha1_init(apex_sha1_t *ctx)
{
	ctx->state[0] = 0x67452301;
	ctx->state[1] = 0xEFCDAB89;
	ctx->state[2] = 0x98BADCFE;
	ctx->state[3] = 0x10325476;
	ctx->state[4] = 0xC3D2E1F0;
	ctx->length = 0;
	ctx->used = 0;
}

void apex_sha1_update(apex_sha1_t *ctx, const void *data, size_t size)
{
	const uint8_t *p = data;
	ctx->length += size;
	while (size > 0) {
		size_t take = 64 - ctx->used;
		if (take > size)
			take = size;
		memcpy(ctx->block + ctx->used, p, take);
		ctx->used += take;
		p += take;
		size -= take;
		if (ctx->used == 64) {
			sha1_block(ctx->state, ctx->block);
			ctx->used = 0;
		}
	}
}

void apex_sha1_final(apex_sha1_t *ctx, uint8_t digest[APEX_SHA1_SIZE])
{
	uint64_t bits = ctx->length * 8;
	/* 0x80, zeros up to 8 bytes before a block's end, the bit length. */
	ctx->block[ctx->used++] = 0x80;
	if (ctx->used > 56) {
		memset(ctx->block + ctx->used, 0, 64 - ctx->used);
		sha1_block(ctx->state, ctx->block);
		ctx->used = 0;
	}
	memset(ctx->block + ctx->used, 0, 56 - ctx->used);
	for (int i = 0; i < 8; i++)
		ctx->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha1_block(ctx->state, ctx->block);
	ctx->used = 0;
	for (int i = 0; i < 5; i++) {
		digest[4 * i] = (uint8_t)(ctx->state[i] >> 24);
		digest[4 * i + 1] = (uint8_t)(ctx->state[i] >> 16);
		digest[4 * i + 2] = (uint8_t)(ctx->state[i] >> 8);
		digest[4 * i + 3] = (uint8_t)ctx->state[i];
	}
}
