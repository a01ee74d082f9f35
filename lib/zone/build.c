/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building the immutable zone version (see build.h).
 *
 * Steps, all O(n log n) at worst:
 *  1. owners sorted by lookup key (canonical order), records sorted by
 *     owner, type and canonical RDATA; duplicates dropped (build_sort.c);
 *  2. zone checks (one SOA at the apex, CNAME alone, one DNAME);
 *  3. the name index: owners plus empty non-terminals, NSEC3 owners
 *     kept apart; RRsets whose RDATA is not already in place put in
 *     order where it lies or copied into the arena;
 *  4. structure: parent, flags, cut, wildcard child, RRSIG links;
 *  5. additional data (glue, MX/SRV/NS target addresses);
 *  6. NSEC and NSEC3 links;
 *  7. for the response writer: name hashes and the nodes of RDATA names.
 * The precomputed referrals and negative answers are a step of their own
 * after this one, in the query layer (query/precompute.h).
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "util/give_back.h"
#include "util/log.h"
#include "util/parallel.h"
#include "zone/build.h"
#include "zone/load_tuning.h"
#include "zone/build_steps.h"
#include "zone/node_table.h"
#include "zone/nsec3_index.h"

_Atomic size_t apex_build_part_min = 32768;

/* Warnings of one kind logged per zone before they are only counted. */
#define WARNINGS_SHOWN 10
/* Targets of one RRset given additional data (far more than any real one). */
#define ADDITIONAL_MAX 512

/* Where a node comes from while the index is laid out. */
typedef struct node_desc {
	uint32_t owner;    /* owner rank; for an empty non-terminal, a descendant's */
	uint32_t parent;   /* index in the node array; UINT32_MAX for the apex */
	uint16_t key_size; /* its key: a prefix of the owner's key */
	uint8_t labels;    /* labels of this node's name */
	bool empty;        /* empty non-terminal */
} node_desc_t;

typedef apex_build_t build_t;

