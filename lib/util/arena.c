/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Arena allocator: memory is taken from the system in chunks and handed
 * out by bumping a pointer.  Large requests get a chunk of their own.
 *
 * Chunks are 256 KiB while the arena is small, then 2 MiB aligned to
 * 2 MiB once it holds 16 MiB (so that the part of its last chunk an
 * arena never uses, resident as a huge page, is a small share of it).
 * A large zone's arenas take gigabytes, written once while it loads: a
 * chunk the size and alignment of a huge page can be one (apexd asks
 * jemalloc for transparent huge pages, src/apexd/process/memory.c), one page
 * fault instead of 512, and on a virtual machine each fault costs
 * microseconds.  A finished arena's last chunk gives its unused end back
 * (apex_arena_adopt(), apex_arena_trim()).
 *
 * Below 256 KiB an arena grows by half of what it holds at a time: a
 * server may carry thousands of zones of a hundred records, and each
 * zone's last chunk, half empty on average were chunks to double, would
 * be a third of its memory.  Those small arenas take their chunks from
 * the page pool (util/page_pool.h), packed into huge pages the arenas of
 * all zones share: a query spread over thousands of zones then misses
 * the TLB far less than with each zone's chunks on 4 KiB pages of their
 * own.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* HAVE_JEMALLOC */
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/page_pool.h"

#ifdef HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

/* Pages of a chain's arenas given back are poisoned under AddressSanitizer
 * (zone/chain_sweep.h): unpoisoned before the chunk goes back. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define APEX_ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define APEX_ARENA_ASAN 1
#endif
#ifdef APEX_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define ARENA_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ARENA_CHUNK (256 * 1024)
#define ARENA_CHUNK_FIRST (4 * 1024) /* the first chunk; growing up to ARENA_CHUNK */
#define ARENA_PAGE 4096
#define ARENA_ALIGN 16
#define ARENA_CHUNK_HUGE (2 * 1024 * 1024)
#define ARENA_HUGE_AFTER (16 * 1024 * 1024) /* the footprint from which chunks are huge */

typedef struct arena_chunk {
	struct arena_chunk *next;
	size_t size; /* usable bytes after the header */
	size_t used;
	size_t pages; /* from the page pool, header included; 0: from malloc() */
	_Alignas(ARENA_ALIGN) unsigned char data[];
} arena_chunk_t;

struct apex_arena {
	arena_chunk_t *current; /* chunk being filled; head of the list */
	size_t footprint;
};

apex_arena_t *apex_arena_create(void)
{
	return calloc(1, sizeof(apex_arena_t));
}

void apex_arena_destroy(apex_arena_t *arena)
{
	if (arena == NULL)
		return;
	arena_chunk_t *chunk = arena->current;
	while (chunk != NULL) {
		arena_chunk_t *next = chunk->next;
		ARENA_UNPOISON(chunk->data, chunk->size);
		if (chunk->pages != 0)
			apex_page_pool_free(chunk, chunk->pages);
		else
			free(chunk);
		chunk = next;
	}
	free(arena);
}

/* A chunk of at least size usable bytes, from the page pool while the
 * arena is small and the chunk fits one of its runs; its data zeroed
 * when asked (zeroed).  A chunk to be filled further (fill) takes the
 * whole of the allocator's size class; one for a single large
 * allocation takes what was asked: the rest of its class would never
 * be written, and counted in the footprint it would be memory the zone
 * seems to hold and does not (a derivation's node pages at 10M
 * records: 320 MiB counted for 277 written). */
static arena_chunk_t *arena_chunk_new(apex_arena_t *arena, size_t size, bool zeroed, bool fill)
{
	size_t bytes = sizeof(arena_chunk_t) + size;
	size_t pages = (bytes + APEX_PAGE_POOL_PAGE - 1) / APEX_PAGE_POOL_PAGE;

	if (arena->footprint < ARENA_CHUNK && pages <= APEX_PAGE_POOL_MAX_PAGES) {
		arena_chunk_t *pooled = apex_page_pool_alloc(pages);

		if (pooled != NULL) {
			pooled->size = pages * APEX_PAGE_POOL_PAGE - sizeof(arena_chunk_t);
			pooled->used = 0;
			pooled->pages = pages;
			arena->footprint += pages * APEX_PAGE_POOL_PAGE;
			if (zeroed)
				memset(pooled->data, 0, pooled->size);
			return pooled;
		}
	}
#ifdef HAVE_JEMALLOC
	/* the whole of the size class the allocator rounds bytes up to */
	if (fill && bytes != ARENA_CHUNK_HUGE) {
		size_t rounded = nallocx(bytes, 0);
		if (rounded > bytes) {
			size += rounded - bytes;
			bytes = rounded;
		}
	}
#endif
	/* calloc(): the allocator zeroes only memory it does not know to be
	 * zero, where a memset() would fault in every page of memory fresh
	 * from the system before it is written (a zone build's node and
	 * RRset arrays: tens of MB at once, beside the records they are
	 * filled from, util/give_back.h) */
	arena_chunk_t *chunk = zeroed                      ? calloc(1, bytes)
			       : bytes == ARENA_CHUNK_HUGE ? aligned_alloc(ARENA_CHUNK_HUGE, bytes)
							   : malloc(bytes);
	if (chunk == NULL)
		return NULL;
	chunk->size = size;
	chunk->used = 0;
	chunk->pages = 0;
	arena->footprint += sizeof(arena_chunk_t) + size;
	return chunk;
}

