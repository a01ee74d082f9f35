/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node ids need not follow the canonical order nor be dense (zone.h): a
 * version whose nodes carry the same data under shuffled ids with unused
 * ids between them (as a version derived from another by an IXFR will,
 * its new names taking free ids and removed ones leaving theirs) answers
 * every query byte for byte as the version it was made from, and
 * transfers the same records in the same order.
 *
 * The shuffled copy is made here by hand: every node moved to its new id,
 * every link, RDATA-name node and glue owner renumbered, the NSEC3 chain
 * pointed at the moved nodes, the name index's order and hash table
 * rebuilt, and the precomputed answers recorded again.  The apex keeps
 * id 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/precompute.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/node_table.h"
#include "zone/zoneset.h"
#include "served_zone.h"
#include "zone_records.h"

/* What the shuffled copy owns beyond the original's arena. */
typedef struct shuffled {
	apex_zone_t zone;
	apex_node_t *nodes;
	const apex_node_t **pages;
	const apex_rrset_t **rrsets_of;          /* by id */
	const apex_rrset_t *const **rrset_pages; /* into rrsets_of */
	uint32_t *order, *nsec3_owners;
	apex_nsec3_t *nsec3;
	void **blocks; /* RRset arrays, RDATA-name ids, additional data */
	size_t block_count, block_capacity;
} shuffled_t;

static void *keep(shuffled_t *s, size_t size)
{
	void *p = calloc(1, size ? size : 1);

	assert_non_null(p);
	if (s->block_count == s->block_capacity) {
		s->block_capacity = s->block_capacity ? 2 * s->block_capacity : 256;
		s->blocks = realloc(s->blocks, s->block_capacity * sizeof(*s->blocks));
		assert_non_null(s->blocks);
	}
	s->blocks[s->block_count++] = p;
	return p;
}

static uint32_t remap(const uint32_t *map, uint32_t id)
{
	return id == APEX_NODE_NONE ? APEX_NODE_NONE : map[id];
}

/* A copy of one RRset array with its ids renumbered (RRSIG sets shared:
 * they hold no ids). */
static apex_rrset_t *copy_rrsets(shuffled_t *s, const apex_zone_t *zone, const apex_node_t *n,
				 const uint32_t *map)
{
	apex_rrset_t *sets = keep(s, n->rrset_count * sizeof(*sets));

	for (uint16_t i = 0; i < n->rrset_count; i++) {
		const apex_rrset_t *old = &apex_node_rrsets(zone, n)[i];
		apex_rrset_t *set = &sets[i];

		*set = *old;
		if (old->rdata_nodes != NULL) {
			size_t count = (size_t)old->count * apex_rdata_compressed_names(old->type);
			uint32_t *ids = keep(s, count * sizeof(*ids));

			for (size_t k = 0; k < count; k++)
				ids[k] = remap(map, old->rdata_nodes[k]);
			set->rdata_nodes = ids;
		}
		if (old->additional != NULL) {
			size_t size = sizeof(apex_additional_t) +
				      old->additional->count * sizeof(apex_glue_t);
			apex_additional_t *add = keep(s, size);

			memcpy(add, old->additional, size);
			for (uint16_t k = 0; k < add->count; k++)
				add->items[k].owner = remap(map, add->items[k].owner);
			set->additional = add;
		}
	}
	return sets;
}