static int build_fail(build_t *bd, const apex_build_rr_t *rr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "FILE:LINE: reason" for record rr (or "FILE: reason" when rr is NULL). */
static int build_fail(build_t *bd, const apex_build_rr_t *rr, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	apex_zone_builder_t *b = bd->b;
	if (rr != NULL)
		snprintf(b->err, b->err_size, "%s:%u: %s", b->files[rr->file], rr->line, reason);
	else
		snprintf(b->err, b->err_size, "%s: %s", b->files[0], reason);
	return APEX_ELOAD;
}

/* ------------------------------------------------------------ records */

static uint16_t rr_covered(const apex_build_rr_t *rr)
{
	return rr->rdlength >= 2 ? (uint16_t)(rr->canonical[0] << 8 | rr->canonical[1]) : 0;
}

/* Records i and j belong to the same RRset (RRSIGs split by type covered). */
static bool same_set(const apex_build_rr_t *a, const apex_build_rr_t *b)
{
	if (a->owner != b->owner || a->type != b->type)
		return false;
	return a->type != APEX_TYPE_RRSIG || rr_covered(a) == rr_covered(b);
}

/* ------------------------------------------------------------ checks */

static const char *owner_text(build_t *bd, uint32_t owner, char *buf, size_t size)
{
	return apex_name_to_str(bd->b->owners[owner].name, buf, size);
}

/* The record with the smallest seq among records [first, end) of type. */
static const apex_build_rr_t *first_of_type(const apex_build_rr_t *rrs, size_t first, size_t end,
					    uint16_t type, size_t *count)
{
	const apex_build_rr_t *best = NULL;
	*count = 0;
	for (size_t i = first; i < end; i++) {
		if (rrs[i].type != type)
			continue;
		(*count)++;
		if (best == NULL || rrs[i].seq < best->seq)
			best = &rrs[i];
	}
	return best;
}

/* The second record of type in file order (for "more than one" errors). */
static const apex_build_rr_t *second_of_type(const apex_build_rr_t *rrs, size_t first, size_t end,
					     uint16_t type)
{
	const apex_build_rr_t *one = NULL, *two = NULL;
	for (size_t i = first; i < end; i++) {
		if (rrs[i].type != type)
			continue;
		if (one == NULL || rrs[i].seq < one->seq) {
			two = one;
			one = &rrs[i];
		} else if (two == NULL || rrs[i].seq < two->seq) {
			two = &rrs[i];
		}
	}
	return two;
}

int apex_build_check_owner(build_t *bd, uint32_t owner, bool is_apex)
{
	const apex_build_rr_t *rrs = bd->b->rrs;
	size_t first = bd->owner_first[owner], end = bd->owner_first[owner + 1];
	char name[APEX_NAME_MAX * 4 + 1];
	size_t count;

	const apex_build_rr_t *soa = first_of_type(rrs, first, end, APEX_TYPE_SOA, &count);
	if (soa != NULL && !is_apex)
		return build_fail(bd, soa, "SOA record at %s, not at the zone apex %s",
				  owner_text(bd, owner, name, sizeof(name)), bd->origin_text);
	if (is_apex && count == 0)
		return build_fail(bd, NULL, "no SOA record at the zone apex %s", bd->origin_text);
	if (count > 1)
		return build_fail(bd, second_of_type(rrs, first, end, APEX_TYPE_SOA),
				  "more than one SOA record at %s", bd->origin_text);

	first_of_type(rrs, first, end, APEX_TYPE_DNAME, &count);
	if (count > 1)
		return build_fail(bd, second_of_type(rrs, first, end, APEX_TYPE_DNAME),
				  "more than one DNAME record at %s",
				  owner_text(bd, owner, name, sizeof(name)));

	const apex_build_rr_t *cname = first_of_type(rrs, first, end, APEX_TYPE_CNAME, &count);
	if (cname == NULL)
		return APEX_OK;
	if (count > 1)
		return build_fail(bd, second_of_type(rrs, first, end, APEX_TYPE_CNAME),
				  "more than one CNAME record at %s",
				  owner_text(bd, owner, name, sizeof(name)));
	/* RFC 2181 10.1, RFC 4035 2.5: only DNSSEC records may sit beside a CNAME. */
	const apex_build_rr_t *other = NULL;
	for (size_t i = first; i < end; i++) {
		uint16_t t = rrs[i].type;
		if (t == APEX_TYPE_CNAME || t == APEX_TYPE_RRSIG || t == APEX_TYPE_NSEC ||
		    t == APEX_TYPE_NSEC3)
			continue;
		if (other == NULL || rrs[i].seq < other->seq)
			other = &rrs[i];
	}
	if (other != NULL)
		return build_fail(bd, other->seq > cname->seq ? other : cname,
				  "CNAME and other data at %s",
				  owner_text(bd, owner, name, sizeof(name)));
	return APEX_OK;
}

bool apex_build_only_nsec3(build_t *bd, uint32_t owner)
{
	const apex_build_rr_t *rrs = bd->b->rrs;
	bool nsec3 = false;
	for (size_t i = bd->owner_first[owner]; i < bd->owner_first[owner + 1]; i++) {
		if (rrs[i].type == APEX_TYPE_NSEC3)
			nsec3 = true;
		else if (rrs[i].type != APEX_TYPE_RRSIG || rr_covered(&rrs[i]) != APEX_TYPE_NSEC3)
			return false;
	}
	return nsec3;
}

/* ------------------------------------------------------------ index */

/* The ancestor of name that has `labels` labels (a suffix of name). */
static const uint8_t *name_ancestor(const uint8_t *name, int name_labels, int labels)
{
	for (int i = name_labels; i > labels; i--)
		name += 1 + name[0];
	return name;
}

/* Lay out the name index: owners in canonical order with empty
 * non-terminals inserted before their first descendant. */
static int layout_nodes(build_t *bd, node_desc_t **out, size_t *out_count)
{
	apex_zone_builder_t *b = bd->b;
	size_t cap = b->owner_count + 16, count = 0;
	node_desc_t *descs = malloc(cap * sizeof(*descs));
	if (descs == NULL)
		return APEX_ENOMEM;
	uint32_t stack[APEX_LABELS_MAX + 1]; /* node indices along the current path */
	int depth = 0;
	uint16_t label_ends[APEX_LABELS_MAX + 1];
	uint8_t key[APEX_KEY_MAX];

	for (uint32_t r = 0; r < b->owner_count; r++) {
		if (bd->owner_is_nsec3[r])
			continue;
		const apex_build_owner_t *o = &b->owners[r];
		/* Pop until the top of the stack is an ancestor of o: its key,
		 * a whole key, is then a proper prefix of o's key. */
		while (depth > 0) {
			const node_desc_t *top = &descs[stack[depth - 1]];
			if (top->key_size < o->key_size &&
			    memcmp(b->owners[top->owner].key, o->key, top->key_size) == 0)
				break;
			depth--;
		}
		int from;
		if (depth == 0) {
			if (count != 0 || o->labels != bd->zone->origin_labels)
				return free(descs),
				       APEX_EINVAL; /* cannot happen: apex sorts first */
			from = o->labels;
		} else {
			from = descs[stack[depth - 1]].labels + 1;
		}
		/* Where each label of the key ends, for the empty non-terminals
		 * above o (most owners have none: no need to read the name). */
		if (from < o->labels)
			apex_name_key(o->name, key, label_ends);
		label_ends[o->labels] = o->key_size;
		for (int l = from; l <= o->labels; l++) {
			if (count + 1 > cap) {
				cap *= 2;
				node_desc_t *p = realloc(descs, cap * sizeof(*p));
				if (p == NULL)
					return free(descs), APEX_ENOMEM;
				descs = p;
			}
			node_desc_t *d = &descs[count];
			d->owner = r;
			d->labels = (uint8_t)l;
			d->empty = l < o->labels;
			d->key_size = label_ends[l];
			d->parent = depth > 0 ? stack[depth - 1] : UINT32_MAX;
			stack[depth++] = (uint32_t)count++;
		}
	}
	*out = descs;
	*out_count = count;
	return APEX_OK;
}

/* The RDATA of records [first, end) (sorted, without duplicates) lies
 * back to back in the loader's memory, in this order: it is the RRset's
 * rdata as it is (build.h). */
static bool rdata_in_place(const apex_build_rr_t *rrs, size_t first, size_t end)
{
	for (size_t i = first + 1; i < end; i++)
		if ((uintptr_t)rrs[i].rdata !=
		    (uintptr_t)rrs[i - 1].rdata + rrs[i - 1].rdlength + 2)
			return false;
	return true;
}

/* The largest RRset rdata_region() puts in order where it lies. */
#define REGION_RECORDS_MAX 16
#define REGION_BYTES_MAX 4096

/*
 * Where the records [first, end) of one RRset lie back to back in an
 * order other than their canonical one (the loader wrote them together,
 * in the file's order), or NULL.  fill_rrset() then puts them in order in
 * that memory instead of copying them: it is the sinks' (build.h), and
 * nothing but these records refers to it.  Only the records' pointers and
 * lengths are read, so apex_build_count() and the fill agree whatever the
 * fill has reordered before.
 */
static uint8_t *rdata_region(const apex_build_rr_t *rrs, size_t first, size_t end)
{
	const uint8_t *start[REGION_RECORDS_MAX];
	size_t span[REGION_RECORDS_MAX], k = 0, size = 0;
	if (end - first > REGION_RECORDS_MAX)
		return NULL;
	for (size_t i = first; i < end; i++, k++) { /* by address, by insertion */
		const uint8_t *at = rrs[i].rdata - 2;
		size_t j = k;
		for (; j > 0 && start[j - 1] > at; j--) {
			start[j] = start[j - 1];
			span[j] = span[j - 1];
		}
		start[j] = at;
		span[j] = 2u + rrs[i].rdlength;
		size += span[j];
	}
	for (size_t j = 1; j < k; j++)
		if (start[j] != start[j - 1] + span[j - 1])
			return NULL;
	return size <= REGION_BYTES_MAX ? (uint8_t *)start[0] : NULL;
}

/* rdata_region() where the loader's memory is the build's to write: not
 * where some RDATA is borrowed (build.h). */
static uint8_t *region_of(const build_t *bd, size_t first, size_t end)
{
	return bd->b->rdata_borrowed ? NULL : rdata_region(bd->b->rrs, first, end);
}

/* Fill rrset from the records [first, end) (one RRset); RDATA not in
 * place is put in order where it lies (rdata_region()) or copied into
 * *blob. */
static int fill_rrset(build_t *bd, apex_rrset_t *rrset, size_t first, size_t end, uint8_t **blob)
{
	const apex_build_rr_t *rrs = bd->b->rrs;
	if (end - first > UINT16_MAX)
		return build_fail(bd, &rrs[first], "RRset with more than 65535 records");
	/* RFC 2181 5.2: one TTL per RRset; when the records' TTLs differ,
	 * the lowest (what a resolver would use), and the first record in
	 * the file is what the warning names as the RRset's */
	const apex_build_rr_t *first_seen = &rrs[first];
	const apex_build_rr_t *differs = NULL;
	uint32_t lowest = rrs[first].ttl;
	size_t size = 0;
	for (size_t i = first; i < end; i++) {
		if (rrs[i].seq < first_seen->seq)
			first_seen = &rrs[i];
		if (rrs[i].ttl < lowest)
			lowest = rrs[i].ttl;
		size += 2u + rrs[i].rdlength;
	}
	uint8_t *region = NULL;
	if (rdata_in_place(rrs, first, end)) {
		rrset->rdata = rrs[first].rdata - 2;
	} else if ((region = region_of(bd, first, end)) != NULL) {
		/* The records' rdata pointers are stale after this: the
		 * RRset is what the build reads from now on. */
		uint8_t ordered[REGION_BYTES_MAX], *p = ordered;
		for (size_t i = first; i < end; i++) {
			memcpy(p, rrs[i].rdata - 2, 2u + rrs[i].rdlength);
			p += 2 + rrs[i].rdlength;
		}
		memcpy(region, ordered, size);
		rrset->rdata = region;
	} else {
		uint8_t *p = *blob;
		rrset->rdata = p;
		for (size_t i = first; i < end; i++) {
			memcpy(p, rrs[i].rdata - 2, 2u + rrs[i].rdlength);
			p += 2 + rrs[i].rdlength;
		}
		*blob = p;
	}
	for (size_t i = first; i < end; i++)
		if (rrs[i].ttl != first_seen->ttl && (differs == NULL || rrs[i].seq < differs->seq))
			differs = &rrs[i];
	rrset->type = rrs[first].type;
	rrset->count = (uint16_t)(end - first);
	rrset->ttl = lowest;
	rrset->rdata_size = (uint32_t)size;
	rrset->rrsig = NULL;
	rrset->additional = NULL;
	rrset->rdata_nodes = NULL;
	if (differs != NULL && bd->ttl_warnings++ < WARNINGS_SHOWN) {
		char name[APEX_NAME_MAX * 4 + 1];
		apex_warning("zone %s: %s:%u: TTL %u differs from the TTL %u of the first "
			     "record of the RRset %s type %u; using the lowest, %u (RFC 2181 "
			     "section 5.2)",
			     bd->origin_text, bd->b->files[differs->file], differs->line,
			     differs->ttl, first_seen->ttl,
			     owner_text(bd, rrs[first].owner, name, sizeof(name)), rrset->type,
			     lowest);
	}
	return APEX_OK;
}

int apex_build_fill_node(build_t *bd, apex_node_t *node, uint32_t r, apex_rrset_t **rrset_next,
			 apex_rrset_t **sig_next, uint8_t **blob)
{
	const apex_build_rr_t *rrs = bd->b->rrs;
	size_t first = bd->owner_first[r], end = bd->owner_first[r + 1];
	node->rrset_count = 0;
	bd->owner_sigs[r] = *sig_next;
	bd->owner_sig_count[r] = 0;
	bd->owner_node[r] = node;
	for (size_t i = first; i < end;) {
		size_t j = i + 1;
		while (j < end && same_set(&rrs[i], &rrs[j]))
			j++;
		apex_rrset_t *set;
		if (rrs[i].type == APEX_TYPE_RRSIG) {
			set = (*sig_next)++;
			bd->owner_sig_count[r]++;
		} else {
			set = (*rrset_next)++;
			node->rrset_count++;
		}
		int rc = fill_rrset(bd, set, i, j, blob);
		if (rc != APEX_OK)
			return rc;
		i = j;
	}
	return APEX_OK;
}

/* ------------------------------------------------------------ structure */

/* The structure a node has of its own and its key prefix, for the nodes
 * [begin, end) of a part: flags but those inherited from its ancestors,
 * parent. */
typedef struct structure_job {
	const apex_zone_t *zone;
	apex_node_t *nodes;
	const node_desc_t *descs;
	uint64_t *prefixes;
} structure_job_t;

static int own_structure_part(void *ctx, size_t begin, size_t end)
{
	structure_job_t *j = ctx;
	for (size_t i = begin; i < end; i++) {
		apex_node_t *node = &j->nodes[i];
		j->prefixes[i] = apex_key_prefix(apex_node_key(node), node->key_size);
		uint16_t flags = 0;
		node->parent = j->descs[i].parent; /* UINT32_MAX is APEX_NODE_NONE */
		if (i == 0)
			flags |= APEX_NODE_APEX;
		if (j->descs[i].empty)
			flags |= APEX_NODE_EMPTY;
		if (apex_name_is_wildcard(node->name))
			flags |= APEX_NODE_WILDCARD;
		if (apex_node_rrset(j->zone, node, APEX_TYPE_CNAME) != NULL)
			flags |= APEX_NODE_CNAME;
		if (apex_node_rrset(j->zone, node, APEX_TYPE_DNAME) != NULL)
			flags |= APEX_NODE_DNAME;
		if (i != 0 && apex_node_rrset(j->zone, node, APEX_TYPE_NS) != NULL)
			flags |= APEX_NODE_DELEGATION;
		node->flags = flags;
	}
	return APEX_OK;
}

/* What a node inherits, in canonical order (a parent before its
 * children): occlusion, its zone cut, and its parent's wildcard child. */
static void inherit_structure(apex_zone_t *zone, apex_node_t *nodes)
{
	for (size_t i = 0; i < zone->node_count; i++) {
		apex_node_t *node = &nodes[i];
		apex_node_t *parent = node->parent == APEX_NODE_NONE ? NULL : &nodes[node->parent];
		uint16_t flags = node->flags;
		node->cut = APEX_NODE_NONE;
		if (parent != NULL) {
			if ((parent->flags &
			     (APEX_NODE_OCCLUDED | APEX_NODE_DELEGATION | APEX_NODE_DNAME)) != 0)
				flags |= APEX_NODE_OCCLUDED;
			node->cut = parent->cut;
		}
		if (node->cut == APEX_NODE_NONE && i != 0 &&
		    (flags & (APEX_NODE_DELEGATION | APEX_NODE_DNAME)))
			node->cut = (uint32_t)i;
		if ((flags & APEX_NODE_WILDCARD) && parent != NULL)
			parent->wildcard_child = (uint32_t)i;
		node->flags = flags;
	}
}

/* Link each RRset of a node with the RRSIGs that cover it, where they
 * are authoritative: never below a cut, and at a cut only DS and NSEC
 * (the NS RRset and any glue at a delegation are not signed).  The
 * others are stray (zone->stray_rrsigs): with strays NULL they are
 * counted into *stray_count, else stored at strays[*stray_count++]. */
void apex_build_link_rrsigs(build_t *bd, uint32_t r, apex_stray_rrsig_t *strays,
			    size_t *stray_count)
{
	apex_node_t *node = bd->owner_node[r];
	if (node == NULL)
		return;
	for (uint16_t s = 0; s < bd->owner_sig_count[r]; s++) {
		const apex_rrset_t *sigs = &bd->owner_sigs[r][s];
		uint16_t covered = (uint16_t)(sigs->rdata[2] << 8 | sigs->rdata[3]);
		apex_rrset_t *set = (apex_rrset_t *)apex_node_rrset(bd->zone, node, covered);
		if ((node->flags & APEX_NODE_OCCLUDED) ||
		    ((node->flags & APEX_NODE_DELEGATION) && covered != APEX_TYPE_DS &&
		     covered != APEX_TYPE_NSEC))
			set = NULL;
		if (set != NULL)
			set->rrsig = sigs;
		else if (strays != NULL)
			strays[(*stray_count)++] = (apex_stray_rrsig_t){ node->id, sigs };
		else
			(*stray_count)++;
	}
}

static int compare_strays(const void *a, const void *b)
{
	const apex_stray_rrsig_t *x = a, *y = b;

	return (x->node > y->node) - (x->node < y->node);
}

/* Link the RRSIGs of every owner; keep the stray ones, by node id. */
static int link_all_rrsigs(build_t *bd)
{
	apex_zone_t *zone = bd->zone;
	size_t count = 0, n = 0;

	for (uint32_t r = 0; r < bd->b->owner_count; r++)
		apex_build_link_rrsigs(bd, r, NULL, &count);
	if (count == 0)
		return APEX_OK;
	apex_stray_rrsig_t *strays = apex_arena_alloc(zone->arena, count * sizeof(*strays));
	if (strays == NULL)
		return APEX_ENOMEM;
	for (uint32_t r = 0; r < bd->b->owner_count; r++)
		apex_build_link_rrsigs(bd, r, strays, &n);
	qsort(strays, n, sizeof(*strays), compare_strays);
	zone->stray_rrsigs = strays;
	zone->stray_rrsig_count = n;
	return APEX_OK;
}

/* A DS RRset belongs at a delegation (RFC 4035 2.4); elsewhere it is
 * served as data, but the operator is told. */
void apex_build_warn_stray_ds(build_t *bd, const apex_node_t *node)
{
	if ((node->flags & (APEX_NODE_APEX | APEX_NODE_DELEGATION | APEX_NODE_OCCLUDED)) != 0 ||
	    apex_node_rrset(bd->zone, node, APEX_TYPE_DS) == NULL)
		return;
	if (bd->ds_warnings++ < WARNINGS_SHOWN) {
		char name[APEX_NAME_MAX * 4 + 1];
		apex_warning("zone %s: DS record at %s, which is not a delegation (no NS)",
			     bd->origin_text, apex_name_to_str(node->name, name, sizeof(name)));
	}
}

/* ------------------------------------------------------------ additional */

static void warn_missing_glue(build_t *bd, const apex_node_t *delegation, const uint8_t *target)
{
	if (bd->glue_warnings++ >= WARNINGS_SHOWN)
		return;
	char a[APEX_NAME_MAX * 4 + 1], t[APEX_NAME_MAX * 4 + 1];
	apex_warning("zone %s: missing glue: no address for the name server %s of the "
		     "delegation %s",
		     bd->origin_text, apex_name_to_str(target, t, sizeof(t)),
		     apex_name_to_str(delegation->name, a, sizeof(a)));
}

/* Offset of the target name in the RDATA of NS, MX and SRV records. */
static size_t target_offset(uint16_t type)
{
	switch (type) {
	case APEX_TYPE_MX: return 2;
	case APEX_TYPE_SRV: return 6;
	default: return 0;
	}
}

/*
 * Additional data for rrset at node: for every target name in the zone,
 * its A and AAAA RRsets.  For a delegation's NS: glue at or below the
 * delegation is required (RFC 9471), other in-zone addresses (sibling
 * glue, authoritative data) optional.  For apex NS, MX and SRV: only
 * authoritative addresses, optional.
 */
int apex_build_additional(build_t *bd, apex_arena_t *arena, const apex_node_t *node,
			  apex_rrset_t *rrset)
{
	const apex_zone_t *zone = bd->zone;
	bool referral = (node->flags & APEX_NODE_DELEGATION) != 0 && rrset->type == APEX_TYPE_NS;
	apex_glue_t items[ADDITIONAL_MAX];
	uint16_t count = 0;
	const uint8_t *p = rrset->rdata;
	size_t offset = target_offset(rrset->type);

	for (uint16_t i = 0; i < rrset->count; i++) {
		size_t rdlength = (size_t)p[0] << 8 | p[1];
		const uint8_t *target = p + 2 + offset;
		p += 2 + rdlength;
		if (rdlength <= offset)
			continue;
		uint8_t key[APEX_KEY_MAX];
		size_t key_size = apex_name_key(target, key, NULL);
		bool in_domain = referral && key_size >= node->key_size &&
				 memcmp(key, apex_node_key(node), node->key_size) == 0;
		if (key_size < zone->origin_key_size ||
		    memcmp(key, zone->origin_key, zone->origin_key_size) != 0)
			continue; /* not in this zone */
		const apex_node_t *t = apex_zone_find(zone, key, key_size);
		const apex_rrset_t *a = t ? apex_node_rrset(bd->zone, t, APEX_TYPE_A) : NULL;
		const apex_rrset_t *aaaa = t ? apex_node_rrset(bd->zone, t, APEX_TYPE_AAAA) : NULL;
		if (a == NULL && aaaa == NULL) {
			if (in_domain)
				warn_missing_glue(bd, node, target);
			continue;
		}
		if (!referral && (t->flags & (APEX_NODE_OCCLUDED | APEX_NODE_DELEGATION)) != 0)
			continue; /* only authoritative addresses here */
		uint32_t id = apex_node_id(t);
		bool seen = false;
		for (uint16_t k = 0; k < count; k++)
			if (items[k].owner == id)
				seen = true;
		if (seen || count == sizeof(items) / sizeof(items[0]))
			continue;
		items[count].owner = id;
		items[count].a = a;
		items[count].aaaa = aaaa;
		items[count].required = in_domain;
		count++;
	}
	if (count == 0)
		return APEX_OK;
	apex_additional_t *add =
		apex_arena_alloc(arena, sizeof(*add) + count * sizeof(apex_glue_t));
	if (add == NULL)
		return APEX_ENOMEM;
	add->count = count;
	memcpy(add->items, items, count * sizeof(apex_glue_t));
	rrset->additional = add;
	return APEX_OK;
}

bool apex_build_wants_additional(const apex_node_t *node, const apex_rrset_t *rrset)
{
	if (node->flags & APEX_NODE_OCCLUDED)
		return false;
	if (rrset->type == APEX_TYPE_NS)
		return true;
	if (rrset->type == APEX_TYPE_MX || rrset->type == APEX_TYPE_SRV)
		return (node->flags & APEX_NODE_DELEGATION) == 0;
	return false;
}

/* ------------------------------------------------------------ NSEC, NSEC3 */

static void set_nsec_links(apex_zone_t *zone, apex_node_t *nodes)
{
	uint32_t last = APEX_NODE_NONE;
	for (size_t i = 0; i < zone->node_count; i++) {
		if (apex_node_rrset(zone, &nodes[i], APEX_TYPE_NSEC) != NULL)
			last = (uint32_t)i;
		nodes[i].nsec = last;
	}
}

uint32_t apex_build_wildcard_nsec(const apex_zone_t *zone, const apex_node_t *node,
				  const apex_node_t *next)
{
	if ((size_t)node->name_size + 2 > APEX_NAME_MAX)
		return APEX_NODE_NONE;
	/* The key of "*.<name>": the node's key, then the label "*". */
	uint8_t key[APEX_KEY_MAX];
	memcpy(key, apex_node_key(node), node->key_size);
	key[node->key_size] = '*';
	key[node->key_size + 1] = 0;
	size_t key_size = (size_t)node->key_size + 2;
	/* Usually no name sorts between the node and its wildcard: the
	 * next node, if below this one, comes after "*.<name>". */
	if (next == NULL ||
	    apex_key_compare(apex_node_key(next), next->key_size, key, key_size) > 0)
		return node->nsec;
	uint8_t wild[APEX_NAME_MAX];
	wild[0] = 1;
	wild[1] = '*';
	memcpy(wild + 2, node->name, node->name_size);
	uint16_t ends[APEX_LABELS_MAX];
	key_size = apex_name_key(wild, key, ends);
	apex_lookup_t lk;
	apex_zone_lookup(zone, key, key_size, ends, apex_name_labels(wild), &lk);
	return lk.previous->nsec;
}

/* node->wildcard_nsec of every node of an NSEC zone. */
static void set_wildcard_nsec(apex_zone_t *zone, apex_node_t *nodes)
{
	for (size_t i = 0; i < zone->node_count; i++)
		nodes[i].wildcard_nsec = apex_build_wildcard_nsec(
			zone, &nodes[i], i + 1 < zone->node_count ? &nodes[i + 1] : NULL);
}

static int nsec3_compare(const void *pa, const void *pb)
{
	const apex_nsec3_t *a = pa, *b = pb;
	return apex_key_compare(a->hash, a->hash_size, b->hash, b->hash_size);
}

/* What the threads linking names with their NSEC3s share. */
typedef struct nsec3_link {
	const apex_zone_t *zone; /* its NSEC3 chain and index are complete */
	apex_node_t *nodes;
} nsec3_link_t;

/* Link every authoritative name of nodes [begin, end) (empty
 * non-terminals included) with its NSEC3, and with the NSEC3 covering
 * the hash of its wildcard.  Runs on several threads, each on its own
 * nodes. */
static int link_nsec3_part(void *arg, size_t begin, size_t end)
{
	const nsec3_link_t *ln = arg;
	apex_node_t *batch[APEX_LINK_NSEC3_GATHER];

	for (size_t i = begin; i < end;) {
		size_t n = 0;
		for (; n < APEX_LINK_NSEC3_GATHER && i < end; n++, i++)
			batch[n] = &ln->nodes[i];
		int rc = apex_build_link_nsec3_batch(ln->zone, batch, n);
		if (rc != APEX_OK)
			return rc;
	}
	return APEX_OK;
}

bool apex_build_nsec3_in_chain(const apex_nsec3_params_t *params, const uint8_t *rdata, size_t size)
{
	if (size < 5 || rdata[0] != params->algorithm)
		return false;
	uint16_t iterations = (uint16_t)(rdata[2] << 8 | rdata[3]);
	return iterations == params->iterations && rdata[4] == params->salt_size &&
	       size >= 5u + rdata[4] && memcmp(rdata + 5, params->salt, rdata[4]) == 0;
}

static int set_nsec3(build_t *bd, apex_node_t *nodes, apex_node_t *nsec3_nodes,
		     size_t nsec3_node_count)
{
	apex_zone_t *zone = bd->zone;
	const apex_rrset_t *param = apex_node_rrset(bd->zone, zone->apex, APEX_TYPE_NSEC3PARAM);
	const uint8_t *pr = param->rdata + 2;
	size_t pr_size = (size_t)param->rdata[0] << 8 | param->rdata[1];
	if (pr_size < 5 || pr_size < 5u + pr[4])
		return build_fail(bd, NULL, "bad NSEC3PARAM record at %s", bd->origin_text);
	apex_nsec3_params_t *params = &zone->nsec3_params;
	params->algorithm = pr[0];
	params->flags = pr[1];
	params->iterations = (uint16_t)(pr[2] << 8 | pr[3]);
	params->salt_size = pr[4];
	memcpy(params->salt, pr + 5, pr[4]);
	if (params->algorithm != 1)
		return build_fail(bd, NULL, "NSEC3PARAM hash algorithm %u is not supported",
				  params->algorithm);

	apex_nsec3_t *chain = apex_arena_calloc(
		zone->arena, nsec3_node_count ? nsec3_node_count : 1, sizeof(*chain));
	if (chain == NULL)
		return APEX_ENOMEM;
	size_t count = 0;
	for (size_t i = 0; i < nsec3_node_count; i++) {
		const apex_node_t *node = &nsec3_nodes[i];
		const apex_rrset_t *set = apex_node_rrset(bd->zone, node, APEX_TYPE_NSEC3);
		if (set == NULL || node->labels != zone->origin_labels + 1)
			continue;
		size_t size = (size_t)set->rdata[0] << 8 | set->rdata[1];
		if (!apex_build_nsec3_in_chain(params, set->rdata + 2, size))
			continue;
		int n = apex_base32hex_decode((const char *)node->name + 1, node->name[0],
					      chain[count].hash, sizeof(chain[count].hash));
		if (n <= 0) {
			char name[APEX_NAME_MAX * 4 + 1];
			apex_warning("zone %s: NSEC3 owner %s is not a base32hex hash; ignored",
				     bd->origin_text,
				     apex_name_to_str(node->name, name, sizeof(name)));
			continue;
		}
		chain[count].hash_size = (uint8_t)n;
		chain[count].node = node->id;
		count++;
	}
	/* NSEC3 owners come in canonical order, which for hashes of one
	 * length is hash order: usually nothing is left to sort. */
	bool sorted = true;
	for (size_t i = 1; i < count && sorted; i++)
		sorted = nsec3_compare(&chain[i - 1], &chain[i]) <= 0;
	if (!sorted)
		qsort(chain, count, sizeof(*chain), nsec3_compare);
	zone->nsec3 = chain;
	zone->nsec3_count = count;
	if (count == 0)
		return build_fail(bd, NULL, "NSEC3PARAM at %s but no NSEC3 record of its chain",
				  bd->origin_text);

	int rc = apex_nsec3_index_build(zone);
	if (rc != APEX_OK)
		return rc;
	nsec3_link_t link = { .zone = zone, .nodes = nodes };
	return apex_parallel_for(zone->node_count, bd->b->threads, 4096, link_nsec3_part, &link);
}

/* ------------------------------------------------------------ compression */

/* node->hash of the nodes [begin, end): from the parent's hash when this
 * part has it (parents come first in canonical order), else from the
 * whole name, which gives the same (dns/name_hash.h). */
static int hash_part(void *ctx, size_t begin, size_t end)
{
	apex_node_t *nodes = ctx;
	for (size_t i = begin; i < end; i++) {
		apex_node_t *node = &nodes[i];
		node->hash = node->parent != APEX_NODE_NONE && node->parent >= begin
				     ? apex_name_hash_label(nodes[node->parent].hash, node->name)
				     : apex_name_hash(node->name);
	}
	return APEX_OK;
}

/* node->hash of every node, in parts on the build's threads (in a whole
 * build a node's id is its index); NSEC3 owners get the apex as parent,
 * their one ancestor node. */
static void set_name_hashes(build_t *bd, apex_node_t *nodes, apex_node_t *nsec3_nodes,
			    size_t nsec3_node_count)
{
	const apex_zone_t *zone = bd->zone;
	(void)apex_parallel_for(zone->node_count, bd->b->threads, atomic_load(&apex_build_part_min),
				hash_part, nodes);
	for (size_t i = 0; i < nsec3_node_count; i++) {
		apex_node_t *node = &nsec3_nodes[i];
		if (node->labels == zone->apex->labels + 1) {
			node->parent = 0; /* the apex */
			node->hash = apex_name_hash_label(zone->apex->hash, node->name);
		} else {
			node->hash = apex_name_hash(node->name);
		}
	}
}

/* The node of name, or of its closest ancestor in the zone; NULL if the
 * name is not at or below the origin. */
static const apex_node_t *closest_node(const apex_zone_t *zone, const uint8_t *name)
{
	uint8_t key[APEX_KEY_MAX];
	uint16_t ends[APEX_LABELS_MAX];
	size_t key_size = apex_name_key(name, key, ends);
	if (key_size < zone->origin_key_size ||
	    memcmp(key, zone->origin_key, zone->origin_key_size) != 0)
		return NULL;
	apex_lookup_t lk;
	apex_zone_lookup(zone, key, key_size, ends, apex_name_labels(name), &lk);
	return lk.node != NULL ? lk.node : lk.encloser;
}

/* set->rdata_nodes = slots, filled: the node of each RDATA name. */
static void fill_rdata_nodes(const apex_zone_t *zone, apex_rrset_t *set, uint32_t *slots)
{
	unsigned per_record = apex_rdata_compressed_names(set->type);
	set->rdata_nodes = slots;
	const uint8_t *p = set->rdata;
	for (uint16_t r = 0; r < set->count; r++) {
		size_t rdlength = (size_t)p[0] << 8 | p[1];
		const uint8_t *end = p + 2 + rdlength;
		/* The loader checked the names; MX starts with a preference. */
		const uint8_t *name = p + 2 + (set->type == APEX_TYPE_MX ? 2 : 0);
		for (unsigned n = 0; n < per_record; n++) {
			bool inside = name < end;
			*slots++ = inside ? apex_node_id(closest_node(zone, name)) : APEX_NODE_NONE;
			if (inside)
				name += apex_name_size(name);
		}
		p = end;
	}
}

int apex_build_rdata_nodes(apex_zone_t *zone, apex_rrset_t *rrset)
{
	size_t n = (size_t)apex_rdata_compressed_names(rrset->type) * rrset->count;
	if (n == 0)
		return APEX_OK;
	uint32_t *slots = apex_arena_alloc(zone->arena, n * sizeof(*slots));
	if (slots == NULL)
		return APEX_ENOMEM;
	fill_rdata_nodes(zone, rrset, slots);
	return APEX_OK;
}

/*
 * Additional data and RDATA node links of every node, found in one pass
 * (both read the same RDATA names, which lie in file order: read once,
 * they cost one cache miss instead of two), in parts of nodes on the
 * build's threads.  The names are looked up in the finished name index,
 * which no part writes.  A part's RDATA node slots follow those of the
 * parts before it; its additional data comes from an arena of its own
 * (the zone's is not shared between threads), adopted by the zone's
 * after; it counts its missing glue in its own copy of the build state.
 */
#define LINK_PARTS_MAX 16
#define LINK_AHEAD 8 /* nodes */

typedef struct link_part {
	build_t bd;
	apex_arena_t *arena;
	apex_node_t *nodes;
	size_t begin, end;
	size_t slots; /* RDATA node slots it needs */
	uint32_t *at; /* where they go */
} link_part_t;

static int count_link_parts(void *ctx, size_t begin, size_t end)
{
	link_part_t *parts = ctx;
	for (size_t p = begin; p < end; p++) {
		link_part_t *part = &parts[p];
		part->slots = 0;
		for (size_t i = part->begin; i < part->end; i++) {
			const apex_node_t *node = &part->nodes[i];
			const apex_rrset_t *sets = apex_node_rrsets(part->bd.zone, node);
			for (uint16_t k = 0; k < node->rrset_count; k++)
				part->slots += (size_t)apex_rdata_compressed_names(sets[k].type) *
					       sets[k].count;
		}
	}
	return APEX_OK;
}

static int link_parts(void *ctx, size_t begin, size_t end)
{
	link_part_t *parts = ctx;
	int rc = APEX_OK;
	for (size_t p = begin; p < end && rc == APEX_OK; p++) {
		link_part_t *part = &parts[p];
		uint32_t *slots = part->at;
		for (size_t i = part->begin; i < part->end && rc == APEX_OK; i++) {
			apex_node_t *node = &part->nodes[i];
			/* The RDATA lies in file order, the nodes in canonical
			 * order: ask for a later node's first RDATA now, so that
			 * its cache miss overlaps this node's work. */
			if (i + LINK_AHEAD < part->end) {
				const apex_node_t *ahead = &part->nodes[i + LINK_AHEAD];
				if (ahead->rrset_count > 0)
					__builtin_prefetch(
						apex_node_rrsets(part->bd.zone, ahead)[0].rdata);
			}
			for (uint16_t k = 0; k < node->rrset_count && rc == APEX_OK; k++) {
				apex_rrset_t *set =
					(apex_rrset_t *)&apex_node_rrsets(part->bd.zone, node)[k];
				if (apex_build_wants_additional(node, set))
					rc = apex_build_additional(&part->bd, part->arena, node,
								   set);
				unsigned per_record = apex_rdata_compressed_names(set->type);
				if (per_record == 0)
					continue;
				fill_rdata_nodes(part->bd.zone, set, slots);
				slots += (size_t)per_record * set->count;
			}
		}
	}
	return rc;
}

static int set_rdata_links(build_t *bd, apex_node_t *nodes)
{
	apex_zone_t *zone = bd->zone;
	link_part_t parts[LINK_PARTS_MAX];
	size_t n = zone->node_count;
	size_t count = apex_parallel_parts(bd->b->threads, n, LINK_PARTS_MAX,
					   atomic_load(&apex_build_part_min));
	for (size_t p = 0; p < count; p++) {
		parts[p] = (link_part_t){ .bd = *bd,
					  .nodes = nodes,
					  .begin = n * p / count,
					  .end = n * (p + 1) / count };
		parts[p].bd.glue_warnings = 0;
	}
	(void)apex_parallel_for(count, (unsigned)count, 1, count_link_parts, parts);
	size_t total = 0;
	for (size_t p = 0; p < count; p++)
		total += parts[p].slots;
	uint32_t *slots = apex_arena_alloc(zone->arena, (total ? total : 1) * sizeof(*slots));
	int rc = slots != NULL ? APEX_OK : APEX_ENOMEM;
	for (size_t p = 0; p < count; p++) {
		parts[p].at = slots;
		if (slots != NULL)
			slots += parts[p].slots;
		parts[p].arena = apex_arena_create();
		if (parts[p].arena == NULL)
			rc = APEX_ENOMEM;
	}
	if (rc == APEX_OK)
		rc = apex_parallel_for(count, (unsigned)count, 1, link_parts, parts);
	for (size_t p = 0; p < count; p++) {
		bd->glue_warnings += parts[p].bd.glue_warnings;
		apex_arena_adopt(zone->arena, parts[p].arena); /* NULL: nothing */
	}
	return rc;
}

/* ------------------------------------------------------------ main */

int apex_build_set_soa(build_t *bd)
{
	apex_zone_t *zone = bd->zone;
	const apex_rrset_t *soa = apex_node_rrset(bd->zone, zone->apex, APEX_TYPE_SOA);
	zone->soa = soa;
	const uint8_t *rd = soa->rdata + 2;
	size_t size = (size_t)soa->rdata[0] << 8 | soa->rdata[1];
	/* MNAME and RNAME are valid names (ldns parsed them), then 5 numbers. */
	size_t pos = apex_name_size(rd);
	pos += apex_name_size(rd + pos);
	if (pos + 20 != size)
		return build_fail(bd, NULL, "bad SOA record at %s", bd->origin_text);
	const uint8_t *n = rd + pos;
	zone->serial = (uint32_t)n[0] << 24 | (uint32_t)n[1] << 16 | (uint32_t)n[2] << 8 | n[3];
	uint32_t minimum =
		(uint32_t)n[16] << 24 | (uint32_t)n[17] << 16 | (uint32_t)n[18] << 8 | n[19];
	zone->negative_ttl = soa->ttl < minimum ? soa->ttl : minimum;
	return APEX_OK;
}

/* The arrays of the name index, one arena block each (build_index()). */
typedef struct index_arrays {
	apex_node_t *nodes;       /* desc_count */
	apex_node_t *nsec3_nodes; /* nsec3_node_count */
	uint32_t *nsec3_owners;   /* nsec3_node_count: their ids */
	size_t nsec3_node_count;
	apex_rrset_t *rrsets, *sigs;
	uint8_t *blob; /* RDATA not already in place */
	/* Each node's RRsets, by id (zone->rrset_pages, back to back) */
	const apex_rrset_t **rrsets_of;
} index_arrays_t;

void apex_build_count(const build_t *bd, uint32_t first, uint32_t end, size_t *sets, size_t *sigs,
		      size_t *blob, size_t *rdata)
{
	const apex_build_rr_t *rrs = bd->b->rrs;
	size_t last = bd->owner_first[end], bytes = 0;

	*sets = *sigs = *blob = 0;
	for (size_t i = bd->owner_first[first], next; i < last; i = next) {
		bytes += 2u + rrs[i].rdlength;
		for (next = i + 1; next < last && same_set(&rrs[i], &rrs[next]); next++)
			bytes += 2u + rrs[next].rdlength;
		if (rrs[i].type == APEX_TYPE_RRSIG)
			(*sigs)++;
		else
			(*sets)++;
		if (!rdata_in_place(rrs, i, next) && region_of(bd, i, next) == NULL)
			for (size_t k = i; k < next; k++)
				*blob += 2u + rrs[k].rdlength;
	}
	if (rdata != NULL)
		*rdata = bytes;
}

/* One arena block for each kind, of the sizes the fill's plan counted
 * (fill_plan()). */
static int alloc_index(build_t *bd, size_t desc_count, size_t nsec3_node_count, size_t set_count,
		       size_t sig_count, size_t blob_size, index_arrays_t *a)
{
	apex_arena_t *arena = bd->zone->arena;

	a->nsec3_node_count = nsec3_node_count;
	/* One array: the name index, then the NSEC3 owners (zone.h: ids). */
	a->nodes =
		apex_arena_calloc(arena, desc_count + a->nsec3_node_count + 1, sizeof(*a->nodes));
	a->nsec3_nodes = a->nodes != NULL ? a->nodes + desc_count : NULL;
	a->rrsets = apex_arena_calloc(arena, set_count + 1, sizeof(*a->rrsets));
	a->sigs = apex_arena_calloc(arena, sig_count + 1, sizeof(*a->sigs));
	a->blob = apex_arena_alloc(arena, blob_size + 1);
	if (a->nodes == NULL || a->rrsets == NULL || a->sigs == NULL || a->blob == NULL)
		return APEX_ENOMEM;
	a->nsec3_owners =
		apex_arena_alloc(arena, (a->nsec3_node_count + 1) * sizeof(*a->nsec3_owners));
	if (a->nsec3_owners == NULL)
		return APEX_ENOMEM;
	/* The pages of a whole build lie back to back in the one array, and
	 * so do those of its RRsets pointers, on whole system pages each so
	 * that a derived version's replacement lets them go. */
	size_t ids = desc_count + a->nsec3_node_count;
	size_t pages = (ids + APEX_NODE_PAGE - 1) / APEX_NODE_PAGE;
	const apex_node_t **page = apex_arena_alloc(arena, (pages + 1) * sizeof(*page));
	const apex_rrset_t *const **sets_page =
		apex_arena_alloc(arena, (pages + 1) * sizeof(*sets_page));
	a->rrsets_of = apex_arena_alloc_aligned(arena, pages * APEX_RRSETS_PAGE_SIZE + 1,
						APEX_NODE_PAGE_ALIGN);
	if (page == NULL || sets_page == NULL || a->rrsets_of == NULL)
		return APEX_ENOMEM;
	memset(a->rrsets_of, 0, pages * APEX_RRSETS_PAGE_SIZE);
	for (size_t p = 0; p < pages; p++) {
		page[p] = a->nodes + p * APEX_NODE_PAGE;
		sets_page[p] = a->rrsets_of + p * APEX_NODE_PAGE;
	}
	bd->zone->node_pages = page;
	bd->zone->rrset_pages = sets_page;
	bd->zone->id_count = ids;
	for (size_t i = 0; i < a->nsec3_node_count; i++)
		a->nsec3_owners[i] = (uint32_t)(desc_count + i); /* in owner rank order */
	for (size_t i = 0; i < desc_count + a->nsec3_node_count; i++) {
		apex_node_t *node = &a->nodes[i];
		node->id = (uint32_t)i;
		node->parent = node->cut = node->wildcard_child = APEX_NODE_NONE;
		node->nsec = node->nsec3 = node->wildcard_nsec3 = APEX_NODE_NONE;
	}
	return APEX_OK;
}

/*
 * The fill of the nodes, split into parts of owner ranks that run on
 * the build's threads.  Each part's RRsets, RRSIG sets and copied RDATA
 * start where the parts before it end (apex_build_count() of each part,
 * counted in parallel too), and its first node where the previous part's
 * last one ends.  A part works on a copy of the build state, so that its
 * warnings count and its error message are its own.
 */
#define FILL_PARTS_MAX 16

typedef struct fill_part {
	build_t bd;            /* a copy, bd.b pointing at b below */
	apex_zone_builder_t b; /* a copy, b.err pointing at err below */
	char err[512];
	uint32_t first, end;     /* owner ranks [first, end) */
	size_t desc, nsec3;      /* its first node in descs, and in the NSEC3 nodes */
	size_t sets, sigs, blob; /* what it needs */
	size_t rdata;            /* its RRsets' RDATA */
	const node_desc_t *descs;
	const index_arrays_t *a;
	apex_rrset_t *rrset_next, *sig_next; /* where its RRsets and RRSIG sets go */
	uint8_t *blob_next;
} fill_part_t;

typedef struct fill_plan {
	fill_part_t parts[FILL_PARTS_MAX];
	size_t count;
	size_t nsec3, sets, sigs, blob; /* the totals */
} fill_plan_t;

static int count_parts(void *ctx, size_t begin, size_t end)
{
	fill_part_t *parts = ctx;
	for (size_t i = begin; i < end; i++) {
		fill_part_t *p = &parts[i];
		apex_build_count(&p->bd, p->first, p->end, &p->sets, &p->sigs, &p->blob, &p->rdata);
	}
	return APEX_OK;
}

/* Split the owners into parts, find where each starts among the nodes,
 * and count what each needs (plan->parts' bd copies are set up here). */
static int fill_plan(build_t *bd, const node_desc_t *descs, fill_plan_t *plan)
{
	apex_zone_builder_t *b = bd->b;
	size_t n = b->owner_count;
	size_t parts = apex_parallel_parts(b->threads, n, FILL_PARTS_MAX,
					   atomic_load(&apex_build_part_min));
	memset(plan, 0, sizeof(*plan));
	plan->count = parts;
	size_t d = 0, nsec3 = 0;
	uint32_t r = 0;
	for (size_t i = 0; i < parts; i++) {
		fill_part_t *p = &plan->parts[i];
		p->first = (uint32_t)(n * i / parts);
		p->end = (uint32_t)(n * (i + 1) / parts);
		/* walk the owners before it: each non-NSEC3 owner's node comes
		 * after the empty non-terminals just before it */
		for (; r < p->first; r++) {
			if (bd->owner_is_nsec3[r]) {
				nsec3++;
				continue;
			}
			while (descs[d].empty)
				d++;
			d++;
		}
		p->desc = d;
		p->nsec3 = nsec3;
		p->descs = descs;
		p->bd = *bd;
		p->b = *b;
		p->b.err = p->err;
		p->b.err_size = sizeof(p->err);
		p->err[0] = '\0';
		p->bd.b = &p->b;
		p->bd.ttl_warnings = p->bd.glue_warnings = p->bd.ds_warnings = 0;
	}
	for (; r < n; r++)
		nsec3 += bd->owner_is_nsec3[r];
	plan->nsec3 = nsec3;
	int rc = apex_parallel_for(parts, (unsigned)parts, 1, count_parts, plan->parts);
	bd->zone->rdata_bytes = 0;
	for (size_t i = 0; i < parts; i++) {
		plan->sets += plan->parts[i].sets;
		plan->sigs += plan->parts[i].sigs;
		plan->blob += plan->parts[i].blob;
		bd->zone->rdata_bytes += plan->parts[i].rdata;
	}
	return rc;
}

/*
 * Fill the nodes of owners [p->first, p->end): owners in rank order; the
 * node array is in the same order with empty non-terminals before their
 * first descendant.  Names and keys of owners are where the sort copied
 * them, in canonical order (build_sort.c); empty non-terminals share
 * their descendant's.  The records' RDATA lies in file order: a later
 * owner's is asked for ahead (FILL_AHEAD), so that its cache miss
 * overlaps this owner's work.  The records filled are given back to the
 * system as the part goes (util/give_back.h): the array of records and
 * the nodes' memory are not both resident at the build's peak.
 */
#define FILL_AHEAD 8 /* owners */

static int fill_part(fill_part_t *p)
{
	build_t *bd = &p->bd;
	const apex_build_owner_t *owners = bd->b->owners;
	const node_desc_t *descs = p->descs;
	apex_rrset_t *rrset_next = p->rrset_next, *sig_next = p->sig_next;
	uint8_t *blob = p->blob_next;
	size_t nsec3_index = p->nsec3, d = p->desc;
	apex_give_back_t filled;
	int rc = APEX_OK;

	apex_give_back_init(&filled, &bd->b->rrs[bd->owner_first[p->first]]);
	for (uint32_t r = p->first; r < p->end && rc == APEX_OK; r++) {
		const apex_build_owner_t *o = &owners[r];
		apex_node_t *node;
		if (r + FILL_AHEAD < p->end)
			__builtin_prefetch(bd->b->rrs[bd->owner_first[r + FILL_AHEAD]].rdata - 2);
		if (bd->owner_is_nsec3[r]) {
			node = &p->a->nsec3_nodes[nsec3_index++];
		} else {
			uint16_t label_ends[APEX_LABELS_MAX + 1];
			uint8_t key[APEX_KEY_MAX];
			if (descs[d].empty) /* the label ends of the names above o */
				apex_name_key(o->name, key, label_ends);
			while (descs[d].empty) {
				apex_node_t *ent = &p->a->nodes[d];
				ent->labels = descs[d].labels;
				ent->name = name_ancestor(o->name, o->labels, ent->labels);
				ent->name_size = (uint8_t)apex_name_size(ent->name);
				assert(ent->name + ent->name_size == o->key);
				ent->key_size = label_ends[ent->labels];
				d++; /* no RRsets: rrsets_of[] is NULL */
			}
			node = &p->a->nodes[d++];
		}
		node->name = o->name;
		node->name_size = o->name_size;
		node->key_size = o->key_size;
		assert(apex_node_key(node) == o->key);
		node->labels = o->labels;
		p->a->rrsets_of[node->id] = rrset_next;
		rc = apex_build_fill_node(bd, node, r, &rrset_next, &sig_next, &blob);
		apex_give_back_below(&filled, &bd->b->rrs[bd->owner_first[r + 1]]);
	}
	return rc;
}

static int fill_parts(void *ctx, size_t begin, size_t end)
{
	fill_part_t *parts = ctx;
	int rc = APEX_OK;
	for (size_t i = begin; i < end; i++) {
		int part_rc = fill_part(&parts[i]);
		if (rc == APEX_OK)
			rc = part_rc;
	}
	return rc;
}

/* Fill every node, the parts on the build's threads; warnings summed and
 * the first failing part's error (in owner order) reported. */
static int fill_nodes(build_t *bd, fill_plan_t *plan, const index_arrays_t *a)
{
	apex_rrset_t *rrset_next = a->rrsets, *sig_next = a->sigs;
	uint8_t *blob = a->blob;
	for (size_t i = 0; i < plan->count; i++) {
		fill_part_t *p = &plan->parts[i];
		p->a = a;
		p->rrset_next = rrset_next;
		p->sig_next = sig_next;
		p->blob_next = blob;
		rrset_next += p->sets;
		sig_next += p->sigs;
		blob += p->blob;
	}
	int rc = apex_parallel_for(plan->count, (unsigned)plan->count, 1, fill_parts, plan->parts);
	bool reported = false;
	for (size_t i = 0; i < plan->count; i++) {
		const fill_part_t *p = &plan->parts[i];
		bd->ttl_warnings += p->bd.ttl_warnings;
		if (!reported && p->err[0] != '\0' && bd->b->err_size > 0) {
			snprintf(bd->b->err, bd->b->err_size, "%s", p->err);
			reported = true;
		}
	}
	return rc;
}

/* The name index in the zone: key prefixes, structure, RRSIG links. */
static int publish_index(build_t *bd, const node_desc_t *descs, size_t desc_count,
			 apex_node_t *nodes)
{
	apex_zone_t *zone = bd->zone;
	uint64_t *prefixes = apex_arena_alloc(zone->arena, desc_count * sizeof(*prefixes));
	if (prefixes == NULL)
		return APEX_ENOMEM;
	structure_job_t job = {
		.zone = bd->zone, .nodes = nodes, .descs = descs, .prefixes = prefixes
	};
	(void)apex_parallel_for(desc_count, bd->b->threads, atomic_load(&apex_build_part_min),
				own_structure_part, &job);
	zone->key_prefixes = prefixes;
	zone->order = NULL; /* a whole build gives the names ids in rank order */
	zone->node_count = desc_count;
	zone->apex = &nodes[0];
	zone->record_count = bd->b->rr_count;
	inherit_structure(zone, nodes);
	int rc = link_all_rrsigs(bd);
	for (size_t i = 0; i < desc_count; i++)
		apex_build_warn_stray_ds(bd, &nodes[i]);
	return rc;
}

/* The step just done marked in the build's profile; rc if it failed,
 * APEX_ECANCELED if the build gives way there (builder->give_way). */
static int step_done(apex_zone_builder_t *b, apex_build_step_t step, int rc)
{
	apex_build_profile_step(&b->profile, step);
	if (rc != APEX_OK || b->give_way == NULL || !b->give_way(b->give_way_ctx))
		return rc;
	if (b->err_size > 0)
		snprintf(b->err, b->err_size, "%s: the build gave way", b->zone->file);
	return APEX_ECANCELED;
}

/* Steps 5 to 7: what the query path needs beyond the index. */
static int set_links(build_t *bd, index_arrays_t *a)
{
	apex_zone_t *zone = bd->zone;

	apex_build_profile_t *profile = &bd->b->profile;

	zone->nsec3_owners = a->nsec3_owners;
	zone->nsec3_owner_count = a->nsec3_node_count;
	set_name_hashes(bd, a->nodes, a->nsec3_nodes, a->nsec3_node_count);
	apex_build_profile_step(profile, APEX_BUILD_HASHES);
	int rc = apex_node_table_build_in(
		zone, zone->arena,
		bd->b->table_spare ? APEX_NODE_TABLE_SPARE(zone->node_count) : 0);
	rc = step_done(bd->b, APEX_BUILD_NODE_TABLE, rc);
	if (rc == APEX_OK)
		rc = apex_build_set_soa(bd);
	if (rc == APEX_OK)
		rc = set_rdata_links(bd, a->nodes);
	rc = step_done(bd->b, APEX_BUILD_RDATA_LINKS, rc);
	if (rc != APEX_OK)
		return rc;
	if (apex_node_rrset(bd->zone, zone->apex, APEX_TYPE_NSEC3PARAM) != NULL) {
		zone->dnssec = APEX_DNSSEC_NSEC3;
		rc = set_nsec3(bd, a->nodes, a->nsec3_nodes, a->nsec3_node_count);
	} else if (apex_node_rrset(bd->zone, zone->apex, APEX_TYPE_NSEC) != NULL) {
		zone->dnssec = APEX_DNSSEC_NSEC;
		set_nsec_links(zone, a->nodes);
		set_wildcard_nsec(zone, a->nodes);
	} else {
		zone->dnssec = APEX_DNSSEC_NONE;
	}
	apex_build_profile_step(profile, APEX_BUILD_DNSSEC);
	return rc;
}

static int build_index(build_t *bd)
{
	apex_zone_builder_t *b = bd->b;
	node_desc_t *descs = NULL;
	size_t desc_count = 0;
	index_arrays_t arrays = { 0 };
	fill_plan_t *plan = NULL; /* about 30 KiB: not on the stack */
	int rc;

	for (uint32_t r = 0; r < b->owner_count; r++) {
		rc = apex_build_check_owner(bd, r, r == 0);
		if (rc != APEX_OK)
			return rc;
		bd->owner_is_nsec3[r] = r != 0 && apex_build_only_nsec3(bd, r);
	}
	if ((rc = step_done(b, APEX_BUILD_CHECK, APEX_OK)) != APEX_OK)
		return rc;
	rc = step_done(b, APEX_BUILD_LAYOUT, layout_nodes(bd, &descs, &desc_count));
	if (rc == APEX_OK && (plan = malloc(sizeof(*plan))) == NULL)
		rc = APEX_ENOMEM;
	if (rc == APEX_OK)
		rc = fill_plan(bd, descs, plan);
	if (rc == APEX_OK)
		rc = alloc_index(bd, desc_count, plan->nsec3, plan->sets, plan->sigs, plan->blob,
				 &arrays);
	if (rc == APEX_OK)
		rc = fill_nodes(bd, plan, &arrays);
	free(plan);
	rc = step_done(b, APEX_BUILD_FILL, rc);
	if (rc == APEX_OK) {
		/* The RRsets hold everything of the records now: their array
		 * (40 bytes a record) goes before the rest is built, with the
		 * canonical RDATA the sort read. */
		free(b->rrs);
		b->rrs = NULL;
		apex_arena_destroy(b->canonical);
		b->canonical = NULL;
		rc = publish_index(bd, descs, desc_count, arrays.nodes);
	}
	free(descs);
	rc = step_done(b, APEX_BUILD_INDEX, rc);
	if (rc == APEX_OK)
		rc = set_links(bd, &arrays);
	return rc;
}

int apex_build_begin(build_t *bd, apex_zone_builder_t *b)
{
	memset(bd, 0, sizeof(*bd));
	bd->b = b;
	bd->zone = b->zone;
	apex_name_to_str(b->zone->origin, bd->origin_text, sizeof(bd->origin_text));
	int rc = apex_build_sort(b, &bd->owner_first);
	if (rc != APEX_OK)
		return rc;
	size_t n = b->owner_count;
	bd->owner_is_nsec3 = calloc(n + 1, sizeof(*bd->owner_is_nsec3));
	bd->owner_node = calloc(n + 1, sizeof(*bd->owner_node));
	bd->owner_sigs = calloc(n + 1, sizeof(*bd->owner_sigs));
	bd->owner_sig_count = calloc(n + 1, sizeof(*bd->owner_sig_count));
	if (bd->owner_is_nsec3 == NULL || bd->owner_node == NULL || bd->owner_sigs == NULL ||
	    bd->owner_sig_count == NULL)
		return APEX_ENOMEM;
	return APEX_OK;
}

void apex_build_end(build_t *bd)
{
	if (bd->ttl_warnings > WARNINGS_SHOWN)
		apex_warning("zone %s: %zu RRsets in all have records with differing TTLs",
			     bd->origin_text, bd->ttl_warnings);
	if (bd->ds_warnings > WARNINGS_SHOWN)
		apex_warning("zone %s: %zu DS RRsets in all are not at a delegation",
			     bd->origin_text, bd->ds_warnings);
	if (bd->glue_warnings > WARNINGS_SHOWN)
		apex_warning("zone %s: %zu in-domain name servers in all have no glue",
			     bd->origin_text, bd->glue_warnings);
	free(bd->owner_first);
	free(bd->owner_is_nsec3);
	free(bd->owner_node);
	free(bd->owner_sigs);
	free(bd->owner_sig_count);
}

int apex_zone_build(apex_zone_builder_t *b)
{
	build_t bd;
	int rc;

	apex_build_profile_start(&b->profile);
	if (b->rr_count == 0) {
		memset(&bd, 0, sizeof(bd));
		bd.b = b;
		apex_name_to_str(b->zone->origin, bd.origin_text, sizeof(bd.origin_text));
		return build_fail(&bd, NULL, "no SOA record at the zone apex %s", bd.origin_text);
	}
	rc = step_done(b, APEX_BUILD_SORT, apex_build_begin(&bd, b));
	if (rc == APEX_OK &&
	    (b->owners[0].key_size != b->zone->origin_key_size ||
	     memcmp(b->owners[0].key, b->zone->origin_key, b->zone->origin_key_size) != 0))
		rc = build_fail(&bd, NULL, "no SOA record at the zone apex %s", bd.origin_text);
	if (rc == APEX_OK)
		rc = build_index(&bd);
	if (rc != APEX_OK)
		bd.ttl_warnings = bd.ds_warnings = bd.glue_warnings = 0; /* no summary */
	apex_build_end(&bd);
	return rc;
}
