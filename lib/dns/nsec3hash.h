/* SPDX-License-Identifier: BSD-3-Clause */
/* NSEC3 owner-name hashing (RFC 5155 section 5) and base32hex (RFC 4648). */
#ifndef APEX_DNS_NSEC3HASH_H
#define APEX_DNS_NSEC3HASH_H

#include <stddef.h>
#include <stdint.h>

/*
 * IH(salt, x, 0) = H(x || salt); IH(salt, x, k) = H(IH(salt, x, k-1) || salt)
 * applied to the lowercased wire form of name.  algorithm must be 1
 * (SHA-1).  Writes 20 bytes to hash; returns 20, or APEX_EINVAL for an
 * unknown algorithm.  No allocation.
 */
int apex_nsec3_hash(uint8_t algorithm, const uint8_t *salt, size_t salt_size, uint16_t iterations,
		    const uint8_t *name, uint8_t *hash);

/*
 * Decode base32hex text (case-insensitive, no padding) of length
 * text_size into out (capacity out_capacity).  Returns the decoded size
 * or APEX_EINVAL.
 */
int apex_base32hex_decode(const char *text, size_t text_size, uint8_t *out, size_t out_capacity);

/* Encode data as lowercase base32hex without padding into text (capacity
 * at least (size*8+4)/5 + 1); returns the text length. */
size_t apex_base32hex_encode(const uint8_t *data, size_t size, char *text);

#endif
