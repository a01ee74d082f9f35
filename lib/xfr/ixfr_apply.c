/* SPDX-License-Identifier: BSD-3-Clause */
/* An incoming IXFR applied to the records of a served version (ixfr_apply.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/ixfr_apply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "util/grow.h"
#include "xfr/condense.h"
#include "xfr/version_records.h"
#include "zone/derive.h"
#include "zone/zone_from_wire.h"

/* A record's identity for IXFR (owner in lower case, type, class, RDATA),
 * and the record (pointers into the change sets' data). */
typedef struct entry {
	uint8_t *key; /* owned */
	size_t key_size;
	apex_rr_t rr;
	bool found; /* a removal: matched a record of the old version */
} entry_t;

typedef struct list {
	entry_t *items;
	size_t count, capacity;
} list_t;

static uint8_t *make_key(const apex_rr_t *rr, size_t *size)
{
	size_t owner = apex_name_size(rr->owner);
	uint8_t *key = malloc(owner + 4 + rr->rdlength);

	if (key == NULL)
		return NULL;
	memcpy(key, rr->owner, owner);
	apex_name_lower(key);
	apex_write_u16(key + owner, rr->type);
	apex_write_u16(key + owner + 2, rr->rclass);
	memcpy(key + owner + 4, rr->rdata, rr->rdlength);
	*size = owner + 4 + rr->rdlength;
	return key;
}

static int compare_keys(const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size)
{
	int c = memcmp(a, b, a_size < b_size ? a_size : b_size);
	return c != 0 ? c : (a_size > b_size) - (a_size < b_size);
}

static int by_key(const void *a, const void *b)
{
	const entry_t *x = a, *y = b;
	return compare_keys(x->key, x->key_size, y->key, y->key_size);
}

static int push(list_t *l, uint8_t *key, size_t size, const apex_rr_t *rr)
{
	entry_t *items = apex_grow(l->items, &l->capacity, l->count, sizeof(*items), 64);

	if (items == NULL)
		return APEX_ENOMEM;
	l->items = items;
	l->items[l->count++] = (entry_t){ key, size, *rr, false };
	return APEX_OK;
}

static void list_free(list_t *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->items[i].key);
	free(l->items);
}

/* The sets condensed into one (condense.h): its removals (with their
 * keys, to be found in the old version), additions and new SOA, pointing
 * into condensed. */
typedef struct net {
	apex_changes_t condensed;
	list_t removed, added;
	apex_rr_t soa;
} net_t;

static int fold(const apex_changes_t *sets, size_t count, net_t *net)
{
	apex_changes_reader_t r;
	apex_change_kind_t kind;
	apex_rr_t rr;
	int rc = apex_changes_condense(sets, count, &net->condensed);

	if (rc < 0)
		return rc;
	apex_changes_reader_init(&r, net->condensed.data, net->condensed.size);
	while ((rc = apex_changes_next(&r, &rr, &kind)) == APEX_OK) {
		if (kind == APEX_CHANGE_NEW_SOA) {
			net->soa = rr;
		} else if (kind == APEX_CHANGE_ADD) {
			rc = push(&net->added, NULL, 0, &rr);
		} else if (kind == APEX_CHANGE_REMOVE) {
			size_t size;
			uint8_t *key = make_key(&rr, &size);

			rc = key == NULL ? APEX_ENOMEM : push(&net->removed, key, size, &rr);
			if (rc < 0)
				free(key);
		}
		if (rc < 0)
			return rc;
	}
	return rc == APEX_ENOENT ? APEX_OK : rc;
}

/* What the walk of the old version's records carries. */
typedef struct keep {
	list_t *removed;
	apex_ixfr_emit_fn emit;
	void *ctx;
	const uint8_t *owner; /* whose lowered form is in key */
	size_t owner_size;
	uint8_t key[APEX_NAME_MAX + 4 + 65535];
} keep_t;

