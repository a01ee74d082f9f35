/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the equivalence tests of derived versions share
 * (test_ixfr_equivalence.c: a version derived from an IXFR;
 * test_reload_equivalence.c: from a reload of an edited zone file): a
 * seeded generator of random changes to a zone (records and whole names
 * removed, records added of every kind that changes what the build
 * derives), and the comparison of two versions record for record, name
 * for name and answer for answer, byte for byte.  Included by each test
 * once, after the headers it needs; a test uses some of it only.
 */
#ifndef APEX_TEST_EQUIVALENCE_H
#define APEX_TEST_EQUIVALENCE_H

#pragma GCC diagnostic ignored "-Wunused-function"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/precompute.h"
#include "util/error.h"
#include "xfr/changes.h"
#include "zone/zoneset.h"
#include "served_zone.h"
#include "zone_records.h"
/* Names compared per version: every name of a small zone, a sample of a
 * large one (plus every name a change touched). */
#define SAMPLE_NAMES 400
#define MAX_CHANGES 24

static uint64_t rng_state;

/* xorshift64*: the same sets for the same seed on every machine. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static size_t below(size_t n)
{
	return n == 0 ? 0 : (size_t)(rnd() % n);
}

/* ------------------------------------------------------------ records */

/* One record, owning its bytes. */
typedef struct record {
	uint8_t owner[APEX_NAME_MAX];
	uint16_t type;
	uint32_t ttl;
	uint16_t rdlength;
	uint8_t rdata[1024];
} record_t;

typedef struct records {
	record_t *items;
	size_t count, capacity;
} records_t;

static record_t *records_push(records_t *l)
{
	if (l->count == l->capacity) {
		l->capacity = l->capacity ? 2 * l->capacity : 256;
		l->items = realloc(l->items, l->capacity * sizeof(*l->items));
		assert_non_null(l->items);
	}
	memset(&l->items[l->count], 0, sizeof(record_t));
	return &l->items[l->count++];
}

static void record_set(record_t *r, const uint8_t *owner, uint16_t type, uint32_t ttl,
		       const uint8_t *rdata, uint16_t rdlength)
{
	memcpy(r->owner, owner, apex_name_size(owner));
	r->type = type;
	r->ttl = ttl;
	r->rdlength = rdlength;
	assert_true(rdlength <= sizeof(r->rdata));
	if (rdlength > 0) /* a touched name alone has no RDATA (NULL) */
		memcpy(r->rdata, rdata, rdlength);
}

static void list_rrset(records_t *l, const uint8_t *owner, const apex_rrset_t *rs)
{
	const uint8_t *p = rs->rdata;

	for (uint16_t i = 0; i < rs->count; i++) {
		uint16_t size = apex_read_u16(p);

		if (size <= sizeof(((record_t *)0)->rdata))
			record_set(records_push(l), owner, rs->type, rs->ttl, p + 2, size);
		p += 2 + size;
	}
}

static void list_node(records_t *l, const apex_zone_t *zone, const apex_node_t *n)
{
	for (uint16_t i = 0; i < n->rrset_count; i++) {
		list_rrset(l, n->name, &apex_node_rrsets(zone, n)[i]);
		if (apex_node_rrsets(zone, n)[i].rrsig != NULL)
			list_rrset(l, n->name, apex_node_rrsets(zone, n)[i].rrsig);
	}
}

/* Every record of zone, the SOA and the stray RRSIG sets included. */
static void zone_list(const apex_zone_t *zone, records_t *l)
{
	for (size_t i = 0; i < zone->node_count; i++)
		list_node(l, zone, apex_zone_node_at(zone, i));
	for (size_t i = 0; i < zone->nsec3_owner_count; i++)
		list_node(l, zone, apex_zone_nsec3_owner_at(zone, i));
	for (size_t i = 0; i < zone->stray_rrsig_count; i++)
		list_rrset(l, apex_zone_node(zone, zone->stray_rrsigs[i].node)->name,
			   zone->stray_rrsigs[i].sigs);
}

static bool same_record(const record_t *a, const record_t *b)
{
	return a->type == b->type && a->rdlength == b->rdlength &&
	       apex_name_equal(a->owner, b->owner) && memcmp(a->rdata, b->rdata, a->rdlength) == 0;
}

/* ------------------------------------------------------------ change sets */

typedef struct change {
	records_t removed, added;
	records_t touched; /* owners the change names (type 0) */
} change_t;

static void change_free(change_t *c)
{
	free(c->removed.items);
	free(c->added.items);
	free(c->touched.items);
	memset(c, 0, sizeof(*c));
}

/* "LABEL.parent" into out; false if too long. */
static bool child_name(const uint8_t *parent, const char *label, uint8_t *out)
{
	size_t len = strlen(label), size = apex_name_size(parent);

	if (len > 63 || 1 + len + size > APEX_NAME_MAX)
		return false;
	out[0] = (uint8_t)len;
	memcpy(out + 1, label, len);
	memcpy(out + 1 + len, parent, size);
	return true;
}

