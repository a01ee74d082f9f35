/* SPDX-License-Identifier: BSD-3-Clause */
/* A version derived from the one before it (see derive.h). */
#include "zone/derive.h"

#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "zone/build_steps.h"

/* What a derivation works with beside the build's state. */
typedef struct derive {
	apex_build_t bd;
	apex_zone_t *zone, *old;
	const apex_node_t **pages; /* the new version's page table */
	uint8_t *copied;           /* per page: already copied into zone's arena */
	uint32_t *old_ids;         /* per owner rank: its node's id */
	uint8_t *changed;          /* bit per id: a changed owner's node */
	size_t old_records;        /* records the changed owners held before */
} derive_t;

/* Bit sets by node id. */
static bool is_marked(const uint8_t *bits, uint32_t id)
{
	return bits[id >> 3] >> (id & 7) & 1;
}

static void mark(uint8_t *bits, uint32_t id)
{
	bits[id >> 3] |= (uint8_t)(1u << (id & 7));
}

const apex_node_t *apex_zone_find_owner(const apex_zone_t *zone, const uint8_t *name)
{
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(name, key, NULL);

	if (key_size < zone->origin_key_size ||
	    memcmp(key, zone->origin_key, zone->origin_key_size) != 0)
		return NULL;
	const apex_node_t *node = apex_zone_find(zone, key, key_size);
	if (node != NULL || zone->nsec3_count == 0 ||
	    apex_name_labels(name) != zone->origin_labels + 1)
		return node;
	/* An NSEC3 owner: its first label is the hash. */
	uint8_t hash[20];
	bool matched;
	int n = apex_base32hex_decode((const char *)name + 1, name[0], hash, sizeof(hash));
	if (n <= 0)
		return NULL;
	const apex_nsec3_t *n3 = apex_zone_nsec3_find(zone, hash, (size_t)n, &matched);
	if (!matched)
		return NULL;
	node = apex_zone_node(zone, n3->node);
	return node->key_size == key_size && memcmp(node->key, key, key_size) == 0 ? node : NULL;
}

/* The node of id in the new version, writable: its page is copied into
 * the new version's arena the first time. */
static apex_node_t *writable_node(derive_t *d, uint32_t id)
{
	size_t p = id >> APEX_NODE_PAGE_BITS;

	if (!d->copied[p]) {
		size_t first = p << APEX_NODE_PAGE_BITS;
		size_t n = d->zone->id_count - first < APEX_NODE_PAGE ? d->zone->id_count - first
								      : APEX_NODE_PAGE;
		apex_node_t *page =
			apex_arena_alloc(d->zone->arena, APEX_NODE_PAGE * sizeof(*page));
		if (page == NULL)
			return NULL;
		memcpy(page, d->pages[p], n * sizeof(*page));
		d->pages[p] = page;
		d->copied[p] = 1;
	}
	return (apex_node_t *)&d->pages[p][id & (APEX_NODE_PAGE - 1)];
}

/* The new version's shell takes everything of old's that it shares. */
static int share(derive_t *d)
{
	apex_zone_t *zone = d->zone;
	const apex_zone_t *old = d->old;
	size_t pages = (old->id_count + APEX_NODE_PAGE - 1) / APEX_NODE_PAGE;

	d->pages = apex_arena_alloc(zone->arena, (pages + 1) * sizeof(*d->pages));
	d->copied = calloc(pages + 1, 1);
	if (d->pages == NULL || d->copied == NULL)
		return APEX_ENOMEM;
	memcpy(d->pages, old->node_pages, pages * sizeof(*d->pages));
	zone->node_pages = d->pages;
	zone->id_count = old->id_count;
	zone->order = old->order;
	zone->node_count = old->node_count;
	zone->key_prefixes = old->key_prefixes;
	zone->node_table = old->node_table;
	zone->node_table_bits = old->node_table_bits;
	zone->dnssec = old->dnssec;
	zone->nsec3_params = old->nsec3_params;
	zone->nsec3 = old->nsec3;
	zone->nsec3_count = old->nsec3_count;
	zone->nsec3_owners = old->nsec3_owners;
	zone->nsec3_owner_count = old->nsec3_owner_count;
	zone->nsec3_start = old->nsec3_start;
	zone->nsec3_bits = old->nsec3_bits;
	zone->stray_rrsigs = old->stray_rrsigs;
	zone->stray_rrsig_count = old->stray_rrsig_count;
	return APEX_OK;
}

