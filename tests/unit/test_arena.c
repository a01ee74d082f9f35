/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/arena: allocations aligned to 16 (packed ones not), large blocks,
 * copies, adoption of another arena's memory, the footprint, and the
 * huge chunks of a large arena.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* HAVE_JEMALLOC */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "util/arena.h"
#include "util/arena_map.h"
#include "util/give_back.h"

static void alignment_and_zeroing(void **state)
{
	(void)state;
	apex_arena_t *a = apex_arena_create();
	assert_non_null(a);
	for (size_t size = 1; size < 200; size += 7) {
		uint8_t *p = apex_arena_alloc(a, size);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		memset(p, 0xab, size);               /* ASan: the whole size is ours */
		(void)apex_arena_alloc_packed(a, 3); /* unaligns the next free byte */
	}
	uint64_t *z = apex_arena_calloc(a, 100, sizeof(*z));
	assert_non_null(z);
	assert_int_equal((uintptr_t)z % 16, 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(z[i], 0);
	apex_arena_destroy(a);
}

static void packed_allocations_are_adjacent(void **state)
{
	(void)state;
	apex_arena_t *a = apex_arena_create();
	assert_non_null(a);
	uint8_t *p = apex_arena_alloc_packed(a, 5);
	uint8_t *q = apex_arena_alloc_packed(a, 7);
	assert_non_null(p);
	assert_ptr_equal(q, p + 5);
	apex_arena_destroy(a);
}

static void large_allocations(void **state)
{
	(void)state;
	apex_arena_t *a = apex_arena_create();
	assert_non_null(a);
	size_t before = apex_arena_footprint(a);
	size_t big = 64u << 20;
	uint8_t *p = apex_arena_alloc(a, big);
	assert_non_null(p);
	p[0] = 1;
	p[big - 1] = 2;
	assert_true(apex_arena_footprint(a) >= before + big);
	/* small ones still work after a large one */
	assert_non_null(apex_arena_alloc(a, 10));
	/* a chunk of its own counts what was asked, not the allocator's
	 * size class above it (with jemalloc 5 MiB and a bit are 6 MiB),
	 * which nothing would write */
	before = apex_arena_footprint(a);
	big = (5u << 20) + 4096;
	assert_non_null(apex_arena_alloc_aligned(a, big, 4096));
	assert_true(apex_arena_footprint(a) >= before + big);
	assert_true(apex_arena_footprint(a) <= before + big + 2 * 4096);
	apex_arena_destroy(a);
}

/* apex_arena_alloc_aligned(): every address a multiple of the alignment,
 * in the current chunk, in a new one and in a chunk of its own; the
 * bytes of one allocation do not overlap the next's; small allocations
 * between them stay 16-aligned. */
static void aligned_allocations(void **state)
{
	apex_arena_t *arena = apex_arena_create();
	uint8_t *prev = NULL;

	(void)state;
	assert_non_null(arena);
	for (int i = 0; i < 40; i++) {
		uint8_t *small = apex_arena_alloc_packed(arena, 7);
		assert_non_null(small);
		uint16_t *word = apex_arena_alloc(arena, 100);
		assert_non_null(word);
		assert_int_equal((uintptr_t)word % 16, 0);
		uint8_t *page = apex_arena_alloc_aligned(arena, 32768, 4096);
		assert_non_null(page);
		assert_int_equal((uintptr_t)page % 4096, 0);
		memset(page, i, 32768);
		if (prev != NULL)
			assert_int_equal(prev[32767], (uint8_t)(i - 1)); /* not overwritten */
		prev = page;
	}
	uint8_t *big = apex_arena_alloc_aligned(arena, 200000, 4096);
	assert_non_null(big);
	assert_int_equal((uintptr_t)big % 4096, 0);
	memset(big, 0xab, 200000);
	assert_int_equal(prev[0], 39);
	apex_arena_destroy(arena);
}

static void copies(void **state)
{
	(void)state;
	apex_arena_t *a = apex_arena_create();
	assert_non_null(a);
	const uint8_t data[] = { 0, 1, 2, 3, 0xff };
	uint8_t *d = apex_arena_memdup(a, data, sizeof(data));
	assert_non_null(d);
	assert_ptr_not_equal(d, data);
	assert_memory_equal(d, data, sizeof(data));
	char *s = apex_arena_strdup(a, "example.");
	assert_non_null(s);
	assert_string_equal(s, "example.");
	assert_string_equal(apex_arena_strdup(a, ""), "");
	apex_arena_destroy(a);
}

/* What was allocated from `from` stays valid, owned by the adopter. */
static void adoption(void **state)
{
	(void)state;
	apex_arena_t *a = apex_arena_create(), *from = apex_arena_create();
	assert_non_null(a);
	assert_non_null(from);
	char *s = apex_arena_strdup(from, "kept after the adoption");
	uint8_t *big = apex_arena_alloc(from, 1u << 20);
	assert_non_null(s);
	assert_non_null(big);
	memset(big, 7, 1u << 20);
	size_t fa = apex_arena_footprint(a), ff = apex_arena_footprint(from);
	apex_arena_adopt(a, from); /* frees from */
	assert_int_equal(apex_arena_footprint(a), fa + ff);
	assert_string_equal(s, "kept after the adoption");
	assert_int_equal(big[(1u << 20) - 1], 7);
	/* the adopter goes on allocating */
	assert_non_null(apex_arena_alloc(a, 100));
	apex_arena_destroy(a); /* ASan/LSan: everything released once */
}

static void footprint_grows_with_use(void **state)
{
	(void)state;
	apex_arena_t *a = apex_arena_create();
	assert_non_null(a);
	size_t start = apex_arena_footprint(a), total = 0;
	for (int i = 0; i < 10000; i++) {
		assert_non_null(apex_arena_alloc(a, 100));
		total += 100;
	}
	size_t end = apex_arena_footprint(a);
	assert_true(end >= start + total);
	assert_true(end < start + 2 * total + (1u << 20)); /* no waste beyond a chunk */
	apex_arena_destroy(a);
	apex_arena_destroy(NULL); /* allowed */
}

/* A small arena takes an allocation from the room left in its other
 * chunks (one that could not take an earlier allocation, one adopted
 * from another arena) before it takes a new chunk. */
static void small_arena_fills_its_chunks(void **state)
{
	(void)state;
	apex_arena_t *a = apex_arena_create(), *part = apex_arena_create();
	assert_non_null(a);
	assert_non_null(part);
	uint8_t *first = apex_arena_alloc(a, 1000); /* a first chunk of one page */
	assert_non_null(first);
	uint8_t *big = apex_arena_alloc(a, 3500); /* not in the 3 KB left: a new chunk */
	assert_non_null(big);
	size_t footprint = apex_arena_footprint(a);
	assert_int_equal(footprint, 2 * 4096);
	uint8_t *small = apex_arena_alloc(a, 2000); /* the first chunk's room */
	assert_ptr_equal(small, first + 1008);
	assert_int_equal(apex_arena_footprint(a), footprint);
	memset(first, 1, 1000);
	memset(big, 2, 3500);
	memset(small, 3, 2000);
	assert_int_equal(first[999], 1); /* nothing overlaps */
	assert_int_equal(big[0], 2);

	assert_non_null(apex_arena_alloc(part, 100));
	apex_arena_adopt(a, part);
	footprint = apex_arena_footprint(a);
	uint8_t *in_part = apex_arena_alloc(a, 3000); /* only the adopted chunk has room */
	assert_non_null(in_part);
	memset(in_part, 4, 3000);
	assert_int_equal(apex_arena_footprint(a), footprint);
	assert_int_equal(small[1999], 3);
	apex_arena_destroy(a);
}

#define HUGE_CHUNK (2u << 20)

/* Once an arena holds 16 MiB its chunks are 2 MiB, aligned to 2 MiB (a
 * huge page each); a finished arena's last chunk gives back its unused
 * end when adopted (with jemalloc, which shrinks it in place). */
static void huge_chunks_once_large(void **state)
{
	(void)state;
	apex_arena_t *a = apex_arena_create(), *from = apex_arena_create();
	assert_non_null(a);
	assert_non_null(from);
	int huge_chunks = 0;
	uint8_t *last_chunk_start = NULL;
	while (apex_arena_footprint(from) < (20u << 20)) {
		size_t before = apex_arena_footprint(from);
		uint8_t *p = apex_arena_alloc(from, 1000);
		assert_non_null(p);
		memset(p, 1, 1000);
		size_t grew = apex_arena_footprint(from) - before;
		if (grew == 0)
			continue;
		/* a new chunk: small below 16 MiB, huge and aligned above */
		if (before < (16u << 20)) {
			assert_true(grew < HUGE_CHUNK);
		} else {
			assert_int_equal(grew, HUGE_CHUNK);
			assert_true((uintptr_t)p % HUGE_CHUNK < 64); /* after the header */
			huge_chunks++;
			last_chunk_start = p;
		}
	}
	assert_true(huge_chunks >= 2);
	/* 100 kB of a fresh huge chunk used, then the arena is done (jemalloc
	 * shrinks in place only to a large size, 16 KiB or more) */
	while (apex_arena_alloc(from, 1000) < last_chunk_start + 100 * 1000)
		;
	uint8_t *tail = apex_arena_alloc(from, 1000);
	assert_non_null(tail);
	memset(tail, 9, 1000);
	size_t fa = apex_arena_footprint(a), ff = apex_arena_footprint(from);
	apex_arena_adopt(a, from);
#ifdef HAVE_JEMALLOC
	assert_true(apex_arena_footprint(a) <= fa + ff - HUGE_CHUNK / 2);
#else
	assert_true(apex_arena_footprint(a) <= fa + ff);
#endif
	assert_int_equal(tail[999], 9); /* the used part stays where it was */
	apex_arena_destroy(a);
}

/* Whether [p, p + size) is all zero. */
static bool all_zero(const uint8_t *p, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/* apex_arena_calloc() is zero however its memory is taken: a chunk of its
 * own (calloc(): memory the allocator had handed out and got back, here
 * written all over first), the rest of the current chunk, a new chunk,
 * and in a large arena a huge chunk's rest. */
static void calloc_zeroed_every_way(void **state)
{
	(void)state;
	for (int round = 0; round < 3; round++) {
		apex_arena_t *dirty = apex_arena_create();
		assert_non_null(dirty);
		for (size_t size = (size_t)1 << 17; size <= (size_t)8 << 20; size *= 2)
			memset(apex_arena_alloc(dirty, size), 0xa5, size);
		apex_arena_destroy(dirty);

		apex_arena_t *a = apex_arena_create();
		assert_non_null(a);
		for (size_t size = (size_t)1 << 17; size <= (size_t)8 << 20; size *= 2) {
			uint8_t *big = apex_arena_calloc(a, size, 1);
			assert_non_null(big);
			assert_true(all_zero(big, size));
			memset(big, 0x5a, size);
		}
		for (int i = 0; i < 2000; i++) { /* small ones, through 16 MiB */
			uint8_t *p = apex_arena_alloc(a, 4000);
			assert_non_null(p);
			memset(p, 0x5a, 4000);
			uint8_t *z = apex_arena_calloc(a, 1000 + (size_t)i % 7, 3);
			assert_non_null(z);
			assert_true(all_zero(z, (1000 + (size_t)i % 7) * 3));
		}
		apex_arena_destroy(a);
	}
}

/* Memory read through is given back in whole 2 MiB units, from the first
 * whole unit of the region on, never past the unit the end falls in:
 * those read as zeros, every other byte keeps its value. */
static void give_back_whole_units(void **state)
{
	(void)state;
	size_t unit = APEX_GIVE_BACK_UNIT, size = 8 * unit;
	uint8_t *map =
		mmap(NULL, size + unit, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	uint8_t *base = (uint8_t *)(((uintptr_t)map + unit - 1) & ~(uintptr_t)(unit - 1));
	memset(base, 0x77, size);

	apex_give_back_t g;
	uint8_t *start = base + 1000; /* the region's first unit is partly another's */
	apex_give_back_init(&g, start);
	assert_int_equal(apex_give_back_below(&g, base + unit + 5), 0); /* within unit 1 */
	assert_int_equal(apex_give_back_below(&g, base + 3 * unit + 5), 2 * unit);
	assert_int_equal(apex_give_back_below(&g, base + 2 * unit), 0); /* never back */
	assert_int_equal(apex_give_back_below(&g, base + 5 * unit), 2 * unit);
	for (size_t i = 0; i < size; i += 4096) {
		bool given = i >= unit && i < 5 * unit;
		assert_int_equal(base[i], given ? 0 : 0x77);
		assert_int_equal(base[i + 4095], given ? 0 : 0x77);
	}
	munmap(map, size + unit);
}

/* The map of two arenas' chunks finds the chunk, and the tag of the arena,
 * of every allocation, and none for memory of neither. */
static void map_of_two_arenas(void **state)
{
	apex_arena_t *a = apex_arena_create(), *b = apex_arena_create();
	apex_arena_map_t map = { 0 };
	void *in_a[40], *in_b[40];
	int outside = 0;

	(void)state;
	for (int i = 0; i < 40; i++) {
		/* small ones and chunks of their own, interleaved */
		in_a[i] = apex_arena_alloc(a, i % 7 == 0 ? 300000 : 5000);
		in_b[i] = apex_arena_alloc(b, i % 5 == 0 ? 200000 : 3000);
		assert_non_null(in_a[i]);
		assert_non_null(in_b[i]);
	}
	assert_true(apex_arena_holds(a, in_a[7]));
	assert_false(apex_arena_holds(a, in_b[7]));
	apex_arena_map_add(&map, a, 1);
	apex_arena_map_add(&map, b, 2);
	assert_true(apex_arena_map_sort(&map));
	for (size_t i = 1; i < map.count; i++)
		assert_true(map.spans[i - 1].end <= map.spans[i].start);
	for (int i = 0; i < 40; i++) {
		size_t at = apex_arena_map_find(&map, in_a[i]);
		assert_true(at < map.count);
		assert_int_equal(map.spans[at].tag, 1);
		at = apex_arena_map_find(&map, (uint8_t *)in_b[i] + 100);
		assert_true(at < map.count);
		assert_int_equal(map.spans[at].tag, 2);
	}
	assert_int_equal(apex_arena_map_find(&map, &outside), map.count);
	apex_arena_map_free(&map);
	assert_int_equal(map.count, 0);
	apex_arena_destroy(a);
	apex_arena_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(alignment_and_zeroing),
		cmocka_unit_test(packed_allocations_are_adjacent),
		cmocka_unit_test(large_allocations),
		cmocka_unit_test(aligned_allocations),
		cmocka_unit_test(copies),
		cmocka_unit_test(adoption),
		cmocka_unit_test(footprint_grows_with_use),
		cmocka_unit_test(small_arena_fills_its_chunks),
		cmocka_unit_test(huge_chunks_once_large),
		cmocka_unit_test(calloc_zeroed_every_way),
		cmocka_unit_test(give_back_whole_units),
		cmocka_unit_test(map_of_two_arenas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
