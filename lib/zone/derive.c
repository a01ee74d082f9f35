/* SPDX-License-Identifier: BSD-3-Clause */
/* A version derived from the one before it (see derive.h). */
#include "zone/derive.h"

#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "util/give_back.h"
#include "util/populate.h"
#include "zone/build_steps.h"
#include "zone/derive_state.h"
#include "zone/lookup_ahead.h"
#include "zone/page_discard.h"

typedef apex_derive_t derive_t;

bool apex_zone_derivable(const apex_zone_t *zone)
{
	size_t whole = zone->memory > zone->chain_memory ? zone->memory - zone->chain_memory : 0;
	size_t chain = apex_zone_chain_memory(zone); /* less the pages given back */
	size_t residue = atomic_load_explicit(&zone->compact_held, memory_order_relaxed);

	chain = chain > residue ? chain - residue : 0;
	return zone->derived_depth < APEX_DERIVE_DEPTH_MAX &&
	       (chain <= APEX_DERIVE_CHAIN_FLOOR || chain * APEX_DERIVE_CHAIN_SHARE <= whole);
}

const apex_node_t *apex_zone_find_owner(const apex_zone_t *zone, const uint8_t *name,
					bool *in_index)
{
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(name, key, NULL);

	return apex_zone_find_owner_keyed(zone, name, key, key_size, in_index);
}

const apex_node_t *apex_zone_find_owner_keyed(const apex_zone_t *zone, const uint8_t *name,
					      const uint8_t *key, size_t key_size, bool *in_index)
{
	return apex_zone_find_owner_hashed(zone, apex_name_hash(name), key, key_size, in_index);
}

