/* SPDX-License-Identifier: BSD-3-Clause */
/* Names found by their hash (name_index.h). */
#include "dns/name_index.h"

#include <stdlib.h>

#include "dns/name.h"
#include "dns/name_hash.h"
#include "util/error.h"
#include "util/hash_slots.h"

int apex_name_index_init(apex_name_index_t *index, const apex_name_ref_t *refs, size_t count)
{
	unsigned bits = apex_hash_slots_bits(count);

	index->refs = refs;
	index->count = count;
	index->bits = bits;
	if (count >= UINT32_MAX ||
	    (index->slots = calloc((size_t)1 << bits, sizeof(*index->slots))) == NULL) {
		index->slots = NULL;
		return APEX_ENOMEM;
	}
	for (size_t i = 0; i < count; i++)
		apex_hash_slots_insert(index->slots, bits, apex_name_hash(refs[i].name),
				       (uint32_t)i);
	return APEX_OK;
}

const apex_name_ref_t *apex_name_index_find_hashed(const apex_name_index_t *index,
						   const uint8_t *name, uint32_t hash)
{
	uint32_t mask = (1u << index->bits) - 1;

	for (uint32_t i = apex_hash_slots_first(hash, index->bits);; i = (i + 1) & mask) {
		uint64_t slot = index->slots[i];

		if (slot == 0)
			return NULL;
		if (apex_hash_slots_hash(slot) != hash)
			continue;
		const apex_name_ref_t *ref = &index->refs[apex_hash_slots_index(slot)];
		if (apex_name_equal(ref->name, name))
			return ref;
	}
}

const apex_name_ref_t *apex_name_index_find(const apex_name_index_t *index, const uint8_t *name)
{
	return apex_name_index_find_hashed(index, name, apex_name_hash(name));
}

void apex_name_index_free(apex_name_index_t *index)
{
	free(index->slots);
	index->slots = NULL;
}