static const apex_node_t *random_node(const apex_zone_t *z)
{
	return apex_zone_node_at(z, below(z->node_count));
}

/* A random record of the old version other than the SOA, or NULL. */
static const record_t *random_record(const records_t *all)
{
	for (int tries = 0; tries < 20; tries++) {
		const record_t *r = &all->items[below(all->count)];

		if (r->type != APEX_TYPE_SOA)
			return r;
	}
	return NULL;
}

static void touch(change_t *c, const uint8_t *owner)
{
	record_set(records_push(&c->touched), owner, 0, 0, NULL, 0);
}

static void add(change_t *c, const uint8_t *owner, uint16_t type, uint32_t ttl,
		const uint8_t *rdata, uint16_t rdlength)
{
	record_set(records_push(&c->added), owner, type, ttl, rdata, rdlength);
	touch(c, owner);
}

static void add_name_rdata(change_t *c, const uint8_t *owner, uint16_t type, uint32_t ttl,
			   const uint8_t *target)
{
	add(c, owner, type, ttl, target, (uint16_t)apex_name_size(target));
}

static void add_address(change_t *c, const uint8_t *owner, uint32_t ttl)
{
	uint8_t v4[4] = { 192, 0, 2, (uint8_t)below(256) };
	uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	v6[15] = (uint8_t)below(256);
	if (below(3) == 0)
		add(c, owner, APEX_TYPE_AAAA, ttl, v6, sizeof(v6));
	else
		add(c, owner, APEX_TYPE_A, ttl, v4, sizeof(v4));
}

/* One random addition to c, made against the old version z. */
static void random_addition(change_t *c, const apex_zone_t *z, const records_t *all)
{
	uint8_t name[APEX_NAME_MAX], target[APEX_NAME_MAX], label[32];
	const apex_node_t *n = random_node(z);

	snprintf((char *)label, sizeof(label), "n%u", (unsigned)below(100000));
	/* data beside a CNAME is refused by the build: now and then only */
	if ((n->flags & APEX_NODE_CNAME) && below(8) != 0)
		n = z->apex;
	switch (below(12)) {
	case 0: /* an address at a new name (below a cut, that is glue or occluded) */
		if (child_name(n->name, (char *)label, name))
			add_address(c, name, 300 + (uint32_t)below(3));
		break;
	case 1: /* a new delegation with in-bailiwick glue and a sibling name server */
		if (child_name(z->origin, (char *)label, name) && child_name(name, "ns", target)) {
			add_name_rdata(c, name, APEX_TYPE_NS, 3600, target);
			add_address(c, target, 3600);
			add_name_rdata(c, name, APEX_TYPE_NS, 3600, random_node(z)->name);
		}
		break;
	case 2: /* an address for an existing name: glue or additional data changes */
		add_address(c, n->name, 3600);
		break;
	case 3: /* a wildcard */
		if (child_name(n->name, "*", name)) {
			uint8_t txt[] = { 8, 'w', 'i', 'l', 'd', 'c', 'a', 'r', 'd' };
			add(c, name, APEX_TYPE_TXT, 600, txt, sizeof(txt));
		}
		break;
	case 4: /* a CNAME at a new name, to an existing one */
		if (child_name(n->name, (char *)label, name))
			add_name_rdata(c, name, APEX_TYPE_CNAME, 600, random_node(z)->name);
		break;
	case 5: /* a DNAME at a new name (a wildcard CNAME when it is "*") */
		if (child_name(n->name, below(4) == 0 ? "*" : (char *)label, name))
			add_name_rdata(c, name, below(2) ? APEX_TYPE_DNAME : APEX_TYPE_CNAME, 600,
				       random_node(z)->name);
		break;
	case 6: { /* a DS at an existing name */
		uint8_t ds[24] = { 0x30, 0x39, 8, 2 };

		for (size_t i = 4; i < sizeof(ds); i++)
			ds[i] = (uint8_t)rnd();
		add(c, n->name, APEX_TYPE_DS, 86400, ds, sizeof(ds));
		break;
	}
	case 7: /* NS at an existing name: a new zone cut over what lies below it */
		if (n != z->apex)
			add_name_rdata(c, n->name, APEX_TYPE_NS, 3600, random_node(z)->name);
		break;
	case 8: { /* a copy of an existing record at a new TTL (RRset TTLs differ) */
		const record_t *r = random_record(all);
		uint8_t txt[] = { 5, 'o', 't', 'h', 'e', 'r' };

		if (r != NULL && r->type == APEX_TYPE_TXT)
			add(c, r->owner, r->type, r->ttl / 2 + 1, txt, sizeof(txt));
		else if (r != NULL && (r->type == APEX_TYPE_A || r->type == APEX_TYPE_AAAA))
			add_address(c, r->owner, r->ttl + 7);
		break;
	}
	case 9: /* an NSEC3 record at a new hash owner (NSEC3 zones) */
		if (z->dnssec == APEX_DNSSEC_NSEC3) {
			const record_t *r = random_record(all);
			char hash[33];

			for (int i = 0; i < 32; i++)
				hash[i] = "0123456789abcdefghijklmnopqrstuv"[below(32)];
			hash[32] = 0;
			for (size_t i = 0; r != NULL && r->type != APEX_TYPE_NSEC3 && i < 50; i++)
				r = random_record(all);
			if (r != NULL && r->type == APEX_TYPE_NSEC3 &&
			    child_name(z->origin, hash, name))
				add(c, name, APEX_TYPE_NSEC3, r->ttl, r->rdata, r->rdlength);
		}
		break;
	case 10: /* an MX to an existing name (its addresses become additional data) */
		if (child_name(n->name, (char *)label, name)) {
			uint8_t mx[2 + APEX_NAME_MAX] = { 0, 10 };
			const uint8_t *exchange = random_node(z)->name;
			size_t size = apex_name_size(exchange);

			memcpy(mx + 2, exchange, size);
			add(c, name, APEX_TYPE_MX, 600, mx, (uint16_t)(2 + size));
		}
		break;
	default: { /* a TXT at an existing name */
		uint8_t txt[] = { 4, 'n', 'e', 'w', (uint8_t)('a' + below(26)) };
		add(c, n->name, APEX_TYPE_TXT, 600, txt, sizeof(txt));
		break;
	}
	}
}