static size_t node_record_count(const apex_zone_t *zone, const apex_node_t *node)
{
	size_t n = 0, strays;
	const apex_stray_rrsig_t *stray = apex_zone_stray_rrsigs(zone, node, &strays);

	for (uint16_t i = 0; i < node->rrset_count; i++)
		n += node->rrsets[i].count +
		     (node->rrsets[i].rrsig != NULL ? node->rrsets[i].rrsig->count : 0);
	for (size_t i = 0; i < strays; i++)
		n += stray[i].sigs->count;
	return n;
}

/* Owner rank r is one a derivation handles (derive.h): its node in old,
 * the same spelling, no check failing, an NSEC3 owner staying one. */
static int match_owner(derive_t *d, uint32_t r)
{
	const apex_build_owner_t *o = &d->bd.b->owners[r];
	const apex_node_t *node = apex_zone_find_owner(d->old, o->name);

	if (node == NULL || (node->flags & APEX_NODE_EMPTY) || node->name_size != o->name_size ||
	    memcmp(node->name, o->name, o->name_size) != 0)
		return APEX_ENOTSUP;
	bool is_apex = node->id == d->old->apex->id;
	bool nsec3_owner = !is_apex && apex_zone_find(d->old, node->key, node->key_size) != node;
	if (apex_build_check_owner(&d->bd, r, is_apex) != APEX_OK ||
	    apex_build_only_nsec3(&d->bd, r) != nsec3_owner)
		return APEX_ENOTSUP;
	d->bd.owner_is_nsec3[r] = nsec3_owner;
	d->old_ids[r] = node->id;
	mark(d->changed, node->id);
	d->old_records += node_record_count(d->old, node);
	return APEX_OK;
}

static bool same_rrset(const apex_rrset_t *a, const apex_rrset_t *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return a->count == b->count && a->rdata_size == b->rdata_size &&
	       memcmp(a->rdata, b->rdata, a->rdata_size) == 0;
}

/* The node's new RRsets leave the structure as it was (derive.h). */
static bool same_structure(const apex_node_t *old, const apex_node_t *node)
{
	static const uint16_t kinds[] = { APEX_TYPE_CNAME, APEX_TYPE_DNAME, APEX_TYPE_NSEC };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((apex_node_rrset(old, kinds[i]) == NULL) !=
		    (apex_node_rrset(node, kinds[i]) == NULL))
			return false;
	if (old->flags & APEX_NODE_APEX)
		return same_rrset(apex_node_rrset(old, APEX_TYPE_NSEC3PARAM),
				  apex_node_rrset(node, APEX_TYPE_NSEC3PARAM));
	return (apex_node_rrset(old, APEX_TYPE_NS) == NULL) ==
	       (apex_node_rrset(node, APEX_TYPE_NS) == NULL);
}

/* Still in the NSEC3 chain: the owner of one of its records keeps an
 * NSEC3 RRset of the chain's parameters. */
static bool stays_in_chain(const apex_zone_t *zone, const apex_node_t *node)
{
	const apex_rrset_t *set = apex_node_rrset(node, APEX_TYPE_NSEC3);
	if (set == NULL)
		return false;
	size_t size = (size_t)set->rdata[0] << 8 | set->rdata[1];
	return apex_build_nsec3_in_chain(&zone->nsec3_params, set->rdata + 2, size);
}

/* Build the changed owners' RRsets into their nodes' new pages. */
static int fill_owners(derive_t *d)
{
	apex_build_t *bd = &d->bd;
	uint32_t n = (uint32_t)bd->b->owner_count;
	size_t sets, sigs, blob;

	apex_build_count(bd, 0, n, &sets, &sigs, &blob);
	apex_rrset_t *rrset_next =
		apex_arena_calloc(d->zone->arena, sets + 1, sizeof(apex_rrset_t));
	apex_rrset_t *sig_next = apex_arena_calloc(d->zone->arena, sigs + 1, sizeof(apex_rrset_t));
	uint8_t *blob_next = apex_arena_alloc(d->zone->arena, blob + 1);
	if (rrset_next == NULL || sig_next == NULL || blob_next == NULL)
		return APEX_ENOMEM;
	for (uint32_t r = 0; r < n; r++) {
		const apex_node_t *old = apex_zone_node_of(d->old, d->old_ids[r]);
		apex_node_t *node = writable_node(d, d->old_ids[r]);
		if (node == NULL)
			return APEX_ENOMEM;
		int rc = apex_build_fill_node(bd, node, r, &rrset_next, &sig_next, &blob_next);
		if (rc != APEX_OK)
			return rc;
		if (!same_structure(old, node))
			return APEX_ENOTSUP;
		if (bd->owner_is_nsec3[r] && !stays_in_chain(d->old, node))
			return APEX_ENOTSUP;
	}
	return APEX_OK;
}

