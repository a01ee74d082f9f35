/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The chunks of several arenas (util/arena.h), sorted by address: which
 * of them holds an address, and under which tag its arena was added.
 */
#ifndef APEX_UTIL_ARENA_MAP_H
#define APEX_UTIL_ARENA_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

/* One chunk: the bytes it handed out, and its arena's tag. */
typedef struct apex_arena_span {
	uintptr_t start, end;
	unsigned tag;
} apex_arena_span_t;

/* Zeroed: empty.  spans is malloc'd (apex_arena_map_free()). */
typedef struct apex_arena_map {
	apex_arena_span_t *spans;
	size_t count, capacity;
	bool failed; /* out of memory while adding */
} apex_arena_map_t;

/* Add the chunks of arena, tagged tag. */
void apex_arena_map_add(apex_arena_map_t *map, const apex_arena_t *arena, unsigned tag);

/* Sort the spans once every arena is added: false if an addition ran out
 * of memory (the map is incomplete). */
bool apex_arena_map_sort(apex_arena_map_t *map);

/* The index of the span holding p, or map->count if none does. */
size_t apex_arena_map_find(const apex_arena_map_t *map, const void *p);

void apex_arena_map_free(apex_arena_map_t *map);

#endif
