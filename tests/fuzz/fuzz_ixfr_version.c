/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: an IXFR's change set applied to a served version
 * (lib/xfr/ixfr_apply.c: apex_ixfr_version(), which derives the new
 * version in place when it can, lib/zone/derive.c), against the same
 * change applied by a whole build.  The change comes from a primary, so
 * it is untrusted: it may remove records the version lacks, add any
 * type with any RDATA, at new names or old ones.
 *
 * Input: a byte choosing the zone (example. unsigned, with NSEC3, with
 * NSEC), then operations, each an operation byte and its operands:
 *   0  remove the old version's record number (2 bytes), or its copy
 *      with one RDATA byte changed (a removal that does not apply);
 *   1  add at the old version's name number (2 bytes), under a new label
 *      when bit 2 is set (a length byte and the label), two when bit 3 is
 *      set too (the first then an empty non-terminal): type (2 bytes),
 *      TTL (1 byte), RDATA (a length byte and the bytes);
 *   2  add a copy of the old version's record number (2 bytes) with a new
 *      TTL (1 byte) or one RDATA byte changed (bit 2; position and value);
 *   3  remove every record at the old version's name number (2 bytes).
 *
 * Oracle (a violation aborts): both ways apply the change or both refuse
 * it; when they apply it, the versions hold the same records (serial,
 * and every record with its TTL, byte for byte) and answer the same,
 * byte for byte, for the changed names and their parents, with several
 * types, DO on and off.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/precompute.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/changes.h"
#include "xfr/ixfr_apply.h"
#include "xfr/version_records.h"
#include "zone/load.h"
#include "zone/zone_from_wire.h"
#include "zone/zoneset.h"
#include "fuzz_common.h"
#include "../unit/query_wire.h"

#define ZONES 3
#define MAX_OPS 32

typedef struct rec {
	uint8_t owner[APEX_NAME_MAX];
	uint16_t type;
	uint32_t ttl;
	uint16_t rdlength;
	uint8_t rdata[1024];
} rec_t;

typedef struct list {
	rec_t *items;
	size_t count, capacity;
} list_t;

static apex_zone_t *zones[ZONES];
static list_t records[ZONES]; /* each zone's records but its SOA */

static rec_t *push(list_t *l)
{
	if (l->count == l->capacity) {
		l->capacity = l->capacity ? 2 * l->capacity : 64;
		l->items = realloc(l->items, l->capacity * sizeof(*l->items));
		if (l->items == NULL)
			abort();
	}
	memset(&l->items[l->count], 0, sizeof(rec_t));
	return &l->items[l->count++];
}

static void set(rec_t *r, const uint8_t *owner, uint16_t type, uint32_t ttl, const uint8_t *rdata,
		size_t rdlength)
{
	memcpy(r->owner, owner, apex_name_size(owner));
	r->type = type;
	r->ttl = ttl;
	r->rdlength = (uint16_t)rdlength;
	if (rdlength > 0) /* an owner alone has no RDATA (NULL) */
		memcpy(r->rdata, rdata, rdlength);
}

