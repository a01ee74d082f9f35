/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "dns/sha1.h"
#include "util/error.h"

int apex_nsec3_hash(uint8_t algorithm, const uint8_t *salt, size_t salt_size, uint16_t iterations,
		    const uint8_t *name, uint8_t *hash)
{
	if (algorithm != 1)
		return APEX_EINVAL;

	uint8_t lowered[APEX_NAME_MAX];
	size_t size = apex_name_size(name);
	memcpy(lowered, name, size);
	apex_name_lower(lowered);

	apex_sha1_t ctx;
	apex_sha1_init(&ctx);
	apex_sha1_update(&ctx, lowered, size);
	apex_sha1_update(&ctx, salt, salt_size);
	apex_sha1_final(&ctx, hash);
	for (uint16_t i = 0; i < iterations; i++) {
		apex_sha1_init(&ctx);
		apex_sha1_update(&ctx, hash, APEX_SHA1_SIZE);
		apex_sha1_update(&ctx, salt, salt_size);
		apex_sha1_final(&ctx, hash);
	}
	return APEX_SHA1_SIZE;
}

static const char base32hex_digits[] = "0123456789abcdefghijklmnopqrstuv";

static int base32hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'v')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'V')
		return c - 'A' + 10;
	return -1;
}

int apex_base32hex_decode(const char *text, size_t text_size, uint8_t *out, size_t out_capacity)
{
	uint32_t buffer = 0;
	int bits = 0;
	size_t n = 0;
	for (size_t i = 0; i < text_size; i++) {
		int v = base32hex_value(text[i]);
		if (v < 0)
			return APEX_EINVAL;
		buffer = (buffer << 5) | (uint32_t)v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			if (n == out_capacity)
				return APEX_EINVAL;
			out[n++] = (uint8_t)(buffer >> bits);
		}
	}
	/* Leftover bits must be zero padding (RFC 4648 canonical form). */
	if (bits >= 5 || (buffer & ((1u << bits) - 1)) != 0)
		return APEX_EINVAL;
	return (int)n;
}

size_t apex_base32hex_encode(const uint8_t *data, size_t size, char *text)
{
	uint32_t buffer = 0;
	int bits = 0;
	size_t n = 0;
	for (size_t i = 0; i < size; i++) {
		buffer = (buffer << 8) | data[i];
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			text[n++] = base32hex_digits[(buffer >> bits) & 0x1F];
		}
	}
	if (bits > 0)
		text[n++] = base32hex_digits[(buffer << (5 - bits)) & 0x1F];
	text[n] = '\0';
	return n;
}