const apex_node_t *apex_zone_find_owner_hashed(const apex_zone_t *zone, uint32_t hash,
					       const uint8_t *key, size_t key_size, bool *in_index)
{
	bool ignored;

	if (in_index == NULL)
		in_index = &ignored;
	*in_index = false;
	if (key_size < zone->origin_key_size ||
	    memcmp(key, zone->origin_key, zone->origin_key_size) != 0)
		return NULL;
	const apex_node_t *node = apex_zone_find_hashed(zone, hash, key, key_size);
	if (node != NULL) {
		*in_index = true;
		return node;
	}
	/* An owner of NSEC3 records only, outside the index: the list of
	 * them is in canonical order */
	size_t lo = 0, hi = zone->nsec3_owner_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const apex_node_t *n = apex_zone_nsec3_owner_at(zone, mid);
		int c = apex_key_compare(apex_node_key(n), n->key_size, key, key_size);
		if (c == 0)
			return n;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* How many of page p's ids old has (its nodes, its RRsets pointers):
 * a whole build's last page is short, and new ids come after old's. */
static size_t old_ids_on_page(const derive_t *d, size_t p)
{
	size_t first = p << APEX_NODE_PAGE_BITS;

	if (first >= d->old->id_count)
		return 0;
	return d->old->id_count - first < APEX_NODE_PAGE ? d->old->id_count - first
							 : APEX_NODE_PAGE;
}

apex_node_t *apex_derive_writable(derive_t *d, uint32_t id)
{
	size_t p = id >> APEX_NODE_PAGE_BITS;

	if (!d->copied[p]) {
		size_t n = old_ids_on_page(d, p);
		/* only the nodes old lacks are zeroed: a page is 24 KiB, and
		 * zeroing what the copy writes over cost as much as the copy */
		/* a page the chain kept, resident already, else one on whole
		 * system pages, given back whole once replaced
		 * (zone/page_discard.h) */
		apex_node_t *page = apex_zone_take_spare_page(d->old);
		d->copied[p] = page != NULL ? COPIED_INTO_SPARE : COPIED;
		if (page == NULL && d->pool_left > 0) {
			page = d->pool;
			d->pool += APEX_NODE_PAGE;
			d->pool_left--;
		}
		if (page == NULL)
			page = apex_arena_alloc_aligned(d->zone->arena,
							APEX_NODE_PAGE * sizeof(*page),
							APEX_NODE_PAGE_ALIGN);
		if (page == NULL)
			return NULL;
		if (n > 0)
			memcpy(page, d->pages[p], n * sizeof(*page));
		memset(page + n, 0, (APEX_NODE_PAGE - n) * sizeof(*page));
		d->pages[p] = page;
	}
	return (apex_node_t *)&d->pages[p][id & (APEX_NODE_PAGE - 1)];
}

int apex_derive_set_rrsets(derive_t *d, uint32_t id, const apex_rrset_t *sets)
{
	size_t p = id >> APEX_NODE_PAGE_BITS;

	if (!d->rrsets_copied[p]) {
		size_t n = old_ids_on_page(d, p);
		/* a page the chain kept, as for node pages, else one on a
		 * whole system page, kept or given back once replaced
		 * (zone/page_discard.h) */
		const apex_rrset_t **page = apex_zone_take_spare_small(d->old);
		uint8_t copied = page != NULL ? COPIED_INTO_SPARE : COPIED;
		if (page == NULL && d->rrsets_pool_left > 0) {
			page = d->rrsets_pool;
			d->rrsets_pool += APEX_NODE_PAGE;
			d->rrsets_pool_left--;
		}
		if (page == NULL)
			page = apex_arena_alloc_aligned(d->zone->arena, APEX_RRSETS_PAGE_SIZE,
							APEX_NODE_PAGE_ALIGN);
		if (page == NULL)
			return APEX_ENOMEM;
		d->rrsets_copied[p] = copied;
		if (n > 0)
			memcpy(page, d->rrset_pages[p], n * sizeof(*page));
		memset(page + n, 0, (APEX_NODE_PAGE - n) * sizeof(*page));
		d->rrset_pages[p] = page;
	}
	d->rrset_pages[p][id & (APEX_NODE_PAGE - 1)] = sets;
	return APEX_OK;
}

/* How many of marks[0..n) are set; all cleared. */
static size_t taken_marks(uint8_t *marks, size_t n)
{
	size_t count = 0;

	for (size_t p = 0; p < n; p++) {
		count += marks[p];
		marks[p] = 0;
	}
	return count;
}

/* Owner rank r, a name old has, keeps its number of RRsets: its node
 * stays as it is, only its RRsets pointer changes (fill_owners()). */
static bool keeps_rrset_count(const derive_t *d, uint32_t r)
{
	size_t sets, sigs, blob;

	apex_build_count(&d->bd, r, r + 1, &sets, &sigs, &blob, NULL);
	return sets == apex_zone_node_of(d->old, d->ids[r])->rrset_count;
}

/* The node pages this derivation copies or starts, at least: those of
 * the changed owners old has whose number of RRsets changes (removed
 * names are not written) and of the new ids; less the pages the chain
 * keeps, which it takes first.  d->copied (all zero, and left so) serves
 * to count them. */
static size_t pages_to_copy(derive_t *d, size_t ids)
{
	size_t count, spare_pages;

	for (uint32_t r = 0; r < d->bd.b->owner_count; r++)
		if (!d->fresh[r] && (d->copy_nodes || !keeps_rrset_count(d, r)))
			d->copied[d->ids[r] >> APEX_NODE_PAGE_BITS] = 1;
	for (size_t p = d->old->id_count >> APEX_NODE_PAGE_BITS;
	     ids > d->old->id_count && p < d->page_count; p++)
		d->copied[p] = 1; /* the new ids' (page_count: ids' pages) */
	count = taken_marks(d->copied, d->page_count);
	spare_pages = apex_zone_spare_memory(d->old) / (APEX_NODE_PAGE * sizeof(apex_node_t));
	return count > spare_pages ? count - spare_pages : 0;
}

/* Memory for the pages a large change copies, in one piece faulted in
 * at once (util/populate.h): page by page, the faults of a 10,000-change
 * IXFR's copies cost more than the copies. */
static void fill_pool(derive_t *d, size_t ids)
{
	size_t count = pages_to_copy(d, ids), bytes = count * APEX_NODE_PAGE * sizeof(apex_node_t);

	if (bytes < APEX_POPULATE_MIN)
		return;
	d->pool = apex_arena_alloc_aligned(d->zone->arena, bytes, APEX_NODE_PAGE_ALIGN);
	if (d->pool == NULL)
		return; /* page by page, as a small change does */
	apex_populate_for_write(d->pool, bytes);
	d->pool_left = count;
}

/* The pages of RRsets pointers the changed owners are on, in one piece:
 * one aligned allocation each would leave up to a system page between
 * two, which the chain would hold until its compaction.  Less those the
 * chain keeps, taken first; those of the RRsets linked again (relink())
 * come one by one. */
static void fill_rrsets_pool(derive_t *d, size_t ids)
{
	size_t count, spare = apex_zone_spare_small_count(d->old);

	for (uint32_t r = 0; r < d->bd.b->owner_count; r++)
		if (!d->fresh[r]) /* (the new names' ids come after share()) */
			d->rrsets_copied[d->ids[r] >> APEX_NODE_PAGE_BITS] = 1;
	for (size_t p = d->old->id_count >> APEX_NODE_PAGE_BITS;
	     ids > d->old->id_count && p < d->page_count; p++)
		d->rrsets_copied[p] = 1;
	count = taken_marks(d->rrsets_copied, d->page_count);
	count = count > spare ? count - spare : 0;
	d->rrsets_pool =
		count > 0 ? apex_arena_alloc_aligned(d->zone->arena, count * APEX_RRSETS_PAGE_SIZE,
						     APEX_NODE_PAGE_ALIGN)
			  : NULL;
	d->rrsets_pool_left = d->rrsets_pool != NULL ? count : 0;
	if (count * APEX_RRSETS_PAGE_SIZE >= APEX_POPULATE_MIN && d->rrsets_pool != NULL)
		apex_populate_for_write(d->rrsets_pool, count * APEX_RRSETS_PAGE_SIZE);
}

/* The new version's shell takes everything of old's that it shares. */
static int share(derive_t *d)
{
	apex_zone_t *zone = d->zone;
	const apex_zone_t *old = d->old;
	size_t ids = old->id_count + d->fresh_count + d->ent_count;
	size_t old_pages = (old->id_count + APEX_NODE_PAGE - 1) / APEX_NODE_PAGE;
	size_t pages = (ids + APEX_NODE_PAGE - 1) / APEX_NODE_PAGE;

	d->pages = apex_arena_calloc(zone->arena, pages + 1, sizeof(*d->pages));
	d->copied = calloc(pages + 1, 1);
	d->rrset_pages = apex_arena_calloc(zone->arena, pages + 1, sizeof(*d->rrset_pages));
	d->rrsets_copied = calloc(pages + 1, 1);
	if (d->pages == NULL || d->copied == NULL || d->rrset_pages == NULL ||
	    d->rrsets_copied == NULL)
		return APEX_ENOMEM;
	memcpy(d->pages, old->node_pages, old_pages * sizeof(*d->pages));
	/* (the pointers themselves are not written through old's pages) */
	memcpy(d->rrset_pages, old->rrset_pages, old_pages * sizeof(*d->rrset_pages));
	d->page_count = pages;
	fill_pool(d, ids);
	fill_rrsets_pool(d, ids);
	zone->node_pages = d->pages;
	zone->rrset_pages = (const apex_rrset_t *const *const *)d->rrset_pages;
	zone->id_count = ids;
	zone->order = old->order;
	zone->node_count = old->node_count;
	zone->key_prefixes = old->key_prefixes;
	zone->node_table_pages = old->node_table_pages;
	zone->node_table_size = old->node_table_size;
	zone->node_table_length = old->node_table_length;
	zone->node_table_mask = old->node_table_mask;
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
	/* old holds a user's reference: its index memory is still there */
	apex_index_mem_t *mem = atomic_load_explicit(&old->index_mem, memory_order_acquire);
	if (mem != NULL)
		apex_index_mem_ref(mem);
	atomic_store_explicit(&zone->index_mem, mem, memory_order_release);
	mem = atomic_load_explicit(&old->nsec3_mem, memory_order_acquire);
	if (mem != NULL)
		apex_index_mem_ref(mem);
	atomic_store_explicit(&zone->nsec3_mem, mem, memory_order_release);
	return APEX_OK;
}

static size_t node_record_count(const apex_zone_t *zone, const apex_node_t *node)
{
	size_t n = 0, strays;
	const apex_stray_rrsig_t *stray = apex_zone_stray_rrsigs(zone, node, &strays);

	const apex_rrset_t *sets = apex_node_rrsets(zone, node);

	for (uint16_t i = 0; i < node->rrset_count; i++)
		n += sets[i].count + (sets[i].rrsig != NULL ? sets[i].rrsig->count : 0);
	for (size_t i = 0; i < strays; i++)
		n += stray[i].sigs->count;
	return n;
}

/* The node in old of the owner o (NULL: a name old lacks), and whether
 * it is a name of the index: as the caller found it, else looked up.
 * The owners come in canonical order, as the caller's list is sorted. */
static const apex_node_t *old_node(derive_t *d, const apex_build_owner_t *o, bool *in_index)
{
	while (d->found_at < d->found_count) {
		const apex_derive_found_t *f = &d->found[d->found_at];
		int c = apex_key_compare(f->key, f->key_size, o->key, o->key_size);
		if (c > 0)
			break;
		d->found_at++;
		if (c == 0) {
			*in_index = f->in_index;
			return apex_zone_node(d->old, f->node);
		}
	}
	return apex_zone_find_owner_keyed(d->old, o->name, o->key, o->key_size, in_index);
}

/* Owner rank r is one a derivation handles (derive.h): its node in old
 * with the same spelling, or a new name or NSEC3 owner; no check
 * failing; an NSEC3 owner staying one. */
static int match_owner(derive_t *d, uint32_t r)
{
	const apex_build_owner_t *o = &d->bd.b->owners[r];
	bool in_index = false;
	const apex_node_t *node = old_node(d, o, &in_index);

	if (node == NULL) {
		if (apex_build_check_owner(&d->bd, r, false) != APEX_OK)
			return APEX_ENOTSUP;
		d->bd.owner_is_nsec3[r] = apex_build_only_nsec3(&d->bd, r);
		d->fresh[r] = true;
		d->fresh_count++;
		d->fresh_nsec3 += d->bd.owner_is_nsec3[r];
		return APEX_OK;
	}
	if ((node->flags & APEX_NODE_EMPTY) || node->name_size != o->name_size ||
	    memcmp(node->name, o->name, o->name_size) != 0)
		return APEX_ENOTSUP;
	bool is_apex = node->id == d->old->apex->id;
	bool nsec3_owner = !is_apex && !in_index;
	if (apex_build_check_owner(&d->bd, r, is_apex) != APEX_OK ||
	    apex_build_only_nsec3(&d->bd, r) != nsec3_owner)
		return APEX_ENOTSUP;
	d->bd.owner_is_nsec3[r] = nsec3_owner;
	d->ids[r] = node->id;
	/* the same bytes, in memory the derivation does not free */
	d->bd.b->owners[r].name = node->name;
	d->bd.b->owners[r].key = apex_node_key(node);
	apex_derive_mark(d->changed, node->id);
	return APEX_OK;
}

/* The changed owners of old left without records: removed names, and
 * removed NSEC3 owners (not in the name index). */
static int find_removed(derive_t *d)
{
	d->removed = malloc((d->touched_count + 1) * sizeof(*d->removed));
	d->removed_nsec3 = malloc((d->touched_count + 1) * sizeof(*d->removed_nsec3));
	if (d->removed == NULL || d->removed_nsec3 == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < d->touched_count; i++) {
		uint32_t id = d->touched[i];
		const apex_node_t *node = apex_zone_node_of(d->old, id);
		d->old_records += node_record_count(d->old, node);
		if (apex_derive_marked(d->changed, id))
			continue;
		if (apex_zone_find_hashed(d->old, apex_name_hash(node->name), apex_node_key(node),
					  node->key_size) == node)
			d->removed[d->removed_count++] = id;
		else
			d->removed_nsec3[d->removed_nsec3_count++] = id;
	}
	for (size_t i = 0; i < d->removed_count; i++)
		apex_derive_mark(d->changed, d->removed[i]);
	for (size_t i = 0; i < d->removed_nsec3_count; i++)
		apex_derive_mark(d->changed, d->removed_nsec3[i]);
	return APEX_OK;
}

static bool same_rrset(const apex_rrset_t *a, const apex_rrset_t *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return a->count == b->count && a->rdata_size == b->rdata_size &&
	       memcmp(a->rdata, b->rdata, a->rdata_size) == 0;
}

/* The node's new RRsets leave the structure as it was (derive.h): old
 * a node of d->old, node its successor in d->zone. */
static bool same_structure(const derive_t *d, const apex_node_t *old, const apex_node_t *node)
{
	static const uint16_t kinds[] = { APEX_TYPE_CNAME, APEX_TYPE_DNAME, APEX_TYPE_NSEC };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((apex_node_rrset(d->old, old, kinds[i]) == NULL) !=
		    (apex_node_rrset(d->zone, node, kinds[i]) == NULL))
			return false;
	if (old->flags & APEX_NODE_APEX)
		return same_rrset(apex_node_rrset(d->old, old, APEX_TYPE_NSEC3PARAM),
				  apex_node_rrset(d->zone, node, APEX_TYPE_NSEC3PARAM));
	return (apex_node_rrset(d->old, old, APEX_TYPE_NS) == NULL) ==
	       (apex_node_rrset(d->zone, node, APEX_TYPE_NS) == NULL);
}

/* Still in the NSEC3 chain: the owner of one of its records, a node of
 * zone, keeps an NSEC3 RRset of the chain's parameters. */
static bool stays_in_chain(const apex_zone_t *zone, const apex_node_t *node)
{
	const apex_rrset_t *set = apex_node_rrset(zone, node, APEX_TYPE_NSEC3);
	if (set == NULL)
		return false;
	size_t size = (size_t)set->rdata[0] << 8 | set->rdata[1];
	return apex_build_nsec3_in_chain(&zone->nsec3_params, set->rdata + 2, size);
}

/* The node of owner rank r, a name old has, filled as scratch: its page
 * copied only if its number of RRsets changes (the rest of the node is
 * old's, and the RRsets pointer is the version's, apart), or if the
 * caller asks (d->copy_nodes); shared with old otherwise. */
static int owner_node_of(derive_t *d, uint32_t r, const apex_node_t *scratch)
{
	apex_node_t *node = (apex_node_t *)apex_zone_node_of(d->zone, d->ids[r]);

	if (d->copy_nodes || scratch->rrset_count != node->rrset_count) {
		node = apex_derive_writable(d, d->ids[r]);
		if (node == NULL)
			return APEX_ENOMEM;
		node->rrset_count = scratch->rrset_count;
	}
	d->bd.owner_node[r] = node;
	return APEX_OK;
}

/* The changed owners' nodes, read again once the names are in place:
 * apex_derive_names() may have copied the pages of those it shared. */
static void owner_nodes_again(derive_t *d)
{
	for (uint32_t r = 0; r < d->bd.b->owner_count; r++)
		d->bd.owner_node[r] = (apex_node_t *)apex_zone_node_of(d->zone, d->ids[r]);
}

/* Build the changed owners' RRsets, and their nodes where they change. */
static int fill_owners(derive_t *d)
{
	apex_build_t *bd = &d->bd;
	uint32_t n = (uint32_t)bd->b->owner_count;
	size_t sets, sigs, blob;

	apex_build_count(bd, 0, n, &sets, &sigs, &blob, NULL);
	apex_rrset_t *rrset_next =
		apex_arena_calloc(d->zone->arena, sets + 1, sizeof(apex_rrset_t));
	apex_rrset_t *sig_next = apex_arena_calloc(d->zone->arena, sigs + 1, sizeof(apex_rrset_t));
	uint8_t *blob_next = apex_arena_alloc(d->zone->arena, blob + 1);
	if (rrset_next == NULL || sig_next == NULL || blob_next == NULL)
		return APEX_ENOMEM;
	/* The records read given back as the RRsets are built, as a whole
	 * build does (zone/build.c's fill_part()): 40 bytes a record, 80 MB
	 * for a reload of a tenth of a 10M-record zone, otherwise resident
	 * beside the node pages and RRsets until the last owner is built. */
	apex_give_back_t filled;
	apex_give_back_init(&filled, bd->b->rrs);
	for (uint32_t r = 0; r < n; r++) {
		if ((r + 1) % APEX_DERIVE_GIVE_WAY_EVERY == 0 && apex_derive_gives_way(d))
			return APEX_ECANCELED;
		const apex_node_t *old = d->fresh[r] ? NULL : apex_zone_node_of(d->old, d->ids[r]);
		apex_node_t scratch, *node = &scratch;
		if (old == NULL) {
			node = apex_derive_writable(d, d->ids[r]);
			if (node == NULL)
				return APEX_ENOMEM;
			apex_derive_init_fresh(d, r, node);
		} else {
			scratch = *old; /* only its RRsets count is written */
		}
		int rc = apex_derive_set_rrsets(d, d->ids[r], rrset_next);
		if (rc == APEX_OK)
			rc = apex_build_fill_node(bd, node, r, &rrset_next, &sig_next, &blob_next);
		if (rc == APEX_OK && old != NULL)
			rc = owner_node_of(d, r, &scratch);
		if (rc != APEX_OK)
			return rc;
		apex_give_back_below(&filled, &bd->b->rrs[bd->owner_first[r + 1]]);
		if (old == NULL)
			continue;
		if (!same_structure(d, old, bd->owner_node[r]))
			return APEX_ENOTSUP;
		if (bd->owner_is_nsec3[r] && !stays_in_chain(d->zone, bd->owner_node[r]))
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

	for (uint32_t r = 0; r < n; r++)
		apex_build_link_rrsigs(bd, r, NULL, &fresh);
	for (size_t i = 0; i < d->touched_count; i++) {
		size_t count;
		apex_zone_stray_rrsigs(d->old, apex_zone_node_of(d->old, d->touched[i]), &count);
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
		if (!apex_derive_marked(d->changed, d->old->stray_rrsigs[i].node))
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
		if ((r + 1) % APEX_DERIVE_GIVE_WAY_EVERY == 0 && apex_derive_gives_way(d))
			return APEX_ECANCELED;
		apex_node_t *node = d->bd.owner_node[r];
		apex_build_warn_stray_ds(&d->bd, node);
		for (uint16_t k = 0; k < node->rrset_count; k++) {
			apex_rrset_t *set = (apex_rrset_t *)&apex_node_rrsets(d->zone, node)[k];
			int rc = apex_build_wants_additional(node, set)
					 ? apex_build_additional(&d->bd, d->zone->arena, node, set)
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

/* Record i's RDATA (after its length) in set. */
static const uint8_t *rdata_at(const apex_rrset_t *set, uint16_t i)
{
	const uint8_t *p = set->rdata;

	for (uint16_t j = 0; j < i; j++)
		p += 2 + ((size_t)p[0] << 8 | p[1]);
	return p;
}

/* What the change reaches beyond the changed owners (mark_reach()). */
typedef struct reach {
	uint8_t *marked;    /* changed owners with addresses, removed names, new names */
	uint8_t *ancestors; /* the names old had closest to new names with addresses */
} reach_t;

/* The name at the start of an NS, MX or SRV RDATA (after its length)
 * is a new name with addresses in zone. */
static bool new_with_addresses(const derive_t *d, uint16_t type, const uint8_t *rr)
{
	size_t rdlength = (size_t)rr[0] << 8 | rr[1];
	size_t offset = type == APEX_TYPE_MX ? 2 : type == APEX_TYPE_SRV ? 6 : 0;
	if (rdlength <= offset)
		return false;
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(rr + 2 + offset, key, NULL);
	const apex_node_t *node = apex_zone_find(d->zone, key, key_size);
	return node != NULL && node->id >= d->old->id_count &&
	       (apex_node_rrset(d->zone, node, APEX_TYPE_A) ||
		apex_node_rrset(d->zone, node, APEX_TYPE_AAAA));
}

/* rrset names a target the change reaches: by its RDATA-name nodes (a
 * marked name, or a new one with addresses below a marked ancestor), SRV
 * by its targets looked up, or by the owners of its additional data.
 * (RDATA-name nodes of names now new without addresses stay their
 * ancestor's: zone.h.) */
static bool names_marked(const derive_t *d, const apex_rrset_t *set, const reach_t *reach)
{
	unsigned per_record = apex_rdata_compressed_names(set->type);
	/* record i's RDATA, walked to only where it is read (SRV, and a
	 * marked ancestor): the pass reads every RRset of the zone, whose
	 * RDATA lies apart from it in the file's order, a miss for each
	 * (half of a compaction part's time at 10M records) */
	bool srv = set->type == APEX_TYPE_SRV;
	const uint8_t *p = set->rdata;
	for (uint16_t i = 0; i < set->count; i++) {
		uint32_t id = srv ? srv_target(d->zone, p) : APEX_NODE_NONE;
		if (id != APEX_NODE_NONE && apex_derive_marked(reach->marked, id))
			return true;
		for (unsigned k = 0; set->rdata_nodes != NULL && k < per_record; k++) {
			id = set->rdata_nodes[(size_t)i * per_record + k];
			if (id == APEX_NODE_NONE)
				continue;
			if (apex_derive_marked(reach->marked, id) ||
			    (k == 0 && apex_derive_marked(reach->ancestors, id) &&
			     new_with_addresses(d, set->type, srv ? p : rdata_at(set, i))))
				return true;
		}
		if (srv)
			p += 2 + ((size_t)p[0] << 8 | p[1]);
	}
	for (uint16_t i = 0; set->additional != NULL && i < set->additional->count; i++)
		if (apex_derive_marked(reach->marked, set->additional->items[i].owner))
			return true;
	return false;
}

/* The nodes whose change reaches RRsets elsewhere, marked: changed and
 * removed owners with addresses (glue points at their RRsets), new names
 * with addresses (SRV targets are looked up), and the names old had
 * closest to those (RDATA-name nodes of names that did not exist are
 * their closest ancestor's).  Names without addresses give no RRset
 * additional data: an RDATA-name node left at one removed, or at an
 * ancestor of one added, changes no answer (zone.h).  How many. */
static size_t mark_reach(derive_t *d, const reach_t *reach)
{
	uint8_t *marked = reach->marked;
	size_t n = d->bd.b->owner_count, marks = 0;

	for (size_t r = 0; r < n; r++) {
		const apex_node_t *node = d->bd.owner_node[r];
		bool addresses = apex_node_rrset(d->zone, node, APEX_TYPE_A) ||
				 apex_node_rrset(d->zone, node, APEX_TYPE_AAAA);
		if (!d->fresh[r]) {
			const apex_node_t *old = apex_zone_node_of(d->old, d->ids[r]);
			addresses = addresses || apex_node_rrset(d->old, old, APEX_TYPE_A) ||
				    apex_node_rrset(d->old, old, APEX_TYPE_AAAA);
			if (addresses) {
				apex_derive_mark(marked, old->id);
				marks++;
			}
			continue;
		}
		if (!addresses || d->bd.owner_is_nsec3[r])
			continue;
		apex_derive_mark(marked, node->id);
		marks++;
		uint32_t up = node->parent;
		while (up != APEX_NODE_NONE && up >= d->old->id_count)
			up = apex_zone_node_of(d->zone, up)->parent;
		if (up != APEX_NODE_NONE)
			apex_derive_mark(reach->ancestors, up);
	}
	for (size_t i = 0; i < d->removed_count; i++) {
		const apex_node_t *old = apex_zone_node_of(d->old, d->removed[i]);
		if (apex_node_rrset(d->old, old, APEX_TYPE_A) ||
		    apex_node_rrset(d->old, old, APEX_TYPE_AAAA)) {
			apex_derive_mark(marked, old->id);
			marks++;
		}
	}
	return marks;
}

/* A copy of node's RRsets with their RDATA-name nodes and additional data
 * found again in the new version. */
static int relink_node(derive_t *d, const apex_node_t *node)
{
	apex_rrset_t *sets = apex_arena_memdup(d->zone->arena, apex_node_rrsets(d->zone, node),
					       node->rrset_count * sizeof(*sets));
	int rc = sets != NULL ? apex_derive_set_rrsets(d, node->id, sets) : APEX_ENOMEM;

	for (uint16_t k = 0; rc == APEX_OK && k < node->rrset_count; k++) {
		if (sets[k].rdata_nodes != NULL)
			rc = apex_build_rdata_nodes(d->zone, &sets[k]);
		if (rc == APEX_OK && apex_build_wants_additional(node, &sets[k])) {
			sets[k].additional = NULL;
			rc = apex_build_additional(&d->bd, d->zone->arena, node, &sets[k]);
		}
	}
	return rc;
}

/*
 * The RRsets elsewhere that the change reaches (mark_reach()): NS, MX and
 * SRV whose glue pointed at a changed owner's address RRsets, which are
 * new objects now, or that name a new or removed name, and any RRset
 * whose RDATA-name nodes do.  One pass over the names, when something is
 * marked, asking whether to give way every APEX_DERIVE_GIVE_WAY_EVERY
 * names; each such name gets a copy of its RRsets, linked again.
 */
static int relink(derive_t *d)
{
	reach_t reach = { calloc(d->zone->id_count / 8 + 1, 1),
			  calloc(d->zone->id_count / 8 + 1, 1) };
	int rc = reach.marked != NULL && reach.ancestors != NULL ? APEX_OK : APEX_ENOMEM;

	size_t marks = rc == APEX_OK ? mark_reach(d, &reach) : 0;
	for (size_t i = 0; marks > 0 && i < d->zone->node_count && rc == APEX_OK; i++) {
		/* a pass over all the names (46 ms at 10M records), which a
		 * part of a compaction gives way within */
		if ((i + 1) % APEX_DERIVE_GIVE_WAY_EVERY == 0 && apex_derive_gives_way(d)) {
			rc = APEX_ECANCELED;
			break;
		}
		const apex_node_t *node = apex_zone_node_at(d->zone, i);
		bool stale = false;
		for (uint16_t k = 0; k < node->rrset_count && !stale; k++)
			stale = names_marked(d, &apex_node_rrsets(d->zone, node)[k], &reach);
		if (stale && !apex_derive_marked(d->changed, node->id))
			rc = relink_node(d, node);
	}
	free(reach.marked);
	free(reach.ancestors);
	return rc;
}

/* The empty non-terminals the new names need, with room for their ids
 * in d->changed. */
static int find_ents(derive_t *d)
{
	size_t before = (d->old->id_count + d->bd.b->owner_count) / 8 + 1;
	int rc = apex_derive_find_ents(d);

	if (rc != APEX_OK || d->ent_count == 0)
		return rc;
	size_t after = (d->old->id_count + d->bd.b->owner_count + d->ent_count) / 8 + 1;
	uint8_t *grown = realloc(d->changed, after);
	if (grown == NULL)
		return APEX_ENOMEM;
	memset(grown + before, 0, after - before);
	d->changed = grown;
	return APEX_OK;
}

/* The owners matched with old's names, the removed ones found, the new
 * ones given ids, and their RRsets built (derive.h's conditions). */
static int owners_of(derive_t *d)
{
	apex_zone_builder_t *b = d->bd.b;
	size_t n = b->owner_count;
	int rc = APEX_OK;

	d->ids = calloc(n + 1, sizeof(*d->ids));
	d->fresh = calloc(n + 1, sizeof(*d->fresh));
	d->changed = calloc((d->old->id_count + n) / 8 + 1, 1);
	if (d->ids == NULL || d->fresh == NULL || d->changed == NULL)
		return APEX_ENOMEM;
	for (uint32_t r = 0, node = 0, name = 0; r < n && rc == APEX_OK; r++) {
		/* the nodes and names match_owner() compares, of owners found
		 * before (as they are matched, in order), asked for ahead: with
		 * thousands of them they are no longer in the caches */
		for (; node < d->found_count && node < d->found_at + APEX_LOOKUP_AHEAD_SECOND;
		     node++)
			apex_lookup_ahead_id_node(d->old, d->found[node].node);
		for (; name < d->found_count && name < d->found_at + APEX_LOOKUP_AHEAD_THIRD;
		     name++)
			apex_lookup_ahead_id_name(d->old, d->found[name].node);
		rc = match_owner(d, r);
	}
	/* The new names' copies are the version's, and the empty
	 * non-terminals made above them point into them; the other owners
	 * point at their nodes' names in old now (match_owner()): the sort's
	 * copies are let go before the derivation's peak (b->names_apart). */
	for (uint32_t r = 0; r < n && rc == APEX_OK; r++)
		if (d->fresh[r])
			rc = apex_build_owner_copy(d->zone->arena, &b->owners[r], &b->owners[r]);
	if (rc == APEX_OK) {
		apex_arena_destroy(b->sorted_names);
		b->sorted_names = NULL;
	}
	if (rc == APEX_OK && (d->fresh[0] || d->ids[0] != d->old->apex->id))
		rc = APEX_ENOTSUP; /* the apex sorts first: it has no record left */
	if (rc == APEX_OK)
		rc = find_removed(d);
	if (rc == APEX_OK && d->fresh_count + d->removed_count + d->removed_nsec3_count > 0)
		rc = apex_derive_check_removed(d);
	if (rc == APEX_OK && d->fresh_count > 0)
		rc = find_ents(d);
	if (rc == APEX_OK)
		rc = share(d);
	uint32_t next = (uint32_t)d->old->id_count;
	for (uint32_t r = 0; r < n && rc == APEX_OK; r++)
		if (d->fresh[r]) {
			d->ids[r] = next++;
			apex_derive_mark(d->changed, d->ids[r]);
		}
	for (size_t i = 0; i < d->ent_count && rc == APEX_OK; i++) {
		d->ents[i].id = next++;
		apex_derive_mark(d->changed, d->ents[i].id);
	}
	if (rc == APEX_OK)
		rc = fill_owners(d);
	return rc;
}

static int derive(derive_t *d)
{
	apex_zone_builder_t *b = d->bd.b;
	int rc = owners_of(d);

	if (rc == APEX_OK) {
		/* The RRsets hold the records now (build.h).  Given back to
		 * the system before they are freed, which leaves them
		 * resident in the allocator for seconds: under the
		 * derivation's peak, 5 MB for a reload of a tenth of a
		 * 1M-record zone. */
		apex_give_back_t given;
		apex_give_back_init(&given, b->rrs);
		apex_give_back_below(&given, b->rrs + b->rr_count);
		free(b->rrs);
		b->rrs = NULL;
		apex_arena_destroy(b->canonical);
		b->canonical = NULL;
		/* each owner's first record in b->rrs: gone with them */
		free(d->bd.owner_first);
		d->bd.owner_first = NULL;
		/* The owners' names and keys are the nodes' from here on
		 * (apex_derive_fresh_node()): the builder's list of them (24
		 * bytes an owner, 24 MB for a reload of a tenth of a
		 * 10M-record zone) goes before the name index is copied, the
		 * steps at which the derivation's memory is highest
		 * (doc/reload.md). */
		free(b->owners);
		b->owners = NULL;
	}
	if (d->found_read != NULL) {
		d->found = NULL; /* not read again: the caller's to free */
		d->found_read(d->found_ctx);
	}
	rc = apex_derive_step_done(d, APEX_DERIVE_OWNERS, rc);
	if (rc != APEX_OK)
		return rc;
	if (d->fresh_count + d->removed_count + d->removed_nsec3_count > 0)
		rc = apex_derive_names(d); /* its own steps, INDEX and NAMES */
	owner_nodes_again(d);
	d->zone->apex = apex_zone_node_of(d->zone, d->old->apex->id);
	if (rc == APEX_OK)
		rc = link_rrsigs(d);
	free(d->bd.owner_sigs); /* linked: the RRsets point at them */
	d->bd.owner_sigs = NULL;
	free(d->bd.owner_sig_count);
	d->bd.owner_sig_count = NULL;
	if (rc == APEX_OK)
		rc = apex_build_set_soa(&d->bd);
	if (rc == APEX_OK)
		rc = link_owners(d);
	/* the links' time in two marks: the question between them */
	rc = apex_derive_step_done(d, APEX_DERIVE_LINKS, rc);
	if (rc == APEX_OK)
		rc = relink(d);
	apex_derive_profile_step(&d->profile, APEX_DERIVE_LINKS);
	return rc;
}

/* One derivation from old's chain more (1) or less (-1): the sweep of its
 * memory waits for none (zone/chain_sweep.h). */
static void deriving(const apex_zone_t *old, int step)
{
	apex_zone_t *root = apex_zone_chain_root(old);

	pthread_mutex_lock(&root->spare_lock);
	root->deriving += (unsigned)step;
	pthread_mutex_unlock(&root->spare_lock);
}

int apex_zone_derive(apex_zone_builder_t *b, apex_zone_t *old, const apex_derive_owners_t *owners)
{
	derive_t d = { .zone = b->zone,
		       .old = old,
		       .touched = owners->changed,
		       .touched_count = owners->changed_count,
		       .found = owners->found,
		       .found_count = owners->found_count,
		       .found_read = owners->found_read,
		       .found_ctx = owners->found_ctx,
		       .copy_nodes = owners->copy_nodes };
	int rc = APEX_OK;

	if (b->rr_count == 0 || old->id_count == 0 || old->node_table_pages == NULL)
		return APEX_ENOTSUP;
	d.profile.mark_ns = apex_monotonic_ns(); /* the rest zeroed above */
	deriving(old, 1);
	b->names_apart = true;
	rc = apex_build_begin(&d.bd, b);
	/* the builder's sort, the first step of a part of a compaction
	 * (derive_state.h's apex_derive_step_done() asks after the others) */
	if (rc == APEX_OK && apex_derive_gives_way(&d))
		rc = APEX_ECANCELED;
	if (rc == APEX_OK && b->owner_count + owners->changed_count < owners->count)
		rc = APEX_ENOTSUP; /* cannot happen: every owner is old's or new */
	if (rc == APEX_OK)
		rc = derive(&d);
	if (rc == APEX_OK) {
		apex_zone_t *zone = d.zone;
		zone->record_count = old->record_count - d.old_records + b->rr_count;
		zone->cuts_as_base = !d.cuts_changed;
		apex_zone_ref(old);
		atomic_fetch_add_explicit(&old->base_refs, 1, memory_order_relaxed);
		zone->base = old;
		zone->derived_depth = old->derived_depth + 1;
		atomic_store_explicit(
			&zone->compact_held,
			atomic_load_explicit(&old->compact_held, memory_order_relaxed),
			memory_order_relaxed);
		memcpy(zone->derive_ms, d.profile.ms, sizeof(zone->derive_ms));
	} else {
		/* the chain's kept pages this derivation took, kept again */
		for (size_t p = 0; d.copied != NULL && p < d.page_count; p++)
			if (d.copied[p] == COPIED_INTO_SPARE)
				apex_zone_return_spare_page(old, (apex_node_t *)d.pages[p]);
		for (size_t p = 0; d.rrsets_copied != NULL && p < d.page_count; p++)
			if (d.rrsets_copied[p] == COPIED_INTO_SPARE)
				apex_zone_return_spare_small(old, (void *)d.rrset_pages[p]);
		apex_derive_table_return(&d);
		d.bd.ttl_warnings = d.bd.ds_warnings = d.bd.glue_warnings = 0; /* no summary */
		apex_index_mem_unref(
			atomic_exchange_explicit(&d.zone->index_mem, NULL, memory_order_acq_rel));
		apex_index_mem_unref(
			atomic_exchange_explicit(&d.zone->nsec3_mem, NULL, memory_order_acq_rel));
	}
	apex_build_end(&d.bd);
	apex_arena_destroy(b->sorted_names); /* when the derivation failed early */
	b->sorted_names = NULL;
	free(d.copied);
	free(d.rrsets_copied);
	free(d.table_copied);
	free(d.ids);
	free(d.fresh);
	free(d.removed);
	free(d.removed_nsec3);
	free(d.ents);
	free(d.changed);
	deriving(old, -1);
	return rc;
}
