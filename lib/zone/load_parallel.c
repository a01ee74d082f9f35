/* SPDX-License-Identifier: BSD-3-Clause */
/* A large zone file parsed on several threads (see load_parallel.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CPU_COUNT */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/error.h"
#include "util/parallel.h"
#include "zone/load_parallel.h"
#include "zone/load_tuning.h"

/* One chunk of the zone file parsed on its own thread. */
typedef struct chunk {
	apex_loader_t *ld;
	const char *start, *end;
	uint8_t origin[APEX_NAME_MAX]; /* $ORIGIN in force at start */
	uint32_t default_ttl;          /* $TTL in force at start */
	size_t directives_expected;    /* '$' lines found in [start, end) */
	apex_sink_t *sink;
	int lines; /* lines in [start, end) */
	int rc;
	char err[512];
	pthread_t thread;
	bool started;
} chunk_t;

static void *chunk_main(void *arg)
{
	chunk_t *c = arg;
	apex_reader_t r = { .ld = c->ld,
			    .sink = c->sink,
			    .path = c->ld->b->files[0],
			    .file_index = 0,
			    .p = c->start,
			    .end = c->end,
			    .dropped = c->start,
			    .err = c->err,
			    .err_size = sizeof(c->err) };
	memcpy(r.origin, c->origin, apex_name_size(c->origin));
	c->sink->default_ttl = c->default_ttl;
	c->rc = apex_read_records(&r, -1);
	c->lines = r.line;
	apex_reader_free(&r);
	return NULL;
}

unsigned apex_load_cpu_count(void)
{
	unsigned n = atomic_load(&apex_load_threads);
	if (n > 0)
		return n < THREADS_MAX ? n : THREADS_MAX;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = (unsigned)CPU_COUNT(&set);
	if (n == 0)
		n = 1;
	return n < THREADS_MAX ? n : THREADS_MAX;
}

static bool starts_directive(const char *p, const char *end, const char *word)
{
	size_t len = strlen(word);
	return (size_t)(end - p) > len && strncasecmp(p, word, len) == 0 &&
	       (p[len] == ' ' || p[len] == '\t');
}

/* A line start after pos at which a record with an owner name begins
 * (the first character is not blank, '$', ';', a quote or a
 * parenthesis), or NULL. */
static const char *record_start_after(const char *pos, const char *end)
{
	for (int tries = 0; tries < 100000 && pos < end; tries++) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		if (nl == NULL || nl + 1 >= end)
			return NULL;
		char c = nl[1];
		if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '$' && c != ';' &&
		    c != '"' && c != '(' && c != ')')
			return nl + 1;
		pos = nl + 1;
	}
	return NULL;
}

/* The first "\n$" in [p, end), or NULL.  '$' is rare in zone files, so
 * looking for it with memchr is much faster than for the pair.  The file
 * is read through once here, before the chunks are: the pages read are
 * released as it goes (DROP_BEHIND at a time), or the whole file would be
 * resident at once (a tenth of a GiB for a million records). */
static const char *line_with_dollar(const char *p, const char *end)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	for (const char *from = p + 1; from < end;) {
		const char *stop = (size_t)(end - from) > DROP_BEHIND ? from + DROP_BEHIND : end;
		const char *d = memchr(from, '$', (size_t)(stop - from));
		if (d == NULL) {
			uintptr_t a = ((uintptr_t)from + page - 1) & ~(page - 1);
			uintptr_t b = (uintptr_t)stop & ~(page - 1);
			if (b > a)
				madvise((void *)a, b - a, MADV_DONTNEED);
			from = stop;
			continue;
		}
		if (d[-1] == '\n')
			return d - 1;
		from = d + 1;
	}
	return NULL;
}

/* Where to cut the file: *count chunks, bounds[0 .. count] (count >= 2),
 * at most one per CPU and none smaller than apex_load_chunk_min.
 * Returns false when one thread will do. */
static bool plan_chunks(const apex_mapping_t *m, const char **bounds, unsigned *count)
{
	size_t min = atomic_load(&apex_load_chunk_min);
	unsigned n = apex_load_cpu_count();
	if (min == 0)
		min = 1;
	if (m->size / min < n)
		n = (unsigned)(m->size / min);
	if (n < 2)
		return false;
	unsigned c = 0;
	bounds[c++] = m->data;
	for (unsigned k = 1; k < n; k++) {
		const char *want = m->data + m->size / n * k;
		if (want <= bounds[c - 1])
			continue;
		const char *at = record_start_after(want - 1, m->data + m->size);
		if (at == NULL)
			break;
		if (at > bounds[c - 1])
			bounds[c++] = at;
	}
	if (c < 2)
		return false;
	bounds[c] = m->data + m->size;
	*count = c;
	return true;
}

