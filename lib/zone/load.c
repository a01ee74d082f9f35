/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading an RFC 1035 master file into a zone builder.
 *
 * The file is mapped and split into records here ((...) continuation
 * lines, comments, quoted strings, $ORIGIN, $TTL and $INCLUDE), so that
 * every record keeps the line it starts on.  Records of the types that
 * make up large zones are turned into wire format by rdata_text.c
 * straight into the loader's memory; every other record (other types,
 * RFC 3597 "\#" forms, anything the fast path does not take) is parsed
 * by ldns as before.  apex_zone_build() does the rest.
 *
 * A large file is parsed in chunks on one thread per CPU
 * (load_parallel.h).  The parts of the loader are one concept per file
 * (zone_file_reader.h lists them); this one reads a file's records in
 * order and turns a zone file into a version.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dns/name.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/build.h"
#include "zone/derive.h"
#include "zone/file_map.h"
#include "zone/load.h"
#include "zone/load_parallel.h"
#include "zone/load_tuning.h"
#include "zone/version_build.h"
#include "zone/zone_file_reader.h"

_Atomic bool apex_load_fast_rdata = true;
_Atomic size_t apex_load_chunk_min = 8u << 20;
_Atomic unsigned apex_load_threads = 0;

int apex_read_records(apex_reader_t *r, int depth)
{
	int rc, line;
	bool fast = atomic_load_explicit(&apex_load_fast_rdata, memory_order_relaxed);
	while ((rc = apex_read_record(r, &line)) == 1) {
		if (r->rec[0] == '$') {
			rc = apex_directive(r, line, depth);
		} else {
			rc = fast ? apex_record_parse_fast(r, line) : APEX_EINVAL;
			if (rc == APEX_EINVAL)
				rc = apex_record_parse_ldns(r, line);
		}
		if (rc != APEX_OK)
			break;
	}
	return rc == 0 ? APEX_OK : rc;
}

/* Read the records of the mapped file file_index into sink ($INCLUDE
 * depth as given). */
static int read_mapping(apex_loader_t *ld, apex_sink_t *sink, uint16_t file_index,
			const apex_mapping_t *m, const uint8_t *origin, int depth)
{
	apex_reader_t r = { .ld = ld,
			    .sink = sink,
			    .path = ld->b->files[file_index],
			    .file_index = file_index,
			    .p = m->data,
			    .end = m->data + m->size,
			    .dropped = m->data,
			    .err = ld->b->err,
			    .err_size = ld->b->err_size };
	int rc;

	memcpy(r.origin, origin, apex_name_size(origin));
	rc = apex_read_records(&r, depth);
	apex_reader_free(&r);
	return rc;
}

int apex_load_file(apex_loader_t *ld, apex_sink_t *sink, const char *path, const uint8_t *origin,
		   int depth)
{
	uint16_t file_index;
	apex_mapping_t m;
	int rc = apex_loader_open_file(ld, path, &file_index, &m);
	if (rc != APEX_OK)
		return rc;
	rc = read_mapping(ld, sink, file_index, &m, origin, depth);
	apex_unmap_file(&m);
	return rc;
}

/* Read the zone file: in parallel if it is large enough and that is
 * safe, else on this thread.  The records end up in ld->sinks[0]. */