/* The offset in chunk's data, at or after used, of the first address
 * that is a multiple of align (a power of two). */
static size_t aligned_offset(const arena_chunk_t *chunk, size_t used, size_t align)
{
	uintptr_t base = (uintptr_t)chunk->data;

	return (size_t)(((base + used + align - 1) & ~(uintptr_t)(align - 1)) - base);
}

/* size bytes aligned to align.  With zeroed, they are zero: a chunk of
 * their own is taken zeroed, room in a chunk is cleared. */
static void *arena_take(apex_arena_t *arena, size_t size, size_t align, bool zeroed)
{
	arena_chunk_t *chunk = arena->current;
	/* room to align in a new chunk, whose data is aligned to ARENA_ALIGN */
	size_t pad = align > ARENA_ALIGN ? align - ARENA_ALIGN : 0;
	if (chunk != NULL) {
		/* Packed allocations may have left used unaligned. */
		size_t at = aligned_offset(chunk, chunk->used, align);
		if (at <= chunk->size && chunk->size - at >= size) {
			chunk->used = at + size;
			if (zeroed)
				memset(chunk->data + at, 0, size);
			return chunk->data + at;
		}
	}
	/* A small arena first looks for room in its other chunks: the ends
	 * left when a chunk could not take an allocation, and those of the
	 * arenas it adopted (a build's parts), are a third of a small zone's
	 * memory otherwise.  At most 64 chunks below ARENA_CHUNK. */
	if (arena->footprint < ARENA_CHUNK && chunk != NULL) {
		for (arena_chunk_t *other = chunk->next; other != NULL; other = other->next) {
			size_t at = aligned_offset(other, other->used, align);
			if (at <= other->size && other->size - at >= size) {
				other->used = at + size;
				if (zeroed)
					memset(other->data + at, 0, size);
				return other->data + at;
			}
		}
	}
	if (size > ARENA_CHUNK / 4) {
		/* A chunk of its own, linked behind the current one so the
		 * free space of the current chunk is not wasted. */
		arena_chunk_t *big = arena_chunk_new(arena, size + pad, zeroed, false);
		if (big == NULL)
			return NULL;
		size_t at = aligned_offset(big, 0, align);
		big->used = at + size;
		if (chunk != NULL) {
			big->next = chunk->next;
			chunk->next = big;
		} else {
			big->next = NULL;
			arena->current = big;
		}
		return big->data + at;
	}
	/* The header inside the chunk: a request of exactly a size class
	 * leaves no tail the allocator rounds up to and never uses.  A small
	 * arena (a small zone, a version derived from an IXFR of a few
	 * names) stays small: its chunks grow from ARENA_CHUNK_FIRST by half
	 * its footprint, in whole pages. */
	size_t chunk_size = arena->footprint >= ARENA_HUGE_AFTER ? ARENA_CHUNK_HUGE : ARENA_CHUNK;
	if (arena->footprint < ARENA_CHUNK) {
		size_t small = arena->footprint / 2;
		if (small < ARENA_CHUNK_FIRST)
			small = ARENA_CHUNK_FIRST;
		if (small < size + pad + sizeof(arena_chunk_t))
			small = size + pad + sizeof(arena_chunk_t);
		small = (small + ARENA_PAGE - 1) & ~(size_t)(ARENA_PAGE - 1);
		if (small < chunk_size)
			chunk_size = small;
	}
	arena_chunk_t *fresh =
		arena_chunk_new(arena, chunk_size - sizeof(arena_chunk_t), false, true);
	if (fresh == NULL)
		return NULL;
	fresh->next = chunk;
	arena->current = fresh;
	size_t at = aligned_offset(fresh, 0, align);
	fresh->used = at + size;
	if (zeroed)
		memset(fresh->data + at, 0, size);
	return fresh->data + at;
}

