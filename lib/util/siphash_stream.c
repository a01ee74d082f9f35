/* SPDX-License-Identifier: BSD-3-Clause */
/* SipHash-2-4 fed in pieces: apex_siphash24()'s steps, one word at a time. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "util/siphash_stream.h"

#include <string.h>

#include "util/siphash_rounds.h"

void apex_siphash_stream_init(apex_siphash_stream_t *s, const uint8_t key[APEX_SIPHASH_KEY_SIZE])
{
	uint64_t k0 = read_le64(key), k1 = read_le64(key + 8);

	memset(s, 0, sizeof(*s));
	s->v0 = SIPHASH_V0 ^ k0;
	s->v1 = SIPHASH_V1 ^ k1;
	s->v2 = SIPHASH_V2 ^ k0;
	s->v3 = SIPHASH_V3 ^ k1;
}

/* Two rounds over the message word m. */
static void compress(apex_siphash_stream_t *s, uint64_t m)
{
	uint64_t v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3 ^ m;

	SIPROUND;
	SIPROUND;
	s->v0 = v0 ^ m;
	s->v1 = v1;
	s->v2 = v2;
	s->v3 = v3;
}

void apex_siphash_stream_add(apex_siphash_stream_t *s, const void *data, size_t size)
{
	const uint8_t *in = data;

	s->total += size;
	if (s->pending_size > 0) {
		size_t take = 8 - s->pending_size < size ? 8 - s->pending_size : size;
		memcpy(s->pending + s->pending_size, in, take);
		s->pending_size += take;
		in += take;
		size -= take;
		if (s->pending_size < 8)
			return;
		compress(s, read_le64(s->pending));
		s->pending_size = 0;
	}
	for (; size >= 8; in += 8, size -= 8)
		compress(s, read_le64(in));
	memcpy(s->pending, in, size);
	s->pending_size = size;
}

uint64_t apex_siphash_stream_end(apex_siphash_stream_t *s)
{
	uint64_t b = s->total << 56;

	for (size_t i = 0; i < s->pending_size; i++)
		b |= (uint64_t)s->pending[i] << (8 * i);
	compress(s, b);
	uint64_t v0 = s->v0, v1 = s->v1, v2 = s->v2 ^ 0xff, v3 = s->v3;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}
