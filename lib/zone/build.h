/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building a zone version from the records a loader has read.
 *
 * The loader (lib/zone/load.c) parses the master file into an
 * apex_zone_builder_t: unique owner names and one apex_build_rr_t per
 * record, in file order.  apex_zone_build() then checks the zone, sorts
 * everything into DNSSEC canonical order and writes the compact
 * immutable structures of lib/zone/zone.h into the version's arena,
 * computing everything a query needs.
 *
 * Owner names, keys and RDATA are not copied again: the loader writes
 * them into memory the version's arena owns, and the version points to
 * them.  Each record's RDATA is preceded by its length (2 bytes, network
 * order), as in an RRset's rdata (zone.h), so an RRset whose records the
 * loader wrote back to back, already in canonical order, is used where
 * it is; only the others are copied.  The peak memory of a load is thus
 * about the version plus the per-record arrays below.
 */
#ifndef APEX_ZONE_BUILD_H
#define APEX_ZONE_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/arena.h"
#include "util/error.h"
#include "util/give_way.h"
#include "zone/build_profile.h"
#include "zone/zone.h"

/* One owner name, an entry per run of records: the records of entry i
 * lie together in apex_zone_builder_t.rrs, after those of entry i - 1
 * (the sort moves each run as a whole).  The loader may list a lookup
 * key more than once (an owner met again, or by two parser threads);
 * apex_zone_build() keeps the entry with the lowest index, which must be
 * the spelling seen first in the file. */
typedef struct apex_build_owner {
	/* Wire format, case as first written, and its apex_name_key() right
	 * after it (apex_build_owner_copy()): the loader's scratch memory;
	 * apex_zone_build() copies both into the version, in canonical
	 * order. */
	const uint8_t *name;
	const uint8_t *key;
	uint16_t key_size;
	uint8_t name_size;
	uint8_t labels; /* apex_name_labels(name) */
} apex_build_owner_t;

/* Point to's name and key at a copy of from's in arena, the key right
 * after the name, as a node keeps them (apex_node_key()).  to may be
 * from.  APEX_OK or APEX_ENOMEM. */
static inline int apex_build_owner_copy(apex_arena_t *arena, apex_build_owner_t *to,
					const apex_build_owner_t *from)
{
	uint8_t *copy = apex_arena_alloc_packed(arena, (size_t)from->name_size + from->key_size);
	if (copy == NULL)
		return APEX_ENOMEM;
	memcpy(copy, from->name, from->name_size);
	memcpy(copy + from->name_size, from->key, from->key_size);
	to->name = copy;
	to->key = copy + from->name_size;
	return APEX_OK;
}

/* One record as read from the file. */
typedef struct apex_build_rr {
	uint32_t owner; /* index into owners (apex_zone_build() renumbers) */
	uint32_t seq;   /* position in file order */
	uint32_t ttl;
	uint32_t line; /* line the record starts on */
	uint16_t type;
	uint16_t rdlength;
	uint16_t file; /* index into files */
	/* Uncompressed wire RDATA, case as written, in zone->arena and
	 * preceded by rdlength (2 bytes, network order); nothing else may
	 * refer to that memory: the build may put the records of an RRset in
	 * order there. */
	const uint8_t *rdata;
	/* RDATA in canonical form (RFC 4034 6.2: embedded names of the
	 * listed types lowercased); == rdata when they are the same.  Only
	 * read during apex_zone_build(). */
	const uint8_t *canonical;
} apex_build_rr_t;

typedef struct apex_zone_builder {
	/* The version being built: arena, refcount, origin, origin_key,
	 * origin_key_size, origin_labels and file are already set. */
	apex_zone_t *zone;
	apex_arena_t *tmp; /* scratch memory, freed by the caller */

	apex_build_owner_t *owners; /* malloc'ed by the loader */
	size_t owner_count;
	apex_build_rr_t *rrs; /* malloc'ed by the loader, in file order; see apex_zone_build() */
	size_t rr_count;
	/* The loader's memory (zone_sink.h), or NULL: names holds the owners'
	 * names and keys as parsed, which owners points to until the sort
	 * copies them into the version (apex_build_sort() then destroys it:
	 * 20 MB for the 400,000 owners of a 1M-record TLD, not held through the
	 * build's peak); canonical holds the records' canonical RDATA that
	 * differs from their RDATA, destroyed with rrs.  Both set to NULL
	 * once destroyed; the caller destroys what is left. */
	apex_arena_t *names, *canonical;
	/* Set by a derivation (zone/derive.h) before the sort: the sort
	 * copies the owners' names into sorted_names (made then) instead of
	 * the version, which keeps copies of its new names only (the nodes
	 * of the names it had keep theirs): the derivation destroys it. */
	bool names_apart;
	apex_arena_t *sorted_names;

	/* Some records' RDATA is borrowed (zone_from_wire.h): it lies in a
	 * served version's memory, where the build never puts records in
	 * order (rdata_region() in build.c); an RRset whose records are not
	 * back to back in order there is copied. */
	bool rdata_borrowed;

	/* Threads the build may use for the work it does per name (0 or 1:
	 * only the calling thread). */
	unsigned threads;

	/* The name hash table with room to spare (APEX_NODE_TABLE_SPARE()),
	 * for a version that IXFRs will be derived from: a secondary's,
	 * built from a transfer or compacted (zone_from_wire.h). */
	bool table_spare;

	const char **files; /* file names for messages (files[0] is the zone file) */
	size_t file_count;

	char *err; /* "FILE:LINE: reason" on failure */
	size_t err_size;

	/* Asked after each step of apex_zone_build() and of
	 * apex_zone_derive() (NULL: never): a build off the path of any
	 * transfer (a version built compact, whole or in parts) gives way to
	 * one that comes meanwhile. */
	apex_give_way_fn give_way;
	void *give_way_ctx;

	apex_build_profile_t profile; /* filled by apex_zone_build() */
} apex_zone_builder_t;

/*
 * Check the records and build the version in builder->zone.  Sorts
 * builder->owners (one entry per key left, owner_count updated) and
 * builder->rrs (both may be replaced by new arrays),
 * and frees builder->rrs (set to NULL; rr_count stays the count of
 * records kept) and builder->canonical as soon as the version's RRsets
 * hold the records, builder->names once the sort has copied them.  Returns APEX_OK,
 * APEX_ELOAD (reason in builder->err: no SOA at the apex, more than one
 * SOA, CNAME beside other data, ...) or APEX_ENOMEM.  Warnings (RRsets
 * with differing TTLs, missing glue) are logged; APEX_ECANCELED when
 * builder->give_way said so after a step.  On failure the zone's arena
 * holds partial data; the caller destroys it.
 */
int apex_zone_build(apex_zone_builder_t *builder);

#endif