static bool listed(const records_t *l, const record_t *r)
{
	for (size_t i = 0; i < l->count; i++)
		if (same_record(&l->items[i], r))
			return true;
	return false;
}

/* r and a record of l at the same owner would be a CNAME beside other data. */
static bool cname_conflict(const records_t *l, const record_t *r)
{
	for (size_t i = 0; i < l->count; i++) {
		const record_t *o = &l->items[i];
		if ((o->type == APEX_TYPE_CNAME) != (r->type == APEX_TYPE_CNAME) &&
		    o->type != APEX_TYPE_RRSIG && o->type != APEX_TYPE_NSEC &&
		    r->type != APEX_TYPE_RRSIG && r->type != APEX_TYPE_NSEC &&
		    apex_name_equal(o->owner, r->owner))
			return true;
	}
	return false;
}

/* One random removal: a record, or every record of a name. */
static void random_removal(change_t *c, const records_t *all)
{
	const record_t *r = random_record(all);

	if (r == NULL)
		return;
	touch(c, r->owner);
	if (below(4) != 0) {
		if (!listed(&c->removed, r))
			*records_push(&c->removed) = *r;
		return;
	}
	for (size_t i = 0; i < all->count; i++)
		if (all->items[i].type != APEX_TYPE_SOA &&
		    apex_name_equal(all->items[i].owner, r->owner) &&
		    !listed(&c->removed, &all->items[i]))
			*records_push(&c->removed) = all->items[i];
}

/* The records of all at owner of type (0: any type but the SOA), up to
 * max of them, into out; how many. */
static size_t records_at(const records_t *all, const uint8_t *owner, uint16_t type,
			 const record_t **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < all->count && n < max; i++)
		if ((type == 0 ? all->items[i].type != APEX_TYPE_SOA
			       : all->items[i].type == type) &&
		    apex_name_equal(all->items[i].owner, owner))
			out[n++] = &all->items[i];
	return n;
}

static void remove_record(change_t *c, const record_t *r)
{
	if (!listed(&c->removed, r))
		*records_push(&c->removed) = *r;
	touch(c, r->owner);
}

/* A name of z with records, no CNAME (data beside it is refused), not
 * the apex when not_apex; NULL if none was found. */
static const apex_node_t *data_node(const apex_zone_t *z, bool not_apex)
{
	for (int tries = 0; tries < 50; tries++) {
		const apex_node_t *n = random_node(z);

		if (n->rrset_count > 0 && !(n->flags & (APEX_NODE_CNAME | APEX_NODE_EMPTY)) &&
		    !(not_apex && n == z->apex))
			return n;
	}
	return NULL;
}

/* One random change that keeps the structure of z, what most IXFRs of a
 * TLD are and what a derivation in place handles (zone/derive.h): glue
 * addresses, NS and DS of delegations, RRSIGs and NSEC3 records signed
 * again, TTLs, data at existing names. */
