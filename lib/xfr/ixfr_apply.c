/* SPDX-License-Identifier: BSD-3-Clause */
/* An incoming IXFR applied to the records of a served version (ixfr_apply.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/ixfr_apply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/ascii.h"
#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "util/chunk_sort.h"
#include "util/grow.h"
#include "xfr/condense.h"
#include "xfr/version_records.h"
#include "zone/derive.h"
#include "zone/lookup_ahead.h"
#include "zone/zone_from_wire.h"

/* The records of a change set read in place: each a pointer to its first
 * byte in the set's data (checked once by apex_changes_next()). */
static void record_at(const uint8_t *p, apex_rr_t *rr)
{
	apex_changes_record_at(p, apex_name_size(p), rr);
}

/* A total order of records by their identity for IXFR (owner without
 * regard to case, type, class, RDATA): 0 for the same identity.  (A
 * label's length byte is never a capital letter's code.) */
static int compare_identity(const apex_rr_t *a, const apex_rr_t *b)
{
	size_t as = apex_name_size(a->owner), bs = apex_name_size(b->owner);

	for (size_t i = 0; i < as && i < bs; i++) {
		uint8_t x = apex_ascii_lower(a->owner[i]), y = apex_ascii_lower(b->owner[i]);
		if (x != y)
			return x < y ? -1 : 1;
	}
	if (as != bs)
		return as < bs ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->rclass != b->rclass)
		return a->rclass < b->rclass ? -1 : 1;
	int c = memcmp(a->rdata, b->rdata, a->rdlength < b->rdlength ? a->rdlength : b->rdlength);
	return c != 0 ? c : (a->rdlength > b->rdlength) - (a->rdlength < b->rdlength);
}

/*
 * Bytes [offset, offset + 8) of an owner name in lower case, zero-padded,
 * as a big-endian integer; its prefix, those from 0.  Where two prefixes
 * differ, their order is compare_identity()'s (no wire name is a proper
 * prefix of another: each ends with the root's zero), so sorts and searches compare these integers and read the records
 * only on a tie: with thousands of changes the records' identities were
 * most of an IXFR's instructions.
 */
static uint64_t owner_chunk(const uint8_t *owner, size_t offset)
{
	size_t size = apex_name_size(owner);
	uint64_t v = 0;

	for (size_t i = offset; i < offset + 8; i++)
		v = v << 8 | (i < size ? apex_ascii_lower(owner[i]) : 0);
	return v;
}

static uint64_t owner_prefix(const uint8_t *owner)
{
	return owner_chunk(owner, 0);
}