/* Emit one record of the old version unless it is removed (version_records.h). */
static int keep_record(void *arg, const apex_rr_t *rr)
{
	keep_t *k = arg;

	if (k->removed->count > 0) {
		if (rr->owner != k->owner) { /* the records of a name come together */
			k->owner = rr->owner;
			k->owner_size = apex_name_size(rr->owner);
			memcpy(k->key, rr->owner, k->owner_size);
			apex_name_lower(k->key);
		}
		apex_write_u16(k->key + k->owner_size, rr->type);
		apex_write_u16(k->key + k->owner_size + 2, rr->rclass);
		memcpy(k->key + k->owner_size + 4, rr->rdata, rr->rdlength);

		entry_t probe = { k->key, k->owner_size + 4 + rr->rdlength, *rr, false };
		entry_t *hit = bsearch(&probe, k->removed->items, k->removed->count,
				       sizeof(entry_t), by_key);
		if (hit != NULL) {
			hit->found = true;
			return APEX_OK;
		}
	}
	return k->emit(k->ctx, rr);
}

static int emit_all(const apex_zone_t *old, net_t *net, apex_ixfr_emit_fn emit, void *ctx)
{
	keep_t *k = malloc(sizeof(*k));
	int rc;

	if (k == NULL)
		return APEX_ENOMEM;
	*k = (keep_t){ .removed = &net->removed, .emit = emit, .ctx = ctx };
	rc = emit(ctx, &net->soa);
	if (rc == APEX_OK)
		rc = apex_version_records(old, keep_record, k);
	for (size_t i = 0; rc == APEX_OK && i < net->added.count; i++)
		rc = emit(ctx, &net->added.items[i].rr);
	free(k);
	return rc;
}

/* Fold the sets (net: removals sorted by key); err says why not. */
static int net_begin(const apex_changes_t *sets, size_t count, net_t *net, char *err,
		     size_t err_size)
{
	memset(net, 0, sizeof(*net));
	int rc = fold(sets, count, net);
	if (rc == APEX_OK && net->soa.owner == NULL)
		rc = APEX_EMALFORMED;
	if (rc < 0) {
		snprintf(err, err_size, "the change sets do not read back");
		return rc;
	}
	if (net->removed.count > 0)
		qsort(net->removed.items, net->removed.count, sizeof(entry_t), by_key);
	return APEX_OK;
}

static void net_free(net_t *net)
{
	list_free(&net->removed);
	list_free(&net->added);
	apex_changes_free(&net->condensed);
}

/* Every removal matched a record of old, or APEX_EMALFORMED and why. */
static int removals_found(const apex_zone_t *old, const net_t *net, char *err, size_t err_size)
{
	for (size_t i = 0; i < net->removed.count; i++) {
		if (!net->removed.items[i].found) {
			char owner[APEX_NAME_MAX * 4 + 1];

			apex_name_to_str(net->removed.items[i].rr.owner, owner, sizeof(owner));
			snprintf(err, err_size,
				 "a removed record (%s, type %u) is not in serial %u: the change "
				 "sets do not apply",
				 owner, net->removed.items[i].rr.type, old->serial);
			return APEX_EMALFORMED;
		}
	}
	return APEX_OK;
}

int apex_ixfr_apply(const apex_zone_t *old, const apex_changes_t *sets, size_t count,
		    apex_ixfr_emit_fn emit, void *ctx, char *err, size_t err_size)
{
	net_t net;
	int rc = net_begin(sets, count, &net, err, err_size);

	if (rc == APEX_OK)
		rc = emit_all(old, &net, emit, ctx);
	if (rc == APEX_OK)
		rc = removals_found(old, &net, err, err_size);
	net_free(&net);
	return rc;
}

/* ------------------------------------------------------------ derived */

/* A changed owner (its node in old, or none: a new name) and a record
 * added to it (index in added). */
typedef struct touch {
	uint8_t *key; /* the owner's lookup key, owned */
	uint16_t key_size;
	uint32_t node;  /* APEX_NODE_NONE: a name old lacks */
	uint32_t added; /* UINT32_MAX: a removal's, or the apex */
} touch_t;