static void random_update(change_t *c, const apex_zone_t *z, const records_t *all)
{
	const record_t *found[64];
	const apex_node_t *n = data_node(z, true);
	size_t count;

	if (n == NULL)
		return;
	switch (below(8)) {
	case 0: { /* the glue of a delegation gets a new address */
		const apex_rrset_t *ns = apex_node_rrset(z, n, APEX_TYPE_NS);
		const apex_node_t *target = NULL;

		if (ns != NULL && ns->rdata_nodes != NULL)
			target = apex_zone_node(z, ns->rdata_nodes[below(ns->count)]);
		if (target == NULL || apex_node_rrset(z, target, APEX_TYPE_A) == NULL)
			break;
		count = records_at(all, target->name, APEX_TYPE_A, found, 64);
		touch(c, n->name); /* the referral's additional section changes */
		if (count > 1 || below(2) == 0)
			remove_record(c, found[below(count)]);
		add_address(c, target->name, found[0]->ttl);
		break;
	}
	case 1: /* a name server of a delegation (or of the apex) replaced */
		n = below(4) == 0 ? z->apex : n;
		count = records_at(all, n->name, APEX_TYPE_NS, found, 64);
		if (count == 0)
			break;
		add_name_rdata(c, n->name, APEX_TYPE_NS, found[0]->ttl, random_node(z)->name);
		if (count > 1)
			remove_record(c, found[below(count)]);
		break;
	case 2: /* a DS added to or removed from a delegation */
		if (apex_node_rrset(z, n, APEX_TYPE_NS) == NULL)
			break;
		count = records_at(all, n->name, APEX_TYPE_DS, found, 64);
		if (count > 0 && below(2) == 0) {
			remove_record(c, found[below(count)]);
		} else {
			uint8_t ds[36] = { 0x30, 0x39, 13, 2 };

			for (size_t i = 4; i < sizeof(ds); i++)
				ds[i] = (uint8_t)rnd();
			add(c, n->name, APEX_TYPE_DS, 86400, ds, sizeof(ds));
		}
		break;
	case 3: { /* an RRSIG signed again (NSEC3 owners' included) */
		const record_t *r = NULL;

		for (int tries = 0; tries < 50 && r == NULL; tries++) {
			r = random_record(all);
			if (r != NULL && r->type != APEX_TYPE_RRSIG)
				r = NULL;
		}
		if (r == NULL)
			break;
		record_t resigned = *r;
		resigned.rdata[resigned.rdlength - 1] ^= (uint8_t)(1 + below(255));
		remove_record(c, r);
		add(c, resigned.owner, resigned.type, resigned.ttl, resigned.rdata,
		    resigned.rdlength);
		break;
	}
	case 4: { /* an NSEC3 record changes its opt-out flag and next hash */
		const record_t *r = NULL;

		for (int tries = 0; tries < 80 && r == NULL; tries++) {
			r = random_record(all);
			if (r != NULL && r->type != APEX_TYPE_NSEC3)
				r = NULL;
		}
		if (r == NULL || r->rdlength < 6)
			break;
		record_t changed = *r;
		changed.rdata[1] ^= 1;
		remove_record(c, r);
		add(c, changed.owner, changed.type, changed.ttl, changed.rdata, changed.rdlength);
		break;
	}
	case 5: { /* an RRset's TTL changes: every record again */
		const record_t *r = random_record(all);

		if (r == NULL || r->type == APEX_TYPE_SOA)
			break;
		count = records_at(all, r->owner, r->type, found, 64);
		for (size_t i = 0; i < count; i++) {
			if (r->type == APEX_TYPE_RRSIG && memcmp(found[i]->rdata, r->rdata, 2) != 0)
				continue; /* RRSIGs: those covering the same type */
			remove_record(c, found[i]);
			add(c, found[i]->owner, found[i]->type, found[i]->ttl + 60, found[i]->rdata,
			    found[i]->rdlength);
		}
		break;
	}
	case 6: { /* an MX at an existing name, to an existing name */
		uint8_t mx[2 + APEX_NAME_MAX] = { 0, (uint8_t)below(50) };
		const uint8_t *exchange = random_node(z)->name;
		size_t size = apex_name_size(exchange);

		memcpy(mx + 2, exchange, size);
		add(c, n->name, APEX_TYPE_MX, 600, mx, (uint16_t)(2 + size));
		break;
	}
	default: { /* a TXT record at an existing name added, or one replaced */
		uint8_t txt[] = { 4, 'u', 'p', 'd', (uint8_t)('a' + below(26)) };

		count = records_at(all, n->name, APEX_TYPE_TXT, found, 64);
		add(c, n->name, APEX_TYPE_TXT, 600, txt, sizeof(txt));
		if (count > 0)
			remove_record(c, found[below(count)]);
		break;
	}
	}
}

