/* SPDX-License-Identifier: BSD-3-Clause */
/* Zone lookups and the data built at load time: ENTs, cuts, wildcards,
 * glue and additional data, RRSIG links, NSEC and NSEC3 links. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/lookup_name.h"
#include "zone/zone.h"

/* The node a link names (ids: zone.h), in a test with `zone` in scope. */
#define N(id) apex_zone_node(zone, (id))

static void wire(const char *str, uint8_t *out)
{
	assert_true(apex_name_from_str(str, out) > 0);
}

static apex_zone_t *load_path(const char *path, const char *origin)
{
	char err[512];
	uint8_t o[APEX_NAME_MAX];
	wire(origin, o);
	apex_zone_t *zone = NULL;
	if (apex_zone_load(path, o, &zone, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	return zone;
}

static apex_zone_t *load_real(const char *file, const char *origin)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/zones/%s", APEX_SRCDIR, file);
	return load_path(path, origin);
}

static const char handmade[] =
	"$ORIGIN example.\n"
	"$TTL 60\n"
	"@ SOA ns1 hostmaster 1 2 3 4 5\n"
	"@ NS ns1\n"
	"@ NS ns.sub\n"
	"@ MX 10 mail\n"
	"ns1 A 192.0.2.1\n"
	"mail AAAA 2001:db8::25\n"
	"_sip._tcp SRV 0 0 5060 sip\n"
	"sip A 192.0.2.5\n"
	"a.b.c.ent A 192.0.2.2\n"
	"*.wild TXT \"w\"\n"
	"sub NS ns.sub\n"
	"sub NS ns.other\n"
	"sub NS ns1\n"
	"sub NS nothere.sub\n"
	"sub DS 1 13 2 ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789\n"
	"ns.sub A 192.0.2.53\n"
	"deep.ns.sub A 192.0.2.54\n"
	"other NS ns.other\n"
	"ns.other A 192.0.2.60\n"
	"ns.other AAAA 2001:db8::60\n"
	"dname DNAME target.\n"
	"under.dname A 192.0.2.70\n";

static apex_zone_t *load_handmade(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[300];
	snprintf(path, sizeof(path), "%s/apex-lookup-XXXXXX", tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(handmade, fp);
	assert_int_equal(fclose(fp), 0);
	apex_zone_t *zone = load_path(path, "example.");
	unlink(path);
	return zone;
}

/* apex_zone_lookup() of a presentation name. */
static void lookup(const apex_zone_t *zone, const char *name, apex_lookup_t *out)
{
	uint8_t n[APEX_NAME_MAX], key[APEX_KEY_MAX];
	uint16_t label_ends[APEX_LABELS_MAX];
	wire(name, n);
	size_t key_size = apex_name_key(n, key, label_ends);
	apex_zone_lookup(zone, key, key_size, label_ends, apex_name_labels(n), out);
}

static const apex_node_t *find(const apex_zone_t *zone, const char *name)
{
	apex_lookup_t r;
	lookup(zone, name, &r);
	return r.node;
}

static void assert_name(const apex_node_t *node, const char *expected)
{
	char text[APEX_NAME_MAX * 4 + 1];
	assert_non_null(node);
	uint8_t n[APEX_NAME_MAX];
	wire(expected, n);
	if (!apex_name_equal(node->name, n))
		fail_msg("node %s, expected %s", apex_name_to_str(node->name, text, sizeof(text)),
			 expected);
}

static void test_exact_ent_encloser_previous(void **state)
{
	apex_zone_t *zone = load_handmade();
	apex_lookup_t r;

	lookup(zone, "NS1.example.", &r); /* case-insensitive */
	assert_name(r.node, "ns1.example.");
	assert_ptr_equal(r.encloser, r.node);
	assert_ptr_equal(r.previous, r.node);
	assert_int_equal(r.node->flags, 0);
	assert_ptr_equal(N(r.node->parent), zone->apex);
	assert_ptr_equal(zone->apex, apex_zone_node_at(zone, 0));
	assert_true(zone->apex->flags & APEX_NODE_APEX);

	/* Empty non-terminals are nodes without RRsets. */
	lookup(zone, "c.ent.example.", &r);
	assert_name(r.node, "c.ent.example.");
	assert_int_equal(r.node->flags, APEX_NODE_EMPTY);
	assert_int_equal(r.node->rrset_count, 0);
	assert_name(N(r.node->parent), "ent.example.");
	assert_true(N(r.node->parent)->flags & APEX_NODE_EMPTY);
	assert_ptr_equal(N(N(r.node->parent)->parent), zone->apex);
	assert_name(N(find(zone, "a.b.c.ent.example.")->parent), "b.c.ent.example.");

	/* Miss below an ENT: the ENT encloses; previous in canonical order. */
	lookup(zone, "x.y.c.ent.example.", &r);
	assert_null(r.node);
	assert_name(r.encloser, "c.ent.example.");
	assert_name(r.previous, "a.b.c.ent.example.");
	lookup(zone, "a.c.ent.example.", &r);
	assert_null(r.node);
	assert_name(r.encloser, "c.ent.example.");
	assert_name(r.previous, "c.ent.example.");

	/* Miss right below the apex, sorting before every other name. */
	lookup(zone, "0.example.", &r);
	assert_null(r.node);
	assert_ptr_equal(r.encloser, zone->apex);
	assert_ptr_equal(r.previous, zone->apex);
	/* ... and after every other name. */
	lookup(zone, "zzz.example.", &r);
	assert_null(r.node);
	assert_ptr_equal(r.encloser, zone->apex);
	assert_ptr_equal(r.previous, apex_zone_node_at(zone, zone->node_count - 1));
	assert_name(r.previous, "*.wild.example.");

	/* Below a delegation: the cut encloses. */
	lookup(zone, "www.sub.example.", &r);
	assert_null(r.node);
	assert_name(r.encloser, "sub.example.");
	apex_zone_unref(zone);
}

static void test_cuts_wildcards_dname(void **state)
{
	apex_zone_t *zone = load_handmade();
	const apex_node_t *sub = find(zone, "sub.example.");
	assert_int_equal(sub->flags, APEX_NODE_DELEGATION);
	assert_ptr_equal(N(sub->cut), sub);
	const apex_node_t *ns = find(zone, "ns.sub.example.");
	assert_int_equal(ns->flags, APEX_NODE_OCCLUDED);
	assert_ptr_equal(N(ns->cut), sub);
	const apex_node_t *deep = find(zone, "deep.ns.sub.example.");
	assert_int_equal(deep->flags, APEX_NODE_OCCLUDED);
	assert_ptr_equal(N(deep->cut), sub);
	assert_ptr_equal(N(deep->parent), ns);
	assert_null(N(zone->apex->cut));
	assert_null(N(find(zone, "ns1.example.")->cut));

	const apex_node_t *dname = find(zone, "dname.example.");
	assert_int_equal(dname->flags, APEX_NODE_DNAME);
	assert_ptr_equal(N(dname->cut), dname);
	const apex_node_t *under = find(zone, "under.dname.example.");
	assert_int_equal(under->flags, APEX_NODE_OCCLUDED);
	assert_ptr_equal(N(under->cut), dname);

	const apex_node_t *wild = find(zone, "wild.example.");
	assert_int_equal(wild->flags, APEX_NODE_EMPTY);
	assert_non_null(N(wild->wildcard_child));
	assert_name(N(wild->wildcard_child), "*.wild.example.");
	assert_int_equal(N(wild->wildcard_child)->flags, APEX_NODE_WILDCARD);
	assert_null(N(zone->apex->wildcard_child));
	apex_lookup_t r;
	lookup(zone, "a.b.wild.example.", &r);
	assert_null(r.node);
	assert_ptr_equal(r.encloser, wild);
	apex_zone_unref(zone);
}

/* Additional item of set for the target name, or NULL. */
static const apex_glue_t *glue_for(const apex_zone_t *zone, const apex_rrset_t *set,
				   const char *target)
{
	uint8_t n[APEX_NAME_MAX];
	wire(target, n);
	if (set->additional == NULL)
		return NULL;
	for (uint16_t i = 0; i < set->additional->count; i++)
		if (apex_name_equal(N(set->additional->items[i].owner)->name, n))
			return &set->additional->items[i];
	return NULL;
}

static void test_glue_and_additional(void **state)
{
	apex_zone_t *zone = load_handmade();
	const apex_rrset_t *ns = apex_node_rrset(zone, find(zone, "sub.example."), APEX_TYPE_NS);
	assert_non_null(ns->additional);
	/* In RRset (canonical) order: ns.sub, ns.other, ns1; nothere.sub
	 * has no address and is left out. */
	assert_int_equal(ns->additional->count, 3);
	const apex_glue_t *g = &ns->additional->items[0];
	assert_name(N(g->owner), "ns.sub.example.");
	assert_true(g->required); /* in-domain glue, RFC 9471 */
	assert_non_null(g->a);
	assert_null(g->aaaa);
	assert_null(g->a->rrsig);
	g = &ns->additional->items[1];
	assert_name(N(g->owner), "ns.other.example.");
	assert_false(g->required); /* sibling glue */
	assert_non_null(g->a);
	assert_non_null(g->aaaa);
	g = &ns->additional->items[2];
	assert_name(N(g->owner), "ns1.example.");
	assert_false(g->required); /* authoritative data */
	assert_non_null(g->a);

	ns = apex_node_rrset(zone, find(zone, "other.example."), APEX_TYPE_NS);
	g = glue_for(zone, ns, "ns.other.example.");
	assert_non_null(g);
	assert_true(g->required);

	/* Apex NS: only authoritative addresses (ns.sub is glue). */
	ns = apex_node_rrset(zone, zone->apex, APEX_TYPE_NS);
	assert_int_equal(ns->additional->count, 1);
	g = glue_for(zone, ns, "ns1.example.");
	assert_non_null(g);
	assert_false(g->required);

	const apex_rrset_t *mx = apex_node_rrset(zone, zone->apex, APEX_TYPE_MX);
	g = glue_for(zone, mx, "mail.example.");
	assert_non_null(g);
	assert_null(g->a);
	assert_non_null(g->aaaa);
	const apex_rrset_t *srv =
		apex_node_rrset(zone, find(zone, "_sip._tcp.example."), APEX_TYPE_SRV);
	assert_non_null(glue_for(zone, srv, "sip.example."));
	assert_null(apex_node_rrset(zone, find(zone, "ns1.example."), APEX_TYPE_A)->additional);
	apex_zone_unref(zone);
}

static void test_refcount(void **state)
{
	apex_zone_t *zone = load_handmade();
	apex_zone_ref(zone);
	apex_zone_unref(zone);
	/* Still alive: one reference left. */
	assert_int_equal(atomic_load(&zone->refcount), 1);
	assert_non_null(find(zone, "ns1.example."));
	apex_zone_unref(zone);
}

/* Linear-scan reference for apex_zone_lookup(). */
static void brute_lookup(const apex_zone_t *zone, const uint8_t *name, apex_lookup_t *out)
{
	out->node = NULL;
	out->previous = zone->apex;
	out->encloser = zone->apex;
	for (size_t i = 0; i < zone->node_count; i++) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		int c = apex_name_compare(node->name, name);
		if (c == 0)
			out->node = node;
		if (c <= 0 && apex_name_compare(node->name, out->previous->name) > 0)
			out->previous = node;
		if (apex_name_is_subdomain(name, node->name) &&
		    node->labels > out->encloser->labels)
			out->encloser = node;
	}
	if (out->node != NULL)
		out->previous = out->node;
}

static void check_against_brute(const apex_zone_t *zone, const uint8_t *name)
{
	char text[APEX_NAME_MAX * 4 + 1];
	uint8_t key[APEX_KEY_MAX];
	uint16_t label_ends[APEX_LABELS_MAX];
	size_t key_size = apex_name_key(name, key, label_ends);
	apex_lookup_t got, want;
	apex_zone_lookup(zone, key, key_size, label_ends, apex_name_labels(name), &got);
	brute_lookup(zone, name, &want);
	if (got.node != want.node || got.encloser != want.encloser || got.previous != want.previous)
		fail_msg("lookup of %s differs from a linear scan",
			 apex_name_to_str(name, text, sizeof(text)));

	/* The query path's lookup by hash probes agrees too; it leaves
	 * previous to apex_lookup_previous() on a miss.  The key and
	 * hashes it prepares are apex_name_key()'s and apex_name_hash()'s. */
	apex_lookup_name_t ln;
	apex_lookup_name_init(&ln, name);
	assert_int_equal(ln.size, key_size);
	assert_memory_equal(ln.key, key, key_size);
	assert_int_equal(ln.labels, apex_name_labels(name));
	assert_int_equal(ln.hashes[ln.labels], apex_name_hash(name));
	for (int l = 0; l <= ln.labels; l++)
		assert_int_equal(ln.ends[l], label_ends[l]);
	apex_lookup_t hashed;
	apex_zone_lookup_name(zone, &ln, &hashed);
	if (hashed.node != want.node || hashed.encloser != want.encloser ||
	    (hashed.node != NULL && hashed.previous != want.previous) ||
	    (hashed.node == NULL && hashed.previous != NULL) ||
	    apex_lookup_previous(zone, &hashed) != want.previous)
		fail_msg("hashed lookup of %s differs from a linear scan",
			 apex_name_to_str(name, text, sizeof(text)));
}

static void test_root_zone(void **state)
{
	apex_zone_t *zone = load_real("root.zone", ".");
	const apex_node_t *com = find(zone, "com.");
	assert_int_equal(com->flags, APEX_NODE_DELEGATION);
	assert_ptr_equal(N(com->cut), com);
	/* At a cut, NS is not signed; DS and NSEC are. */
	assert_null(apex_node_rrset(zone, com, APEX_TYPE_NS)->rrsig);
	assert_non_null(apex_node_rrset(zone, com, APEX_TYPE_DS)->rrsig);
	assert_non_null(apex_node_rrset(zone, com, APEX_TYPE_NSEC)->rrsig);
	assert_int_equal(apex_node_rrset(zone, com, APEX_TYPE_DS)->rrsig->type, APEX_TYPE_RRSIG);
	assert_non_null(apex_node_rrset(zone, zone->apex, APEX_TYPE_SOA)->rrsig);
	assert_non_null(apex_node_rrset(zone, zone->apex, APEX_TYPE_DNSKEY)->rrsig);
	assert_non_null(apex_node_rrset(zone, zone->apex, APEX_TYPE_ZONEMD)->rrsig);

	/* com.'s servers are glue under net.: optional for com., required
	 * (in-domain) for net. */
	const apex_rrset_t *com_ns = apex_node_rrset(zone, com, APEX_TYPE_NS);
	assert_int_equal(com_ns->additional->count, 13);
	const apex_glue_t *g = glue_for(zone, com_ns, "a.gtld-servers.net.");
	assert_non_null(g);
	assert_false(g->required);
	assert_non_null(g->a);
	assert_non_null(g->aaaa);
	assert_null(g->a->rrsig);
	const apex_node_t *net = find(zone, "net.");
	g = glue_for(zone, apex_node_rrset(zone, net, APEX_TYPE_NS), "a.gtld-servers.net.");
	assert_non_null(g);
	assert_true(g->required);
	const apex_node_t *agtld = find(zone, "a.gtld-servers.net.");
	assert_int_equal(agtld->flags, APEX_NODE_OCCLUDED);
	assert_ptr_equal(N(agtld->cut), net);
	const apex_node_t *ent = find(zone, "gtld-servers.net.");
	assert_int_equal(ent->flags, APEX_NODE_OCCLUDED | APEX_NODE_EMPTY);

	/* NSEC: the node's own NSEC, or the one before it for ENTs/glue. */
	assert_ptr_equal(N(com->nsec), com);
	assert_ptr_equal(N(agtld->nsec), net);
	assert_ptr_equal(N(zone->apex->nsec), zone->apex);
	assert_null(N(com->nsec3));

	/* Root apex NS targets are all outside the zone. */
	assert_null(apex_node_rrset(zone, zone->apex, APEX_TYPE_NS)->additional);

	/* Every lookup agrees with a linear scan, for names in the zone,
	 * names below them and names next to them. */
	for (size_t i = 0; i < zone->node_count; i += 17) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		uint8_t name[APEX_NAME_MAX];
		check_against_brute(zone, node->name);
		if (node->name_size + 3 <= APEX_NAME_MAX) {
			name[0] = 2;
			name[1] = 'z';
			name[2] = 'z';
			memcpy(name + 3, node->name, node->name_size);
			check_against_brute(zone, name);
		}
		if (node->labels > 0 && node->name[0] < APEX_LABEL_MAX &&
		    node->name_size + 1 <= APEX_NAME_MAX) {
			/* first label with '-' appended: a sibling sorting after */
			uint8_t len = node->name[0];
			name[0] = (uint8_t)(len + 1);
			memcpy(name + 1, node->name + 1, len);
			name[1 + len] = '-';
			memcpy(name + 2 + len, node->name + 1 + len, node->name_size - 1 - len);
			check_against_brute(zone, name);
		}
		/* the same name in upper case, and with escaped bytes 0x00 and
		 * 0x01 in a label added below it */
		memcpy(name, node->name, node->name_size);
		for (size_t j = 0; j < node->name_size; j++)
			if (name[j] >= 'a' && name[j] <= 'z')
				name[j] = (uint8_t)(name[j] - 32);
		check_against_brute(zone, name);
		if (node->name_size + 4 <= APEX_NAME_MAX) {
			name[0] = 3;
			name[1] = 0;
			name[2] = 'A';
			name[3] = 1;
			memcpy(name + 4, node->name, node->name_size);
			check_against_brute(zone, name);
		}
	}
	apex_zone_unref(zone);
}