static int compare_prefix(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* A list of records of the set read, by pointer. */
typedef struct list {
	const uint8_t **items;
	size_t count, capacity;
} list_t;

static int push(list_t *l, const uint8_t *record)
{
	const uint8_t **items = apex_grow(l->items, &l->capacity, l->count, sizeof(*items), 64);

	if (items == NULL)
		return APEX_ENOMEM;
	l->items = items;
	l->items[l->count++] = record;
	return APEX_OK;
}

/* The change to apply: one set read in place, or several condensed into
 * one (condense.h); its removals sorted by identity (to be found in the
 * old version; found[i]: the i-th was), additions in order, new SOA.
 * Nothing of the records is copied: a reload's set of 100,000 changes
 * takes only the set's own memory and 9 bytes a record here. */
typedef struct net {
	apex_changes_t condensed; /* several sets: them condensed */
	list_t removed, added;
	uint64_t *removed_prefix; /* per removal: its owner's (owner_prefix()) */
	bool *found;
	apex_rr_t soa;
	bool deduped; /* as condensing gives, by net_sort() or by_owner() */
	bool sorted;  /* the removals by identity over the whole set (net_sort()) */
} net_t;

static void removed_at(const net_t *net, size_t i, apex_rr_t *rr)
{
	record_at(net->removed.items[i], rr);
}

static void added_at(const net_t *net, size_t i, apex_rr_t *rr)
{
	record_at(net->added.items[i], rr);
}

/* The set read: its removals and additions listed, the new SOA noted. */
static int fold(const apex_changes_t *sets, size_t count, net_t *net)
{
	apex_changes_reader_t r;
	apex_change_kind_t kind;
	apex_rr_t rr;
	const apex_changes_t *set = &sets[0];
	int rc = APEX_OK;

	if (count == 0)
		return APEX_EMALFORMED; /* as condensing no set */
	if (count > 1) {
		rc = apex_changes_condense(sets, count, &net->condensed);
		if (rc < 0)
			return rc;
		set = &net->condensed;
	}
	apex_changes_reader_init(&r, set->data, set->size);
	while ((rc = apex_changes_next(&r, &rr, &kind)) == APEX_OK) {
		if (kind == APEX_CHANGE_NEW_SOA)
			net->soa = rr;
		else if (kind == APEX_CHANGE_ADD)
			rc = push(&net->added, rr.owner);
		else if (kind == APEX_CHANGE_REMOVE)
			rc = push(&net->removed, rr.owner);
		if (rc < 0)
			return rc;
	}
	return rc == APEX_ENOENT ? APEX_OK : rc;
}

/* An addition and its place, to find those of one identity. */
typedef struct placed {
	uint64_t prefix; /* owner_prefix() */
	const uint8_t *record;
	size_t at;
} placed_t;

static int by_identity_placed(const void *a, const void *b)
{
	const placed_t *x = a, *y = b;
	int c = compare_prefix(x->prefix, y->prefix);

	if (c != 0)
		return c;
	apex_rr_t rx, ry;
	record_at(x->record, &rx);
	record_at(y->record, &ry);
	c = compare_identity(&rx, &ry);
	return c != 0 ? c : (x->at > y->at) - (x->at < y->at);
}

/* An addition's or removal's owner in lower case, 8 bytes from offset
 * (chunk_sort.h): by_identity_placed()'s order where owners differ. */
static uint64_t placed_chunk(const void *item, size_t offset, bool *more)
{
	const placed_t *p = item;

	*more = apex_name_size(p->record) > offset + 8;
	return offset == 0 ? p->prefix : owner_chunk(p->record, offset);
}

/* p[0..n) in by_identity_placed()'s order. */
static void sort_placed(placed_t *p, size_t n)
{
	apex_chunk_sort(p, n, sizeof(*p), placed_chunk, by_identity_placed);
}

static bool same_identity(const uint8_t *a, const uint8_t *b)
{
	apex_rr_t x, y;

	record_at(a, &x);
	record_at(b, &y);
	return compare_identity(&x, &y) == 0;
}

/* Of additions p[0..n), sorted by identity then place in l: of each run of
 * one identity, the last record at the place of the first, the others'
 * items NULL.  Whether a run had more than one. */
static bool last_of_each(list_t *l, const placed_t *p, size_t n)
{
	bool twice = false;

	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && same_identity(p[i].record, p[j].record); j++)
			l->items[p[j].at] = NULL;
		if (j - i > 1) {
			l->items[p[i].at] = p[j - 1].record;
			twice = true;
		}
	}
	return twice;
}

/* One set read in place is made what condensing it gives (condense.h):
 * a record removed twice removed once (the removals sorted: the first
 * kept), and of a record added twice the last addition at the place of
 * the first.  APEX_ENOMEM. */
static int dedupe(net_t *net)
{
	list_t *l = &net->removed;
	size_t k = 0;

	for (size_t i = 0; i < l->count; i++)
		if (k == 0 || !same_identity(l->items[k - 1], l->items[i]))
			l->items[k++] = l->items[i];
	l->count = k;

	l = &net->added;
	placed_t *p = malloc((l->count + 1) * sizeof(*p));
	if (p == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < l->count; i++)
		p[i] = (placed_t){ owner_prefix(l->items[i]), l->items[i], i };
	sort_placed(p, l->count);
	bool twice = last_of_each(l, p, l->count);
	free(p);
	k = 0;
	for (size_t i = 0; twice && i < l->count; i++)
		if (l->items[i] != NULL)
			l->items[k++] = l->items[i];
	if (twice)
		l->count = k;
	return APEX_OK;
}

/* What the walk of the old version's records carries: the removals
 * [from, to) of the net's are those its records may be (all of them, or
 * those of the one owner walked). */
typedef struct keep {
	net_t *net;
	apex_ixfr_emit_fn emit;
	void *ctx;
	const uint8_t *owner; /* the last record's, and its prefix */
	uint64_t prefix;
	size_t from, to;
} keep_t;

/* The removal of rr's identity (its index) among the net's [lo, hi), or
 * SIZE_MAX; prefix: its owner's. */
static size_t find_removal(const net_t *net, const apex_rr_t *rr, uint64_t prefix, size_t lo,
			   size_t hi)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = compare_prefix(prefix, net->removed_prefix[mid]);

		if (c == 0) {
			apex_rr_t m;
			removed_at(net, mid, &m);
			c = compare_identity(rr, &m);
		}
		if (c == 0)
			return mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return SIZE_MAX;
}