static int compare_strays(const void *a, const void *b)
{
	const apex_stray_rrsig_t *x = a, *y = b;

	return (x->node > y->node) - (x->node < y->node);
}

/* Link the changed owners' RRSIGs; the stray list is old's without the
 * changed owners' entries, plus their new ones, sorted by id. */
static int link_rrsigs(derive_t *d)
{
	apex_build_t *bd = &d->bd;
	uint32_t n = (uint32_t)bd->b->owner_count;
	size_t fresh = 0, had = 0;

	for (uint32_t r = 0; r < n; r++) {
		size_t count;
		apex_build_link_rrsigs(bd, r, NULL, &fresh);
		apex_zone_stray_rrsigs(d->old, apex_zone_node_of(d->old, d->old_ids[r]), &count);
		had += count;
	}
	if (fresh == 0 && had == 0) {
		/* apex_build_link_rrsigs() linked them already when counting. */
		return APEX_OK;
	}
	size_t total = d->old->stray_rrsig_count - had + fresh, k = 0;
	apex_stray_rrsig_t *strays =
		apex_arena_alloc(d->zone->arena, (total + 1) * sizeof(*strays));
	if (strays == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < d->old->stray_rrsig_count; i++)
		if (!is_marked(d->changed, d->old->stray_rrsigs[i].node))
			strays[k++] = d->old->stray_rrsigs[i];
	for (uint32_t r = 0; r < n; r++)
		apex_build_link_rrsigs(bd, r, strays, &k);
	qsort(strays, k, sizeof(*strays), compare_strays);
	d->zone->stray_rrsigs = k > 0 ? strays : NULL;
	d->zone->stray_rrsig_count = k;
	return APEX_OK;
}

/* Additional data and RDATA-name nodes of the changed owners' RRsets. */
static int link_owners(derive_t *d)
{
	for (size_t r = 0; r < d->bd.b->owner_count; r++) {
		apex_node_t *node = d->bd.owner_node[r];
		apex_build_warn_stray_ds(&d->bd, node);
		for (uint16_t k = 0; k < node->rrset_count; k++) {
			apex_rrset_t *set = (apex_rrset_t *)&node->rrsets[k];
			int rc = apex_build_wants_additional(node, set)
					 ? apex_build_additional(&d->bd, node, set)
					 : APEX_OK;
			if (rc == APEX_OK)
				rc = apex_build_rdata_nodes(d->zone, set);
			if (rc != APEX_OK)
				return rc;
		}
	}
	return APEX_OK;
}

/* The id of the in-zone name at the target of an SRV record (RDATA
 * after its length), or APEX_NODE_NONE. */
static uint32_t srv_target(const apex_zone_t *zone, const uint8_t *rr)
{
	size_t rdlength = (size_t)rr[0] << 8 | rr[1];
	if (rdlength <= 6)
		return APEX_NODE_NONE;
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(rr + 2 + 6, key, NULL);
	return apex_node_id(apex_zone_find(zone, key, key_size));
}

/* rrset (wanting additional data) names a target in `marked`. */
static bool names_marked(const apex_zone_t *zone, const apex_rrset_t *set, const uint8_t *marked)
{
	const uint8_t *p = set->rdata;
	for (uint16_t i = 0; i < set->count; i++) {
		uint32_t id = set->type == APEX_TYPE_SRV ? srv_target(zone, p)
			      : set->rdata_nodes != NULL ? set->rdata_nodes[i]
							 : APEX_NODE_NONE;
		if (id != APEX_NODE_NONE && is_marked(marked, id))
			return true;
		p += 2 + ((size_t)p[0] << 8 | p[1]);
	}
	return false;
}

/*
 * The additional data of RRsets elsewhere that point at the changed
 * owners' A and AAAA RRsets, which are new objects now: every name's NS,
 * MX and SRV RRsets are looked at (their RDATA-name nodes say the
 * targets), and those naming a changed owner with addresses get a copy
 * with their additional data found again.
 */
