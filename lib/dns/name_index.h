/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Names found by their hash (dns/name_hash.h): an index over an array of
 * name refs (dns/name_refs.h), for matching two lists of thousands of
 * zones (a configuration's and the reloader's) with one probe per name
 * rather than a binary search of canonical comparisons, each a walk over
 * both names from memory the caches no longer hold.
 */
#ifndef APEX_DNS_NAME_INDEX_H
#define APEX_DNS_NAME_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "dns/name_refs.h"

typedef struct apex_name_index {
	const apex_name_ref_t *refs; /* the caller's, in any order */
	size_t count;
	uint64_t *slots; /* util/hash_slots.h, 1 << bits of them, owned */
	unsigned bits;
} apex_name_index_t;

/* Index count refs (their names distinct, ASCII case aside); the refs and
 * their names stay the caller's and must outlive the index.  APEX_OK or
 * APEX_ENOMEM. */
int apex_name_index_init(apex_name_index_t *index, const apex_name_ref_t *refs, size_t count);

/* The ref of name (compared ASCII case-insensitively), or NULL. */
const apex_name_ref_t *apex_name_index_find(const apex_name_index_t *index, const uint8_t *name);

/* apex_name_index_find() with hash the apex_name_hash() of name. */
const apex_name_ref_t *apex_name_index_find_hashed(const apex_name_index_t *index,
						   const uint8_t *name, uint32_t hash);

/* Free the index's slots (not the refs). */
void apex_name_index_free(apex_name_index_t *index);

#endif
