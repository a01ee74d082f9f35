/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The difference between two versions of a zone (see diff.h).
 *
 * Both versions keep their owners in canonical order (the name index,
 * and the NSEC3 owners apart, by hash), and each owner's RRsets sorted by
 * type, so the two are walked side by side. The walk runs twice: once
 * for the removals (records of the old version missing from the new)
 * and once for the additions (the other way round), because IXFR sends
 * every removal before any addition.
 */

#include "xfr/diff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"

/* One record's RDATA inside an RRset. */
typedef struct rdata_ref {
	const uint8_t *data;
	uint16_t size;
} rdata_ref_t;

typedef struct diff {
	apex_changes_t *out; /* NULL: the set's size is counted (bytes) */
	size_t bytes;
	size_t max_bytes; /* a set larger is not made (APEX_ESPACE) */
	/* Given out's bytes whenever it holds APEX_XFR_DIFF_PIECE, then
	 * out emptied (apex_xfr_diff_stream()); NULL: out holds the set. */
	apex_xfr_diff_sink_t sink;
	void *sink_ctx;
	apex_change_kind_t kind;    /* REMOVE or ADD: what this pass emits */
	rdata_ref_t *mine, *theirs; /* scratch, grown as needed; owned */
	size_t scratch;
} diff_t;

static int by_bytes(const void *a, const void *b)
{
	const rdata_ref_t *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return memcmp(x->data, y->data, x->size);
}

static int grow_scratch(diff_t *d, size_t count)
{
	if (count <= d->scratch)
		return APEX_OK;
	rdata_ref_t *mine = realloc(d->mine, count * sizeof(*mine));
	if (mine == NULL)
		return APEX_ENOMEM;
	d->mine = mine;
	rdata_ref_t *theirs = realloc(d->theirs, count * sizeof(*theirs));
	if (theirs == NULL)
		return APEX_ENOMEM;
	d->theirs = theirs;
	d->scratch = count;
	return APEX_OK;
}

/* The records of an RRset, sorted by their bytes. */
static void sorted_records(const apex_rrset_t *rs, rdata_ref_t *out)
{
	const uint8_t *p = rs->rdata;

	for (uint16_t i = 0; i < rs->count; i++) {
		out[i].size = apex_read_u16(p);
		out[i].data = p + 2;
		p += 2u + out[i].size;
	}
	qsort(out, rs->count, sizeof(*out), by_bytes);
}

static int emit(diff_t *d, const uint8_t *owner, uint16_t type, uint32_t ttl, const rdata_ref_t *r)
{
	apex_rr_t rr = {
		.owner = owner,
		.type = type,
		.rclass = APEX_CLASS_IN,
		.ttl = ttl,
		.rdlength = r->size,
		.rdata = r->data,
	};
	if (d->out == NULL) { /* as apex_changes_append() stores it */
		d->bytes += apex_name_size(owner) + 10u + r->size;
		return d->bytes > d->max_bytes ? APEX_ESPACE : APEX_OK;
	}
	int rc = apex_changes_append(d->out, d->kind, &rr);
	if (rc == APEX_OK && d->sink != NULL && d->out->size >= APEX_XFR_DIFF_PIECE) {
		rc = d->sink(d->sink_ctx, d->out->data, d->out->size);
		d->out->size = 0;
	}
	return rc == APEX_OK && d->out->size > d->max_bytes ? APEX_ESPACE : rc;
}

/* Emit the records of mine (an RRset of this pass's side, never NULL) that
 * theirs (the same type at the same owner on the other side, or NULL)
 * lacks. A changed TTL makes every record differ. */
static int rrset_difference(diff_t *d, const uint8_t *owner, uint16_t type,
			    const apex_rrset_t *mine, const apex_rrset_t *theirs)
{
	size_t max = mine->count;
	if (theirs != NULL && theirs->count > max)
		max = theirs->count;
	int rc = grow_scratch(d, max);
	if (rc < 0)
		return rc;
	if (theirs != NULL && theirs->ttl != mine->ttl)
		theirs = NULL;
	sorted_records(mine, d->mine);
	size_t n = theirs != NULL ? theirs->count : 0, j = 0;
	if (theirs != NULL)
		sorted_records(theirs, d->theirs);
	for (size_t i = 0; i < mine->count && rc == APEX_OK; i++) {
		int c = 1;
		while (j < n && (c = by_bytes(&d->theirs[j], &d->mine[i])) < 0)
			j++;
		if (j == n || c != 0)
			rc = emit(d, owner, type, mine->ttl, &d->mine[i]);
	}
	return rc;
}

/* The type an RRSIG set covers. */
static uint16_t covered(const apex_rrset_t *sigs)
{
	return apex_read_u16(sigs->rdata + 2);
}

