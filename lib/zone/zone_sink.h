/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A sink: where the records of a zone being loaded go, one per parser
 * thread.  Each record keeps its owner (an entry per run of records with
 * the same owner, owner_table.c), its RDATA behind its length and its canonical
 * form.  RDATA is packed (no alignment, no per-object header: a
 * record's RDATA is often 4 to 20 bytes) into `keep`, whose memory the
 * version adopts before it is built, so the version uses it where the
 * loader wrote it (build.h).  Owner names and keys go to `names`: the
 * build copies them into the version in canonical order, then frees them
 * (build_sort.c); canonical forms that differ from the RDATA go to
 * `scratch`, freed once the version's RRsets hold the records.
 *
 * apex_sink_add_rr() is the entry for a record already in wire form: the
 * text parsers (zone_file_reader.h) end there, and so will records that
 * arrive by zone transfer.
 */
#ifndef APEX_ZONE_ZONE_SINK_H
#define APEX_ZONE_ZONE_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/name.h"
#include "util/arena.h"
#include "zone/build.h"
#include "zone/rdata_text.h"

typedef struct apex_sink {
	apex_arena_t *keep;
	/* owner names and keys as parsed; canonical forms that differ: the
	 * builder takes both (apex_zone_builder_t's names and canonical) */
	apex_arena_t *names, *scratch;
	apex_build_owner_t *owners;
	size_t owner_count, owner_cap;
	uint64_t *table;      /* cache of owners: hash << 32 | index + 1, 0 = empty */
	uint32_t table_slots; /* its size, grown with the owners (owner_table.c) */
	uint32_t last_owner;  /* records usually share owners */
	bool have_last;
	apex_build_rr_t *rrs;
	size_t rr_count, rr_cap;
	/* Set while a record whose RDATA is borrowed is added
	 * (apex_zone_from_wire_add_borrowed()): stored where it lies, not
	 * copied. */
	bool rdata_borrowed;
	uint32_t default_ttl;              /* $TTL, shared with included files */
	size_t directives;                 /* $ORIGIN and $TTL lines executed */
	uint8_t rdata[APEX_RDATA_MAX];     /* the record being parsed */
	uint8_t canonical[APEX_RDATA_MAX]; /* its canonical form */
} apex_sink_t;

/* A new empty sink, or NULL.  Freed (with what it still owns) by
 * apex_sink_free(). */
apex_sink_t *apex_sink_new(void);
void apex_sink_free(apex_sink_t *s);

/* Copy of data in arena a, packed; NULL on failure. */
void *apex_sink_dup(apex_arena_t *a, const void *data, size_t size);

/* Room for `records` records in all without growing the record array
 * (which copies it): APEX_OK or APEX_ENOMEM. */
int apex_sink_reserve(apex_sink_t *s, size_t records);

/* Room for `owners` owners in all, the same way (owner_table.c). */
int apex_sink_reserve_owners(apex_sink_t *s, size_t owners);

/*
 * Add one record in wire form: its owner (interned), its RDATA (behind
 * its length, as build.h wants it) and its canonical form (RFC 4034
 * section 6.2) copied into the sink's memory.  canonical_in may be rdata
 * itself (no embedded name with capitals): the canonical form then shares
 * the RDATA's memory.  The caller has checked the record (TTL, owner
 * inside the zone, size).  file and line say where it comes from.
 * Returns APEX_OK, APEX_ENOMEM, or
 * APEX_ESPACE when the sink holds all the records it can.
 */
int apex_sink_add_rr(apex_sink_t *s, const uint8_t *owner, uint16_t type, uint32_t ttl,
		     const uint8_t *rdata, size_t rdlength, const uint8_t *canonical_in,
		     uint16_t file, uint32_t line);

/* owner_table.c: the owner entry of the record being added, whose owner
 * is `like`, in *index: the last record's when the key is the same, else
 * a new entry (one per run of records, as build.h asks), its name and key
 * copied into s's memory unless a cache of recent owners has them.
 * APEX_OK or APEX_ENOMEM. */
int apex_owner_intern(apex_sink_t *s, const apex_build_owner_t *like, uint32_t *index);

#endif