/* The node of old id `id` moved to map[id] in s, links renumbered. */
static void move_node(shuffled_t *s, const apex_zone_t *z, uint32_t id, const uint32_t *map)
{
	const apex_node_t *old = apex_zone_node(z, id);
	apex_node_t *n = &s->nodes[map[id]];

	*n = *old;
	n->id = map[id];
	n->parent = remap(map, old->parent);
	n->cut = remap(map, old->cut);
	n->wildcard_child = remap(map, old->wildcard_child);
	n->nsec = remap(map, old->nsec);
	n->nsec3 = remap(map, old->nsec3);
	n->wildcard_nsec3 = remap(map, old->wildcard_nsec3); /* and wildcard_nsec */
	s->rrsets_of[map[id]] = copy_rrsets(s, z, old, map);
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Stray RRSIG sets by node id, as the build sorts them (zone.h). */
static int compare_strays(const void *a, const void *b)
{
	const apex_stray_rrsig_t *x = a, *y = b;
	return (x->node > y->node) - (x->node < y->node);
}

/* z with its ids shuffled (the apex keeps 0); precomputed again. */
static void shuffle(const apex_zone_t *z, shuffled_t *s)
{
	size_t total = z->node_count + z->nsec3_owner_count;
	uint32_t *old_ids = malloc(total * sizeof(*old_ids)), *map;
	size_t max_id = 0;

	assert_non_null(old_ids);
	for (size_t r = 0; r < z->node_count; r++)
		old_ids[r] = apex_zone_id_at(z, r);
	for (size_t i = 0; i < z->nsec3_owner_count; i++)
		old_ids[z->node_count + i] = z->nsec3_owners[i];
	for (size_t i = 0; i < total; i++)
		max_id = old_ids[i] > max_id ? old_ids[i] : max_id;
	map = malloc((max_id + 1) * sizeof(*map));
	assert_non_null(map);
	memset(map, 0xff, (max_id + 1) * sizeof(*map));
	/* new ids: a shuffle of 0..total, doubled, the apex (rank 0) keeping 0 */
	uint32_t *perm = malloc(total * sizeof(*perm));
	assert_non_null(perm);
	for (size_t i = 0; i < total; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = total - 1; i > 1; i--) {
		size_t j = 1 + next() % i;
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < total; i++)
		map[old_ids[i]] =
			2 * perm[i]; /* every other id unused, as a removed name leaves it */

	memset(s, 0, sizeof(*s));
	s->zone = *z;
	s->nodes = calloc(2 * total, sizeof(*s->nodes));
	s->rrsets_of = calloc(2 * total + APEX_NODE_PAGE, sizeof(*s->rrsets_of));
	assert_non_null(s->rrsets_of);
	s->order = malloc(z->node_count * sizeof(*s->order));
	s->nsec3_owners = malloc((z->nsec3_owner_count + 1) * sizeof(*s->nsec3_owners));
	s->nsec3 = malloc((z->nsec3_count ? z->nsec3_count : 1) * sizeof(*s->nsec3));
	assert_true(s->nodes && s->order && s->nsec3 && s->nsec3_owners);
	for (size_t i = 0; i < total; i++)
		move_node(s, z, old_ids[i], map);
	for (size_t r = 0; r < z->node_count; r++)
		s->order[r] = map[apex_zone_id_at(z, r)];
	for (size_t i = 0; i < z->nsec3_owner_count; i++)
		s->nsec3_owners[i] = map[z->nsec3_owners[i]];
	for (size_t i = 0; i < z->nsec3_count; i++) {
		s->nsec3[i] = z->nsec3[i];
		s->nsec3[i].node = map[z->nsec3[i].node];
	}
	apex_zone_t *c = &s->zone;
	if (z->stray_rrsig_count > 0) {
		apex_stray_rrsig_t *strays = keep(s, z->stray_rrsig_count * sizeof(*strays));
		for (size_t i = 0; i < z->stray_rrsig_count; i++)
			strays[i] = (apex_stray_rrsig_t){ map[z->stray_rrsigs[i].node],
							  z->stray_rrsigs[i].sigs };
		qsort(strays, z->stray_rrsig_count, sizeof(*strays), compare_strays);
		c->stray_rrsigs = strays;
	}
	atomic_init(&c->refcount, 1);
	size_t pages = (2 * total + APEX_NODE_PAGE - 1) / APEX_NODE_PAGE;
	s->pages = malloc(pages * sizeof(*s->pages));
	s->rrset_pages = malloc(pages * sizeof(*s->rrset_pages));
	assert_non_null(s->pages);
	assert_non_null(s->rrset_pages);
	for (size_t p = 0; p < pages; p++) {
		s->pages[p] = s->nodes + p * APEX_NODE_PAGE;
		s->rrset_pages[p] = s->rrsets_of + p * APEX_NODE_PAGE;
	}
	c->node_pages = s->pages;
	c->rrset_pages = s->rrset_pages;
	c->id_count = 2 * total;
	c->order = s->order;
	c->nsec3_owners = s->nsec3_owners;
	c->apex = &s->nodes[0];
	c->soa = apex_node_rrset(c, c->apex, APEX_TYPE_SOA);
	c->nsec3 = s->nsec3;
	c->referrals = NULL;
	c->referral_count = 0;
	c->negative[0] = c->negative[1] = NULL;
	assert_int_equal(apex_node_table_build(c), APEX_OK); /* in z's arena */
	assert_int_equal(apex_precompute(c), APEX_OK);
	/* the query path finds a referral by a binary search on its cut */
	assert_int_equal(c->referral_count, z->referral_count);
	for (size_t i = 1; i < c->referral_count; i++)
		assert_true(c->referrals[i - 1].cut < c->referrals[i].cut);
	free(perm);
	free(map);
	free(old_ids);
}

static void shuffled_free(shuffled_t *s)
{
	for (size_t i = 0; i < s->block_count; i++)
		free(s->blocks[i]);
	free(s->blocks);
	free(s->nodes);
	free(s->pages);
	free(s->rrsets_of);
	free(s->rrset_pages);
	free(s->order);
	free(s->nsec3_owners);
	free(s->nsec3);
}

/* ------------------------------------------------------------ comparing */

static const uint16_t qtypes[] = { APEX_TYPE_A,    APEX_TYPE_NS,  APEX_TYPE_CNAME, APEX_TYPE_SOA,
				   APEX_TYPE_MX,   APEX_TYPE_TXT, APEX_TYPE_AAAA,  APEX_TYPE_DS,
				   APEX_TYPE_NSEC, APEX_TYPE_ANY, APEX_TYPE_DNAME };

static size_t compare_name(const served_t *a, const served_t *b, const uint8_t *name)
{
	static uint8_t q[1024], ra[65535], rb[65535];
	apex_answer_config_t cfg;
	size_t n = 0;

	apex_answer_config_init(&cfg);
	for (size_t i = 0; i < sizeof(qtypes) / sizeof(qtypes[0]); i++) {
		for (int dnssec_ok = 0; dnssec_ok < 2; dnssec_ok++) {
			size_t qsize = query_for(q, name, qtypes[i], true, dnssec_ok);
			size_t na = apex_answer(a->set, &cfg, APEX_TRANSPORT_TCP, q, qsize, ra,
						sizeof(ra), NULL);
			size_t nb = apex_answer(b->set, &cfg, APEX_TRANSPORT_TCP, q, qsize, rb,
						sizeof(rb), NULL);
			char text[APEX_NAME_MAX * 4 + 1];

			apex_name_to_str(name, text, sizeof(text));
			if (na != nb || memcmp(ra, rb, na) != 0)
				fail_msg("%s type %u DO=%d: the shuffled ids answer differently",
					 text, qtypes[i], dnssec_ok);
			n++;
		}
	}
	return n;
}

static void same_with_shuffled_ids(const char *file, const char *origin)
{
	apex_zone_t *z = load_file(file, origin);
	shuffled_t s;
	served_t a, b;
	size_t compared = 0, size_a, size_b;

	assert_int_equal(apex_precompute(z), APEX_OK);
	shuffle(z, &s);
	serve(&a, z);
	serve(&b, &s.zone);
	for (size_t r = 0; r < z->node_count; r++) {
		const apex_node_t *n = apex_zone_node_at(z, r);
		uint8_t below[APEX_NAME_MAX];

		compared += compare_name(&a, &b, n->name);
		if (n->name_size + 10 <= APEX_NAME_MAX) {
			below[0] = 8;
			memcpy(below + 1, "zz-nope0", 8);
			memcpy(below + 9, n->name, n->name_size);
			compared += compare_name(&a, &b, below);
		}
	}
	uint8_t *xa = axfr_bytes(z, &size_a), *xb = axfr_bytes(&s.zone, &size_b);
	assert_int_equal(size_a, size_b);
	assert_memory_equal(xa, xb, size_a);
	printf("# %s: %zu answers and an AXFR of %zu bytes alike\n", file, compared, size_a);
	free(xa);
	free(xb);
	unserve(&a);
	unserve(&b);
	shuffled_free(&s);
	apex_zone_unref(z);
}

static void feature_zones(void **state)
{
	(void)state;
	same_with_shuffled_ids("example.zone", "example.");
	same_with_shuffled_ids("example.nsec.zone", "example.");
	same_with_shuffled_ids("example.nsec3.zone", "example.");
}

static void real_zones(void **state)
{
	(void)state;
	same_with_shuffled_ids("root.zone", ".");
	same_with_shuffled_ids("fj.zone", "fj.");
}

/* The node table's slots (zone/node_slots.h): the id and the tag come
 * back from a slot at every width, a run of collisions goes on past the
 * homes into the tail and is found again, and an insert that would take
 * the tail's last slot is refused. */
static void node_table_slots(void **state)
{
	(void)state;
	assert_int_equal(apex_node_table_mask(1), 1);
	assert_int_equal(apex_node_table_mask(2), 3);
	assert_int_equal(apex_node_table_mask(255), 255);
	assert_int_equal(apex_node_table_mask(256), 511);
	assert_int_equal(apex_node_table_mask(4700000), (1u << 23) - 1);
	assert_int_equal(apex_node_table_mask(0x7fffffff), 0x7fffffff);
	assert_int_equal(apex_node_table_mask(0x80000000u), 0);
	assert_int_equal(apex_node_table_size(1), 16);
	assert_int_equal(apex_node_table_size(8), 48);
	assert_int_equal(apex_node_table_size(8887), 35552);
	assert_int_equal(apex_node_table_size(100000), 262160);
	assert_int_equal(apex_node_table_size(4700000), 9400016);

	static const unsigned widths[] = { 1, 12, 23, 31 };
	uint32_t hash = 0x12345678;
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		uint32_t mask = (1u << widths[w]) - 1;
		uint32_t ids[] = { 0, mask - 1, (mask - 1) / 3 };
		for (size_t k = 0; k < 3; k++) {
			hash = hash * 1103515245u + 12345u;
			uint32_t slot = apex_node_table_slot(hash, ids[k], mask);
			assert_int_not_equal(slot, 0);
			assert_int_equal(apex_node_table_id(slot, mask), ids[k]);
			assert_true(apex_node_table_tag_is(slot, hash, mask));
			assert_false(apex_node_table_tag_is(slot, hash ^ 0x80000000u, mask));
		}
	}

	/* 16 homes and a tail of 8: nine hashes whose home is the last */
	uint32_t slots[24] = { 0 }, hashes[9];
	size_t found = 0;
	for (uint32_t h = 1; found < 9; h++)
		if (apex_node_table_first(h, 16) == 15)
			hashes[found++] = h;
	for (uint32_t id = 0; id < 8; id++)
		assert_int_equal(apex_node_table_insert(slots, 16, 24, 15, hashes[id], id), 0);
	assert_int_not_equal(slots[22], 0);
	/* the ninth would take slot 23, the last: refused, nothing written */
	assert_int_equal(apex_node_table_insert(slots, 16, 24, 15, hashes[8], 8), -1);
	assert_int_equal(slots[23], 0);
	for (uint32_t id = 0; id < 8; id++) {
		uint32_t i = apex_node_table_first(hashes[id], 16);
		while (apex_node_table_id(slots[i], 15) != id)
			i++;
		assert_true(i >= 15 && i < 23);
		assert_true(apex_node_table_tag_is(slots[i], hashes[id], 15));
	}
}