/* The '$' lines of the file, applied in order to a running state: the
 * $ORIGIN and $TTL each chunk starts with, and how many directives each
 * chunk holds. */
static apex_load_parallel_t scan_directives(apex_loader_t *ld, const apex_mapping_t *m,
					    const uint8_t *origin, chunk_t *chunks,
					    const char *const *bounds, unsigned count)
{
	apex_reader_t state = { .ld = ld,
				.path = ld->b->files[0],
				.err = chunks[0].err,
				.err_size = sizeof(chunks[0].err) };
	apex_sink_t *scratch = apex_sink_new();
	if (scratch == NULL)
		return APEX_LOAD_PARALLEL_NOMEM;
	scratch->default_ttl = LDNS_DEFAULT_TTL_VALUE;
	state.sink = scratch;
	memcpy(state.origin, origin, apex_name_size(origin));
	apex_load_parallel_t result = APEX_LOAD_PARALLEL_DONE;
	unsigned k = 0;
	const char *p = m->data, *end = m->data + m->size;
	for (;;) {
		const char *dollar = NULL;
		if (p == m->data && p < end && *p == '$')
			dollar = p;
		else if (p < end)
			dollar = line_with_dollar(p, end);
		if (dollar != NULL && *dollar == '\n')
			dollar++;
		const char *next = dollar ? dollar : end;
		while (k < count && bounds[k] <= next) {
			/* chunk k starts here: the state before it */
			memcpy(chunks[k].origin, state.origin, apex_name_size(state.origin));
			chunks[k].default_ttl = scratch->default_ttl;
			k++;
		}
		if (dollar == NULL)
			break;
		/* The included file's records would sit between chunks. */
		if (starts_directive(dollar, end, "$INCLUDE")) {
			result = APEX_LOAD_PARALLEL_SEQUENTIAL;
			break;
		}
		chunks[k - 1].directives_expected++;
		/* Apply the directive to the running state, as its line says. */
		state.p = dollar;
		state.end = end;
		state.dropped = dollar;
		int line;
		if (apex_read_record(&state, &line) != 1 ||
		    apex_directive(&state, line, -1) != APEX_OK) {
			result =
				APEX_LOAD_PARALLEL_SEQUENTIAL; /* not a directive after all, or a bad one */
			break;
		}
		p = dollar + 1;
	}
	apex_reader_free(&state);
	apex_sink_free(scratch);
	return result;
}

/* Parse every chunk into its own sink, on its own thread when one can be
 * started (chunk 0 on this one). */
static apex_load_parallel_t run_chunks(apex_loader_t *ld, chunk_t *chunks,
				       const char *const *bounds, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		chunks[i].ld = ld;
		chunks[i].start = bounds[i];
		chunks[i].end = bounds[i + 1];
		chunks[i].sink = apex_sink_new();
		size_t bytes = (size_t)(bounds[i + 1] - bounds[i]);
		/* Records: room for one every 32 bytes, so that the array
		 * rarely grows (each growth copies it), chunk 0's for the whole
		 * file, so that the merge does not copy it either.  Pages
		 * never written are never resident (but a huge page is, once
		 * one byte of it is written: a filtered parse, which keeps few
		 * records, reserves nothing).  */
		size_t whole = (size_t)(bounds[count] - bounds[0]);
		size_t reserve = ld->filter != NULL ? 0 : (i == 0 ? whole : bytes) / 32;
		if (chunks[i].sink == NULL || apex_sink_reserve(chunks[i].sink, reserve) != APEX_OK)
			return APEX_LOAD_PARALLEL_NOMEM;
	}
	for (unsigned i = 1; i < count; i++)
		chunks[i].started =
			pthread_create(&chunks[i].thread, NULL, chunk_main, &chunks[i]) == 0;
	chunk_main(&chunks[0]);
	for (unsigned i = 1; i < count; i++) {
		if (chunks[i].started)
			pthread_join(chunks[i].thread, NULL);
		else
			chunk_main(&chunks[i]); /* no thread: parse it here */
	}
	for (unsigned i = 0; i < count; i++) {
		if (chunks[i].rc == APEX_ENOMEM)
			return APEX_LOAD_PARALLEL_NOMEM;
		/* Any error, or a '$' line that was not a directive: the
		 * whole file again on one thread (exact first error). */
		if (chunks[i].rc != APEX_OK ||
		    chunks[i].sink->directives != chunks[i].directives_expected)
			return APEX_LOAD_PARALLEL_SEQUENTIAL;
	}
	return APEX_LOAD_PARALLEL_DONE;
}