/* The chain entry of an NSEC3 owner node. */
static const apex_nsec3_t *nsec3_of(const apex_zone_t *zone, const apex_node_t *node)
{
	for (size_t i = 0; i < zone->nsec3_count; i++)
		if (zone->nsec3[i].node == node->id)
			return &zone->nsec3[i];
	fail_msg("not an NSEC3 owner of the chain");
	return NULL;
}

/* Reference for apex_zone_nsec3_find(). */
static const apex_nsec3_t *brute_nsec3(const apex_zone_t *zone, const uint8_t *hash, bool *matched)
{
	const apex_nsec3_t *best = NULL;
	*matched = false;
	for (size_t i = 0; i < zone->nsec3_count; i++) {
		int c = memcmp(zone->nsec3[i].hash, hash, 20);
		if (c == 0) {
			*matched = true;
			return &zone->nsec3[i];
		}
		if (c < 0)
			best = &zone->nsec3[i];
	}
	return best ? best : &zone->nsec3[zone->nsec3_count - 1];
}

static void test_fj_nsec3(void **state)
{
	apex_zone_t *zone = load_real("fj.zone", "fj.");
	const apex_nsec3_params_t *p = &zone->nsec3_params;
	assert_int_equal(zone->dnssec, APEX_DNSSEC_NSEC3);
	assert_int_equal(zone->nsec3_count, 2929);
	for (size_t i = 1; i < zone->nsec3_count; i++)
		assert_true(memcmp(zone->nsec3[i - 1].hash, zone->nsec3[i].hash, 20) < 0);

	/* ldns-nsec3-hash -a 1 -t 5 -s 9F2844DF1E60A1B7 fj. */
	const apex_node_t *apex3 = N(zone->apex->nsec3);
	assert_non_null(apex3);
	assert_int_equal(apex3->name[0], 32);
	assert_int_equal(
		strncasecmp((const char *)apex3->name + 1, "PHVRE6LLEITQD1TU4RM8GP1011GJKOLE", 32),
		0);
	assert_non_null(apex_node_rrset(zone, apex3, APEX_TYPE_NSEC3)->rrsig);
	/* NSEC3 owners are not in the name index. */
	assert_null(find(zone, "PHVRE6LLEITQD1TU4RM8GP1011GJKOLE.fj."));
	assert_null(N(zone->apex->nsec));

	/* No opt-out: every authoritative name has its NSEC3, and the
	 * wildcard link is the NSEC3 matching or covering *.<name>, except at
	 * a delegation, which is never the closest encloser of a name that
	 * does not exist: there the same place holds the NSEC3 of its own
	 * hash (own_nsec3), here its matching one. */
	size_t linked = 0, delegations = 0;
	for (size_t i = 0; i < zone->node_count; i++) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		uint8_t hash[20], wild[APEX_NAME_MAX];
		bool matched;
		if (node->flags & APEX_NODE_OCCLUDED) {
			assert_null(N(node->nsec3));
			continue;
		}
		assert_int_equal(
			apex_nsec3_hash(1, p->salt, p->salt_size, p->iterations, node->name, hash),
			20);
		assert_non_null(N(node->nsec3));
		assert_memory_equal(nsec3_of(zone, N(node->nsec3))->hash, hash, 20);
		if (node->flags & APEX_NODE_DELEGATION) {
			assert_int_equal(node->own_nsec3, node->nsec3);
			delegations++;
			continue;
		}
		wild[0] = 1;
		wild[1] = '*';
		memcpy(wild + 2, node->name, node->name_size);
		apex_nsec3_hash(1, p->salt, p->salt_size, p->iterations, wild, hash);
		assert_int_equal(node->wildcard_nsec3, brute_nsec3(zone, hash, &matched)->node);
		linked++;
	}
	assert_true(linked + delegations > 2871);
	assert_true(linked >= 50 && delegations > 2800);

	/* Glue signed in the file (a quirk of the real zone) is not linked. */
	const apex_node_t *glue = find(zone, "ns1.kidanet.com.fj.");
	assert_true(glue->flags & APEX_NODE_OCCLUDED);
	assert_null(apex_node_rrset(zone, glue, APEX_TYPE_A)->rrsig);

	/* Matching, covering and wrapping around. */
	uint8_t hash[20];
	bool matched, want_matched;
	memset(hash, 0, sizeof(hash));
	assert_ptr_equal(apex_zone_nsec3_find(zone, hash, 20, &matched),
			 &zone->nsec3[zone->nsec3_count - 1]);
	assert_false(matched);
	memset(hash, 0xff, sizeof(hash));
	assert_ptr_equal(apex_zone_nsec3_find(zone, hash, 20, &matched),
			 &zone->nsec3[zone->nsec3_count - 1]);
	assert_false(matched);
	assert_ptr_equal(apex_zone_nsec3_find(zone, zone->nsec3[7].hash, 20, &matched),
			 &zone->nsec3[7]);
	assert_true(matched);
	srand(5155);
	for (int i = 0; i < 2000; i++) {
		for (int j = 0; j < 20; j++)
			hash[j] = (uint8_t)rand();
		const apex_nsec3_t *got = apex_zone_nsec3_find(zone, hash, 20, &matched);
		assert_ptr_equal(got, brute_nsec3(zone, hash, &want_matched));
		assert_int_equal(matched, want_matched);
	}
	apex_zone_unref(zone);
}