/* Only changes that keep the structure (random_update()). */
static void random_updates(const apex_zone_t *z, const records_t *all, change_t *c)
{
	size_t changes = 1 + below(MAX_CHANGES);

	for (size_t i = 0; i < changes; i++)
		random_update(c, z, all);
	records_t kept = { 0 };
	for (size_t i = 0; i < c->added.count; i++) {
		const record_t *r = &c->added.items[i];
		/* a record removed is added back only with a new TTL (case 5) */
		if ((!listed(all, r) || listed(&c->removed, r)) && !listed(&kept, r) &&
		    !cname_conflict(all, r))
			*records_push(&kept) = *r;
	}
	free(c->added.items);
	c->added = kept;
}

/* owner is name or below it. */
static bool at_or_below(const uint8_t *owner, const uint8_t *name)
{
	int extra = apex_name_labels(owner) - apex_name_labels(name);

	for (; extra > 0; extra--)
		owner += 1 + owner[0];
	return extra == 0 && apex_name_equal(owner, name);
}

/* The NSEC3 record a signer adds for a new name in an NSEC3 zone: at the
 * hash of name, with the RDATA of an NSEC3 of the chain (the next hash
 * and types do not matter here). */
static void add_nsec3_of(change_t *c, const apex_zone_t *z, const uint8_t *name)
{
	const apex_nsec3_params_t *p = &z->nsec3_params;
	uint8_t hash[20], owner[APEX_NAME_MAX];
	char text[40];

	if (z->dnssec != APEX_DNSSEC_NSEC3 || z->nsec3_count == 0 ||
	    apex_nsec3_hash(p->algorithm, p->salt, p->salt_size, p->iterations, name, hash) < 0)
		return;
	text[apex_base32hex_encode(hash, sizeof(hash), text)] = 0;
	const apex_node_t *n3 = apex_zone_node(z, z->nsec3[below(z->nsec3_count)].node);
	const apex_rrset_t *set = apex_node_rrset(z, n3, APEX_TYPE_NSEC3);
	if (set != NULL && child_name(z->origin, text, owner))
		add(c, owner, APEX_TYPE_NSEC3, set->ttl, set->rdata + 2, apex_read_u16(set->rdata));
}

/* In an NSEC zone, an NSEC at name (its RDATA that of the apex's: the
 * links do not read it). */
static void add_nsec_of(change_t *c, const apex_zone_t *z, const uint8_t *name)
{
	const apex_rrset_t *set = apex_node_rrset(z, z->apex, APEX_TYPE_NSEC);

	if (z->dnssec == APEX_DNSSEC_NSEC && set != NULL)
		add(c, name, APEX_TYPE_NSEC, set->ttl, set->rdata + 2, apex_read_u16(set->rdata));
}

/* One random change of the names of z, what a TLD's registrations and
 * deletions are: a new delegation (NS, glue below it, sometimes a DS), a
 * delegation removed with all below it, a new name with an address or a
 * new wildcard beside existing names, a name without children removed, a
 * name or glue two labels below an existing name (an empty non-terminal
 * made between). */
