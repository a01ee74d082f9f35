/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A version derived from another by an IXFR answers exactly as a version
 * built from scratch from the same records.
 *
 * For every test zone (unsigned, NSEC, NSEC3 with opt-out, the root zone,
 * .fj and .sl), many random change sets are made from a seeded generator:
 * records and whole names removed, and records added of every kind that
 * changes what the build derives (new delegations with glue, glue and
 * addresses of existing names, wildcards, CNAMEs, DNAMEs, DS, NS that make
 * a new zone cut below existing names, NSEC3 records, TTLs that differ
 * inside an RRset).  Each set is applied to the old version the way the
 * secondary applies an IXFR, and the result is compared with the version
 * built from the old records minus the removed plus the added: first record
 * for record, then answer for answer, byte for byte, over the names of both
 * versions, names below them that do not exist and wildcard names, with
 * every query type that matters, DO on and off, with EDNS and without.
 *
 * A set the build refuses (a CNAME beside other data, say) must be refused
 * by both; most sets must apply, or the test says so.
 *
 * APEX_TEST_SEED sets the generator's seed (the one used is printed when a
 * comparison fails); APEX_TEST_ROUNDS the sets per zone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#include "util/log.h"
#include "xfr/changes.h"
#include "xfr/diff.h"
#include "xfr/ixfr_apply.h"
#include "zone/page_discard.h"
#include "zone/load_tuning.h"
#include "zone/zone_from_wire.h"
#include "zone/zoneset.h"
#include "served_zone.h"
#include "zone_records.h"

#include "equivalence.h"

static apex_zone_t *finish(apex_zone_from_wire_t *w, char *err)
{
	apex_zone_t *zone = NULL;

	if (apex_zone_from_wire_finish(w, &zone) != APEX_OK)
		return NULL;
	if (apex_precompute(zone) != APEX_OK) {
		strcpy(err, "precompute failed");
		apex_zone_unref(zone);
		return NULL;
	}
	return zone;
}

/* The version the secondary makes of old and set (NULL: refused, why in
 * err); *in_place says whether it was derived in place.  Every other call
 * on one thread (load-threads: 1, a daemon pinned to one CPU), the others
 * on two: a derivation splits work between threads where it has them. */
static apex_zone_t *derived(apex_zone_t *old, const apex_changes_t *set, bool *in_place, char *err,
			    size_t err_size)
{
	static unsigned calls;
	apex_zone_t *zone = NULL;

	atomic_store(&apex_load_threads, calls++ % 2 == 0 ? 1u : 2u);
	int rc = apex_ixfr_version(old, set, 1, "ixfr", &zone, in_place, err, err_size);
	atomic_store(&apex_load_threads, 0u);
	if (rc != APEX_OK)
		return NULL;
	if (apex_precompute(zone) != APEX_OK) {
		strcpy(err, "precompute failed");
		apex_zone_unref(zone);
		return NULL;
	}
	return zone;
}

/* The version built from scratch from old's records with c applied. */
static apex_zone_t *scratch(const apex_zone_t *old, const records_t *all, const change_t *c,
			    char *err, size_t err_size)
{
	apex_zone_from_wire_t *w;
	record_t soa;

	next_soa(old, &soa);
	assert_int_equal(apex_zone_from_wire_begin(&w, old->origin, "scratch", err, err_size),
			 APEX_OK);
	int rc = apex_zone_from_wire_add(w, soa.owner, soa.type, soa.ttl, soa.rdata, soa.rdlength);
	for (size_t i = 0; rc == APEX_OK && i < all->count; i++) {
		const record_t *r = &all->items[i];
		if (r->type != APEX_TYPE_SOA && !listed(&c->removed, r))
			rc = apex_zone_from_wire_add(w, r->owner, r->type, r->ttl, r->rdata,
						     r->rdlength);
	}
	for (size_t i = 0; rc == APEX_OK && i < c->added.count; i++) {
		const record_t *r = &c->added.items[i];
		rc = apex_zone_from_wire_add(w, r->owner, r->type, r->ttl, r->rdata, r->rdlength);
	}
	if (rc != APEX_OK) {
		apex_zone_from_wire_abort(w);
		return NULL;
	}
	return finish(w, err);
}

/* The journal's difference of old and d, the secondary's version, is that
 * of old and s, the one built from scratch, byte for byte: when d was
 * derived from old, the walk skips the owners they share and the set is
 * sized first (xfr/diff.c), exactly. */
