/* SPDX-License-Identifier: BSD-3-Clause */
/* The chain's memory no version reads, given back (chain_sweep.h). */
#include "zone/chain_sweep.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/arena.h"
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

/* One chunk of a chain arena: the whole system pages inside the bytes it
 * handed out, [first, first + pages * system page), and their marks from
 * mark (an index into the sweep's marks). */
typedef struct span {
	uintptr_t start, end; /* the bytes handed out */
	uintptr_t first;      /* the first whole page */
	size_t pages, mark;
} span_t;

typedef struct sweep {
	span_t *spans;
	size_t count, capacity, pages;
	uintptr_t page; /* the system page size */
	uint8_t *live;  /* one per whole page of the spans */
	bool failed;
} sweep_t;

static void add_span(void *ctx, const unsigned char *data, size_t used)
{
	sweep_t *s = ctx;
	uintptr_t start = (uintptr_t)data, end = start + used;
	uintptr_t first = (start + s->page - 1) & ~(s->page - 1), last = end & ~(s->page - 1);

	if (s->count == s->capacity) {
		size_t capacity = s->capacity ? 2 * s->capacity : 256;
		span_t *grown = realloc(s->spans, capacity * sizeof(*grown));
		if (grown == NULL) {
			s->failed = true;
			return;
		}
		s->spans = grown;
		s->capacity = capacity;
	}
	s->spans[s->count++] =
		(span_t){ start, end, first, last > first ? (last - first) / s->page : 0, 0 };
}

static int by_start(const void *a, const void *b)
{
	const span_t *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* The span holding address at, or NULL. */
static const span_t *span_of(const sweep_t *s, uintptr_t at)
{
	size_t lo = 0, hi = s->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->spans[mid].end <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->count && s->spans[lo].start <= at ? &s->spans[lo] : NULL;
}

/* A piece some version reads: the whole pages it touches stay. */
static void mark(void *ctx, const void *start, size_t size)
{
	sweep_t *s = ctx;
	uintptr_t from = (uintptr_t)start, to = from + size;
	const span_t *span = span_of(s, from);

	/* pieces lie in one chunk each; one outside the chain's arenas
	 * (a newer version's own, an index's) holds nothing of the chain */
	if (span == NULL || span->pages == 0)
		return;
	if (to > span->end)
		to = span->end;
	uintptr_t last = span->first + span->pages * s->page;
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
	for (size_t i = 0; i < s->count; i++) {
		const span_t *span = &s->spans[i];
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

/* The spans of the arenas of old and every version before it, sorted,
 * and their marks, zeroed: false when out of memory. */
static bool chain_spans(sweep_t *s, const apex_zone_t *old)
{
	for (const apex_zone_t *v = old; v != NULL; v = v->base)
		apex_arena_each_chunk(v->arena, add_span, s);
	if (s->failed)
		return false;
	qsort(s->spans, s->count, sizeof(*s->spans), by_start);
	for (size_t i = 0; i < s->count; i++) {
		s->spans[i].mark = s->pages;
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
	bool swept = false;

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
		for (uint32_t i = 0; i < root->spare_count; i++)
			mark(&s, root->spare_pages[i], APEX_NODE_PAGE * sizeof(apex_node_t));
		/* and the chain's own versions: each lives in its arena, with
		 * the name of its file (zone.c) */
		for (const apex_zone_t *v = old; v != NULL; v = v->base) {
			mark(&s, v, sizeof(*v));
			if (v->file != NULL)
				mark(&s, v->file, strlen(v->file) + 1);
		}
		bytes = sweep_spans(&s, &unread);
		swept = true;
	}
	if (swept) {
		/* What the chain holds that no version reads, counted whole
		 * now: the node pages given back before are among it, and so
		 * are the whole build's arrays, counted apart (page_discard.h) */
		size_t arrays = atomic_load_explicit(&root->arrays_discarded, memory_order_relaxed);
		atomic_store_explicit(&root->pages_discarded, unread > arrays ? unread - arrays : 0,
				      memory_order_relaxed);
	}
	pthread_mutex_unlock(&root->spare_lock);
	free(s.spans);
	free(s.live);
	return bytes;
}