static void random_registration(change_t *c, const apex_zone_t *z, const records_t *all)
{
	uint8_t name[APEX_NAME_MAX], glue[APEX_NAME_MAX], label[32];
	const apex_node_t *n = data_node(z, true);

	snprintf((char *)label, sizeof(label), "reg%u", (unsigned)below(1000000));
	switch (below(8)) {
	case 7: { /* a name two labels below one (an empty non-terminal made
		   * between), or a delegation with glue two labels below it */
		uint8_t ent[APEX_NAME_MAX];
		bool delegation = below(2) == 0;
		const uint8_t *under = delegation ? z->origin : n != NULL ? n->name : NULL;
		if (under == NULL || !child_name(under, (char *)label, ent))
			break;
		if (delegation) {
			uint8_t sub[APEX_NAME_MAX];
			if (!child_name(ent, "sub", sub) || !child_name(sub, "ns1", glue))
				break;
			add_name_rdata(c, ent, APEX_TYPE_NS, 86400, glue);
			add_address(c, glue, 86400);
			add_nsec_of(c, z, ent);
			add_nsec3_of(c, z, ent);
		} else {
			if (!child_name(ent, "x", name))
				break;
			add_address(c, name, 300);
			/* signed, when not below a zone cut: a signer adds no
			 * NSEC or NSEC3 for occluded names */
			if (below(2) == 0 && !(n->flags & (APEX_NODE_DELEGATION | APEX_NODE_DNAME |
							   APEX_NODE_OCCLUDED))) {
				add_nsec_of(c, z, name);
				add_nsec3_of(c, z, name);
				add_nsec3_of(c, z, ent); /* the new empty non-terminal's */
			}
		}
		break;
	}
	case 6: /* an NSEC3 for a name that had none (opted out), alone */
		if (n != NULL && n->nsec3 == APEX_NODE_NONE && !(n->flags & APEX_NODE_OCCLUDED)) {
			add_nsec3_of(c, z, n->name);
			touch(c, n->name);
		}
		break;
	case 5: { /* the address of a name server that had none (missing glue) */
		const apex_rrset_t *ns = n != NULL ? apex_node_rrset(z, n, APEX_TYPE_NS) : NULL;
		const uint8_t *p = ns != NULL ? ns->rdata : NULL;
		for (uint16_t i = 0; ns != NULL && i < ns->count; i++) {
			const uint8_t *target = p + 2;
			uint8_t key[APEX_KEY_MAX];
			size_t key_size = apex_name_key(target, key, NULL);
			if (key_size > z->origin_key_size &&
			    memcmp(key, z->origin_key, z->origin_key_size) == 0 &&
			    apex_zone_find(z, key, key_size) == NULL) {
				add_address(c, target, 3600);
				touch(c, n->name);
			}
			p += 2 + apex_read_u16(p);
		}
		break;
	}
	case 0:
	case 1: /* a new delegation */
		if (!child_name(z->origin, (char *)label, name) || !child_name(name, "ns1", glue))
			break;
		add_name_rdata(c, name, APEX_TYPE_NS, 86400, glue);
		add_address(c, glue, 86400);
		add_name_rdata(c, name, APEX_TYPE_NS, 86400, random_node(z)->name);
		if (below(2) == 0) {
			uint8_t ds[36] = { 0x12, 0x34, 13, 2 };
			for (size_t i = 4; i < sizeof(ds); i++)
				ds[i] = (uint8_t)rnd();
			add(c, name, APEX_TYPE_DS, 3600, ds, sizeof(ds));
		}
		if (below(4) != 0) { /* mostly: signed, or not opted out */
			add_nsec3_of(c, z, name);
			add_nsec_of(c, z, name);
		}
		break;
	case 2: /* a delegation removed, and all below it */
		if (n == NULL || !(n->flags & APEX_NODE_DELEGATION))
			break;
		for (size_t i = 0; i < all->count; i++)
			if (at_or_below(all->items[i].owner, n->name))
				remove_record(c, &all->items[i]);
		if (n->nsec3 != APEX_NODE_NONE && below(4) != 0) { /* and its NSEC3 */
			const record_t *found[16];
			size_t count =
				records_at(all, apex_zone_node(z, n->nsec3)->name, 0, found, 16);
			for (size_t k = 0; k < count; k++)
				remove_record(c, found[k]);
		}
		break;
	case 3: /* a new name with an address, or a new wildcard */
		if (n == NULL)
			break;
		if (below(3) == 0 && child_name(n->name, "*", name)) {
			uint8_t txt[] = { 3, 'n', 'e', 'w' };
			add(c, name, APEX_TYPE_TXT, 300, txt, sizeof(txt));
		} else if (child_name(n->name, (char *)label, name)) {
			add_address(c, name, 300);
		} else {
			break;
		}
		if (below(2) == 0)
			add_nsec_of(c, z, name); /* or covered by the one before */
		break;
	default: { /* a name without children removed */
		const record_t *found[64];
		size_t i = 0;
		if (n == NULL)
			break;
		for (; i < z->node_count; i++)
			if (apex_zone_node_at(z, i) == n)
				break;
		const apex_node_t *next =
			i + 1 < z->node_count ? apex_zone_node_at(z, i + 1) : NULL;
		if (next != NULL && at_or_below(next->name, n->name))
			break; /* it has children */
		size_t count = records_at(all, n->name, 0, found, 64);
		for (size_t k = 0; k < count; k++)
			remove_record(c, found[k]);
		break;
	}
	}
}

/* Only changes of names (random_registration()). */
static void random_registrations(const apex_zone_t *z, const records_t *all, change_t *c)
{
	size_t changes = 1 + below(MAX_CHANGES / 2);

	for (size_t i = 0; i < changes; i++)
		random_registration(c, z, all);
	records_t kept = { 0 };
	for (size_t i = 0; i < c->added.count; i++) {
		const record_t *r = &c->added.items[i];
		if (!listed(all, r) && !listed(&kept, r) && !listed(&c->removed, r))
			*records_push(&kept) = *r;
	}
	free(c->added.items);
	c->added = kept;
}

/* A random change to z: its removals are records of z, its additions
 * records z does not hold (a removed record is never added again). */
static void random_change(const apex_zone_t *z, const records_t *all, change_t *c)
{
	size_t removals = below(MAX_CHANGES / 2 + 1), additions = 1 + below(MAX_CHANGES);

	for (size_t i = 0; i < removals; i++)
		random_removal(c, all);
	for (size_t i = 0; i < additions; i++)
		random_addition(c, z, all);
	/* an addition that is already in the zone or the set is dropped, and
	 * most that would put a CNAME beside other data (the build refuses
	 * those: a few are kept to see both refuse them) */
	records_t kept = { 0 };
	for (size_t i = 0; i < c->added.count; i++) {
		const record_t *r = &c->added.items[i];
		if (!listed(all, r) && !listed(&kept, r) &&
		    ((!cname_conflict(all, r) && !cname_conflict(&kept, r)) || below(16) == 0))
			*records_push(&kept) = *r;
	}
	free(c->added.items);
	c->added = kept;
}