static int load_zone_file(apex_loader_t *ld, const char *path, const uint8_t *origin)
{
	uint16_t file_index;
	apex_mapping_t m;
	int rc = apex_loader_open_file(ld, path, &file_index, &m);
	if (rc != APEX_OK)
		return rc;
	apex_load_parallel_t parallel = apex_load_parallel(ld, &m, origin);
	rc = parallel == APEX_LOAD_PARALLEL_NOMEM ? APEX_ENOMEM : APEX_OK;
	if (parallel == APEX_LOAD_PARALLEL_SEQUENTIAL) {
		if (ld->filter != NULL)
			ld->filter->restart(ld->filter->ctx); /* the chunks' view is void */
		apex_sink_t *s = apex_sink_new();
		if (s == NULL) {
			apex_unmap_file(&m);
			return APEX_ENOMEM;
		}
		s->default_ttl = LDNS_DEFAULT_TTL_VALUE;
		ld->sinks[ld->sink_count++] = s;
		rc = read_mapping(ld, s, file_index, &m, origin, 0);
	}
	apex_unmap_file(&m);
	return rc;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

int apex_version_begin(apex_version_build_t *v, const uint8_t *origin, const char *source,
		       char *err, size_t err_size)
{
	memset(v, 0, sizeof(*v));
	clock_gettime(CLOCK_MONOTONIC, &v->start);
	if (err_size > 0)
		err[0] = '\0';
	v->b.err = err;
	v->b.err_size = err_size;
	v->arena = apex_arena_create();
	v->b.tmp = apex_arena_create();
	apex_zone_t *zone = v->arena ? apex_arena_calloc(v->arena, 1, sizeof(*zone)) : NULL;
	v->b.zone = zone;
	if (zone == NULL || v->b.tmp == NULL) {
		apex_version_abort(v);
		return APEX_ENOMEM;
	}
	atomic_init(&zone->refcount, 1);
	atomic_init(&zone->expired, false);
	atomic_init(&zone->expire_at, 0);
	atomic_init(&zone->base_refs, 0);
	pthread_mutex_init(&zone->spare_lock, NULL);
	atomic_init(&zone->index_mem, NULL);
	atomic_init(&zone->nsec3_mem, NULL);
	zone->arena = v->arena;
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(origin, key, NULL);
	zone->origin = apex_arena_memdup(v->arena, origin, apex_name_size(origin));
	zone->origin_key = apex_arena_memdup(v->arena, key, key_size);
	zone->origin_key_size = (uint16_t)key_size;
	zone->origin_labels = (uint8_t)apex_name_labels(origin);
	zone->file = apex_arena_strdup(v->arena, source);
	if (zone->origin == NULL || zone->origin_key == NULL || zone->file == NULL) {
		apex_version_abort(v);
		return APEX_ENOMEM;
	}
	return APEX_OK;
}

/* apex_load_set_progress()'s; written before any load starts. */
static apex_load_progress_t load_progress;

void apex_load_set_progress(apex_load_progress_t fn)
{
	load_progress = fn;
}

void apex_version_abort(apex_version_build_t *v)
{
	apex_arena_destroy(v->arena);
	apex_arena_destroy(v->b.tmp);
	apex_arena_destroy(v->b.names);
	apex_arena_destroy(v->b.canonical);
	free(v->b.owners);
	free(v->b.rrs);
	free(v->b.files);
	memset(v, 0, sizeof(*v));
}

/* *from's memory moved into *to (made *from if *to is NULL); *from NULL. */
static void take_arena(apex_arena_t **to, apex_arena_t **from)
{
	if (*to == NULL)
		*to = *from;
	else
		apex_arena_adopt(*to, *from);
	*from = NULL;
}

/* The builder takes the records of sinks[0] and the version the memory
 * of every sink; returns the bytes the records took. */
static size_t take_records(apex_version_build_t *v, apex_sink_t *const *sinks, size_t sink_count)
{
	apex_zone_builder_t *b = &v->b;

	/* The hash table of owners is not needed any more. */
	apex_sink_t *s0 = sinks[0];
	free(s0->table);
	s0->table = NULL;
	b->owners = s0->owners;
	b->owner_count = s0->owner_count;
	b->rrs = s0->rrs;
	b->rr_count = s0->rr_count;
	s0->owners = NULL;
	s0->rrs = NULL;
	size_t memory = b->rr_count * sizeof(*b->rrs) + b->owner_count * sizeof(*b->owners);
	/* RDATA becomes the version's; the names and keys as parsed and the
	 * canonical RDATA the builder's, which frees them once read (build.h). */
	for (size_t i = 0; i < sink_count; i++) {
		memory += apex_arena_footprint(sinks[i]->keep) +
			  apex_arena_footprint(sinks[i]->names) +
			  apex_arena_footprint(sinks[i]->scratch);
		apex_arena_adopt(v->arena, sinks[i]->keep);
		sinks[i]->keep = NULL;
		take_arena(&b->names, &sinks[i]->names);
		take_arena(&b->canonical, &sinks[i]->scratch);
	}
	return memory;
}

int apex_version_finish(apex_version_build_t *v, apex_sink_t *const *sinks, size_t sink_count,
			apex_zone_t **out)
{
	apex_zone_builder_t *b = &v->b;
	apex_zone_t *zone = b->zone;

	*out = NULL;
	double parsed = seconds_since(&v->start);
	size_t memory = take_records(v, sinks, sink_count);
	b->threads = apex_load_cpu_count();
	if (load_progress != NULL)
		load_progress(zone->file, APEX_LOAD_PARSED, b->rr_count, parsed, sink_count);
	int rc = apex_zone_build(b);
	char steps[256];
	apex_build_profile_text(&b->profile, steps, sizeof(steps));
	apex_debug("%s: %zu records parsed in %.3f s (%zu thread(s), %zu MB), built in %.3f s (%s)",
		   zone->file, b->rr_count, parsed, sink_count, memory >> 20,
		   seconds_since(&v->start) - parsed, steps);
	if (load_progress != NULL && rc == APEX_OK)
		load_progress(zone->file, APEX_LOAD_BUILT, b->rr_count,
			      seconds_since(&v->start) - parsed, b->threads);
	if (rc == APEX_OK) {
		clock_gettime(CLOCK_REALTIME, &zone->loaded_at);
		zone->load_seconds = seconds_since(&v->start);
		zone->memory = apex_arena_footprint(v->arena);
		*out = zone;
		v->arena = NULL; /* the version's now */
	}
	if (rc == APEX_ENOMEM && b->err_size > 0 && b->err[0] == '\0')
		snprintf(b->err, b->err_size, "%s: out of memory", zone->file);
	apex_version_abort(v);
	return rc;
}

int apex_version_derive(apex_version_build_t *v, apex_sink_t *sink, apex_zone_t *old,
			const apex_derive_owners_t *owners, apex_zone_t **out)
{
	apex_zone_t *zone = v->b.zone;

	*out = NULL;
	take_records(v, &sink, 1);
	int rc = apex_zone_derive(&v->b, old, owners);
	if (rc == APEX_OK) {
		clock_gettime(CLOCK_REALTIME, &zone->loaded_at);
		zone->load_seconds = seconds_since(&v->start);
		*out = zone;
		v->arena = NULL; /* the version's now */
	}
	apex_version_abort(v);
	return rc;
}

int apex_zone_load(const char *file, const uint8_t *origin, apex_zone_t **out, char *err,
		   size_t err_size)
{
	apex_version_build_t v;
	apex_sink_t *sinks[THREADS_MAX + 1];

	*out = NULL;
	int rc = apex_version_begin(&v, origin, file, err, err_size);
	if (rc != APEX_OK) {
		if (err_size > 0)
			snprintf(err, err_size, "%s: out of memory", file);
		return rc;
	}
	apex_loader_t ld = { .b = &v.b, .sinks = sinks, .digest = &v.b.zone->file_digest };
	rc = load_zone_file(&ld, file, origin);
	if (v.b.file_count != 1) /* an $INCLUDE's file may change alone */
		v.b.zone->file_digest.valid = false;
	if (rc == APEX_OK) {
		rc = apex_version_finish(&v, sinks, ld.sink_count, out);
	} else {
		if (rc == APEX_ENOMEM && err_size > 0 && err[0] == '\0')
			snprintf(err, err_size, "%s: out of memory", file);
		apex_version_abort(&v);
	}
	for (size_t i = 0; i < ld.sink_count; i++)
		apex_sink_free(sinks[i]);
	return rc;
}

/* The records kept by a filtered parse (in sinks[0], in file order) to
 * filter->kept. */
static int give_kept(const apex_load_filter_t *filter, const apex_sink_t *s)
{
	int rc = APEX_OK;

	for (size_t i = 0; i < s->rr_count && rc == APEX_OK; i++) {
		const apex_build_rr_t *rr = &s->rrs[i];

		rc = filter->kept(filter->ctx, s->owners[rr->owner].name, rr->type, rr->ttl,
				  rr->rdata, rr->rdlength);
	}
	return rc;
}

int apex_zone_load_filtered(const char *file, const uint8_t *origin,
			    const apex_load_filter_t *filter, apex_file_digest_t *digest, char *err,
			    size_t err_size)
{
	apex_version_build_t v;
	apex_sink_t *sinks[THREADS_MAX + 1];

	int rc = apex_version_begin(&v, origin, file, err, err_size);
	if (rc != APEX_OK) {
		if (err_size > 0)
			snprintf(err, err_size, "%s: out of memory", file);
		return rc;
	}
	apex_loader_t ld = { .b = &v.b, .sinks = sinks, .filter = filter, .digest = digest };
	if (digest != NULL)
		digest->valid = false;
	rc = load_zone_file(&ld, file, origin);
	if (digest != NULL && (rc != APEX_OK || v.b.file_count != 1))
		digest->valid = false; /* an $INCLUDE's file may change alone */
	if (rc == APEX_OK && ld.sink_count > 0)
		rc = give_kept(filter, sinks[0]);
	if (rc == APEX_ENOMEM && err_size > 0 && err[0] == '\0')
		snprintf(err, err_size, "%s: out of memory", file);
	apex_version_abort(&v);
	for (size_t i = 0; i < ld.sink_count; i++)
		apex_sink_free(sinks[i]);
	return rc;
}
