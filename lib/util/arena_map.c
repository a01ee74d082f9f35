/* SPDX-License-Identifier: BSD-3-Clause */
/* The chunks of several arenas, sorted by address (arena_map.h). */
#include "util/arena_map.h"

#include <stdlib.h>
#include <string.h>

typedef struct adding {
	apex_arena_map_t *map;
	unsigned tag;
} adding_t;

static void add_span(void *ctx, const unsigned char *data, size_t used)
{
	adding_t *a = ctx;
	apex_arena_map_t *map = a->map;

	if (map->count == map->capacity) {
		size_t capacity = map->capacity ? 2 * map->capacity : 256;
		apex_arena_span_t *grown = realloc(map->spans, capacity * sizeof(*grown));
		if (grown == NULL) {
			map->failed = true;
			return;
		}
		map->spans = grown;
		map->capacity = capacity;
	}
	map->spans[map->count++] =
		(apex_arena_span_t){ (uintptr_t)data, (uintptr_t)data + used, a->tag };
}

void apex_arena_map_add(apex_arena_map_t *map, const apex_arena_t *arena, unsigned tag)
{
	adding_t a = { map, tag };

	apex_arena_each_chunk(arena, add_span, &a);
}

static int by_start(const void *a, const void *b)
{
	const apex_arena_span_t *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

bool apex_arena_map_sort(apex_arena_map_t *map)
{
	if (map->count > 0)
		qsort(map->spans, map->count, sizeof(*map->spans), by_start);
	return !map->failed;
}

size_t apex_arena_map_find(const apex_arena_map_t *map, const void *p)
{
	uintptr_t at = (uintptr_t)p;
	size_t lo = 0, hi = map->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (map->spans[mid].end <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < map->count && map->spans[lo].start <= at ? lo : map->count;
}

void apex_arena_map_free(apex_arena_map_t *map)
{
	free(map->spans);
	memset(map, 0, sizeof(*map));
}