/* A run longer than the table's tail: 70 names whose hashes all start at
 * the last home.  The build takes a longer tail, and every name is found
 * past the homes, in the order it was inserted. */
static void node_table_long_run(void **state)
{
	(void)state;
	enum { NAMES = 70 };
	static apex_node_t nodes[NAMES];
	const apex_node_t *page[1] = { nodes };
	apex_zone_t zone;
	memset(&zone, 0, sizeof(zone));
	zone.arena = apex_arena_create();
	assert_non_null(zone.arena);
	zone.node_pages = page;
	zone.id_count = zone.node_count = NAMES;
	zone.order = NULL;
	uint32_t size = (uint32_t)apex_node_table_size(NAMES), n = 0;
	for (uint32_t h = 1; n < NAMES; h++)
		if (apex_node_table_first(h, size) == size - 1) {
			nodes[n].id = n;
			nodes[n].hash = h;
			n++;
		}
	assert_int_equal(apex_node_table_build(&zone), APEX_OK);
	assert_int_equal(zone.node_table_size, size);
	assert_true(zone.node_table_length > size + APEX_NODE_TABLE_TAIL);
	for (uint32_t i = 0; i < NAMES; i++) {
		uint32_t slot = apex_node_table_get(zone.node_table_pages, size - 1 + i);
		assert_int_equal(apex_node_table_id(slot, zone.node_table_mask), i);
		assert_true(apex_node_table_tag_is(slot, nodes[i].hash, zone.node_table_mask));
	}
	assert_int_equal(apex_node_table_get(zone.node_table_pages, size - 1 + NAMES), 0);
	assert_int_equal(apex_node_table_get(zone.node_table_pages, zone.node_table_length - 1), 0);
	apex_arena_destroy(zone.arena);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(node_table_slots),
		cmocka_unit_test(node_table_long_run),
		cmocka_unit_test(feature_zones),
		cmocka_unit_test(real_zones),
	};
	apex_log_set_level(APEX_LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
