/*
 * Arena (region) allocator: many small allocations freed together.
 * A zone version owns one arena; everything the version points to lives
 * in it and is released by apex_arena_destroy().  Not thread-safe: one
 * builder thread fills an arena, then it is only read.
 */
#ifndef APEX_UTIL_ARENA_H
#define APEX_UTIL_ARENA_H

#include <stddef.h>

typedef struct apex_arena apex_arena_t;

/* A new empty arena, or NULL on allocation failure.  Caller owns it. */
apex_arena_t *apex_arena_create(void);

/* Free the arena and everything allocated from it. */
void apex_arena_destroy(apex_arena_t *arena);

/* size bytes aligned to 16, owned by the arena; NULL on failure. */
void *apex_arena_alloc(apex_arena_t *arena, size_t size);

/* Zero-filled variant of apex_arena_alloc(). */
void *apex_arena_calloc(apex_arena_t *arena, size_t count, size_t size);

/* Copy of data / of a C string, owned by the arena; NULL on failure. */
void *apex_arena_memdup(apex_arena_t *arena, const void *data, size_t size);
char *apex_arena_strdup(apex_arena_t *arena, const char *str);

/* Bytes obtained from the system by this arena so far. */
size_t apex_arena_footprint(const apex_arena_t *arena);

#endif