static void append(apex_changes_t *set, apex_change_kind_t kind, const record_t *r)
{
	apex_rr_t rr = { r->owner, r->type, APEX_CLASS_IN, r->ttl, r->rdlength, r->rdata };

	assert_int_equal(apex_changes_append(set, kind, &rr), APEX_OK);
}

/* The SOA of z with its serial one higher. */
static void next_soa(const apex_zone_t *z, record_t *soa)
{
	const uint8_t *rdata = z->soa->rdata + 2;
	uint16_t size = apex_read_u16(z->soa->rdata);
	size_t at = apex_name_size(rdata);

	at += apex_name_size(rdata + at);
	/* the apex as the primary spells it, which is the spelling served */
	record_set(soa, z->apex->name, APEX_TYPE_SOA, z->soa->ttl, rdata, size);
	apex_write_u32(soa->rdata + at, z->serial + 1);
}

/* The change as the IXFR change set a primary would send. */
static void change_set(const apex_zone_t *z, const change_t *c, apex_changes_t *set)
{
	record_t old_soa, new_soa;

	record_set(&old_soa, z->apex->name, APEX_TYPE_SOA, z->soa->ttl, z->soa->rdata + 2,
		   apex_read_u16(z->soa->rdata));
	next_soa(z, &new_soa);
	apex_changes_init(set);
	append(set, APEX_CHANGE_OLD_SOA, &old_soa);
	for (size_t i = 0; i < c->removed.count; i++)
		append(set, APEX_CHANGE_REMOVE, &c->removed.items[i]);
	append(set, APEX_CHANGE_NEW_SOA, &new_soa);
	for (size_t i = 0; i < c->added.count; i++)
		append(set, APEX_CHANGE_ADD, &c->added.items[i]);
}

/* ------------------------------------------------------------ the two versions */

/* ------------------------------------------------------------ answers */

static const uint16_t qtypes[] = {
	APEX_TYPE_A,     APEX_TYPE_NS,    APEX_TYPE_CNAME, APEX_TYPE_SOA,   APEX_TYPE_MX,
	APEX_TYPE_TXT,   APEX_TYPE_AAAA,  APEX_TYPE_DS,    APEX_TYPE_RRSIG, APEX_TYPE_NSEC,
	APEX_TYPE_NSEC3, APEX_TYPE_DNAME, APEX_TYPE_ANY,   65280, /* absent everywhere */
};

/* Answers compared, and how many differed. */
typedef struct tally {
	size_t queries;
	size_t zones, sets_applied, sets_refused, in_place;
} tally_t;

static uint64_t seed_used;

/* Ask both versions name with every type and flag; fail on a difference. */
static void compare_name(const served_t *a, const served_t *b, const uint8_t *name,
			 const char *what, tally_t *t)
{
	static uint8_t q[1024], ra[65535], rb[65535];
	apex_answer_config_t cfg;

	apex_answer_config_init(&cfg);
	for (size_t i = 0; i < sizeof(qtypes) / sizeof(qtypes[0]); i++) {
		for (int flags = 0; flags < 3; flags++) { /* no EDNS, EDNS, EDNS + DO */
			size_t qsize = query_for(q, name, qtypes[i], flags > 0, flags == 2);
			apex_transport_t tr = flags == 0 ? APEX_TRANSPORT_UDP : APEX_TRANSPORT_TCP;
			size_t na = apex_answer(a->set, &cfg, tr, q, qsize, ra, sizeof(ra), NULL);
			size_t nb = apex_answer(b->set, &cfg, tr, q, qsize, rb, sizeof(rb), NULL);

			t->queries++;
			if (na != nb || memcmp(ra, rb, na) != 0) {
				char text[APEX_NAME_MAX * 4 + 1];

				apex_name_to_str(name, text, sizeof(text));
				fail_msg("%s: %s type %u (%s): derived and scratch answers differ "
					 "(%zu vs %zu bytes; APEX_TEST_SEED=%llu)",
					 what, text, qtypes[i],
					 flags == 0   ? "no EDNS"
					 : flags == 1 ? "EDNS"
						      : "DO",
					 na, nb, (unsigned long long)seed_used);
			}
		}
	}
}

/* The name itself, a name below it that does not exist, and its wildcard. */
static void compare_around(const served_t *a, const served_t *b, const uint8_t *name,
			   const char *what, tally_t *t)
{
	uint8_t child[APEX_NAME_MAX];

	compare_name(a, b, name, what, t);
	if (child_name(name, "zz-absent", child))
		compare_name(a, b, child, what, t);
	if (child_name(name, "*", child))
		compare_name(a, b, child, what, t);
	if (child_name(name, "0", child))
		compare_name(a, b, child, what, t);
}

