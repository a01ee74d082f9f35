/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Arena (region) allocator: many small allocations freed together.
 * A zone version owns one arena; everything the version points to lives
 * in it and is released by apex_arena_destroy().  Not thread-safe: one
 * builder thread fills an arena, then it is only read.
 */
#ifndef APEX_UTIL_ARENA_H
#define APEX_UTIL_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct apex_arena apex_arena_t;

/* A new empty arena, or NULL on allocation failure.  Caller owns it. */
apex_arena_t *apex_arena_create(void);

/* Free the arena and everything allocated from it. */
void apex_arena_destroy(apex_arena_t *arena);

/* size bytes aligned to 16, owned by the arena; NULL on failure. */
void *apex_arena_alloc(apex_arena_t *arena, size_t size);

/* size bytes at an address that is a multiple of align (a power of two:
 * 4096 puts an allocation on whole pages of the system), owned by the
 * arena; NULL on failure. */
void *apex_arena_alloc_aligned(apex_arena_t *arena, size_t size, size_t align);

/* Zero-filled variant of apex_arena_alloc(). */
void *apex_arena_calloc(apex_arena_t *arena, size_t count, size_t size);

/* Copy of data / of a C string, owned by the arena; NULL on failure. */
void *apex_arena_memdup(apex_arena_t *arena, const void *data, size_t size);
char *apex_arena_strdup(apex_arena_t *arena, const char *str);

/* size bytes with no alignment (for byte strings packed back to back:
 * two packed allocations in a row are adjacent unless the chunk being
 * filled had no room for the second), owned by the arena; NULL on
 * failure. */
void *apex_arena_alloc_packed(apex_arena_t *arena, size_t size);

/* Move all the memory of from into arena, then free from: what was
 * allocated from from is now owned by (and freed with) arena.  Lets
 * a thread fill its own arena and hand the result to another one.
 * from's last chunk gives back the end it did not use. */
void apex_arena_adopt(apex_arena_t *arena, apex_arena_t *from);

/* The arena is complete for now (a zone version built): the unused end
 * of the chunk being filled is given back where the allocator can.  More
 * may be allocated after it, from a new chunk. */
void apex_arena_trim(apex_arena_t *arena);

/* Each chunk of the arena: fn(ctx, data, used) for the bytes it handed out
 * there, in one piece (its header not among them). */
void apex_arena_each_chunk(const apex_arena_t *arena,
			   void (*fn)(void *ctx, const unsigned char *data, size_t used),
			   void *ctx);

/* Whether p lies in the memory the arena handed out. */
bool apex_arena_holds(const apex_arena_t *arena, const void *p);

/* Bytes obtained from the system by this arena so far. */
size_t apex_arena_footprint(const apex_arena_t *arena);

#endif
