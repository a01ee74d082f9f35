/* SPDX-License-Identifier: BSD-3-Clause */
#include "util/arena.h"
#include "util/error.h"
#include "zone/nsec3_index.h"

int apex_nsec3_index_build(apex_zone_t *zone)
{
	size_t count = zone->nsec3_count;
	if (count >= UINT32_MAX)
		return APEX_ENOMEM;
	unsigned bits = 1;
	while (bits < 20 && ((size_t)1 << (bits + 2)) <= count) /* about 4 entries a bucket */
		bits++;
	size_t buckets = (size_t)1 << bits;
	uint32_t *start = apex_arena_alloc(zone->arena, (buckets + 1) * sizeof(*start));
	if (start == NULL)
		return APEX_ENOMEM;
	size_t i = 0;
	for (size_t v = 0; v < buckets; v++) {
		while (i < count &&
		       apex_nsec3_bucket(zone->nsec3[i].hash, zone->nsec3[i].hash_size, bits) < v)
			i++;
		start[v] = (uint32_t)i;
	}
	start[buckets] = (uint32_t)count;
	zone->nsec3_start = start;
	zone->nsec3_bits = bits;
	return APEX_OK;
}
