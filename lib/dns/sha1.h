/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SHA-1 (FIPS 180-4), for NSEC3 hashing (RFC 5155 section 5).
 * Written out here because the NSEC3 hash of a query name is computed
 * on the query path for NXDOMAIN proofs, and this version works in the
 * caller's stack memory: no allocation, no library state.
 */
#ifndef APEX_DNS_SHA1_H
#define APEX_DNS_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define APEX_SHA1_SIZE 20

typedef struct apex_sha1 {
	uint32_t state[5];
	uint64_t length; /* bytes hashed so far */
	uint8_t block[64];
	size_t used; /* bytes in block */
} apex_sha1_t;

void apex_sha1_init(apex_sha1_t *ctx);
void apex_sha1_update(apex_sha1_t *ctx, const void *data, size_t size);
void apex_sha1_final(apex_sha1_t *ctx, uint8_t digest[APEX_SHA1_SIZE]);

#endif
