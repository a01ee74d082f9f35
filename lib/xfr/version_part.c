/* SPDX-License-Identifier: BSD-3-Clause */
/* One part of a served version built again as it is (version_part.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/version_part.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/arena_map.h"
#include "util/error.h"
#include "xfr/version_records.h"
#include "zone/derive.h"
#include "zone/zone_from_wire.h"

/* The records of a part as the builder takes them, and how many; the
 * arena of the chain's whole build. */
typedef struct part_records {
	apex_zone_from_wire_t *w;
	size_t records;
	apex_arena_map_t root;
	size_t last;               /* the span of root the last lookup found, or root.count */
	apex_give_way_fn give_way; /* or NULL */
	void *ctx;
} part_records_t;

/* Whether at lies in the whole build's arena; the span found kept, as
 * an RRset's records lie together. */
static bool in_root(part_records_t *p, const void *at)
{
	const apex_arena_span_t *s = p->last < p->root.count ? &p->root.spans[p->last] : NULL;

	if (s == NULL || (uintptr_t)at < s->start || (uintptr_t)at >= s->end)
		p->last = apex_arena_map_find(&p->root, at);
	return p->last != p->root.count;
}

/*
 * A record of the version served, its RDATA borrowed where it lies in the
 * chain's whole build: a part moves the owners' nodes, RRsets and names,
 * which lie in canonical order as the parts go, but not the RDATA a whole
 * build leaves in the file's order, of which a part's copy could be given
 * back only once the last part is done (the 10% edit of a 10M-record zone
 * climbed from 1.22 to 1.45 times steady through the parts).  The RDATA
 * of derived versions, which lies in their owners' order, is copied: the
 * chain's memory the parts leave that no version reads (the residue,
 * apex_version_rdata_borrowed()) is no more than the whole build's RDATA.
 */