static void assert_same_difference(const apex_zone_t *old, const apex_zone_t *d,
				   const apex_zone_t *s, const char *what)
{
	apex_changes_t a, b;

	apex_changes_init(&a);
	apex_changes_init(&b);
	assert_int_equal(apex_xfr_diff(old, d, &a), APEX_OK);
	assert_int_equal(apex_xfr_diff(old, s, &b), APEX_OK);
	if (a.size != b.size || memcmp(a.data, b.data, a.size) != 0)
		fail_msg("%s: the difference to the derived version is not the one to the "
			 "scratch version (%zu and %zu bytes, APEX_TEST_SEED=%llu)",
			 what, a.size, b.size, (unsigned long long)seed_used);
	if (d->base == old && a.capacity != a.size)
		fail_msg("%s: the difference to the derived version sized %zu for %zu bytes", what,
			 a.capacity, a.size);
	apex_changes_free(&a);
	apex_changes_free(&b);
}

/* ------------------------------------------------------------ the test */

static const struct {
	const char *file, *origin;
	unsigned rounds; /* sets per zone (scaled by APEX_TEST_ROUNDS) */
} zones[] = {
	{ "example.zone", "example.", 40 },
	{ "example.nsec.zone", "example.", 40 },
	{ "example.nsec3.zone", "example.", 40 },
	{ "fj.zone", "fj.", 6 },
	{ "sl.zone", "sl.", 6 },
	{ "root.zone", ".", 4 },
};

static unsigned rounds_scale(void)
{
	const char *v = getenv("APEX_TEST_ROUNDS");
	return v != NULL && atoi(v) > 0 ? (unsigned)atoi(v) : 1;
}

/*
 * Apply change c to old both ways, as the secondary does and from scratch
 * from old's records `all`: both must build or both refuse; when they
 * build, the same records and answers.  Returns the secondary's version
 * (the caller's reference) or NULL; *in_place whether it was derived.
 */
static apex_zone_t *both_ways(apex_zone_t *old, const records_t *all, const change_t *c,
			      const char *what, tally_t *t, bool *in_place)
{
	apex_changes_t set;
	char err_d[512] = "", err_s[512] = "";

	*in_place = false;
	change_set(old, c, &set);
	apex_zone_t *d = derived(old, &set, in_place, err_d, sizeof(err_d));
	apex_zone_t *s = scratch(old, all, c, err_s, sizeof(err_s));
	if ((d == NULL) != (s == NULL))
		fail_msg("%s: derived %s, scratch %s (APEX_TEST_SEED=%llu)", what,
			 d ? "built" : err_d, s ? "built" : err_s, (unsigned long long)seed_used);
	if (d != NULL) {
		assert_same_records(d, s, what);
		assert_same_structure(d, s, what);
		assert_same_difference(old, d, s, what);
		compare_answers(d, s, c, what, t);
	} else if (getenv("APEX_TEST_VERBOSE") != NULL) {
		printf("# %s: refused by both: %s\n", what, err_s);
	}
	apex_zone_unref(s);
	apex_changes_free(&set);
	return d;
}

static void zone_rounds(size_t index, tally_t *t)
{
	apex_zone_t *old = load_file(zones[index].file, zones[index].origin);
	records_t all = { 0 };
	unsigned rounds = zones[index].rounds * rounds_scale();
	size_t applied = 0, updates = 0, in_place = 0, name_sets = 0, names_in_place = 0;

	assert_int_equal(apex_precompute(old), APEX_OK);
	zone_list(old, &all);
	t->zones++;
	for (unsigned round = 0; round < rounds; round++) {
		change_t c = { 0 };
		char what[128];
		bool update = round % 3 == 1, names = round % 3 == 2, derived_in_place;

		snprintf(what, sizeof(what), "%s, set %u (%s)", zones[index].file, round,
			 update  ? "updates"
			 : names ? "names"
				 : "any change");
		if (update)
			random_updates(old, &all, &c);
		else if (names)
			random_registrations(old, &all, &c);
		else
			random_change(old, &all, &c);
		apex_zone_t *d = both_ways(old, &all, &c, what, t, &derived_in_place);
		if (d != NULL) {
			applied++;
			t->sets_applied++;
			updates += update;
			name_sets += names;
			if ((update || names) && !derived_in_place &&
			    getenv("APEX_TEST_VERBOSE") != NULL)
				printf("# %s: built whole\n", what);
			in_place += update && derived_in_place;
			names_in_place += names && derived_in_place;
			t->in_place += derived_in_place;
		} else {
			t->sets_refused++;
		}
		apex_zone_unref(d);
		change_free(&c);
	}
	/* the generator must mostly make sets that apply, or nothing is compared */
	if (applied * 4 < rounds * 3)
		fail_msg("%s: only %zu of %u sets applied", zones[index].file, applied, rounds);
	/* and the updates must mostly be derived in place, or the derivation
	 * is not what these comparisons test */
	if (in_place * 3 < updates * 2)
		fail_msg("%s: only %zu of %zu updates derived in place", zones[index].file,
			 in_place, updates);
	/* names come and go in place too */
	if (names_in_place * 2 < name_sets)
		fail_msg("%s: only %zu of %zu changes of names derived in place", zones[index].file,
			 names_in_place, name_sets);
	free(all.items);
	apex_zone_unref(old);
}

