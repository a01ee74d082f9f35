#include <string.h>

#include "dns/sha1.h"

static inline uint32_t rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

static void sha1_block(uint32_t state[5], const uint8_t block[64])
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
	uint8_t pad = 0x80;
	apex_sha1_update(ctx, &pad, 1);
	uint8_t zero = 0;
	while (ctx->used != 56)
		apex_sha1_update(ctx, &zero, 1);
	uint8_t len[8];
	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	apex_sha1_update(ctx, len, 8);
	for (int i = 0; i < 5; i++) {
		digest[4 * i] = (uint8_t)(ctx->state[i] >> 24);
		digest[4 * i + 1] = (uint8_t)(ctx->state[i] >> 16);
		digest[4 * i + 2] = (uint8_t)(ctx->state[i] >> 8);
		digest[4 * i + 3] = (uint8_t)ctx->state[i];
	}
}
