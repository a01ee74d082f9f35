/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hash of a name for name compression: FNV-1a over the lowercased labels
 * from the root down, so that the hash of a name follows from its
 * parent's hash and its first label (the hashes of all suffixes of a name
 * cost one pass; a zone node's hash is precomputed).  Equal names (ASCII
 * case-insensitively) have equal hashes, in every zone.
 */
#ifndef APEX_DNS_NAME_HASH_H
#define APEX_DNS_NAME_HASH_H

#include <stdint.h>

#include "dns/ascii.h"

#define APEX_NAME_HASH_ROOT 0x811C9DC5u
#define APEX_NAME_HASH_PRIME 0x01000193u

static inline uint32_t apex_name_hash_label(uint32_t parent_hash, const uint8_t *label)
{
	uint32_t h = (parent_hash ^ label[0]) * APEX_NAME_HASH_PRIME;
	for (unsigned i = 1; i <= label[0]; i++) {
		h = (h ^ apex_ascii_lower(label[i])) * APEX_NAME_HASH_PRIME;
	}
	return h;
}

/* Hash of a whole valid wire name (see apex_name_hash_label()). */
uint32_t apex_name_hash(const uint8_t *name);

#endif