/* Room in chunk 0's sink for the records and owners of all chunks. */
static apex_load_parallel_t reserve_merge(chunk_t *chunks, unsigned count)
{
	apex_sink_t *s0 = chunks[0].sink;
	size_t total = 0, total_owners = 0;
	for (unsigned i = 0; i < count; i++) {
		total += chunks[i].sink->rr_count;
		total_owners += chunks[i].sink->owner_count;
	}
	if (total > UINT32_MAX || total_owners > UINT32_MAX - 1)
		return APEX_LOAD_PARALLEL_SEQUENTIAL;
	if (s0->rr_cap < total) {
		apex_build_rr_t *rrs = realloc(s0->rrs, total * sizeof(*rrs));
		if (rrs == NULL)
			return APEX_LOAD_PARALLEL_NOMEM;
		s0->rrs = rrs;
		s0->rr_cap = total;
	}
	apex_build_owner_t *owners =
		realloc(s0->owners, (total_owners ? total_owners : 1) * sizeof(*owners));
	if (owners == NULL)
		return APEX_LOAD_PARALLEL_NOMEM;
	s0->owners = owners;
	s0->owner_cap = total_owners;
	return APEX_LOAD_PARALLEL_DONE;
}

/* One chunk's records appended to chunk 0's, renumbered: in parts on
 * the loader's threads (a large zone's are gigabytes, written for the
 * first time here). */
typedef struct append_job {
	apex_build_rr_t *to;
	const apex_build_rr_t *from;
	uint32_t owner_offset, seq_offset, line_offset;
} append_job_t;

static int append_records(void *ctx, size_t begin, size_t end)
{
	const append_job_t *a = ctx;
	for (size_t j = begin; j < end; j++) {
		apex_build_rr_t *out = &a->to[j];
		*out = a->from[j];
		out->owner += a->owner_offset;
		out->seq = a->seq_offset + (uint32_t)j;
		out->line += a->line_offset;
	}
	return APEX_OK;
}

/* Merge the chunks in file order into chunk 0's sink and hand every
 * sink's memory to the loader. */
static apex_load_parallel_t merge_chunks(apex_loader_t *ld, chunk_t *chunks, unsigned count)
{
	apex_load_parallel_t result = reserve_merge(chunks, count);
	if (result != APEX_LOAD_PARALLEL_DONE)
		return result;
	/* Owners are appended, not looked up: an owner that two chunks
	 * share is listed twice, and apex_zone_build() merges the two
	 * (keeping the first, as build.h asks). */
	apex_sink_t *s0 = chunks[0].sink;
	int line_offset = chunks[0].lines;
	for (unsigned i = 1; i < count; i++) {
		apex_sink_t *s = chunks[i].sink;
		append_job_t job = { .to = &s0->rrs[s0->rr_count],
				     .from = s->rrs,
				     .owner_offset = (uint32_t)s0->owner_count,
				     .seq_offset = (uint32_t)s0->rr_count,
				     .line_offset = (uint32_t)line_offset };
		if (s->owner_count > 0) /* none: s->owners may be NULL (a filtered parse) */
			memcpy(&s0->owners[s0->owner_count], s->owners,
			       s->owner_count * sizeof(*s->owners));
		s0->owner_count += s->owner_count;
		apex_parallel_for(s->rr_count, count, atomic_load(&apex_build_part_min),
				  append_records, &job);
		s0->rr_count += s->rr_count;
		line_offset += chunks[i].lines;
		/* Its records are copied; its memory (names, RDATA) stays. */
		free(s->rrs);
		s->rrs = NULL;
		free(s->owners);
		s->owners = NULL;
		free(s->table);
		s->table = NULL;
	}
	for (unsigned i = 0; i < count; i++) {
		ld->sinks[ld->sink_count++] = chunks[i].sink;
		chunks[i].sink = NULL;
	}
	return APEX_LOAD_PARALLEL_DONE;
}

apex_load_parallel_t apex_load_parallel(apex_loader_t *ld, const apex_mapping_t *m,
					const uint8_t *origin)
{
	const char *bounds[THREADS_MAX + 1];
	unsigned count = 0;

	if (!plan_chunks(m, bounds, &count))
		return APEX_LOAD_PARALLEL_SEQUENTIAL;
	chunk_t *chunks = calloc(count, sizeof(*chunks));
	if (chunks == NULL)
		return APEX_LOAD_PARALLEL_NOMEM;
	apex_load_parallel_t result = scan_directives(ld, m, origin, chunks, bounds, count);
	if (result == APEX_LOAD_PARALLEL_DONE)
		result = run_chunks(ld, chunks, bounds, count);
	if (result == APEX_LOAD_PARALLEL_DONE)
		result = merge_chunks(ld, chunks, count);
	for (unsigned i = 0; i < count; i++)
		if (chunks[i].sink != NULL)
			apex_sink_free(chunks[i].sink);
	free(chunks);
	return result;
}
