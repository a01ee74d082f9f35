/* SPDX-License-Identifier: BSD-3-Clause */
/* The chain's memory no version reads, given back (chain_sweep.h). */
#include "zone/chain_sweep.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/arena_map.h"
#include "zone/page_discard.h"
#include "zone/version_walk.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define APEX_SWEEP_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define APEX_SWEEP_ASAN 1
#endif
#ifdef APEX_SWEEP_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* The whole system pages inside one chunk of a chain arena (a span of
 * the sweep's map, same index): [first, first + pages * system page),
 * and their marks from mark (an index into the sweep's marks). */
typedef struct span_pages {
	uintptr_t first;
	size_t pages, mark;
} span_pages_t;

typedef struct sweep {
	apex_arena_map_t map; /* the chain's chunks */
	span_pages_t *spans;  /* map.count of them */
	size_t pages;
	uintptr_t page; /* the system page size */
	uint8_t *live;  /* one per whole page of the spans */
} sweep_t;

/* A piece some version reads: the whole pages it touches stay. */
static void mark(void *ctx, const void *start, size_t size)
{
	sweep_t *s = ctx;
	size_t at = apex_arena_map_find(&s->map, start);

	/* pieces lie in one chunk each; one outside the chain's arenas
	 * (a newer version's own, an index's) holds nothing of the chain */
	if (at == s->map.count || s->spans[at].pages == 0)
		return;
	const span_pages_t *span = &s->spans[at];
	uintptr_t from = (uintptr_t)start, to = from + size;
	uintptr_t last = span->first + span->pages * s->page;
	if (to > s->map.spans[at].end)
		to = s->map.spans[at].end;
	uintptr_t a = from < span->first ? span->first : from & ~(s->page - 1);
	for (; a < to && a < last; a += s->page)
		s->live[span->mark + (a - span->first) / s->page] = 1;
}

/* Give back pages [from, from + count * page): the bytes of those that
 * were resident. */
static size_t give_back(const sweep_t *s, uintptr_t from, size_t count)
{
	unsigned char resident[256];
	size_t bytes = 0;

	for (size_t done = 0; done < count;) {
		size_t n = count - done < sizeof(resident) ? count - done : sizeof(resident);
		void *at = (void *)(from + done * s->page);

		if (mincore(at, n * s->page, resident) == 0)
			for (size_t i = 0; i < n; i++)
				bytes += (resident[i] & 1) ? s->page : 0;
		if (madvise(at, n * s->page, MADV_DONTNEED) != 0)
			return bytes;
#ifdef APEX_SWEEP_ASAN
		ASAN_POISON_MEMORY_REGION(at, n * s->page);
#endif
		done += n;
	}
	return bytes;
}

/* Give back every page no version reads: the bytes of those that were
 * resident, and in *unread the bytes of all of them (given back before,
 * or never written). */
static size_t sweep_spans(const sweep_t *s, size_t *unread)
{
	size_t bytes = 0;

	*unread = 0;
	for (size_t i = 0; i < s->map.count; i++) {
		const span_pages_t *span = &s->spans[i];
		for (size_t p = 0; p < span->pages;) {
			if (s->live[span->mark + p]) {
				p++;
				continue;
			}
			size_t run = p;
			while (run < span->pages && !s->live[span->mark + run])
				run++;
			bytes += give_back(s, span->first + p * s->page, run - p);
			*unread += (run - p) * s->page;
			p = run;
		}
	}
	return bytes;
}

/* The chunks of the arenas of old and every version before it, the whole
 * pages inside each, and their marks, zeroed: false when out of memory. */
static bool chain_spans(sweep_t *s, const apex_zone_t *old)
{
	for (const apex_zone_t *v = old; v != NULL; v = v->base)
		apex_arena_map_add(&s->map, v->arena, 0);
	if (!apex_arena_map_sort(&s->map) ||
	    (s->spans = malloc((s->map.count + 1) * sizeof(*s->spans))) == NULL)
		return false;
	for (size_t i = 0; i < s->map.count; i++) {
		uintptr_t first = (s->map.spans[i].start + s->page - 1) & ~(s->page - 1);
		uintptr_t last = s->map.spans[i].end & ~(s->page - 1);

		s->spans[i] = (span_pages_t){ first, last > first ? (last - first) / s->page : 0,
					      s->pages };
		s->pages += s->spans[i].pages;
	}
	s->live = calloc(s->pages + 1, 1);
	return s->live != NULL;
}

size_t apex_zone_sweep_chain(apex_zone_t *old, const apex_zone_t *successor,
			     const apex_zone_t *newest)
{
	long system_page = sysconf(_SC_PAGESIZE);
	sweep_t s = { .page = system_page > 0 ? (uintptr_t)system_page : 4096 };
	size_t bytes = 0, unread = 0;

	if (successor == NULL || successor->base != old || system_page <= 0)
		return 0;
	apex_zone_t *root = apex_zone_chain_root(old);
	pthread_mutex_lock(&root->spare_lock);
	if (root->deriving == 0 && apex_zone_chain_is_private(old) && chain_spans(&s, old)) {
		/* what the versions from newest down to successor read, and the
		 * pages the chain keeps for its next copies */
		for (const apex_zone_t *v = newest; v != NULL; v = v->base) {
			apex_zone_walk_memory(v, mark, &s);
			if (v == successor)
				break;
		}
		for (uint32_t i = 0; i < root->spare_nodes.count; i++)
			mark(&s, root->spare_nodes.pages[i], APEX_NODE_PAGE * sizeof(apex_node_t));
		for (uint32_t i = 0; i < root->spare_small.count; i++)
			mark(&s, root->spare_small.pages[i], APEX_RRSETS_PAGE_SIZE);
		/* and the chain's own versions: each lives in its arena, with
		 * the name of its file (zone.c) */
		for (const apex_zone_t *v = old; v != NULL; v = v->base) {
			mark(&s, v, sizeof(*v));
			if (v->file != NULL)
				mark(&s, v->file, strlen(v->file) + 1);
		}
		bytes = sweep_spans(&s, &unread);
		/* What the chain holds that no version reads, counted whole
		 * now: the node pages given back before are among it, and so
		 * are the whole build's arrays, counted apart (page_discard.h) */
		size_t arrays = atomic_load_explicit(&root->arrays_discarded, memory_order_relaxed);
		atomic_store_explicit(&root->pages_discarded, unread > arrays ? unread - arrays : 0,
				      memory_order_relaxed);
	}
	pthread_mutex_unlock(&root->spare_lock);
	apex_arena_map_free(&s.map);
	free(s.spans);
	free(s.live);
	return bytes;
}
