/* SPDX-License-Identifier: BSD-3-Clause */
/* A sink of records being loaded (see zone_sink.h). */
#include "zone/zone_sink.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

apex_sink_t *apex_sink_new(void)
{
	/* the two record buffers at its end (128 KiB) are written before they
	 * are read: zeroing them cost more than the load of a small zone */
	apex_sink_t *s = malloc(sizeof(*s));
	if (s == NULL)
		return NULL;
	memset(s, 0, offsetof(apex_sink_t, rdata));
	s->keep = apex_arena_create();
	s->names = apex_arena_create();
	s->scratch = apex_arena_create();
	if (s->keep == NULL || s->names == NULL || s->scratch == NULL) {
		apex_arena_destroy(s->keep);
		apex_arena_destroy(s->names);
		apex_arena_destroy(s->scratch);
		free(s);
		return NULL;
	}
	return s;
}

void *apex_sink_dup(apex_arena_t *a, const void *data, size_t size)
{
	void *p = apex_arena_alloc_packed(a, size);
	if (p != NULL)
		memcpy(p, data, size);
	return p;
}

void apex_sink_free(apex_sink_t *s)
{
	apex_arena_destroy(s->keep);  /* NULL once the version adopted it */
	apex_arena_destroy(s->names); /* and these once the builder took them */
	apex_arena_destroy(s->scratch);
	free(s->owners);
	free(s->table);
	free(s->rrs);
	free(s);
}

int apex_sink_reserve(apex_sink_t *s, size_t records)
{
	if (records <= s->rr_cap)
		return APEX_OK;
	apex_build_rr_t *p = realloc(s->rrs, records * sizeof(*p));
	if (p == NULL)
		return APEX_ENOMEM;
	s->rrs = p;
	s->rr_cap = records;
	return APEX_OK;
}

int apex_sink_add_rr(apex_sink_t *s, const uint8_t *owner, uint16_t type, uint32_t ttl,
		     const uint8_t *rdata, size_t rdlength, const uint8_t *canonical_in,
		     uint16_t file, uint32_t line)
{
	apex_build_owner_t like;
	uint8_t key[APEX_KEY_MAX];
	like.name = owner;
	like.name_size = (uint8_t)apex_name_size(owner);
	uint32_t owner_index;
	if (s->have_last && s->owners[s->last_owner].name_size == like.name_size &&
	    memcmp(s->owners[s->last_owner].name, owner, like.name_size) == 0) {
		/* The owner of the last record, spelled the same (most records). */
		owner_index = s->last_owner;
	} else {
		like.key = key;
		like.key_size = (uint16_t)apex_name_key(owner, key, NULL);
		like.labels = (uint8_t)apex_name_labels(owner);
		int rc = apex_owner_intern(s, &like, &owner_index);
		if (rc != APEX_OK)
			return rc;
	}
	uint8_t *stored;
	if (s->rdata_borrowed) {
		/* behind its length already, in memory that outlives the
		 * version (zone_from_wire.h); the build never writes to it */
		stored = (uint8_t *)rdata;
	} else {
		/* The records of an RRset written together end up back to back. */
		stored = apex_arena_alloc_packed(s->keep, 2 + rdlength);
		if (stored == NULL)
			return APEX_ENOMEM;
		stored[0] = (uint8_t)(rdlength >> 8);
		stored[1] = (uint8_t)rdlength;
		stored += 2;
		if (rdlength > 0)
			memcpy(stored, rdata, rdlength);
	}
	const uint8_t *canonical = stored;
	if (canonical_in != NULL && canonical_in != rdata) {
		canonical = apex_sink_dup(s->scratch, canonical_in, rdlength);
		if (canonical == NULL)
			return APEX_ENOMEM;
	}
	if (s->rr_count == s->rr_cap &&
	    apex_sink_reserve(s, s->rr_cap ? s->rr_cap * 2 : 4096) != APEX_OK)
		return APEX_ENOMEM;
	if (s->rr_count >= UINT32_MAX)
		return APEX_ESPACE;
	apex_build_rr_t *out = &s->rrs[s->rr_count];
	out->owner = owner_index;
	out->seq = (uint32_t)s->rr_count;
	out->ttl = ttl;
	out->line = line;
	out->type = type;
	out->rdlength = (uint16_t)rdlength;
	out->file = file;
	out->rdata = stored;
	out->canonical = canonical;
	s->rr_count++;
	return APEX_OK;
}