void *apex_arena_alloc(apex_arena_t *arena, size_t size)
{
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (size == 0)
		size = ARENA_ALIGN;
	return arena_take(arena, size, ARENA_ALIGN, false);
}

void *apex_arena_alloc_aligned(apex_arena_t *arena, size_t size, size_t align)
{
	if (align < ARENA_ALIGN)
		align = ARENA_ALIGN;
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (size == 0)
		size = ARENA_ALIGN;
	return arena_take(arena, size, align, false);
}

void *apex_arena_alloc_packed(apex_arena_t *arena, size_t size)
{
	return arena_take(arena, size ? size : 1, 1, false);
}

/* The unused end of a chunk nothing will be taken from any more, given
 * back in place where the allocator can (jemalloc shrinks a large
 * allocation, 16 KiB and more, without moving it, to a size class of
 * whole pages; the C library's is left whole). */
static void arena_chunk_trim(apex_arena_t *arena, arena_chunk_t *chunk)
{
	if (chunk->pages != 0) { /* the pool takes back whole pages at the end */
		size_t keep = (sizeof(arena_chunk_t) + chunk->used + APEX_PAGE_POOL_PAGE - 1) /
			      APEX_PAGE_POOL_PAGE;

		if (keep < chunk->pages) {
			apex_page_pool_free((uint8_t *)chunk + keep * APEX_PAGE_POOL_PAGE,
					    chunk->pages - keep);
			arena->footprint -= (chunk->pages - keep) * APEX_PAGE_POOL_PAGE;
			chunk->pages = keep;
			chunk->size = keep * APEX_PAGE_POOL_PAGE - sizeof(arena_chunk_t);
		}
		return;
	}
#ifdef HAVE_JEMALLOC
	size_t bytes = sizeof(arena_chunk_t) + chunk->size;
	if (bytes < 4 * ARENA_PAGE || chunk->size - chunk->used < ARENA_PAGE)
		return;
	/* a large allocation shrinks in place to a large size class only */
	size_t want = sizeof(arena_chunk_t) + chunk->used;
	size_t kept = xallocx(chunk, want > 4 * ARENA_PAGE ? want : 4 * ARENA_PAGE, 0, 0);
	if (kept < bytes) {
		chunk->size = kept - sizeof(arena_chunk_t);
		arena->footprint -= bytes - kept;
	}
#else
	(void)arena;
	(void)chunk;
#endif
}

void apex_arena_trim(apex_arena_t *arena)
{
	if (arena != NULL && arena->current != NULL)
		arena_chunk_trim(arena, arena->current);
}

void apex_arena_adopt(apex_arena_t *arena, apex_arena_t *from)
{
	if (from == NULL)
		return;
	arena_chunk_t *list = from->current;
	if (list != NULL) {
		arena_chunk_trim(from, list);
		/* Behind the current chunk, which stays the one being filled. */
		arena_chunk_t *last = list;
		while (last->next != NULL)
			last = last->next;
		if (arena->current != NULL) {
			last->next = arena->current->next;
			arena->current->next = list;
		} else {
			arena->current = list;
		}
	}
	arena->footprint += from->footprint;
	free(from);
}

void *apex_arena_calloc(apex_arena_t *arena, size_t count, size_t size)
{
	if (size != 0 && count > SIZE_MAX / size)
		return NULL;
	size_t bytes = (count * size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	return arena_take(arena, bytes > 0 ? bytes : ARENA_ALIGN, ARENA_ALIGN, true);
}

void *apex_arena_memdup(apex_arena_t *arena, const void *data, size_t size)
{
	void *p = apex_arena_alloc(arena, size);
	if (p != NULL && size > 0)
		memcpy(p, data, size);
	return p;
}

char *apex_arena_strdup(apex_arena_t *arena, const char *str)
{
	return apex_arena_memdup(arena, str, strlen(str) + 1);
}

size_t apex_arena_footprint(const apex_arena_t *arena)
{
	return arena->footprint;
}

void apex_arena_each_chunk(const apex_arena_t *arena,
			   void (*fn)(void *ctx, const unsigned char *data, size_t used), void *ctx)
{
	for (const arena_chunk_t *chunk = arena->current; chunk != NULL; chunk = chunk->next)
		if (chunk->used > 0)
			fn(ctx, chunk->data, chunk->used);
}

bool apex_arena_holds(const apex_arena_t *arena, const void *p)
{
	uintptr_t at = (uintptr_t)p;

	for (const arena_chunk_t *chunk = arena->current; chunk != NULL; chunk = chunk->next)
		if (at >= (uintptr_t)chunk->data && at < (uintptr_t)chunk->data + chunk->used)
			return true;
	return false;
}