/* Emit one record of the old version unless it is removed (version_records.h). */
static int keep_record(void *arg, const apex_rr_t *rr)
{
	keep_t *k = arg;

	if (k->from < k->to) {
		if (rr->owner != k->owner) { /* a node's records share theirs */
			k->owner = rr->owner;
			k->prefix = owner_prefix(rr->owner);
		}
		size_t hit = find_removal(k->net, rr, k->prefix, k->from, k->to);
		if (hit != SIZE_MAX) {
			k->net->found[hit] = true;
			return APEX_OK;
		}
	}
	return k->emit(k->ctx, rr);
}

static int emit_all(const apex_zone_t *old, net_t *net, apex_ixfr_emit_fn emit, void *ctx)
{
	keep_t k = { net, emit, ctx, NULL, 0, 0, net->removed.count };
	int rc = emit(ctx, &net->soa);

	if (rc == APEX_OK)
		rc = apex_version_records(old, keep_record, &k);
	for (size_t i = 0; rc == APEX_OK && i < net->added.count; i++) {
		apex_rr_t rr;
		added_at(net, i, &rr);
		rc = emit(ctx, &rr);
	}
	return rc;
}

/* The removals sorted by identity, the first of one identity in the set
 * first (by_identity_placed()). */
static int sort_removed(net_t *net)
{
	list_t *l = &net->removed;
	placed_t *p = malloc(l->count * sizeof(*p));
	int rc = p != NULL ? APEX_OK : APEX_ENOMEM;

	for (size_t i = 0; rc == APEX_OK && i < l->count; i++)
		p[i] = (placed_t){ owner_prefix(l->items[i]), l->items[i], i };
	if (rc == APEX_OK)
		sort_placed(p, l->count);
	for (size_t i = 0; rc == APEX_OK && i < l->count; i++)
		l->items[i] = p[i].record;
	free(p);
	return rc;
}

/* Fold the sets: the removals and additions listed in the set's order,
 * the new SOA noted; err says why not. */
static int net_read(const apex_changes_t *sets, size_t count, net_t *net, char *err,
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
	return APEX_OK;
}

/* The removals' found flags (none yet) and owner prefixes, in their
 * order now. */
static int index_removals(net_t *net)
{
	free(net->found);
	free(net->removed_prefix);
	net->found = calloc(net->removed.count + 1, sizeof(*net->found));
	net->removed_prefix = malloc((net->removed.count + 1) * sizeof(*net->removed_prefix));
	if (net->found == NULL || net->removed_prefix == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < net->removed.count; i++)
		net->removed_prefix[i] = owner_prefix(net->removed.items[i]);
	return APEX_OK;
}

/* The removals sorted by identity over the whole set, as the walk of a
 * whole version searches them (emit_all()), and the set as condensing
 * gives if it is not yet. */
static int net_sort(net_t *net, size_t count)
{
	int rc = APEX_OK;

	if (!net->sorted && net->removed.count > 0)
		rc = sort_removed(net);
	if (rc == APEX_OK && count == 1 && !net->deduped)
		rc = dedupe(net);
	net->sorted = net->deduped = rc == APEX_OK;
	return rc == APEX_OK ? index_removals(net) : rc;
}

/* Fold the sets (net: removals sorted by identity); err says why not. */
static int net_begin(const apex_changes_t *sets, size_t count, net_t *net, char *err,
		     size_t err_size)
{
	int rc = net_read(sets, count, net, err, err_size);

	return rc == APEX_OK ? net_sort(net, count) : rc;
}

static void net_free(net_t *net)
{
	free(net->removed.items);
	free(net->added.items);
	free(net->removed_prefix);
	free(net->found);
	apex_changes_free(&net->condensed);
	memset(net, 0, sizeof(*net));
}

