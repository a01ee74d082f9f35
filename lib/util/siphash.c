/* SPDX-License-Identifier: BSD-3-Clause */
/* SipHash-2-4, after the reference implementation (public domain, CC0). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "util/siphash.h"

#include <errno.h>
#include <sys/random.h>

#include "util/error.h"
#include "util/siphash_rounds.h"

uint64_t apex_siphash24(const uint8_t key[APEX_SIPHASH_KEY_SIZE], const void *data, size_t size)
{
	const uint8_t *in = data;
	uint64_t k0 = read_le64(key), k1 = read_le64(key + 8);
	uint64_t v0 = SIPHASH_V0 ^ k0;
	uint64_t v1 = SIPHASH_V1 ^ k1;
	uint64_t v2 = SIPHASH_V2 ^ k0;
	uint64_t v3 = SIPHASH_V3 ^ k1;
	size_t whole = size - size % 8;
	uint64_t m, b = (uint64_t)size << 56;

	for (size_t i = 0; i < whole; i += 8) {
		m = read_le64(in + i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t i = 0; i < size % 8; i++)
		b |= (uint64_t)in[whole + i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

int apex_random_bytes(void *buf, size_t size)
{
	uint8_t *p = buf;
	size_t got = 0;
	int tries = 0;

	while (got < size) {
		ssize_t n = getrandom(p + got, size - got, 0);

		if (n < 0) {
			if (errno == EINTR && tries++ < 100)
				continue;
			return apex_errno();
		}
		got += (size_t)n;
	}
	return APEX_OK;
}