/* Emit the stray RRSIG sets (zone.h) of node mine (of zone mz) that node
 * theirs (of zone tz, or NULL) lacks, matched by the type they cover. */
static int stray_difference(diff_t *d, const apex_zone_t *mz, const apex_node_t *mine,
			    const apex_zone_t *tz, const apex_node_t *theirs)
{
	size_t mine_count, theirs_count = 0;
	const apex_stray_rrsig_t *m = apex_zone_stray_rrsigs(mz, mine, &mine_count);
	const apex_stray_rrsig_t *t =
		theirs != NULL ? apex_zone_stray_rrsigs(tz, theirs, &theirs_count) : NULL;
	int rc = APEX_OK;

	for (size_t i = 0; i < mine_count && rc == APEX_OK; i++) {
		const apex_rrset_t *other = NULL;

		for (size_t j = 0; j < theirs_count && other == NULL; j++)
			if (covered(t[j].sigs) == covered(m[i].sigs))
				other = t[j].sigs;
		rc = rrset_difference(d, mine->name, APEX_TYPE_RRSIG, m[i].sigs, other);
	}
	return rc;
}

/* Emit what node mine has and node theirs (the same name on the other
 * side, or NULL) lacks: RRsets by type, each RRset's RRSIGs, and the
 * stray RRSIG sets. */
static int node_difference(diff_t *d, const apex_zone_t *mz, const apex_node_t *mine,
			   const apex_zone_t *tz, const apex_node_t *theirs)
{
	uint16_t j = 0, n = theirs != NULL ? theirs->rrset_count : 0;
	int rc = APEX_OK;

	const apex_rrset_t *sets = apex_node_rrsets(mz, mine);
	const apex_rrset_t *their_sets = theirs != NULL ? apex_node_rrsets(tz, theirs) : NULL;

	for (uint16_t i = 0; i < mine->rrset_count && rc == APEX_OK; i++) {
		const apex_rrset_t *rs = &sets[i], *other = NULL;
		while (j < n && their_sets[j].type < rs->type)
			j++;
		if (j < n && their_sets[j].type == rs->type)
			other = &their_sets[j];
		/* The SOA itself opens each half of the change set. */
		if (rs->type != APEX_TYPE_SOA)
			rc = rrset_difference(d, mine->name, rs->type, rs, other);
		if (rc == APEX_OK && rs->rrsig != NULL)
			rc = rrset_difference(d, mine->name, APEX_TYPE_RRSIG, rs->rrsig,
					      other != NULL ? other->rrsig : NULL);
	}
	if (rc == APEX_OK)
		rc = stray_difference(d, mz, mine, tz, theirs);
	return rc;
}

/* Walk two arrays of nodes in canonical order side by side (the name
 * index, or the NSEC3 owners), calling node_difference() for each of
 * mine. get(array, i) gives the i-th node. */
typedef const apex_node_t *(*node_at_fn)(const apex_zone_t *zone, size_t i);

static const apex_node_t *name_node(const apex_zone_t *zone, size_t i)
{
	return apex_zone_node_at(zone, i);
}

static const apex_node_t *nsec3_node(const apex_zone_t *zone, size_t i)
{
	return apex_zone_nsec3_owner_at(zone, i);
}

static int walk(diff_t *d, const apex_zone_t *mine, size_t mine_count, const apex_zone_t *theirs,
		size_t theirs_count, node_at_fn at)
{
	size_t j = 0;
	int rc = APEX_OK;

	for (size_t i = 0; i < mine_count && rc == APEX_OK; i++) {
		const apex_node_t *node = at(mine, i), *other = NULL;
		int c = 1;
		while (j < theirs_count &&
		       (c = apex_name_compare(at(theirs, j)->name, node->name)) < 0)
			j++;
		if (j < theirs_count && c == 0)
			other = at(theirs, j);
		if (other != NULL &&
		    apex_node_rrsets(theirs, other) == apex_node_rrsets(mine, node) &&
		    other->rrset_count == node->rrset_count)
			/* one version derived from the other shares the owner's
			 * RRsets, records and RRSIGs (zone/derive.h): the same */
			rc = stray_difference(d, mine, node, theirs, other);
		else
			rc = node_difference(d, mine, node, theirs, other);
	}
	return rc;
}

/* One pass: everything mine has that theirs lacks. */
static int pass(diff_t *d, const apex_zone_t *mine, const apex_zone_t *theirs)
{
	int rc = walk(d, mine, mine->node_count, theirs, theirs->node_count, name_node);
	if (rc == APEX_OK)
		rc = walk(d, mine, mine->nsec3_owner_count, theirs, theirs->nsec3_owner_count,
			  nsec3_node);
	return rc;
}

