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

/* Emit the records of one RRset of the old version not in removed. */
static int emit_rrset(const uint8_t *owner, const apex_rrset_t *rs, list_t *removed,
		      apex_ixfr_emit_fn emit, void *ctx)
{
	const uint8_t *p = rs->rdata;
	uint8_t key[APEX_NAME_MAX + 4 + 65535];
	size_t owner_size = apex_name_size(owner);

	memcpy(key, owner, owner_size);
	apex_name_lower(key);
	for (uint16_t i = 0; i < rs->count; i++) {
		apex_rr_t rr = { owner, rs->type, APEX_CLASS_IN, rs->ttl, apex_read_u16(p), p + 2 };
		entry_t probe = { key, owner_size + 4 + rr.rdlength, rr, false };
		entry_t *hit;

		p += 2 + rr.rdlength;
		apex_write_u16(key + owner_size, rr.type);
		apex_write_u16(key + owner_size + 2, rr.rclass);
		memcpy(key + owner_size + 4, rr.rdata, rr.rdlength);
		hit = removed->count > 0 ? bsearch(&probe, removed->items, removed->count,
						   sizeof(entry_t), by_key)
					 : NULL;
		if (hit != NULL) {
			hit->found = true;
			continue;
		}
		int rc = emit(ctx, &rr);
		if (rc < 0)
			return rc;
	}
	return APEX_OK;
}

/* Emit every record of one node of the old version (its SOA apart). */
static int emit_node(const apex_zone_t *old, const apex_node_t *n, list_t *removed,
		     apex_ixfr_emit_fn emit, void *ctx)
{
	for (uint16_t i = 0; i < n->rrset_count; i++) {
		const apex_rrset_t *rs = &n->rrsets[i];
		int rc = APEX_OK;

		if (!(rs->type == APEX_TYPE_SOA && n == old->apex))
			rc = emit_rrset(n->name, rs, removed, emit, ctx);
		if (rc == APEX_OK && rs->rrsig != NULL)
			rc = emit_rrset(n->name, rs->rrsig, removed, emit, ctx);
		if (rc < 0)
			return rc;
	}
	return APEX_OK;
}

static int emit_all(const apex_zone_t *old, net_t *net, apex_ixfr_emit_fn emit, void *ctx)
{
	int rc = emit(ctx, &net->soa);

	for (size_t i = 0; rc == APEX_OK && i < old->node_count; i++)
		rc = emit_node(old, apex_zone_node_at(old, i), &net->removed, emit, ctx);
	for (size_t i = 0; rc == APEX_OK && i < old->nsec3_owner_count; i++)
		rc = emit_node(old, apex_zone_nsec3_owner_at(old, i), &net->removed, emit, ctx);
	for (size_t i = 0; rc == APEX_OK && i < net->added.count; i++)
		rc = emit(ctx, &net->added.items[i].rr);
	return rc;
}

int apex_ixfr_apply(const apex_zone_t *old, const apex_changes_t *sets, size_t count,
		    apex_ixfr_emit_fn emit, void *ctx, char *err, size_t err_size)
{
	net_t net;
	int rc;

	memset(&net, 0, sizeof(net));
	rc = fold(sets, count, &net);
	if (rc == APEX_OK && net.soa.owner == NULL)
		rc = APEX_EMALFORMED;
	if (rc < 0) {
		snprintf(err, err_size, "the change sets do not read back");
		goto done;
	}
	if (net.removed.count > 0)
		qsort(net.removed.items, net.removed.count, sizeof(entry_t), by_key);
	if ((rc = emit_all(old, &net, emit, ctx)) < 0)
		goto done;
	for (size_t i = 0; i < net.removed.count; i++) {
		if (!net.removed.items[i].found) {
			char owner[APEX_NAME_MAX * 4 + 1];

			apex_name_to_str(net.removed.items[i].rr.owner, owner, sizeof(owner));
			snprintf(err, err_size,
				 "a removed record (%s, type %u) is not in serial %u: the change "
				 "sets "
				 "do not apply",
				 owner, net.removed.items[i].rr.type, old->serial);
			rc = APEX_EMALFORMED;
			break;
		}
	}
done:
	list_free(&net.removed);
	list_free(&net.added);
	apex_changes_free(&net.condensed);
	return rc;
}