/* A delegation of z (not the apex), or NULL. */
static const apex_node_t *random_delegation(const apex_zone_t *z)
{
	for (int tries = 0; tries < 200; tries++) {
		const apex_node_t *n = random_node(z);
		if ((n->flags & APEX_NODE_DELEGATION) && !(n->flags & APEX_NODE_OCCLUDED))
			return n;
	}
	return NULL;
}

/*
 * Versions derived from derived versions, as a secondary makes them from
 * IXFR after IXFR: each step changes the version the step before made, and
 * is compared with a version built from scratch from that version's
 * records.  Every fourth step gives a delegation a name server below it
 * that does not exist, and the next one gives that name an address: the
 * glue of an RRset that did not change, found again.
 */
static void chain_rounds(const char *file, const char *origin, unsigned steps, tally_t *t)
{
	apex_zone_t *cur = load_file(file, origin);
	uint8_t pending[APEX_NAME_MAX], delegation[APEX_NAME_MAX];
	bool have_pending = false;
	size_t in_place = 0;

	assert_int_equal(apex_precompute(cur), APEX_OK);
	for (unsigned step = 0; step < steps; step++) {
		records_t all = { 0 };
		change_t c = { 0 };
		char what[128];
		bool derived_in_place;
		const apex_node_t *n;

		zone_list(cur, &all);
		snprintf(what, sizeof(what), "%s, chain step %u", file, step);
		switch (step % 4) {
		case 0: random_updates(cur, &all, &c); break;
		case 1: random_registrations(cur, &all, &c); break;
		case 2:
			n = random_delegation(cur);
			have_pending = n != NULL && child_name(n->name, "unglued", pending);
			if (have_pending) {
				memcpy(delegation, n->name, apex_name_size(n->name));
				add_name_rdata(&c, n->name, APEX_TYPE_NS, 3600, pending);
			}
			break;
		default:
			if (have_pending) {
				add_address(&c, pending, 3600);
				touch(&c, delegation);
			}
			break;
		}
		apex_zone_t *d = both_ways(cur, &all, &c, what, t, &derived_in_place);
		if (d != NULL) {
			in_place += derived_in_place;
			/* as apexd's retire step does: cur's own index memory
			 * goes now, and d must not need it (ASan sees if it does),
			 * nor what cur's chain gives back (zone/page_discard.h) */
			apex_zone_release_index(cur);
			(void)apex_zone_discard_replaced(cur, d);
			apex_zone_unref(cur);
			cur = d; /* the next step changes this one, which holds the chain */
		}
		change_free(&c);
		free(all.items);
	}
	if (in_place * 3 < steps * 2)
		fail_msg("%s: only %zu of %u chained steps derived in place", file, in_place,
			 steps);
	apex_zone_unref(cur);
}

/* The generator seeded from APEX_TEST_SEED (or the default); the build's
 * warnings (TTLs that differ, DS without NS) are expected, not shown. */
static void start_generator(void)
{
	const char *v = getenv("APEX_TEST_SEED");

	apex_log_set_level(APEX_LOG_ERROR);
	seed_used = v != NULL ? strtoull(v, NULL, 10) : 20261125ULL;
	rng_state = seed_used ? seed_used : 1;
}