static int append_soa(apex_changes_t *out, apex_change_kind_t kind, const apex_zone_t *zone)
{
	apex_rr_t rr = {
		.owner = zone->origin,
		.type = APEX_TYPE_SOA,
		.rclass = APEX_CLASS_IN,
		.ttl = zone->soa->ttl,
		.rdlength = apex_read_u16(zone->soa->rdata),
		.rdata = zone->soa->rdata + 2,
	};
	return apex_changes_append(out, kind, &rr);
}

/* The bytes of zone's SOA in a change set. */
static size_t soa_bytes(const apex_zone_t *zone)
{
	return apex_name_size(zone->origin) + 10u + apex_read_u16(zone->soa->rdata);
}

/* The bytes of the records only in from and of those only in to, as a
 * change set stores them (the SOAs not counted). */
static int diff_size(const apex_zone_t *from, const apex_zone_t *to, size_t max_bytes,
		     size_t *bytes)
{
	diff_t d = { .out = NULL, .max_bytes = max_bytes };
	int rc = pass(&d, from, to);

	if (rc == APEX_OK)
		rc = pass(&d, to, from);
	free(d.mine);
	free(d.theirs);
	*bytes = d.bytes;
	return rc;
}

int apex_xfr_diff(const apex_zone_t *from, const apex_zone_t *to, apex_changes_t *out)
{
	return apex_xfr_diff_within(from, to, SIZE_MAX, out);
}

/* The set from from to to into d->out (initialised, empty, as big as it
 * needs where it is given whole): from's SOA, the records only in from,
 * to's SOA, the records only in to. */
static int make(diff_t *d, const apex_zone_t *from, const apex_zone_t *to)
{
	int rc = append_soa(d->out, APEX_CHANGE_OLD_SOA, from);

	d->kind = APEX_CHANGE_REMOVE;
	if (rc == APEX_OK)
		rc = pass(d, from, to);
	if (rc == APEX_OK)
		rc = append_soa(d->out, APEX_CHANGE_NEW_SOA, to);
	d->kind = APEX_CHANGE_ADD;
	if (rc == APEX_OK)
		rc = pass(d, to, from);
	free(d->mine);
	free(d->theirs);
	return rc;
}

int apex_xfr_diff_size(const apex_zone_t *from, const apex_zone_t *to, size_t max_bytes,
		       size_t *bytes)
{
	size_t soas = soa_bytes(from) + soa_bytes(to), records = 0;

	*bytes = 0;
	if (!apex_name_equal(from->origin, to->origin) || to->base != from)
		return APEX_EINVAL;
	if (soas > max_bytes)
		return APEX_ESPACE;
	int rc = diff_size(from, to, max_bytes - soas, &records);
	*bytes = soas + records;
	return rc;
}

int apex_xfr_diff_within(const apex_zone_t *from, const apex_zone_t *to, size_t max_bytes,
			 apex_changes_t *out)
{
	diff_t d = { .out = out, .max_bytes = max_bytes };

	if (!apex_name_equal(from->origin, to->origin))
		return APEX_EINVAL;
	if (soa_bytes(from) + soa_bytes(to) > max_bytes)
		return APEX_ESPACE;
	if (to->base == from) {
		/* Derived from it: the walk skips the owners they share, and
		 * is made twice to size the set first, which growing would
		 * hold twice for a moment (a reload of a tenth of a 1M-record
		 * zone: 8 MB copied into 16 at the derivation's peak).  A set
		 * past the bound stops the first walk and is never made. */
		size_t bytes;
		int rc = apex_xfr_diff_size(from, to, max_bytes, &bytes);
		if (rc == APEX_OK)
			rc = apex_changes_reserve(out, bytes);
		if (rc != APEX_OK)
			return rc;
	}
	return make(&d, from, to);
}

int apex_xfr_diff_stream(const apex_zone_t *from, const apex_zone_t *to, apex_changes_t *out,
			 apex_xfr_diff_sink_t sink, void *ctx)
{
	diff_t d = { .out = out, .max_bytes = SIZE_MAX, .sink = sink, .sink_ctx = ctx };

	if (!apex_name_equal(from->origin, to->origin))
		return APEX_EINVAL;
	/* a piece and the largest record past it: never grown */
	int rc = apex_changes_reserve(out, APEX_XFR_DIFF_PIECE + APEX_XFR_DIFF_RR_MAX);
	if (rc == APEX_OK)
		rc = make(&d, from, to);
	if (rc == APEX_OK && out->size > 0)
		rc = sink(ctx, out->data, out->size);
	out->size = 0;
	return rc;
}