static int collect(void *ctx, const apex_rr_t *rr)
{
	if (rr->rdlength <= sizeof(((rec_t *)0)->rdata))
		set(push(ctx), rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
	return APEX_OK;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const files[ZONES] = { "example.zone", "example.nsec3.zone",
						  "example.nsec.zone" };
	uint8_t example[APEX_NAME_MAX];
	char path[4096], err[512];

	(void)argc;
	(void)argv;
	apex_log_set_level(APEX_LOG_ERROR);
	if (apex_name_from_str("example.", example) < 0)
		abort();
	for (int i = 0; i < ZONES; i++) {
		snprintf(path, sizeof(path), "%s/zones/%s", fuzz_srcdir(), files[i]);
		if (apex_zone_load(path, example, &zones[i], err, sizeof(err)) != APEX_OK ||
		    apex_precompute(zones[i]) != APEX_OK) {
			fprintf(stderr, "%s\n", err);
			abort();
		}
		apex_version_records(zones[i], collect, &records[i]);
	}
	return 0;
}

/* The input, read a byte at a time (zeros past its end). */
typedef struct input {
	const uint8_t *p, *end;
} input_t;

static uint8_t byte(input_t *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

static uint16_t u16(input_t *in)
{
	uint16_t hi = byte(in);
	return (uint16_t)(hi << 8 | byte(in));
}

typedef struct change {
	list_t removed, added, touched; /* touched: owners, for the answers */
} change_t;

static void op_add(input_t *in, uint8_t op, const apex_zone_t *z, change_t *c)
{
	const apex_node_t *n = apex_zone_node_at(z, u16(in) % z->node_count);
	uint8_t owner[APEX_NAME_MAX], rdata[256];
	size_t size = apex_name_size(n->name);

	memcpy(owner, n->name, size);
	/* a new label, letters and digits; two with bit 3 (an empty
	 * non-terminal between) */
	for (int labels = op & 4 ? 1 + !!(op & 8) : 0; labels > 0; labels--) {
		size_t len = 1 + byte(in) % 8;
		if (1 + len + size > APEX_NAME_MAX)
			return;
		memmove(owner + 1 + len, owner, size);
		owner[0] = (uint8_t)len;
		for (size_t i = 0; i < len; i++)
			owner[1 + i] =
				(uint8_t)("abcdefghijklmnopqrstuvwxyz0123456789*-"[byte(in) % 38]);
		size += 1 + len;
	}
	uint16_t type = u16(in);
	if (type == APEX_TYPE_SOA)
		type = APEX_TYPE_TXT; /* an SOA in a change set ends its part */
	uint32_t ttl = byte(in) * 60u;
	size_t rdlength = byte(in);
	for (size_t i = 0; i < rdlength; i++)
		rdata[i] = byte(in);
	set(push(&c->added), owner, type, ttl, rdata, rdlength);
	set(push(&c->touched), owner, 0, 0, NULL, 0);
}

static void op_copy(input_t *in, uint8_t op, size_t zi, change_t *c, bool removal)
{
	const list_t *all = &records[zi];
	if (all->count == 0)
		return;
	rec_t r = all->items[u16(in) % all->count];
	if (!removal && !(op & 4)) {
		r.ttl = byte(in) * 30u + 1;
	} else if (op & 4 && r.rdlength > 0) {
		uint8_t at = byte(in);
		r.rdata[at % r.rdlength] ^= (uint8_t)(1 + byte(in) % 255);
	}
	*push(removal ? &c->removed : &c->added) = r;
	set(push(&c->touched), r.owner, 0, 0, NULL, 0);
}

static void op_remove_name(input_t *in, size_t zi, change_t *c)
{
	const apex_zone_t *z = zones[zi];
	const apex_node_t *n = apex_zone_node_at(z, u16(in) % z->node_count);

	for (size_t i = 0; i < records[zi].count; i++)
		if (apex_name_equal(records[zi].items[i].owner, n->name))
			*push(&c->removed) = records[zi].items[i];
	set(push(&c->touched), n->name, 0, 0, NULL, 0);
}

static void append(apex_changes_t *set, apex_change_kind_t kind, const rec_t *r)
{
	apex_rr_t rr = { r->owner, r->type, APEX_CLASS_IN, r->ttl, r->rdlength, r->rdata };
	if (apex_changes_append(set, kind, &rr) != APEX_OK)
		abort();
}

static void change_set(const apex_zone_t *z, const change_t *c, apex_changes_t *out)
{
	rec_t soa;
	size_t size = (size_t)z->soa->rdata[0] << 8 | z->soa->rdata[1];

	apex_changes_init(out);
	set(&soa, z->apex->name, APEX_TYPE_SOA, z->soa->ttl, z->soa->rdata + 2, size);
	append(out, APEX_CHANGE_OLD_SOA, &soa);
	for (size_t i = 0; i < c->removed.count; i++)
		append(out, APEX_CHANGE_REMOVE, &c->removed.items[i]);
	apex_write_u32(soa.rdata + size - 20, z->serial + 1);
	append(out, APEX_CHANGE_NEW_SOA, &soa);
	for (size_t i = 0; i < c->added.count; i++)
		append(out, APEX_CHANGE_ADD, &c->added.items[i]);
}

static int to_builder(void *ctx, const apex_rr_t *rr)
{
	return apex_zone_from_wire_add(ctx, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
}

/* The version built whole from old's records with the set applied. */
static int whole(apex_zone_t *old, const apex_changes_t *set, apex_zone_t **out)
{
	apex_zone_from_wire_t *w;
	char err[512];
	int rc = apex_zone_from_wire_begin(&w, old->origin, "fuzz", err, sizeof(err));

	*out = NULL;
	if (rc != APEX_OK)
		return rc;
	rc = apex_ixfr_apply(old, set, 1, to_builder, w, err, sizeof(err));
	if (rc != APEX_OK) {
		apex_zone_from_wire_abort(w);
		return rc;
	}
	return apex_zone_from_wire_finish(w, out);
}

static int by_record(const void *a, const void *b)
{
	const rec_t *x = a, *y = b;
	uint8_t kx[APEX_KEY_MAX], ky[APEX_KEY_MAX];
	size_t sx = apex_name_key(x->owner, kx, NULL), sy = apex_name_key(y->owner, ky, NULL);
	int c = apex_key_compare(kx, sx, ky, sy);

	if (c != 0)
		return c;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->ttl != y->ttl)
		return x->ttl < y->ttl ? -1 : 1;
	return apex_key_compare(x->rdata, x->rdlength, y->rdata, y->rdlength);
}

static void same_records(apex_zone_t *a, apex_zone_t *b)
{
	list_t x = { 0 }, y = { 0 };

	if (a->serial != b->serial || a->record_count != b->record_count)
		fuzz_fail(NULL, 0, "derived: serial %u, %zu records; whole: serial %u, %zu records",
			  a->serial, a->record_count, b->serial, b->record_count);
	apex_version_records(a, collect, &x);
	apex_version_records(b, collect, &y);
	qsort(x.items, x.count, sizeof(rec_t), by_record);
	qsort(y.items, y.count, sizeof(rec_t), by_record);
	if (x.count != y.count)
		fuzz_fail(NULL, 0, "derived lists %zu records, whole %zu", x.count, y.count);
	for (size_t i = 0; i < x.count; i++)
		if (by_record(&x.items[i], &y.items[i]) != 0 ||
		    !apex_name_equal(x.items[i].owner, y.items[i].owner) ||
		    memcmp(x.items[i].owner, y.items[i].owner, apex_name_size(x.items[i].owner)))
			fuzz_fail(NULL, 0, "record %zu differs (type %u and %u)", i,
				  x.items[i].type, y.items[i].type);
	free(x.items);
	free(y.items);
}

static void same_answers(apex_zone_t *a, apex_zone_t *b, const change_t *c)
{
	static const uint16_t types[] = { APEX_TYPE_A,  APEX_TYPE_NS,   APEX_TYPE_DS,
					  APEX_TYPE_MX, APEX_TYPE_NSEC, APEX_TYPE_ANY };
	static uint8_t q[1024], ra[65535], rb[65535];
	apex_zonetable_t ta, tb;
	unsigned long long gen;
	apex_answer_config_t config;

	apex_answer_config_init(&config);
	if (apex_zonetable_init(&ta) != APEX_OK || apex_zonetable_init(&tb) != APEX_OK)
		abort();
	apex_zone_ref(a);
	apex_zone_ref(b);
	if (apex_zonetable_publish(&ta, a) != APEX_OK || apex_zonetable_publish(&tb, b) != APEX_OK)
		abort();
	apex_zoneset_t *sa = apex_zonetable_acquire(&ta, &gen),
		       *sb = apex_zonetable_acquire(&tb, &gen);
	for (size_t i = 0; i < c->touched.count && i < 8; i++) {
		const uint8_t *name = c->touched.items[i].owner;
		for (int up = 0; up < 2; up++, name += name[0] != 0 ? 1 + name[0] : 0) {
			for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
				for (int d = 0; d < 2; d++) {
					size_t n = query_for(q, name, types[t], true, d);
					size_t na = apex_answer(sa, &config, APEX_TRANSPORT_TCP, q,
								n, ra, sizeof(ra), NULL);
					size_t nb = apex_answer(sb, &config, APEX_TRANSPORT_TCP, q,
								n, rb, sizeof(rb), NULL);
					if (na != nb || memcmp(ra, rb, na) != 0)
						fuzz_fail(ra, na,
							  "derived and whole answer type %u "
							  "DO=%d differently (%zu, %zu bytes)",
							  types[t], d, na, nb);
				}
			}
		}
	}
	apex_zoneset_release(sa);
	apex_zoneset_release(sb);
	apex_zonetable_destroy(&ta);
	apex_zonetable_destroy(&tb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	input_t in = { data, data + size };
	size_t zi = byte(&in) % ZONES;
	apex_zone_t *old = zones[zi];
	change_t c = { 0 };
	apex_changes_t set;
	char err[512];
	bool in_place;

	for (int i = 0; i < MAX_OPS && in.p < in.end; i++) {
		uint8_t op = byte(&in);
		switch (op & 3) {
		case 0: op_copy(&in, op, zi, &c, true); break;
		case 1: op_add(&in, op, old, &c); break;
		case 2: op_copy(&in, op, zi, &c, false); break;
		default: op_remove_name(&in, zi, &c); break;
		}
	}
	change_set(old, &c, &set);
	apex_zone_t *d = NULL, *w = NULL;
	int rd = apex_ixfr_version(old, &set, 1, "fuzz", &d, &in_place, err, sizeof(err));
	int rw = whole(old, &set, &w);
	if ((rd == APEX_OK) != (rw == APEX_OK))
		fuzz_fail(NULL, 0, "derived: %d (%s), whole: %d", rd, err, rw);
	if (rd == APEX_OK) {
		if (apex_precompute(d) != APEX_OK || apex_precompute(w) != APEX_OK)
			abort();
		same_records(d, w);
		same_answers(d, w, &c);
	}
	apex_zone_unref(d);
	apex_zone_unref(w);
	apex_changes_free(&set);
	free(c.removed.items);
	free(c.added.items);
	free(c.touched.items);
	return 0;
}