static int by_touch(const void *a, const void *b)
{
	const touch_t *x = a, *y = b;
	int c = memcmp(x->key, y->key, x->key_size < y->key_size ? x->key_size : y->key_size);

	if (c != 0 || x->key_size != y->key_size)
		return c != 0 ? c : (x->key_size > y->key_size) - (x->key_size < y->key_size);
	return (x->added > y->added) - (x->added < y->added);
}

static void touches_free(touch_t *t, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(t[i].key);
	free(t);
}

static int add_to_builder(void *ctx, const apex_rr_t *rr)
{
	return apex_zone_from_wire_add(ctx, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
}

/* One touch of the owner of rr (node: its node in old, or NULL). */
static int touch_of(const apex_rr_t *rr, const apex_node_t *node, uint32_t added, touch_t *t)
{
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(rr->owner, key, NULL);

	t->key = malloc(key_size);
	if (t->key == NULL)
		return APEX_ENOMEM;
	memcpy(t->key, key, key_size);
	t->key_size = (uint16_t)key_size;
	t->node = apex_node_id(node);
	t->added = added;
	return APEX_OK;
}

/* The changed owners, with their additions in order, sorted by key; the
 * apex among them.  APEX_ENOTSUP for a removal at a name old lacks (the
 * whole build says the change does not apply) or an SOA among them. */
static int touches(const apex_zone_t *old, const net_t *net, touch_t **out, size_t *count)
{
	size_t n = net->removed.count + net->added.count + 1, k = 0;
	touch_t *t = calloc(n, sizeof(*t));
	apex_rr_t apex = { .owner = old->apex->name };
	int rc = t != NULL ? touch_of(&apex, old->apex, UINT32_MAX, &t[k++]) : APEX_ENOMEM;

	for (size_t i = 0; rc == APEX_OK && i < net->removed.count + net->added.count; i++) {
		bool removal = i < net->removed.count;
		const apex_rr_t *rr = removal ? &net->removed.items[i].rr
					      : &net->added.items[i - net->removed.count].rr;
		const apex_node_t *node = apex_zone_find_owner(old, rr->owner);

		if ((removal && node == NULL) || rr->type == APEX_TYPE_SOA ||
		    rr->rclass != APEX_CLASS_IN)
			rc = APEX_ENOTSUP;
		else
			rc = touch_of(rr, node,
				      removal ? UINT32_MAX : (uint32_t)(i - net->removed.count),
				      &t[k++]);
	}
	if (rc != APEX_OK) {
		if (t != NULL)
			touches_free(t, k);
		return rc;
	}
	qsort(t, k, sizeof(*t), by_touch);
	*out = t;
	*count = k;
	return APEX_OK;
}

static bool same_owner(const touch_t *a, const touch_t *b)
{
	return a->key_size == b->key_size && memcmp(a->key, b->key, a->key_size) == 0;
}

/* The records of the changed owners, in the order a whole build sees
 * them (each name's kept records before its additions), to w; the ids of
 * the changed owners old has, into nodes (sorted). */
static int changed_records(const apex_zone_t *old, net_t *net, const touch_t *t, size_t count,
			   apex_zone_from_wire_t *w, uint32_t *nodes, size_t *node_count,
			   size_t *owners)
{
	keep_t *k = malloc(sizeof(*k));
	int rc;

	if (k == NULL)
		return APEX_ENOMEM;
	*k = (keep_t){ .removed = &net->removed, .emit = add_to_builder, .ctx = w };
	rc = add_to_builder(w, &net->soa);
	*owners = *node_count = 0;
	for (size_t i = 0; i < count && rc == APEX_OK; i++) {
		if (i == 0 || !same_owner(&t[i], &t[i - 1])) {
			(*owners)++;
			if (t[i].node != APEX_NODE_NONE) {
				nodes[(*node_count)++] = t[i].node;
				rc = apex_node_records(old, apex_zone_node(old, t[i].node),
						       keep_record, k);
			}
		}
		if (rc == APEX_OK && t[i].added != UINT32_MAX)
			rc = add_to_builder(w, &net->added.items[t[i].added].rr);
	}
	free(k);
	return rc;
}

static int by_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The version derived from old (zone/derive.h), or APEX_ENOTSUP. */
static int derived(apex_zone_t *old, net_t *net, const char *source, apex_zone_t **out, char *err,
		   size_t err_size)
{
	const apex_node_t *apex = old->apex;
	apex_zone_from_wire_t *w = NULL;
	touch_t *t = NULL;
	uint32_t *nodes = NULL;
	size_t count = 0, owners = 0, node_count = 0;

	if (!apex_zone_derivable(old) || apex_name_size(net->soa.owner) != apex->name_size ||
	    memcmp(net->soa.owner, apex->name, apex->name_size) != 0)
		return APEX_ENOTSUP;
	int rc = touches(old, net, &t, &count);
	if (rc == APEX_OK && (nodes = malloc(count * sizeof(*nodes))) == NULL)
		rc = APEX_ENOMEM;
	if (rc == APEX_OK)
		rc = apex_zone_from_wire_begin(&w, old->origin, source, err, err_size);
	if (rc == APEX_OK)
		rc = changed_records(old, net, t, count, w, nodes, &node_count, &owners);
	if (rc == APEX_OK)
		rc = removals_found(old, net, err, err_size);
	if (t != NULL)
		touches_free(t, count);
	if (rc == APEX_ELOAD)
		rc = APEX_ENOTSUP; /* the whole build says why, as it always does */
	if (rc != APEX_OK) {
		if (w != NULL)
			apex_zone_from_wire_abort(w);
		free(nodes);
		return rc;
	}
	qsort(nodes, node_count, sizeof(*nodes), by_id);
	rc = apex_zone_from_wire_derive(w, old, nodes, node_count, owners, out);
	free(nodes);
	return rc;
}

/* The version built whole from old's records with the change applied. */
static int whole(const apex_zone_t *old, net_t *net, const char *source, apex_zone_t **out,
		 char *err, size_t err_size)
{
	apex_zone_from_wire_t *w;
	int rc = apex_zone_from_wire_begin(&w, old->origin, source, err, err_size);

	if (rc != APEX_OK)
		return rc;
	for (size_t i = 0; i < net->removed.count; i++)
		net->removed.items[i].found = false;
	rc = emit_all(old, net, add_to_builder, w);
	if (rc == APEX_OK)
		rc = removals_found(old, net, err, err_size);
	if (rc != APEX_OK) {
		apex_zone_from_wire_abort(w);
		return rc;
	}
	return apex_zone_from_wire_finish(w, out);
}

int apex_ixfr_version_guarded(apex_zone_t *old, const apex_changes_t *sets, size_t count,
			      const char *source, const apex_ixfr_guard_t *guard, apex_zone_t **out,
			      bool *in_place, char *err, size_t err_size)
{
	net_t net;
	int rc = net_begin(sets, count, &net, err, err_size);

	*out = NULL;
	*in_place = false;
	if (rc == APEX_OK) {
		rc = derived(old, &net, source, out, err, err_size);
		*in_place = rc == APEX_OK;
		if (rc == APEX_ENOTSUP) {
			if (err_size > 0)
				err[0] = '\0';
			rc = guard != NULL ? guard->whole(guard->ctx, err, err_size) : APEX_OK;
			if (rc == APEX_OK)
				rc = whole(old, &net, source, out, err, err_size);
		}
	}
	net_free(&net);
	return rc;
}

int apex_ixfr_version(apex_zone_t *old, const apex_changes_t *sets, size_t count,
		      const char *source, apex_zone_t **out, bool *in_place, char *err,
		      size_t err_size)
{
	return apex_ixfr_version_guarded(old, sets, count, source, NULL, out, in_place, err,
					 err_size);
}
