/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bucket of an NSEC3 hash in a zone's NSEC3 index (zone/nsec3_index.h):
 * what both the index's build and the lookups of zone.c compute.
 */
#ifndef APEX_ZONE_NSEC3_BUCKET_H
#define APEX_ZONE_NSEC3_BUCKET_H

#include <stddef.h>
#include <stdint.h>

/* The bucket of a hash: its first `bits` bits (bits <= 24). */
static inline uint32_t apex_nsec3_bucket(const uint8_t *hash, size_t size, unsigned bits)
{
	uint32_t v = 0;
	for (size_t i = 0; i < 3; i++)
		v = v << 8 | (i < size ? hash[i] : 0);
	return v >> (24 - bits);
}

#endif
