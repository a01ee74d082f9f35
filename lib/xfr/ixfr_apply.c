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