static void chained_derivations_as_scratch(void **state)
{
	(void)state;
	tally_t t = { 0 };

	start_generator();
	chain_rounds("example.zone", "example.", 40 * rounds_scale(), &t);
	chain_rounds("example.nsec3.zone", "example.", 40 * rounds_scale(), &t);
	printf("# chains: %zu answers compared\n", t.queries);
	assert_true(t.queries > 100000);
}

static void derived_answers_as_scratch(void **state)
{
	(void)state;
	tally_t t = { 0 };

	start_generator();
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
		zone_rounds(i, &t);
	printf("# %zu zones, %zu sets applied (%zu derived in place), %zu refused by both, %zu "
	       "answers compared\n",
	       t.zones, t.sets_applied, t.in_place, t.sets_refused, t.queries);
	assert_true(t.queries > 100000);
}

/* Everything at and below name in all, removed in c. */
static void remove_below(change_t *c, const records_t *all, const char *text)
{
	uint8_t name[APEX_NAME_MAX];

	assert_true(apex_name_from_str(text, name) > 0);
	for (size_t i = 0; i < all->count; i++)
		if (at_or_below(all->items[i].owner, name))
			remove_record(c, &all->items[i]);
}

/* A new name with an address, and its NSEC or NSEC3 if signed. */
static void add_named(change_t *c, const apex_zone_t *z, const char *text, bool signed_)
{
	uint8_t name[APEX_NAME_MAX];

	assert_true(apex_name_from_str(text, name) > 0);
	add_address(c, name, 300);
	if (signed_) {
		add_nsec_of(c, z, name);
		add_nsec3_of(c, z, name);
	}
}

/*
 * The NSEC or NSEC3 links a change of names reaches in file, each kind
 * once, each derived in place: a wildcard that its parent's proof now
 * names or no longer does, a name whose NSEC now covers the empty
 * non-terminals after it (ent, c.ent, b.c.ent), a name removed whose
 * NSEC covered those after it (dn, b.dn), a name without NSEC (covered),
 * a name below an empty non-terminal made for it, signed or not (its
 * NSEC3 links then found with no NSEC3 added), a new delegation with
 * glue below it.
 */
static void links_follow_names(const char *file)
{
	tally_t t = { 0 };
	apex_zone_t *old = load_file(file, "example.");

	start_generator();
	assert_int_equal(apex_precompute(old), APEX_OK);
	for (int step = 0; step < 8; step++) {
		records_t all = { 0 };
		change_t c = { 0 };
		bool in_place;
		char what[64];

		zone_list(old, &all);
		snprintf(what, sizeof(what), "%s, step %d", file, step);
		switch (step) {
		case 0: add_named(&c, old, "*.target.example.", true); break;
		case 1: remove_below(&c, &all, "*.wild.example."); break;
		case 2: add_named(&c, old, "dnt.example.", true); break;
		case 3: remove_below(&c, &all, "dangling.example."); break;
		case 4: add_named(&c, old, "mail2.example.", false); break;
		case 5: add_named(&c, old, "x.newent.example.", true); break;
		case 6: add_named(&c, old, "x.newent2.example.", false); break;
		default: {
			uint8_t del[APEX_NAME_MAX], glue[APEX_NAME_MAX];
			assert_true(apex_name_from_str("newdel.example.", del) > 0);
			assert_true(child_name(del, "ns", glue));
			add_name_rdata(&c, del, APEX_TYPE_NS, 3600, glue);
			add_address(&c, glue, 3600);
			add_nsec_of(&c, old, del);
			add_nsec3_of(&c, old, del);
			break;
		}
		}
		apex_zone_t *d = both_ways(old, &all, &c, what, &t, &in_place);
		if (d == NULL || !in_place)
			fail_msg("%s: not derived in place", what);
		apex_zone_release_index(old);
		(void)apex_zone_discard_replaced(old, d);
		apex_zone_unref(old);
		old = d;
		change_free(&c);
		free(all.items);
	}
	apex_zone_unref(old);
}

static void nsec_links_follow_names(void **state)
{
	(void)state;
	links_follow_names("example.nsec.zone");
}

static void nsec3_links_follow_names(void **state)
{
	(void)state;
	links_follow_names("example.nsec3.zone");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(derived_answers_as_scratch),
		cmocka_unit_test(chained_derivations_as_scratch),
		cmocka_unit_test(nsec_links_follow_names),
		cmocka_unit_test(nsec3_links_follow_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
