/* SPDX-License-Identifier: BSD-3-Clause */
/* Change sets condensed into one (condense.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/condense.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/wire.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/siphash.h"

/* One record's fate across the sets; the records point into the sets. */
typedef struct fate {
	uint64_t hash;
	apex_rr_t removed; /* from the first version, when has_removed */
	apex_rr_t added;   /* there at the end, when has_added */
	bool has_removed, has_added;
} fate_t;

typedef struct table {
	fate_t *fates; /* in first-seen order */
	size_t count, capacity;
	uint32_t *slots; /* index + 1 into fates; 0: empty */
	size_t slot_mask;
	uint8_t key[APEX_SIPHASH_KEY_SIZE];
	uint8_t *scratch; /* a record's identity, to hash it */
} table_t;

#define SCRATCH_SIZE (APEX_NAME_MAX + 4 + 65535)

/* The record's identity (lower-case owner, type, class, RDATA) hashed. */
static uint64_t identity_hash(table_t *t, const apex_rr_t *rr)
{
	size_t owner = apex_name_size(rr->owner);

	memcpy(t->scratch, rr->owner, owner);
	apex_name_lower(t->scratch);
	apex_write_u16(t->scratch + owner, rr->type);
	apex_write_u16(t->scratch + owner + 2, rr->rclass);
	memcpy(t->scratch + owner + 4, rr->rdata, rr->rdlength);
	return apex_siphash24(t->key, t->scratch, owner + 4 + rr->rdlength);
}

static bool same_identity(const apex_rr_t *a, const apex_rr_t *b)
{
	return a->type == b->type && a->rclass == b->rclass && a->rdlength == b->rdlength &&
	       apex_name_equal(a->owner, b->owner) && memcmp(a->rdata, b->rdata, a->rdlength) == 0;
}

static const apex_rr_t *fate_record(const fate_t *f)
{
	return f->has_removed ? &f->removed : &f->added;
}

static int grow_slots(table_t *t)
{
	size_t size = t->slot_mask ? 2 * (t->slot_mask + 1) : 1024;
	uint32_t *slots = calloc(size, sizeof(*slots));

	if (slots == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < t->count; i++) {
		size_t s = t->fates[i].hash & (size - 1);
		while (slots[s] != 0)
			s = (s + 1) & (size - 1);
		slots[s] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->slot_mask = size - 1;
	return APEX_OK;
}

/* The fate of rr's identity, new (neither removed nor added) if unseen. */
static fate_t *fate_of(table_t *t, const apex_rr_t *rr)
{
	uint64_t hash = identity_hash(t, rr);
	size_t s;

	if (2 * (t->count + 1) > t->slot_mask + 1 && grow_slots(t) < 0)
		return NULL;
	for (s = hash & t->slot_mask; t->slots[s] != 0; s = (s + 1) & t->slot_mask) {
		fate_t *f = &t->fates[t->slots[s] - 1];
		if (f->hash == hash && same_identity(fate_record(f), rr))
			return f;
	}
	fate_t *fates = t->count < UINT32_MAX - 1
				? apex_grow(t->fates, &t->capacity, t->count, sizeof(*fates), 256)
				: NULL;
	if (fates == NULL)
		return NULL;
	t->fates = fates;
	t->slots[s] = (uint32_t)(t->count + 1);
	t->fates[t->count] = (fate_t){ .hash = hash };
	return &t->fates[t->count++];
}

static int record(table_t *t, const apex_rr_t *rr, apex_change_kind_t kind)
{
	fate_t *f = fate_of(t, rr);

	if (f == NULL)
		return APEX_ENOMEM;
	if (kind == APEX_CHANGE_ADD) {
		f->added = *rr;
		f->has_added = true;
	} else if (f->has_added) {
		f->has_added = false; /* added by an earlier set: gone again */
	} else if (!f->has_removed) {
		f->removed = *rr;
		f->has_removed = true;
	}
	return APEX_OK;
}

/* Read every set into t; the first set's old SOA and the last's new SOA. */
static int read_sets(table_t *t, const apex_changes_t *sets, size_t count, apex_rr_t *first_soa,
		     apex_rr_t *last_soa)
{
	uint32_t serial = 0, prev_to = 0;

	for (size_t i = 0; i < count; i++) {
		apex_changes_reader_t r;
		apex_change_kind_t kind;
		apex_rr_t rr;
		int rc;

		apex_changes_reader_init(&r, sets[i].data, sets[i].size);
		while ((rc = apex_changes_next(&r, &rr, &kind)) == APEX_OK) {
			if (kind == APEX_CHANGE_OLD_SOA || kind == APEX_CHANGE_NEW_SOA) {
				if (!apex_changes_soa_serial(rr.rdata, rr.rdlength, &serial))
					return APEX_EMALFORMED;
				if (kind == APEX_CHANGE_OLD_SOA && i > 0 && serial != prev_to)
					return APEX_EMALFORMED; /* not a chain */
				if (kind == APEX_CHANGE_OLD_SOA && i == 0)
					*first_soa = rr;
				if (kind == APEX_CHANGE_NEW_SOA) {
					*last_soa = rr;
					prev_to = serial;
				}
			} else if ((rc = record(t, &rr, kind)) < 0) {
				return rc;
			}
		}
		if (rc != APEX_ENOENT)
			return rc;
	}
	return APEX_OK;
}

/* The condensed set: old SOA, removals, new SOA, additions. */
static int write_set(const table_t *t, const apex_rr_t *first_soa, const apex_rr_t *last_soa,
		     apex_changes_t *out)
{
	int rc = apex_changes_append(out, APEX_CHANGE_OLD_SOA, first_soa);

	for (size_t i = 0; rc == APEX_OK && i < t->count; i++) {
		if (t->fates[i].has_removed)
			rc = apex_changes_append(out, APEX_CHANGE_REMOVE, &t->fates[i].removed);
	}
	if (rc == APEX_OK)
		rc = apex_changes_append(out, APEX_CHANGE_NEW_SOA, last_soa);
	for (size_t i = 0; rc == APEX_OK && i < t->count; i++) {
		if (t->fates[i].has_added)
			rc = apex_changes_append(out, APEX_CHANGE_ADD, &t->fates[i].added);
	}
	return rc;
}

int apex_changes_condense(const apex_changes_t *sets, size_t count, apex_changes_t *out)
{
	table_t t;
	apex_rr_t first_soa, last_soa;
	int rc;

	apex_changes_init(out);
	if (count == 0)
		return APEX_EMALFORMED;
	memset(&t, 0, sizeof(t));
	t.scratch = malloc(SCRATCH_SIZE);
	rc = t.scratch == NULL ? APEX_ENOMEM : apex_random_bytes(t.key, sizeof(t.key));
	if (rc == APEX_OK)
		rc = read_sets(&t, sets, count, &first_soa, &last_soa);
	if (rc == APEX_OK)
		rc = write_set(&t, &first_soa, &last_soa, out);
	if (rc == APEX_EINVAL)
		rc = APEX_EMALFORMED; /* a record the set format refuses */
	if (rc < 0)
		apex_changes_free(out);
	free(t.scratch);
	free(t.fates);
	free(t.slots);
	return rc;
}