static int relink_glue(derive_t *d)
{
	size_t n = d->bd.b->owner_count, marks = 0;
	uint8_t *marked = calloc(d->zone->id_count / 8 + 1, 1);

	if (marked == NULL)
		return APEX_ENOMEM;
	for (size_t r = 0; r < n; r++) {
		const apex_node_t *old = apex_zone_node_of(d->old, d->old_ids[r]);
		const apex_node_t *node = d->bd.owner_node[r];
		if (apex_node_rrset(old, APEX_TYPE_A) || apex_node_rrset(old, APEX_TYPE_AAAA) ||
		    apex_node_rrset(node, APEX_TYPE_A) || apex_node_rrset(node, APEX_TYPE_AAAA)) {
			mark(marked, old->id);
			marks++;
		}
	}
	int rc = APEX_OK;
	for (size_t i = 0; marks > 0 && i < d->zone->node_count && rc == APEX_OK; i++) {
		const apex_node_t *node = apex_zone_node_at(d->zone, i);
		bool stale = false;
		for (uint16_t k = 0; k < node->rrset_count && !stale; k++)
			stale = apex_build_wants_additional(node, &node->rrsets[k]) &&
				names_marked(d->zone, &node->rrsets[k], marked);
		if (!stale || is_marked(d->changed, node->id))
			continue;
		apex_node_t *copy = writable_node(d, node->id);
		apex_rrset_t *sets = copy != NULL
					     ? apex_arena_memdup(d->zone->arena, node->rrsets,
								 node->rrset_count * sizeof(*sets))
					     : NULL;
		if (sets == NULL) {
			rc = APEX_ENOMEM;
			break;
		}
		copy->rrsets = sets;
		for (uint16_t k = 0; k < copy->rrset_count && rc == APEX_OK; k++) {
			if (!apex_build_wants_additional(copy, &sets[k]))
				continue;
			sets[k].additional = NULL;
			rc = apex_build_additional(&d->bd, copy, &sets[k]);
		}
	}
	free(marked);
	return rc;
}

static int derive(derive_t *d)
{
	apex_zone_builder_t *b = d->bd.b;
	int rc = share(d);

	d->old_ids = calloc(b->owner_count + 1, sizeof(*d->old_ids));
	d->changed = calloc(d->old->id_count / 8 + 1, 1);
	if (rc == APEX_OK && (d->old_ids == NULL || d->changed == NULL))
		rc = APEX_ENOMEM;
	for (uint32_t r = 0; r < b->owner_count && rc == APEX_OK; r++)
		rc = match_owner(d, r);
	if (rc == APEX_OK && d->old_ids[0] != d->old->apex->id)
		rc = APEX_ENOTSUP; /* the apex sorts first: it has no record left */
	if (rc == APEX_OK)
		rc = fill_owners(d);
	if (rc != APEX_OK)
		return rc;
	/* The RRsets hold the records now (build.h). */
	free(b->rrs);
	b->rrs = NULL;
	d->zone->apex = apex_zone_node_of(d->zone, d->old->apex->id);
	rc = link_rrsigs(d);
	if (rc == APEX_OK)
		rc = apex_build_set_soa(&d->bd);
	if (rc == APEX_OK)
		rc = link_owners(d);
	if (rc == APEX_OK)
		rc = relink_glue(d);
	return rc;
}

int apex_zone_derive(apex_zone_builder_t *b, apex_zone_t *old, size_t owners)
{
	derive_t d = { .zone = b->zone, .old = old };
	int rc;

	if (b->owner_count != owners || b->rr_count == 0 || old->id_count == 0)
		return APEX_ENOTSUP; /* an owner has no record left */
	rc = apex_build_begin(&d.bd, b);
	if (rc == APEX_OK && b->owner_count != owners)
		rc = APEX_ENOTSUP;
	if (rc == APEX_OK)
		rc = derive(&d);
	if (rc == APEX_OK) {
		apex_zone_t *zone = d.zone;
		zone->record_count = old->record_count - d.old_records + b->rr_count;
		apex_zone_ref(old);
		atomic_fetch_add_explicit(&old->base_refs, 1, memory_order_relaxed);
		zone->base = old;
		zone->derived_depth = old->derived_depth + 1;
	} else {
		d.bd.ttl_warnings = d.bd.ds_warnings = d.bd.glue_warnings = 0; /* no summary */
	}
	apex_build_end(&d.bd);
	free(d.copied);
	free(d.old_ids);
	free(d.changed);
	return rc;
}