static void compare_answers(const apex_zone_t *x, const apex_zone_t *y, const change_t *c,
			    const char *what, tally_t *t)
{
	served_t a, b;
	bool all = x->node_count + y->node_count <= 2 * SAMPLE_NAMES;

	serve(&a, (apex_zone_t *)x);
	serve(&b, (apex_zone_t *)y);
	for (size_t i = 0; i < c->touched.count; i++) {
		uint8_t parent[APEX_NAME_MAX];
		const uint8_t *owner = c->touched.items[i].owner;

		compare_around(&a, &b, owner, what, t);
		if (apex_name_labels(owner) > 1) { /* its parent too: ENTs, wildcards */
			memcpy(parent, owner + 1 + owner[0], apex_name_size(owner) - 1 - owner[0]);
			compare_around(&a, &b, parent, what, t);
		}
	}
	for (int v = 0; v < 2; v++) {
		const apex_zone_t *z = v == 0 ? x : y;
		size_t n = all ? z->node_count : SAMPLE_NAMES;

		for (size_t i = 0; i < n; i++) {
			const apex_node_t *node = all ? apex_zone_node_at(z, i)
						      : apex_zone_node_at(z, below(z->node_count));
			compare_around(&a, &b, node->name, what, t);
		}
		for (size_t i = 0; i < z->nsec3_count && i < 20; i++)
			compare_name(&a, &b,
				     apex_zone_node(z, z->nsec3[below(z->nsec3_count)].node)->name,
				     what, t);
	}
	unserve(&a);
	unserve(&b);
}

/* The name of the node of id in z, as text ("-" for none). */
static void linked_name(const apex_zone_t *z, uint32_t id, char *out, size_t size)
{
	const apex_node_t *n = apex_zone_node(z, id);

	if (n == NULL)
		snprintf(out, size, "-");
	else
		apex_name_to_str(n->name, out, size);
}

/* a and b have the same names in the same order, with the same flags and
 * links (by the names they link to: ids differ), empty non-terminals
 * included: what answers may not show (an empty non-terminal's flag,
 * links a later change reads). */
static void assert_same_structure(const apex_zone_t *a, const apex_zone_t *b, const char *what)
{
	if (a->node_count != b->node_count)
		fail_msg("%s: %zu names derived, %zu from scratch (APEX_TEST_SEED=%llu)", what,
			 a->node_count, b->node_count, (unsigned long long)seed_used);
	for (size_t i = 0; i < a->node_count; i++) {
		const apex_node_t *x = apex_zone_node_at(a, i), *y = apex_zone_node_at(b, i);
		char name[1100], lx[1100], ly[1100];
		uint32_t links[][2] = { { x->parent, y->parent },
					{ x->cut, y->cut },
					{ x->wildcard_child, y->wildcard_child },
					{ x->nsec, y->nsec },
					{ x->nsec3, y->nsec3 },
					{ x->wildcard_nsec3, y->wildcard_nsec3 } };

		apex_name_to_str(x->name, name, sizeof(name));
		if (x->key_size != y->key_size ||
		    memcmp(apex_node_key(x), apex_node_key(y), x->key_size) != 0 ||
		    x->flags != y->flags)
			fail_msg("%s: name %zu: derived %s flags %#x, scratch flags %#x "
				 "(APEX_TEST_SEED=%llu)",
				 what, i, name, x->flags, y->flags, (unsigned long long)seed_used);
		for (size_t k = 0; k < sizeof(links) / sizeof(links[0]); k++) {
			linked_name(a, links[k][0], lx, sizeof(lx));
			linked_name(b, links[k][1], ly, sizeof(ly));
			if (strcmp(lx, ly) != 0)
				fail_msg("%s: %s: link %zu derived %s, scratch %s "
					 "(APEX_TEST_SEED=%llu)",
					 what, name, k, lx, ly, (unsigned long long)seed_used);
		}
	}
}

static void assert_same_records(const apex_zone_t *a, const apex_zone_t *b, const char *what)
{
	text_set_t x = { 0 }, y = { 0 };

	zone_records(a, &x);
	zone_records(b, &y);
	if (x.count != y.count)
		fail_msg("%s: %zu records derived, %zu from scratch (APEX_TEST_SEED=%llu)", what,
			 x.count, y.count, (unsigned long long)seed_used);
	for (size_t i = 0; i < x.count; i++)
		if (strcmp(x.items[i], y.items[i]) != 0)
			fail_msg("%s: derived has %s, scratch %s (APEX_TEST_SEED=%llu)", what,
				 x.items[i], y.items[i], (unsigned long long)seed_used);
	set_free(&x);
	set_free(&y);
}

#endif