/* With opt-out (example.nsec3.zone): a delegation without an NSEC3 of its
 * own keeps the one covering its hash, which a referral's opt-out proof
 * gives for the next closer name; one with an NSEC3 keeps that. */
static void test_opt_out_own_nsec3(void **state)
{
	(void)state;
	apex_zone_t *zone = load_real("example.nsec3.zone", "example.");
	const apex_nsec3_params_t *p = &zone->nsec3_params;
	size_t covered = 0, matched_own = 0;

	assert_int_equal(zone->dnssec, APEX_DNSSEC_NSEC3);
	for (size_t i = 0; i < zone->node_count; i++) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		uint8_t hash[20];
		bool matched;
		if (!(node->flags & APEX_NODE_DELEGATION) || (node->flags & APEX_NODE_OCCLUDED))
			continue;
		assert_int_equal(
			apex_nsec3_hash(1, p->salt, p->salt_size, p->iterations, node->name, hash),
			20);
		const apex_nsec3_t *want = brute_nsec3(zone, hash, &matched);
		assert_int_equal(node->own_nsec3, want->node);
		assert_int_equal(node->nsec3, matched ? want->node : APEX_NODE_NONE);
		if (matched)
			matched_own++;
		else
			covered++;
	}
	/* nods.example (no DS: covered) and sub.example (DS: matched) */
	assert_int_equal(covered, 1);
	assert_int_equal(matched_own, 1);
	const apex_node_t *nods = find(zone, "nods.example.");
	assert_non_null(nods);
	assert_null(N(nods->nsec3));
	assert_non_null(N(nods->own_nsec3));
	apex_zone_unref(zone);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_ent_encloser_previous),
		cmocka_unit_test(test_cuts_wildcards_dname),
		cmocka_unit_test(test_glue_and_additional),
		cmocka_unit_test(test_refcount),
		cmocka_unit_test(test_root_zone),
		cmocka_unit_test(test_fj_nsec3),
		cmocka_unit_test(test_opt_out_own_nsec3),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