/* Every removal matched a record of old, or APEX_EMALFORMED and why. */
static int removals_found(const apex_zone_t *old, const net_t *net, char *err, size_t err_size)
{
	for (size_t i = 0; i < net->removed.count; i++) {
		if (!net->found[i]) {
			char owner[APEX_NAME_MAX * 4 + 1];
			apex_rr_t rr;

			removed_at(net, i, &rr);
			apex_name_to_str(rr.owner, owner, sizeof(owner));
			snprintf(err, err_size,
				 "a removed record (%s, type %u) is not in serial %u: the change "
				 "sets do not apply",
				 owner, rr.type, old->serial);
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

/* A record of the change at its owner: the owner's lookup key and the
 * record (24 bytes: a reload of a tenth of a 10M-record zone has two
 * million). */
typedef struct touch {
	const uint8_t *key; /* the owner's lookup key, in the touches' key memory */
	uint32_t at;        /* index in the net's removals or additions; UINT32_MAX: the apex */
	uint32_t node;      /* APEX_NODE_NONE: a name old lacks */
	uint32_t hash;      /* the owner's apex_name_hash(), to ask for its slot ahead */
	uint16_t key_size;
	bool removal;
	bool in_index; /* node is a name of old's index, not an NSEC3 owner */
} touch_t;

/* The records of the change by owner, sorted: t[0..count), their keys in
 * keys (both owned, touches_free()). */
typedef struct touches {
	touch_t *t;
	uint8_t *keys;
	size_t count, keys_size;
} touches_t;

/* The index of a touch's addition in the net's, or UINT32_MAX (a
 * removal, or the apex): an owner's additions in the set's order, the
 * others after them. */
static uint32_t added_index(const touch_t *t)
{
	return t->removal ? UINT32_MAX : t->at;
}

static int by_touch(const void *a, const void *b)
{
	const touch_t *x = a, *y = b;
	int c = memcmp(x->key, y->key, x->key_size < y->key_size ? x->key_size : y->key_size);

	if (c != 0 || x->key_size != y->key_size)
		return c != 0 ? c : (x->key_size > y->key_size) - (x->key_size < y->key_size);
	uint32_t i = added_index(x), j = added_index(y);
	return (i > j) - (i < j);
}

/* A touch's key, 8 bytes from offset (chunk_sort.h). */
static uint64_t touch_chunk(const void *item, size_t offset, bool *more)
{
	const touch_t *t = item;

	*more = t->key_size > offset + 8;
	return offset < t->key_size ? apex_key_prefix(t->key + offset, t->key_size - offset) : 0;
}

/* Freed, and left empty: freeing it again does nothing. */
static void touches_free(touches_t *ts)
{
	free(ts->t);
	free(ts->keys);
	memset(ts, 0, sizeof(*ts));
}

static int add_to_builder(void *ctx, const apex_rr_t *rr)
{
	return apex_zone_from_wire_add(ctx, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
}

/* Whether wire names a and b are the same bytes. */
static bool spelled_alike(const uint8_t *a, const uint8_t *b)
{
	for (;;) {
		if (*a != *b)
			return false;
		if (*a == 0)
			return true;
		if (memcmp(a + 1, b + 1, *a) != 0)
			return false;
		b += 1 + *a;
		a += 1 + *a;
	}
}

/* One more touch, of owner, its key written into the key memory (sized
 * for every key by touches()); when owner is spelled as before, the
 * owner of the touch before, that touch's key and hash (the records of
 * an RRset, and mostly of an owner, come one after the other). */
static void touch_of(touches_t *ts, const uint8_t *owner, const uint8_t *before, bool removal,
		     uint32_t at)
{
	if (before != NULL && spelled_alike(owner, before)) {
		const touch_t *last = &ts->t[ts->count - 1];
		ts->t[ts->count++] = (touch_t){ .key = last->key,
						.at = at,
						.node = APEX_NODE_NONE,
						.hash = last->hash,
						.key_size = last->key_size,
						.removal = removal };
		return;
	}
	size_t key_size = apex_name_key(owner, ts->keys + ts->keys_size, NULL);

	ts->t[ts->count++] = (touch_t){ .key = ts->keys + ts->keys_size,
					.at = at,
					.node = APEX_NODE_NONE,
					.hash = apex_name_hash(owner),
					.key_size = (uint16_t)key_size,
					.removal = removal };
	ts->keys_size += key_size;
}

static bool same_owner(const touch_t *a, const touch_t *b)
{
	return a->key_size == b->key_size && memcmp(a->key, b->key, a->key_size) == 0;
}

/* The walks over the changed owners ask memory ahead in steps, at
 * zone/lookup_ahead.h's distances: find_nodes() for an owner's slot in
 * old's table, the node the slot points at, that node's name and key;
 * the records' walks after it for the node and its RRsets pointer, the
 * RRsets, their records. */

/* The index of each owner's first touch in ts (sorted by owner), and
 * ts->count after the last, into *first (malloc()ed, the caller's to
 * free); the owners' count; 0 when out of memory. */
static size_t owner_firsts(const touches_t *ts, uint32_t **first)
{
	const touch_t *t = ts->t;
	size_t owners = 0;

	if ((*first = malloc((ts->count + 1) * sizeof(**first))) == NULL)
		return 0;
	for (size_t i = 0; i < ts->count; i++)
		if (i == 0 || !same_owner(&t[i], &t[i - 1]))
			(*first)[owners++] = (uint32_t)i;
	(*first)[owners] = (uint32_t)ts->count;
	return owners;
}

/* Each changed owner's node in old, looked up once.  APEX_ENOTSUP for a
 * removal at a name old lacks (the whole build says the change does not
 * apply).  The steps ahead count owners, not touches (an owner's changed
 * records are two or three touches): an owner's first touch holds the id
 * asked for ahead until its lookup sets it, and the steps start at the
 * owner looked up, never behind it, so that they leave alone the owners
 * whose lookup is made. */
static int find_nodes(const apex_zone_t *old, touches_t *ts)
{
	touch_t *t = ts->t;
	uint32_t *first;
	size_t owners = owner_firsts(ts, &first), slot = 0, node_ahead = 0, name = 0;
	int rc = APEX_OK;

	if (owners == 0)
		return ts->count == 0 ? APEX_OK : APEX_ENOMEM;
	for (size_t o = 0; o < owners && rc == APEX_OK; o++) {
		for (; slot < owners && slot < o + APEX_LOOKUP_AHEAD_FIRST; slot++)
			apex_lookup_ahead_hashed_slot(old, t[first[slot]].hash);
		for (; node_ahead < owners && node_ahead < o + APEX_LOOKUP_AHEAD_SECOND;
		     node_ahead++)
			t[first[node_ahead]].node =
				apex_lookup_ahead_hashed_node(old, t[first[node_ahead]].hash);
		for (; name < owners && name < o + APEX_LOOKUP_AHEAD_THIRD; name++)
			apex_lookup_ahead_id_name(old, t[first[name]].node);
		const touch_t *f = &t[first[o]];
		bool in_index = false, removal = false;
		const apex_node_t *node =
			apex_zone_find_owner_hashed(old, f->hash, f->key, f->key_size, &in_index);
		for (size_t j = first[o]; j < first[o + 1]; j++) {
			t[j].node = apex_node_id(node);
			t[j].in_index = in_index;
			removal |= t[j].removal;
		}
		if (removal && node == NULL)
			rc = APEX_ENOTSUP;
	}
	free(first);
	return rc;
}

/* The placed records of one owner's touches (by_owner()), in local when
 * they fit. */
#define GROUP_LOCAL 16

typedef struct group {
	placed_t local[GROUP_LOCAL];
	placed_t *p;
	size_t room;
} group_t;

/* Room for n placed records in g; APEX_ENOMEM. */
static int group_room(group_t *g, size_t n)
{
	if (n <= g->room)
		return APEX_OK;
	placed_t *p = malloc(n * sizeof(*p));
	if (p == NULL)
		return APEX_ENOMEM;
	if (g->p != g->local)
		free(g->p);
	g->p = p;
	g->room = n;
	return APEX_OK;
}

/* One owner's additions t[0..n) (in the set's order) as dedupe() leaves
 * them: of a record added twice the last addition at the place of the
 * first, the others' items NULL.  Whether one was. */
static bool dedupe_additions(list_t *added, const touch_t *t, size_t n, placed_t *p)
{
	for (size_t y = 0; y < n; y++)
		p[y] = (placed_t){ 0, added->items[t[y].at], t[y].at };
	/* the prefixes alike: by identity, then the set's order */
	qsort(p, n, sizeof(*p), by_identity_placed);
	return last_of_each(added, p, n);
}

/* One owner's removals among t[0..n), sorted by identity, each made once
 * numbered into order from *numbered on (its touch's at), a second of one
 * identity dropped (its touch's at UINT32_MAX). */
static void number_removals(const list_t *removed, touch_t *t, size_t n, placed_t *p,
			    const uint8_t **order, size_t *numbered)
{
	size_t count = 0;

	for (size_t x = 0; x < n; x++)
		if (t[x].removal)
			p[count++] = (placed_t){ 0, removed->items[t[x].at], x };
	if (count > 1)
		qsort(p, count, sizeof(*p), by_identity_placed);
	for (size_t y = 0; y < count; y++) {
		touch_t *r = &t[p[y].at];
		if (y > 0 && same_identity(p[y - 1].record, p[y].record)) {
			r->at = UINT32_MAX;
			continue;
		}
		order[*numbered] = p[y].record;
		r->at = (uint32_t)(*numbered)++;
	}
}

/* Whether touch t stays: neither a removal made twice nor an addition
 * dropped by dedupe_additions(). */
static bool touch_stays(const list_t *added, const touch_t *t)
{
	if (t->removal)
		return t->at != UINT32_MAX;
	return t->at == UINT32_MAX || added->items[t->at] != NULL;
}

/* The additions without those dropped (NULL), the touches' indexes moved
 * with them. */
static int pack_additions(list_t *added, touches_t *ts)
{
	uint32_t *moved = malloc((added->count + 1) * sizeof(*moved));
	size_t k = 0;

	if (moved == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < added->count; i++) {
		moved[i] = (uint32_t)k;
		if (added->items[i] != NULL)
			added->items[k++] = added->items[i];
	}
	added->count = k;
	for (size_t i = 0; i < ts->count; i++)
		if (added_index(&ts->t[i]) != UINT32_MAX)
			ts->t[i].at = moved[ts->t[i].at];
	free(moved);
	return APEX_OK;
}

/*
 * The set made what condensing it gives (dedupe()), owner by owner from
 * the touches sorted by owner: one sort of the change instead of two
 * more of all of it by identity, whose comparisons read the records
 * (with 10,000 changes, a tenth of the derivation).  The removals are
 * numbered again by owner, then identity, so that each owner's lie
 * together, sorted, as changed_of()'s ranges and keep_record()'s
 * searches read them; the touches of the records dropped go.  The
 * removals are then not sorted over the whole set (net_sort() sorts
 * them for a whole build).
 */
static int by_owner(net_t *net, touches_t *ts)
{
	list_t *removed = &net->removed, *added = &net->added;
	const uint8_t **order = malloc((removed->count + 1) * sizeof(*order));
	group_t g = { .p = g.local, .room = GROUP_LOCAL };
	touch_t *t = ts->t;
	size_t numbered = 0, kept = 0;
	bool twice = false;
	int rc = order != NULL ? APEX_OK : APEX_ENOMEM;

	for (size_t i = 0, j; rc == APEX_OK && i < ts->count; i = j) {
		size_t adds = 0;
		for (j = i + 1; j < ts->count && same_owner(&t[j], &t[i]); j++)
			;
		/* an owner's additions come first (by_touch()) */
		while (i + adds < j && added_index(&t[i + adds]) != UINT32_MAX)
			adds++;
		rc = group_room(&g, j - i);
		if (rc != APEX_OK)
			break;
		if (adds > 1)
			twice |= dedupe_additions(added, &t[i], adds, g.p);
		number_removals(removed, &t[i + adds], j - i - adds, g.p, order, &numbered);
	}
	if (g.p != g.local)
		free(g.p);
	if (rc != APEX_OK) {
		free(order);
		return rc;
	}
	for (size_t i = 0; i < ts->count; i++)
		if (touch_stays(added, &t[i]))
			t[kept++] = t[i];
	ts->count = kept;
	free(removed->items);
	removed->items = order;
	removed->capacity = removed->count + 1;
	removed->count = numbered;
	if (twice && (rc = pack_additions(added, ts)) != APEX_OK)
		return rc;
	net->deduped = true;
	net->sorted = numbered < 2;
	return index_removals(net);
}

/* The records of the change by owner, each owner's additions in order,
 * sorted by key; the apex among them; the set made as condensing gives
 * (by_owner()).  APEX_ENOTSUP for a removal at a name old lacks or an
 * SOA among them. */
static int touches(const apex_zone_t *old, net_t *net, touches_t *ts)
{
	size_t removed = net->removed.count, n = removed + net->added.count;
	/* a key is at most twice its name (escapes, apex_name_key()): room
	 * for all of them at once, the pages never written never resident */
	size_t key_room = 2 * (size_t)old->apex->name_size;

	memset(ts, 0, sizeof(*ts));
	if (n >= UINT32_MAX)
		return APEX_ENOTSUP;
	for (size_t i = 0; i < n; i++)
		key_room += 2 * apex_name_size(i < removed ? net->removed.items[i]
							   : net->added.items[i - removed]);
	ts->t = malloc((n + 1) * sizeof(*ts->t));
	ts->keys = malloc(key_room);
	if (ts->t == NULL || ts->keys == NULL)
		return APEX_ENOMEM;
	touch_of(ts, old->apex->name, NULL, false, UINT32_MAX);
	const uint8_t *before = old->apex->name;
	for (size_t i = 0; i < n; i++) {
		bool removal = i < removed;
		apex_rr_t rr;
		if (removal)
			removed_at(net, i, &rr);
		else
			added_at(net, i - removed, &rr);
		if (rr.type == APEX_TYPE_SOA || rr.rclass != APEX_CLASS_IN)
			return APEX_ENOTSUP;
		touch_of(ts, rr.owner, before, removal, (uint32_t)(removal ? i : i - removed));
		before = rr.owner;
	}
	apex_chunk_sort(ts->t, ts->count, sizeof(*ts->t), touch_chunk, by_touch);
	int rc = by_owner(net, ts);
	return rc == APEX_OK ? find_nodes(old, ts) : rc;
}

/* The changed owners, one each in key order, and the additions at each in
 * the set's order: found[k] is owner k's lookup (its key in keys),
 * adds[ends[k - 1] .. ends[k]) the indexes of its additions in the net's
 * (from 0 for k = 0), removals[2k] .. removals[2k + 1]) those of its
 * removals (the net's are sorted by identity, owner first, so an owner's
 * are together).  All owned, changed_free(): what the derivation needs of
 * the touches, in a third of their memory. */
typedef struct changed {
	apex_derive_found_t *found;
	uint8_t *keys;
	uint32_t *ends, *adds, *removals;
	size_t count;
} changed_t;

/* Freed, and left empty. */
static void changed_free(changed_t *c)
{
	free(c->found);
	free(c->keys);
	free(c->ends);
	free(c->adds);
	free(c->removals);
	memset(c, 0, sizeof(*c));
}

/* The changed owners of ts (sorted, their nodes found). */
static int changed_of(const touches_t *ts, changed_t *c)
{
	const touch_t *t = ts->t;
	size_t owners = 0, key_bytes = 0, adds = 0;

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < ts->count; i++) {
		if (i == 0 || !same_owner(&t[i], &t[i - 1])) {
			owners++;
			key_bytes += t[i].key_size;
		}
		adds += added_index(&t[i]) != UINT32_MAX;
	}
	c->found = malloc((owners + 1) * sizeof(*c->found));
	c->keys = malloc(key_bytes + 1);
	c->ends = malloc((owners + 1) * sizeof(*c->ends));
	c->adds = malloc((adds + 1) * sizeof(*c->adds));
	c->removals = malloc((owners + 1) * 2 * sizeof(*c->removals));
	if (c->found == NULL || c->keys == NULL || c->ends == NULL || c->adds == NULL ||
	    c->removals == NULL)
		return APEX_ENOMEM;
	uint8_t *key = c->keys;
	uint32_t a = 0, *range = NULL;
	for (size_t i = 0; i < ts->count; i++) {
		if (i == 0 || !same_owner(&t[i], &t[i - 1])) {
			memcpy(key, t[i].key, t[i].key_size);
			c->found[c->count++] = (apex_derive_found_t){ key, t[i].key_size,
								      t[i].in_index, t[i].node };
			key += t[i].key_size;
			range = &c->removals[2 * (c->count - 1)];
			range[0] = range[1] = 0;
		}
		if (added_index(&t[i]) != UINT32_MAX)
			c->adds[a++] = added_index(&t[i]);
		c->ends[c->count - 1] = a;
		if (t[i].removal) {
			bool none = range[0] == range[1];
			if (none || t[i].at < range[0])
				range[0] = t[i].at;
			if (none || t[i].at >= range[1])
				range[1] = t[i].at + 1;
		}
	}
	return APEX_OK;
}

/* At most how many records the changed owners keep and gain: those of
 * their nodes in old and the additions (with the SOA), for the builder to
 * hold them without growing its arrays, which copies them. */
static size_t records_at_most(const apex_zone_t *old, const net_t *net, const changed_t *c)
{
	size_t n = 1 + net->added.count, nodes = 0, sets = 0;

	for (size_t k = 0; k < c->count; k++) {
		for (; nodes < c->count && nodes < k + APEX_LOOKUP_AHEAD_SECOND; nodes++)
			apex_lookup_ahead_id_node(old, c->found[nodes].node);
		for (; sets < c->count && sets < k + APEX_LOOKUP_AHEAD_THIRD; sets++)
			apex_lookup_ahead_id_rrsets(old, c->found[sets].node);
		if (c->found[k].node == APEX_NODE_NONE)
			continue;
		const apex_node_t *node = apex_zone_node(old, c->found[k].node);
		const apex_rrset_t *rrsets = apex_node_rrsets(old, node);
		for (size_t r = 0; r < node->rrset_count; r++)
			n += rrsets[r].count +
			     (rrsets[r].rrsig != NULL ? rrsets[r].rrsig->count : 0);
	}
	return n;
}

/* The records of the changed owners, in the order a whole build sees
 * them (each name's kept records before its additions), to w; the ids of
 * the changed owners old has, into nodes (sorted). */
static int changed_records(const apex_zone_t *old, net_t *net, const changed_t *c,
			   apex_zone_from_wire_t *w, uint32_t *nodes, size_t *node_count)
{
	keep_t k = { net, add_to_builder, w, NULL, 0, 0, 0 };
	int rc = apex_zone_from_wire_reserve(w, records_at_most(old, net, c), c->count);
	size_t far = 0, sets = 0, ahead = 0;

	if (rc == APEX_OK)
		rc = add_to_builder(w, &net->soa);
	*node_count = 0;
	for (size_t i = 0, a = 0; i < c->count && rc == APEX_OK; i++) {
		/* the nodes and RRsets were read by records_at_most(), but
		 * with thousands of owners the first are no longer in the
		 * caches: each is asked for again in three steps, none of
		 * which waits for what it asks (the node and its RRsets
		 * pointer, the RRsets, then their records) */
		for (; far < c->count && far < i + APEX_LOOKUP_AHEAD_FIRST; far++)
			apex_lookup_ahead_id_node(old, c->found[far].node);
		for (; sets < c->count && sets < i + APEX_LOOKUP_AHEAD_SECOND; sets++)
			apex_lookup_ahead_id_rrsets(old, c->found[sets].node);
		for (; ahead < c->count && ahead < i + APEX_LOOKUP_AHEAD_THIRD; ahead++)
			apex_lookup_ahead_id_records(old, c->found[ahead].node);
		uint32_t id = c->found[i].node;
		if (id != APEX_NODE_NONE) {
			nodes[(*node_count)++] = id;
			k.from = c->removals[2 * i];
			k.to = c->removals[2 * i + 1];
			rc = apex_node_records(old, apex_zone_node(old, id), keep_record, &k);
		}
		for (; rc == APEX_OK && a < c->ends[i]; a++) {
			apex_rr_t rr;
			added_at(net, c->adds[a], &rr);
			rc = add_to_builder(w, &rr);
		}
	}
	return rc;
}

/* What the derivation's found points into, freed once it has matched the
 * owners (derive.h's found_read). */
static void free_found(void *ctx)
{
	changed_free(ctx);
}

static int by_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The version derived from old (zone/derive.h), or APEX_ENOTSUP.  Once
 * the change is read into the builder, the net (which points into the
 * sets) is freed and the guard told (*released) when it asks to be. */
static int derived(apex_zone_t *old, net_t *net, const char *source, const apex_ixfr_guard_t *guard,
		   bool *released, apex_zone_t **out, char *err, size_t err_size)
{
	const apex_node_t *apex = old->apex;
	apex_zone_from_wire_t *w = NULL;
	touches_t ts = { 0 };
	changed_t c = { 0 };
	uint32_t *nodes = NULL;
	apex_derive_owners_t owners = { 0 };

	if (!apex_zone_derivable(old) || apex_name_size(net->soa.owner) != apex->name_size ||
	    memcmp(net->soa.owner, apex->name, apex->name_size) != 0)
		return APEX_ENOTSUP;
	int rc = touches(old, net, &ts);
	if (rc == APEX_OK)
		rc = changed_of(&ts, &c);
	/* the touches are done with: not held through the builder's records
	 * and the derivation (92 MiB for the two million records of a tenth
	 * of a 10M-record zone, where what is kept of them is 46) */
	touches_free(&ts);
	if (rc == APEX_OK && (nodes = malloc((c.count + 1) * sizeof(*nodes))) == NULL)
		rc = APEX_ENOMEM;
	if (rc == APEX_OK)
		rc = apex_zone_from_wire_begin(&w, old->origin, source, err, err_size);
	if (rc == APEX_OK)
		rc = changed_records(old, net, &c, w, nodes, &owners.changed_count);
	if (rc == APEX_OK)
		rc = removals_found(old, net, err, err_size);
	if (rc == APEX_ELOAD)
		rc = APEX_ENOTSUP; /* the whole build says why, as it always does */
	if (rc == APEX_OK) {
		free(c.ends);
		free(c.adds);
		free(c.removals);
		c.ends = c.adds = c.removals = NULL;
		qsort(nodes, owners.changed_count, sizeof(*nodes), by_id);
		if (guard != NULL && guard->sets_read != NULL) {
			net_free(net);
			guard->sets_read(guard->ctx);
			*released = true;
		}
		owners.changed = nodes;
		owners.count = owners.found_count = c.count;
		owners.found = c.found;
		owners.found_read = free_found;
		owners.found_ctx = &c;
		rc = apex_zone_from_wire_derive(w, old, &owners, out);
	} else if (w != NULL) {
		apex_zone_from_wire_abort(w);
	}
	changed_free(&c);
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
	memset(net->found, 0, net->removed.count * sizeof(*net->found));
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
	/* the removals sorted by identity only for a whole build: a
	 * derivation sorts the change by owner (by_owner()) */
	int rc = net_read(sets, count, &net, err, err_size);
	bool released = false;

	*out = NULL;
	*in_place = false;
	if (rc == APEX_OK) {
		rc = derived(old, &net, source, guard, &released, out, err, err_size);
		*in_place = rc == APEX_OK;
		if (rc == APEX_ENOTSUP && err_size > 0)
			err[0] = '\0';
		/* the sets released: the caller builds the version otherwise */
		if (rc == APEX_ENOTSUP && !released) {
			rc = guard != NULL ? guard->whole(guard->ctx, err, err_size) : APEX_OK;
			if (rc == APEX_OK)
				rc = net_sort(&net, count);
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