static int add_record(void *ctx, const apex_rr_t *rr)
{
	part_records_t *p = ctx;

	if (++p->records % APEX_VERSION_PART_GIVE_WAY_EVERY == 0 && p->give_way != NULL &&
	    p->give_way(p->ctx))
		return APEX_ECANCELED;
	if (in_root(p, rr->rdata))
		return apex_zone_from_wire_add_borrowed(p->w, rr->owner, rr->type, rr->ttl,
							rr->rdata, rr->rdlength);
	return apex_zone_from_wire_add(p->w, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
}

/* node's records to the builder; its id into ids when it has any (an
 * empty non-terminal has none: not an owner). */
static int add_owner(const apex_zone_t *zone, const apex_node_t *node, part_records_t *p,
		     uint32_t *ids, size_t *count)
{
	size_t before = p->records;
	int rc = apex_node_records(zone, node, add_record, p);

	if (rc == APEX_OK && (p->records > before || node == zone->apex))
		ids[(*count)++] = node->id;
	return rc;
}

static int by_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* [part * n / parts, (part + 1) * n / parts) */
static void share_of(size_t n, unsigned part, unsigned parts, size_t *first, size_t *end)
{
	*first = (size_t)((unsigned __int128)n * part / parts);
	*end = (size_t)((unsigned __int128)n * (part + 1) / parts);
}

/* The version derived from zone with the owners of nodes (count ids, in
 * any order) built again, and the apex's, as they are; asking give_way
 * (or NULL) as apex_version_rebuild_part_or_give_way() says. */
static int rebuild(apex_zone_t *zone, const uint32_t *nodes, size_t count, const char *source,
		   apex_give_way_fn give_way, void *ctx, apex_zone_t **out, char *err,
		   size_t err_size)
{
	const apex_rrset_t *soa = zone->soa;
	part_records_t p = { .give_way = give_way, .ctx = ctx };
	size_t owners = 0;
	uint32_t *ids = malloc((count + 1) * sizeof(*ids));

	apex_arena_map_add(&p.root, apex_zone_chain_root(zone)->arena, 0);
	int rc = ids != NULL && apex_arena_map_sort(&p.root) ? APEX_OK : APEX_ENOMEM;
	if (rc == APEX_OK && give_way != NULL && give_way(ctx))
		rc = APEX_ECANCELED;
	if (rc == APEX_OK)
		rc = apex_zone_from_wire_begin(&p.w, zone->origin, source, err, err_size);
	if (rc != APEX_OK) {
		apex_arena_map_free(&p.root);
		free(ids);
		if (rc == APEX_ECANCELED && err_size > 0)
			snprintf(err, err_size, "gave way before its first record");
		return rc;
	}
	rc = apex_zone_from_wire_add(p.w, zone->origin, APEX_TYPE_SOA, soa->ttl, soa->rdata + 2,
				     apex_read_u16(soa->rdata));
	/* the apex in every one, as every IXFR has it among the changed
	 * owners for its SOA (rank 0: first) */
	if (rc == APEX_OK)
		rc = add_owner(zone, zone->apex, &p, ids, &owners);
	for (size_t i = 0; i < count && rc == APEX_OK; i++)
		if (nodes[i] != zone->apex->id)
			rc = add_owner(zone, apex_zone_node_of(zone, nodes[i]), &p, ids, &owners);
	apex_arena_map_free(&p.root);
	if (rc != APEX_OK) {
		apex_zone_from_wire_abort(p.w);
		free(ids);
		if (rc == APEX_ECANCELED && err_size > 0)
			snprintf(err, err_size, "gave way with %zu records read", p.records);
		return rc;
	}
	qsort(ids, owners, sizeof(*ids), by_id);
	/* the nodes too: the parts before are swept of all the range held */
	apex_derive_owners_t changed = {
		.changed = ids, .changed_count = owners, .count = owners, .copy_nodes = true
	};
	apex_zone_from_wire_give_way(p.w, give_way, ctx);
	rc = apex_zone_from_wire_derive(p.w, zone, &changed, out);
	free(ids);
	if (rc == APEX_ECANCELED && err_size > 0)
		snprintf(err, err_size, "gave way in its derivation, with %zu records read",
			 p.records);
	if (rc == APEX_OK) {
		/* the same version to its readers (as version_compact.c) */
		(*out)->loaded_at = zone->loaded_at;
		(*out)->load_seconds = zone->load_seconds;
		(*out)->file_digest = zone->file_digest;
		(*out)->sweeps_base = true;
	}
	return rc;
}

/* The ids of names of ranks [first, end) and of the owners of NSEC3
 * records only [nsec3_first, nsec3_end), merged in canonical order, into
 * ids; their count. */
static size_t range_ids(const apex_zone_t *zone, size_t first, size_t end, size_t nsec3_first,
			size_t nsec3_end, uint32_t *ids)
{
	size_t count = 0;

	while (first < end || nsec3_first < nsec3_end) {
		const apex_node_t *name = first < end ? apex_zone_node_at(zone, first) : NULL;
		const apex_node_t *nsec3 = nsec3_first < nsec3_end
						   ? apex_zone_nsec3_owner_at(zone, nsec3_first)
						   : NULL;

		if (nsec3 == NULL ||
		    (name != NULL && apex_key_compare(apex_node_key(name), name->key_size,
						      apex_node_key(nsec3), nsec3->key_size) < 0)) {
			ids[count++] = name->id;
			first++;
		} else {
			ids[count++] = nsec3->id;
			nsec3_first++;
		}
	}
	return count;
}

int apex_version_rebuild_part(apex_zone_t *zone, unsigned part, unsigned parts, const char *source,
			      apex_zone_t **out, char *err, size_t err_size)
{
	return apex_version_rebuild_part_or_give_way(zone, part, parts, source, NULL, NULL, out,
						     err, err_size);
}

int apex_version_rebuild_part_or_give_way(apex_zone_t *zone, unsigned part, unsigned parts,
					  const char *source, apex_give_way_fn give_way, void *ctx,
					  apex_zone_t **out, char *err, size_t err_size)
{
	size_t first, end, nsec3_first, nsec3_end;

	*out = NULL;
	if (parts == 0 || part >= parts)
		return APEX_EINVAL;
	share_of(zone->node_count, part, parts, &first, &end);
	share_of(zone->nsec3_owner_count, part, parts, &nsec3_first, &nsec3_end);
	uint32_t *ids = malloc((end - first + nsec3_end - nsec3_first + 1) * sizeof(*ids));
	if (ids == NULL)
		return APEX_ENOMEM;
	size_t count = range_ids(zone, first, end, nsec3_first, nsec3_end, ids);
	int rc = rebuild(zone, ids, count, source, give_way, ctx, out, err, err_size);
	free(ids);
	return rc;
}

/* Whether node, the i-th of n (names or NSEC3 owners), has RRsets that
 * a part other than its own copied. */
static bool relinked(const apex_zone_t *zone, const apex_arena_map_t *map, const apex_node_t *node,
		     size_t i, size_t n, unsigned parts)
{
	size_t first, end;

	if (node->rrset_count == 0)
		return false;
	size_t at = apex_arena_map_find(map, apex_node_rrsets(zone, node));
	if (at == map->count) /* not in a part's arena */
		return false;
	share_of(n, map->spans[at].tag, parts, &first, &end);
	return i < first || i >= end;
}

int apex_version_rebuild_relinked(apex_zone_t *zone, unsigned parts, const char *source,
				  apex_zone_t **out, char *err, size_t err_size)
{
	apex_arena_map_t map = { 0 };
	const apex_zone_t *v = zone;
	size_t count = 0;
	int rc;

	*out = NULL;
	/* each part's arena, tagged with its part */
	for (unsigned j = parts; j-- > 0; v = v->base) {
		if (v == NULL || !v->sweeps_base || v->base == NULL) {
			apex_arena_map_free(&map);
			return APEX_EINVAL;
		}
		apex_arena_map_add(&map, v->arena, j);
	}
	uint32_t *ids = malloc((zone->node_count + zone->nsec3_owner_count + 1) * sizeof(*ids));
	if (!apex_arena_map_sort(&map) || ids == NULL) {
		apex_arena_map_free(&map);
		free(ids);
		return APEX_ENOMEM;
	}
	for (size_t i = 0; i < zone->node_count; i++) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		if (relinked(zone, &map, node, i, zone->node_count, parts))
			ids[count++] = node->id;
	}
	for (size_t i = 0; i < zone->nsec3_owner_count; i++) {
		const apex_node_t *node = apex_zone_nsec3_owner_at(zone, i);
		if (relinked(zone, &map, node, i, zone->nsec3_owner_count, parts))
			ids[count++] = node->id;
	}
	apex_arena_map_free(&map);
	rc = rebuild(zone, ids, count, source, NULL, NULL, out, err, err_size);
	free(ids);
	if (rc == APEX_OK)
		(*out)->derived_depth = 0; /* the chain is compact again */
	return rc;
}

/* The bytes of RDATA of node's RRsets, their RRSIGs and its stray RRSIGs
 * that lie in root. */
static size_t node_rdata_in(const apex_zone_t *zone, const apex_node_t *node,
			    const apex_arena_map_t *root)
{
	size_t bytes = 0, strays;
	const apex_rrset_t *rrsets = apex_node_rrsets(zone, node);
	const apex_stray_rrsig_t *stray = apex_zone_stray_rrsigs(zone, node, &strays);

	for (uint16_t i = 0; i < node->rrset_count; i++)
		for (const apex_rrset_t *r = &rrsets[i]; r != NULL;
		     r = r == &rrsets[i] ? rrsets[i].rrsig : NULL)
			if (apex_arena_map_find(root, r->rdata) != root->count)
				bytes += r->rdata_size;
	for (size_t i = 0; i < strays; i++)
		if (apex_arena_map_find(root, stray[i].sigs->rdata) != root->count)
			bytes += stray[i].sigs->rdata_size;
	return bytes;
}

size_t apex_version_rdata_borrowed(const apex_zone_t *zone)
{
	apex_arena_map_t root = { 0 };
	size_t bytes = 0;

	apex_arena_map_add(&root, apex_zone_chain_root(zone)->arena, 0);
	if (apex_arena_map_sort(&root)) {
		for (size_t i = 0; i < zone->node_count; i++)
			bytes += node_rdata_in(zone, apex_zone_node_at(zone, i), &root);
		for (size_t i = 0; i < zone->nsec3_owner_count; i++)
			bytes += node_rdata_in(zone, apex_zone_nsec3_owner_at(zone, i), &root);
	}
	apex_arena_map_free(&root);
	return bytes;
}
