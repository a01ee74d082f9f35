/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The query engine: RFC 1034 section 4.3.2 over one immutable zone
 * version, with the DNSSEC additions of RFC 4035 and RFC 5155.
 *
 * An answer is built in two phases.  Resolution walks the zone (and a
 * CNAME/DNAME chain inside it) and only records what goes into each
 * section: lists of RRset references on the stack.  Writing then copies
 * those RRsets into the caller's buffer in section order, stopping at
 * the size limit.  Nothing is allocated and nothing shared is written.
 *
 * Policy choices (each one is what a reference server does or what the
 * RFC asks; see doc/architecture.md):
 * - Zone transfers over TCP are answered by the daemon's transfer
 *   threads (src/apexd/transfers/xfr_out.c), which take the connection before the
 *   engine sees the request; what reaches the engine is answered as NSD
 *   4.6 does: AXFR over UDP NOTIMP, AXFR or IXFR over TCP REFUSED.  IXFR
 *   over UDP (RFC 1995 section 2): the SOA alone when the client is up to
 *   date, else TC.  MAILA and MAILB are looked up like any type (NODATA),
 *   as NSD and Knot DNS do.
 * - QCLASS other than IN, CH and ANY: REFUSED.  QCLASS ANY is answered
 *   from the IN data with AA clear, as NSD does (Knot DNS answers it too,
 *   with AA): RFC 6895 section 3.2, a server cannot be authoritative for
 *   every class.
 * - ANY (RFC 8482 section 4.1): one RRset, the first by type number at
 *   the node, over UDP and TCP alike.
 * - CNAME and DNAME chains are followed through every zone served
 *   (RFC 1034 4.3.2 step 3a goes back to step 1, which picks the zone
 *   of the new name; NSD does the same), for at most APEX_CHAIN_MAX
 *   links; a loop ends the chain with NOERROR.  A target in no served
 *   zone ends it too: the client follows it.
 * - Referral glue of in-domain name servers is required (RFC 9471):
 *   when it does not fit, TC is set.  Other additional data is added
 *   only when it fits, a whole RRset at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "dns/edns.h"
#include "dns/nsec3hash.h"
#include "dns/rrtype.h"
#include "dns/serial.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/answer_ahead.h"
#include "query/answer_record.h"
#include "query/cookie.h"
#include "query/opt.h"
#include "query/parse.h"
#include "query/writer.h"
#include "util/error.h"

#define APEX_CHAIN_MAX 8  /* CNAME/DNAME links followed */
#define ITEMS_MAX 64      /* RRsets per section */
#define ADDITIONAL_MAX 16 /* additional-data lists per answer */
#define RCODE_YXDOMAIN 6

void apex_answer_config_init(apex_answer_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->edns_payload = APEX_EDNS_PAYLOAD;
}

/* One RRset to write, with the owner to write it under. */
typedef struct item {
	const uint8_t *owner;
	const apex_node_t *owner_node; /* node of owner or of an ancestor (for the writer) */
	const apex_rrset_t *rrset;
	uint32_t ttl;
	/* The zone it comes from (a chain may cross zones): where the ids
	 * of its nodes are. */
	const apex_zone_t *zone;
} item_t;

typedef struct additional_ref {
	const apex_additional_t *additional;
	bool referral;           /* honour apex_glue_t.required */
	const apex_zone_t *zone; /* as in item_t */
} additional_ref_t;

/* Everything one answer needs, on the stack of apex_answer(). */
typedef struct ctx {
	const apex_query_t *q;
	const apex_zone_t *zone;
	const apex_node_t *qname_node; /* the query name's node or closest encloser, or NULL */
	/* The precomputed records of this answer, or NULL: the first
	 * fragment_items authority items, and with fragment_whole all the
	 * rest (nothing may be in the answer section). */
	const apex_fragment_t *fragment;
	unsigned fragment_items;
	bool fragment_whole;
	/* With fragment_items 1: tails that give all the other items (an
	 * NXDOMAIN's NSEC proof), or none. */
	const apex_fragment_t *tails[2];
	unsigned tail_count;
	apex_transport_t transport;
	uint8_t rcode;
	bool aa;
	bool dnssec_ok;

	item_t answer[ITEMS_MAX];
	unsigned answer_count;
	item_t authority[ITEMS_MAX];
	unsigned authority_count;
	additional_ref_t additional[ADDITIONAL_MAX];
	unsigned additional_count;

	/* CNAMEs synthesized from DNAMEs: the RRset, its RDATA (length +
	 * name), and the new name (which the next link looks up). */
	unsigned synth_count;
	apex_rrset_t synth[APEX_CHAIN_MAX + 1];
	uint8_t synth_rdata[APEX_CHAIN_MAX + 1][2 + APEX_NAME_MAX];
} ctx_t;

/* ------------------------------------------------------------ sections */

static bool add_item(item_t *items, unsigned *count, const uint8_t *owner,
		     const apex_node_t *owner_node, const apex_rrset_t *rrset, uint32_t ttl,
		     const apex_zone_t *zone)
{
	if (rrset == NULL)
		return false;
	for (unsigned i = 0; i < *count; i++) {
		if (items[i].rrset == rrset && apex_name_equal(items[i].owner, owner))
			return false; /* already there */
	}
	if (*count >= ITEMS_MAX)
		return false;
	items[*count] = (item_t){
		.owner = owner,
		.owner_node = owner_node,
		.rrset = rrset,
		.ttl = rrset->ttl,
		.zone = zone,
	};
	if (ttl != rrset->ttl)
		items[*count].ttl = ttl;
	(*count)++;
	return true;
}

/* Add to the answer; false if it is already there (a loop) or full. */
static bool add_answer(ctx_t *c, const uint8_t *owner, const apex_node_t *owner_node,
		       const apex_rrset_t *rrset)
{
	return add_item(c->answer, &c->answer_count, owner, owner_node, rrset,
			rrset ? rrset->ttl : 0, c->zone);
}

static void add_authority(ctx_t *c, const apex_node_t *owner, const apex_rrset_t *rrset)
{
	add_item(c->authority, &c->authority_count, owner->name, owner, rrset,
		 rrset ? rrset->ttl : 0, c->zone);
}

static void add_additional(ctx_t *c, const apex_additional_t *additional, bool referral)
{
	if (additional == NULL || c->additional_count >= ADDITIONAL_MAX)
		return;
	for (unsigned i = 0; i < c->additional_count; i++) {
		if (c->additional[i].additional == additional)
			return;
	}
	c->additional[c->additional_count++] = (additional_ref_t){ additional, referral, c->zone };
}

/* SOA for a negative answer, TTL per RFC 2308 section 3. */
static void add_negative_soa(ctx_t *c)
{
	/* Proofs may follow it (with DO), record by record. */
	if (c->answer_count == 0 && c->authority_count == 0) {
		c->fragment = c->zone->negative[c->dnssec_ok ? 1 : 0];
		c->fragment_items = 1;
		c->fragment_whole = false;
	}
	add_item(c->authority, &c->authority_count, c->zone->origin, c->zone->apex, c->zone->soa,
		 c->zone->negative_ttl, c->zone);
}

/* ------------------------------------------------------------ proofs */

/* The NSEC RRset of node `id` (APEX_NODE_NONE: nothing). */
static void add_nsec_of(ctx_t *c, uint32_t id)
{
	const apex_node_t *node = apex_zone_node(c->zone, id);

	if (node == NULL)
		return;
	add_authority(c, node, apex_node_rrset(c->zone, node, APEX_TYPE_NSEC));
}

/* The NSEC3 RRset of the NSEC3 owner node `id` (APEX_NODE_NONE: nothing). */
static void add_nsec3(ctx_t *c, uint32_t id)
{
	const apex_node_t *node = apex_zone_node(c->zone, id);

	if (node != NULL)
		add_authority(c, node, apex_node_rrset(c->zone, node, APEX_TYPE_NSEC3));
}

/* The NSEC3 owner node covering (or matching) the hash of name. */
static uint32_t nsec3_for_name(const apex_zone_t *zone, const uint8_t *name)
{
	if (zone->nsec3_count == 0)
		return APEX_NODE_NONE;
	uint8_t hash[20];
	const apex_nsec3_params_t *p = &zone->nsec3_params;
	/* apex_nsec3_hash() hashes the name in lower case */
	int size = apex_nsec3_hash(p->algorithm, p->salt, p->salt_size, p->iterations, name, hash);
	if (size < 0)
		return APEX_NODE_NONE;
	bool matched;
	return apex_zone_nsec3_find(zone, hash, (size_t)size, &matched)->node;
}

/* The suffix of name with `labels` labels. */
static const uint8_t *name_suffix(const uint8_t *name, int labels)
{
	int drop = apex_name_labels(name) - labels;
	for (int i = 0; i < drop; i++)
		name = apex_name_parent(name);
	return name;
}

/*
 * RFC 5155 7.2.1 closest (provable) encloser proof for name: the NSEC3
 * matching the closest encloser that has one, starting at `encloser`,
 * and the NSEC3 covering the next closer name.  With `wildcard`, also
 * the NSEC3 covering the wildcard at that encloser.  Returns the
 * encloser used.
 */
static const apex_node_t *add_closest_encloser_proof(ctx_t *c, const uint8_t *name,
						     const apex_node_t *encloser, bool wildcard)
{
	const apex_node_t *ce = encloser;
	while (ce->nsec3 == APEX_NODE_NONE && ce->parent != APEX_NODE_NONE)
		ce = apex_zone_node(c->zone, ce->parent);
	add_nsec3(c, ce->nsec3);
	int labels = apex_name_labels(name);
	/* name is a delegation's own (a referral's or a DS query's opt-out
	 * proof) one label below ce: the next closer name is name itself,
	 * whose NSEC3 the load found (zone.h, own_nsec3) */
	if (labels == encloser->labels && labels == ce->labels + 1 &&
	    (encloser->flags & APEX_NODE_DELEGATION))
		add_nsec3(c, encloser->own_nsec3);
	else if (labels > ce->labels)
		add_nsec3(c, nsec3_for_name(c->zone, name_suffix(name, ce->labels + 1)));
	if (wildcard)
		add_nsec3(c, ce->wildcard_nsec3);
	return ce;
}

/*
 * The precomputed form of an NXDOMAIN proof below the apex in an NSEC
 * zone: the NSEC tails of the covering node and of the node covering
 * the apex's wildcard, after the negative SOA.  The second tail is used
 * only when it is the apex's own NSEC, whose owner points at the
 * question whatever precedes it.
 */
static inline __attribute__((always_inline)) void nxdomain_tails(ctx_t *c, uint32_t covering,
								 uint32_t wildcard)
{
	const apex_zone_t *zone = c->zone;
	if (c->fragment != zone->negative[1] || c->fragment_items != 1 ||
	    covering == APEX_NODE_NONE || wildcard == APEX_NODE_NONE)
		return;
	unsigned n = 0;
	c->tails[n++] = zone->nsec_tails[covering];
	if (wildcard != covering) {
		if (wildcard != zone->apex->id)
			return;
		c->tails[n++] = zone->nsec_tails[wildcard];
	}
	if (c->tails[0] == NULL || c->tails[n - 1] == NULL || c->answer_count != 0 ||
	    c->authority_count != 1 + n || c->additional_count != 0)
		return;
	c->tail_count = n;
}

/* NXDOMAIN proof: the name does not exist, nor does the wildcard that could have matched. */
static inline __attribute__((always_inline)) void add_nxdomain_proof(ctx_t *c, const uint8_t *name,
								     const apex_lookup_t *lk)
{
	if (!c->dnssec_ok)
		return;
	if (c->zone->dnssec == APEX_DNSSEC_NSEC) {
		uint32_t covering = apex_lookup_previous(c->zone, lk)->nsec;
		add_nsec_of(c, covering);
		/* "*.<closest encloser>": its covering NSEC was found at load
		 * (labels sorting before '*' may exist). */
		const apex_node_t *ce = lk->encloser;
		add_nsec_of(c, ce->wildcard_nsec);
		if (c->zone->nsec_tails != NULL && ce == c->zone->apex)
			nxdomain_tails(c, covering, ce->wildcard_nsec);
	} else if (c->zone->dnssec == APEX_DNSSEC_NSEC3) {
		add_closest_encloser_proof(c, name, lk->encloser, true);
	}
}

/* NODATA proof for an existing node (not a wildcard expansion). */
static void add_nodata_proof(ctx_t *c, const uint8_t *name, const apex_node_t *node)
{
	if (!c->dnssec_ok)
		return;
	if (c->zone->dnssec == APEX_DNSSEC_NSEC) {
		add_nsec_of(c, node->nsec);
	} else if (c->zone->dnssec == APEX_DNSSEC_NSEC3) {
		if (node->nsec3 != APEX_NODE_NONE)
			add_nsec3(c, node->nsec3);
		else /* RFC 5155 7.2.4: e.g. DS under opt-out, or an ENT without NSEC3 */
			add_closest_encloser_proof(c, name, node, false);
	}
}

/* A wildcard expansion gave an answer: prove the name itself does not exist. */
static void add_wildcard_answer_proof(ctx_t *c, const uint8_t *name, const apex_lookup_t *lk)
{
	if (!c->dnssec_ok)
		return;
	if (c->zone->dnssec == APEX_DNSSEC_NSEC) {
		add_nsec_of(c, apex_lookup_previous(c->zone, lk)->nsec);
	} else if (c->zone->dnssec == APEX_DNSSEC_NSEC3) {
		/* RFC 5155 7.2.6: the NSEC3 covering the next closer name. */
		const apex_node_t *ce = lk->encloser;
		if (apex_name_labels(name) > ce->labels)
			add_nsec3(c, nsec3_for_name(c->zone, name_suffix(name, ce->labels + 1)));
	}
}

/* A wildcard matched but has no data of the type (RFC 4035 3.1.3.4, RFC 5155 7.2.5). */
static void add_wildcard_nodata_proof(ctx_t *c, const uint8_t *name, const apex_lookup_t *lk,
				      const apex_node_t *wild)
{
	if (!c->dnssec_ok)
		return;
	if (c->zone->dnssec == APEX_DNSSEC_NSEC) {
		add_nsec_of(c, apex_lookup_previous(c->zone, lk)->nsec);
		add_nsec_of(c, wild->nsec);
	} else if (c->zone->dnssec == APEX_DNSSEC_NSEC3) {
		add_closest_encloser_proof(c, name, lk->encloser, false);
		add_nsec3(c, wild->nsec3);
	}
}

/* ------------------------------------------------------------ resolution */

static bool answers_with_additional(uint16_t type)
{
	return type == APEX_TYPE_NS || type == APEX_TYPE_MX || type == APEX_TYPE_SRV;
}

/* The precomputed referral to cut, or NULL. */
static const apex_fragment_t *referral_fragment(const apex_zone_t *zone, const apex_node_t *cut,
						bool dnssec_ok)
{
	if (zone->referral_index != NULL) {
		uint16_t i = zone->referral_index[cut->id];
		return i != 0 ? zone->referrals[i - 1].fragment[dnssec_ok ? 1 : 0] : NULL;
	}
	size_t lo = 0, hi = zone->referral_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (zone->referrals[mid].cut < cut)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < zone->referral_count && zone->referrals[lo].cut == cut)
		return zone->referrals[lo].fragment[dnssec_ok ? 1 : 0];
	return NULL;
}

/* The precomputed answer of the apex's RRset rr, before it is added
 * as the first item, if there is one. */
static void apex_answer_fragment(ctx_t *c, const apex_rrset_t *rr)
{
	const apex_fragment_t *const *answers = c->zone->apex_answers[c->dnssec_ok ? 1 : 0];
	if (answers != NULL && c->answer_count == 0 && c->authority_count == 0 &&
	    c->additional_count == 0) {
		c->fragment = answers[rr - apex_node_rrsets(c->zone, c->zone->apex)];
		c->fragment_whole = true;
	}
}

/* Referral to the zone cut `cut` (RFC 1034 4.3.2 step 3b, RFC 4035 3.1.4). */
static void referral(ctx_t *c, const apex_node_t *cut)
{
	if (c->answer_count == 0 && c->authority_count == 0 && c->additional_count == 0) {
		c->fragment = referral_fragment(c->zone, cut, c->dnssec_ok);
		c->fragment_whole = true;
	}
	if (c->answer_count == 0)
		c->aa = false; /* nothing authoritative in the answer */
	const apex_rrset_t *ns = apex_node_rrset(c->zone, cut, APEX_TYPE_NS);
	add_authority(c, cut, ns);
	/* An unsigned zone's DS records are plain data: not in referrals. */
	if (c->dnssec_ok && c->zone->dnssec != APEX_DNSSEC_NONE) {
		const apex_rrset_t *ds = apex_node_rrset(c->zone, cut, APEX_TYPE_DS);
		if (ds != NULL)
			add_authority(c, cut, ds);
		else if (c->zone->dnssec == APEX_DNSSEC_NSEC)
			add_nsec_of(c, cut->nsec);
		else if (c->zone->dnssec == APEX_DNSSEC_NSEC3)
			add_nodata_proof(c, cut->name, cut); /* matching NSEC3, or opt-out proof */
	}
	/* RFC 9471's mandatory glue is for referral responses; after a
	 * CNAME chain the answer is authoritative and the referral a
	 * courtesy, so its glue is optional there (as in NSD). */
	if (ns != NULL)
		add_additional(c, ns->additional, c->answer_count == 0);
}

/*
 * DNAME substitution (RFC 6672 section 2.2) for a name below dnode:
 * the DNAME and a synthesized CNAME go into the answer.  Returns the
 * new name to continue with, or NULL (loop, or YXDOMAIN).
 */
static const uint8_t *dname(ctx_t *c, const apex_node_t *dnode, const uint8_t *name,
			    const apex_node_t *name_node)
{
	const apex_rrset_t *dn = apex_node_rrset(c->zone, dnode, APEX_TYPE_DNAME);
	if (dn == NULL || dn->count == 0 || c->synth_count > APEX_CHAIN_MAX)
		return NULL;
	if (!add_answer(c, dnode->name, dnode, dn))
		return NULL;
	const uint8_t *target = dn->rdata + 2;
	size_t target_size = apex_name_size(target);
	size_t prefix = apex_name_size(name) - dnode->name_size;
	if (prefix + target_size > APEX_NAME_MAX) {
		c->rcode = RCODE_YXDOMAIN;
		return NULL;
	}
	unsigned i = c->synth_count++;
	uint8_t *rdata = c->synth_rdata[i];
	apex_write_u16(rdata, (uint16_t)(prefix + target_size));
	memcpy(rdata + 2, name, prefix);
	memcpy(rdata + 2 + prefix, target, target_size);
	c->synth[i] = (apex_rrset_t){
		.type = APEX_TYPE_CNAME,
		.count = 1,
		.ttl = dn->ttl,
		.rdata_size = (uint32_t)(2 + prefix + target_size),
		.rdata = rdata,
	};
	add_answer(c, name, name_node, &c->synth[i]);
	/* a query for the CNAME itself is answered by the synthesized one: the
	 * lookup does not restart (RFC 1034 section 4.3.2 step 3a, RFC 6672
	 * section 3.3) */
	if (c->q->qtype == APEX_TYPE_CNAME)
		return NULL;
	return rdata + 2;
}

/*
 * Data at node for the name `owner` (the node's own name, or the query
 * name for a wildcard expansion).  Returns the CNAME target to follow,
 * or NULL.  For a wildcard, lk is the lookup of owner.
 */
static const uint8_t *answer_node(ctx_t *c, const apex_node_t *node, const uint8_t *owner,
				  const apex_lookup_t *lk, bool wildcard)
{
	/* The owner's node: this one, or for a wildcard expansion the
	 * closest encloser of the name. */
	const apex_node_t *owner_node = wildcard ? lk->encloser : node;
	uint16_t qtype = c->q->qtype;
	bool answered = false;
	const uint8_t *next = NULL;

	if (qtype == APEX_TYPE_ANY) {
		if (node->rrset_count > 0) {
			const apex_rrset_t *rr = &apex_node_rrsets(c->zone, node)[0];
			add_answer(c, owner, owner_node, rr);
			if (answers_with_additional(rr->type))
				add_additional(c, rr->additional, false);
			answered = true;
		}
	} else if (qtype == APEX_TYPE_RRSIG) {
		for (unsigned i = 0; i < node->rrset_count; i++) {
			if (apex_node_rrsets(c->zone, node)[i].rrsig != NULL) {
				add_answer(c, owner, owner_node,
					   apex_node_rrsets(c->zone, node)[i].rrsig);
				answered = true;
			}
		}
	}
	if (!answered && qtype != APEX_TYPE_ANY) {
		const apex_rrset_t *rr = apex_node_rrset(c->zone, node, qtype);
		if (rr != NULL) {
			if (node == c->zone->apex)
				apex_answer_fragment(c, rr);
			add_answer(c, owner, owner_node, rr);
			if (answers_with_additional(qtype))
				add_additional(c, rr->additional, false);
			answered = true;
		} else if (qtype != APEX_TYPE_CNAME) {
			const apex_rrset_t *cname = apex_node_rrset(c->zone, node, APEX_TYPE_CNAME);
			if (cname != NULL && cname->count > 0) {
				if (add_answer(c, owner, owner_node, cname))
					next = cname->rdata + 2;
				answered = true;
			}
		}
	}

	if (answered) {
		if (wildcard)
			add_wildcard_answer_proof(c, owner, lk);
		return next;
	}
	/* NODATA (RFC 2308 section 2.2) */
	c->rcode = APEX_RCODE_NOERROR;
	add_negative_soa(c);
	if (wildcard)
		add_wildcard_nodata_proof(c, owner, lk, node);
	else
		add_nodata_proof(c, owner, node);
	return NULL;
}

/*
 * One link of the chain: answer `name` (in c->zone) and return the name
 * to continue with (CNAME or DNAME target in the zone), or NULL.  Inline
 * into both instances of answer(), as it was into its one caller: out of
 * line it cost 30 instructions a query on the root mix.
 */
static inline __attribute__((always_inline)) const uint8_t *resolve(ctx_t *c, const uint8_t *name,
								    const apex_lookup_name_t *k)
{
	const apex_zone_t *zone = c->zone;
	apex_lookup_t lk;
	apex_zone_lookup_name(zone, k, &lk);

	c->rcode = APEX_RCODE_NOERROR;
	const apex_node_t *base = lk.node != NULL ? lk.node : lk.encloser;
	if (name == c->q->qname)
		c->qname_node = base;
	const apex_node_t *cut = apex_zone_node(zone, base->cut);
	if ((zone->apex->flags & APEX_NODE_DNAME) && lk.node != zone->apex)
		cut = zone->apex; /* a DNAME at the apex redirects everything below */
	if (cut != NULL) {
		if (cut->flags & APEX_NODE_DELEGATION) {
			/* DS belongs to the parent side of the cut (RFC 4035 3.1.4.1). */
			if (!(cut == lk.node && c->q->qtype == APEX_TYPE_DS)) {
				referral(c, cut);
				return NULL;
			}
		} else if (cut != lk.node) {
			return dname(c, cut, name, base);
		}
	}

	if (lk.node != NULL) {
		if (lk.node->flags & APEX_NODE_EMPTY) {
			add_negative_soa(c);
			add_nodata_proof(c, name, lk.node);
			return NULL;
		}
		return answer_node(c, lk.node, lk.node == zone->apex ? zone->origin : name, &lk,
				   false);
	}
	const apex_node_t *wild = apex_zone_node(zone, lk.encloser->wildcard_child);
	if (wild != NULL)
		return answer_node(c, wild, name, &lk, true);

	c->rcode = APEX_RCODE_NXDOMAIN;
	add_negative_soa(c);
	add_nxdomain_proof(c, name, &lk);
	return NULL;
}

/* ------------------------------------------------------------ writing */

static size_t response_limit(const apex_query_t *q, const apex_answer_config_t *cfg,
			     apex_transport_t transport, size_t capacity)
{
	size_t limit;
	if (transport != APEX_TRANSPORT_UDP) {
		limit = APEX_MAX_MESSAGE;
	} else if (!q->edns) {
		limit = APEX_MIN_UDP_PAYLOAD;
	} else {
		limit = q->udp_payload < cfg->edns_payload ? q->udp_payload : cfg->edns_payload;
		if (limit < APEX_MIN_UDP_PAYLOAD)
			limit = APEX_MIN_UDP_PAYLOAD;
	}
	return limit < capacity ? limit : capacity;
}

/* An RRset and, with DO, its RRSIGs, as one unit. */
static int write_item(apex_writer_t *w, int section, const item_t *it, bool dnssec_ok)
{
	apex_writer_mark_t mark;
	apex_writer_mark(w, &mark);
	w->zone = it->zone;
	int ret = apex_writer_rrset(w, section, it->owner, it->owner_node, it->rrset, it->ttl);
	const apex_rrset_t *sig = it->rrset->rrsig;
	if (ret == APEX_OK && dnssec_ok && sig != NULL) {
		/* A lowered TTL (RFC 2308's SOA) lowers its RRSIG's too, as NSD
		 * and Knot do: a cache must not keep the signature longer. */
		uint32_t sig_ttl =
			it->ttl != it->rrset->ttl && it->ttl < sig->ttl ? it->ttl : sig->ttl;
		ret = apex_writer_rrset(w, section, it->owner, it->owner_node, sig, sig_ttl);
	}
	if (ret != APEX_OK)
		apex_writer_rollback(w, &mark);
	return ret;
}

#define ADDITIONAL_DONE_MAX 256

/* The records written since the last unit form one more unit. */
static void record_unit(apex_recorder_t *rec, const apex_writer_t *w, int section, bool required)
{
	if (rec == NULL)
		return;
	if (rec->count >= APEX_RECORDER_UNITS_MAX || w->log == NULL) {
		rec->overflow = true;
		return;
	}
	uint16_t records =
		(uint16_t)(w->counts[APEX_SECTION_ANSWER] + w->counts[APEX_SECTION_AUTHORITY] +
			   w->counts[APEX_SECTION_ADDITIONAL]);
	rec->units[rec->count++] = (apex_fragment_unit_t){
		.end = (uint16_t)(w->pos - rec->body),
		.pointers_end = (uint16_t)w->log->pointer_count,
		.records = (uint16_t)(records - rec->counted),
		.section = (uint8_t)section,
		.required = required,
	};
	rec->names_end[rec->count - 1] = (uint16_t)w->log->name_count;
	rec->entries_end[rec->count - 1] = (uint16_t)w->compress_count;
	rec->counted = records;
}

/*
 * Write the address RRsets of one pass (required glue, or the optional
 * rest): every A first, then every AAAA, so that when space runs out
 * as many servers as possible stay reachable (NSD's order).  An RRset
 * already written is skipped.  Returns false if required glue did not
 * fit.
 */
static bool write_additional_pass(apex_writer_t *w, const ctx_t *c, bool required_pass,
				  const apex_rrset_t **done, unsigned *done_count,
				  apex_recorder_t *rec)
{
	for (int s = 0; s < 2; s++) {
		for (unsigned r = 0; r < c->additional_count; r++) {
			const additional_ref_t *ref = &c->additional[r];
			for (unsigned i = 0; i < ref->additional->count; i++) {
				const apex_glue_t *g = &ref->additional->items[i];
				const apex_rrset_t *rr = s == 0 ? g->a : g->aaaa;
				bool required = ref->referral && g->required;
				if (required != required_pass || g->owner == APEX_NODE_NONE ||
				    rr == NULL)
					continue;
				/* One list names each owner once, so only several
				 * lists can repeat an RRset. */
				bool seen = false;
				for (unsigned d = 0;
				     c->additional_count > 1 && d < *done_count && !seen; d++)
					seen = done[d] == rr;
				if (seen)
					continue;
				if (*done_count >= ADDITIONAL_DONE_MAX)
					return !required;
				const apex_node_t *owner = apex_zone_node(ref->zone, g->owner);
				item_t it = { owner->name, owner, rr, rr->ttl, ref->zone };
				if (write_item(w, APEX_SECTION_ADDITIONAL, &it, c->dnssec_ok) !=
				    APEX_OK) {
					if (required)
						return false;
					continue;
				}
				done[(*done_count)++] = rr;
				record_unit(rec, w, APEX_SECTION_ADDITIONAL, required);
			}
		}
	}
	return true;
}

/*
 * The answer, authority (from item authority_from on) and additional
 * sections (required glue first) of c; rec, if not NULL, records the
 * authority and additional units.
 * Returns true if the response is truncated.
 */
static bool write_sections(apex_writer_t *w, const ctx_t *c, unsigned authority_from,
			   apex_recorder_t *rec)
{
	bool tc = false;
	for (unsigned i = 0; !tc && i < c->answer_count; i++) {
		tc = write_item(w, APEX_SECTION_ANSWER, &c->answer[i], c->dnssec_ok) != APEX_OK;
		if (!tc)
			record_unit(rec, w, APEX_SECTION_ANSWER, true);
	}
	for (unsigned i = authority_from; !tc && i < c->authority_count; i++) {
		tc = write_item(w, APEX_SECTION_AUTHORITY, &c->authority[i], c->dnssec_ok) !=
		     APEX_OK;
		if (!tc)
			record_unit(rec, w, APEX_SECTION_AUTHORITY, true);
	}
	if (!tc) {
		const apex_rrset_t *done[ADDITIONAL_DONE_MAX];
		unsigned done_count = 0;
		tc = !write_additional_pass(w, c, true, done, &done_count, rec);
		if (!tc)
			(void)write_additional_pass(w, c, false, done, &done_count, rec);
		if (rec != NULL && done_count >= ADDITIONAL_DONE_MAX)
			rec->overflow = true;
	}
	return tc;
}

/*
 * The sections after the question: the precomputed records if they
 * apply, then the rest record by record (which needs the fragment's
 * compression targets).  Returns true if the response is truncated.
 */
static inline bool write_body(apex_writer_t *w, const ctx_t *c)
{
	bool tc = false;
	bool rest = !c->fragment_whole &&
		    (c->authority_count > c->fragment_items || c->additional_count > 0);
	if (c->tail_count > 0 &&
	    apex_writer_fragment_tails(w, c->fragment, c->tails, c->tail_count) == APEX_OK)
		return false;
	if (c->fragment != NULL && (!rest || c->fragment->targets != NULL) &&
	    apex_writer_fragment(w, c->fragment, rest, &tc) == APEX_OK)
		return tc || !rest ? tc : write_sections(w, c, c->fragment_items, NULL);
	return write_sections(w, c, 0, NULL);
}

/* Header flags of a response: QR, opcode, RD and CD copied, our AA/TC/rcode. */
static uint16_t response_flags(const apex_query_t *q, bool aa, bool tc, uint8_t rcode)
{
	uint16_t flags = APEX_FLAG_QR | (q->flags & (0x7800u | APEX_FLAG_RD | APEX_FLAG_CD));
	if (aa)
		flags |= APEX_FLAG_AA;
	if (tc)
		flags |= APEX_FLAG_TC;
	return (uint16_t)(flags | (rcode & 0xF));
}

/*
 * Extended DNS Errors (RFC 8914) that error responses carry when the
 * query had EDNS: the INFO-CODE and its EXTRA-TEXT.  EDE_NONE: none.
 */
typedef enum {
	EDE_NONE = -1,
	EDE_NOT_READY = APEX_EDE_NOT_READY, /* a secondary zone past its SOA expire time */
	EDE_NOT_AUTHORITATIVE = APEX_EDE_NOT_AUTHORITATIVE, /* a name in no zone served here */
	EDE_NOT_SUPPORTED = APEX_EDE_NOT_SUPPORTED,         /* a class other than IN, CH and ANY */
	/* a configured zone not loaded yet (Not Ready too, another text) */
	EDE_NOT_LOADED = 0x10000 | APEX_EDE_NOT_READY,
} ede_t;

static const char *ede_text(ede_t ede)
{
	return ede == EDE_NOT_READY    ? "zone expired"
	       : ede == EDE_NOT_LOADED ? "zone not loaded"
				       : "";
}

/* The OPT record of the response, if the query had one. */
/* The ZONEVERSION option's data (RFC 9660 section 2): the zone's label
 * count, type 0 (its SOA serial) and the serial. */
#define ZONEVERSION_SIZE 6

static void write_opt(apex_writer_t *w, const apex_query_t *q, const apex_answer_config_t *cfg,
		      uint8_t rcode, ede_t ede, const apex_zone_t *version_of)
{
	if (!q->edns)
		return;
	bool nsid = q->nsid && cfg->nsid != NULL;
	size_t opt_pos = w->pos;
	/* Space was reserved by the limit, so this only fails on a tiny buffer. */
	if (apex_writer_opt(w, cfg->edns_payload, (uint8_t)(rcode >> 4), q->dnssec_ok,
			    nsid ? cfg->nsid : NULL, nsid ? cfg->nsid_size : 0) != APEX_OK)
		return;
	if (q->cookie_reply_size > 0)
		(void)apex_writer_opt_append(w, opt_pos, APEX_EDNS_COOKIE, q->cookie_reply,
					     q->cookie_reply_size);
	if (ede != EDE_NONE) {
		uint8_t data[2 + 32];
		size_t text = strlen(ede_text(ede));
		data[0] = (uint8_t)((ede & 0xFFFF) >> 8); /* the INFO-CODE */
		data[1] = (uint8_t)ede;
		memcpy(data + 2, ede_text(ede), text);
		(void)apex_writer_opt_append(w, opt_pos, APEX_EDNS_EDE, data, (uint16_t)(2 + text));
	}
	if (q->expire_reply) {
		uint8_t data[4];
		apex_write_u32(data, q->expire_seconds);
		(void)apex_writer_opt_append(w, opt_pos, APEX_EDNS_EXPIRE, data, 4);
	}
	/* RFC 9660: the version of the zone the answer came from, if asked */
	if (q->zoneversion && version_of != NULL) {
		uint8_t data[ZONEVERSION_SIZE] = { version_of->origin_labels, 0 };
		apex_write_u32(data + 2, version_of->serial);
		(void)apex_writer_opt_append(w, opt_pos, APEX_EDNS_ZONEVERSION, data,
					     ZONEVERSION_SIZE);
	}
}

static inline __attribute__((always_inline)) size_t
reserve_opt(const apex_query_t *q, const apex_answer_config_t *cfg, ede_t ede)
{
	if (!q->edns)
		return 0;
	bool nsid = q->nsid && cfg->nsid != NULL;
	/* (EXPIRE's room is note_expire()'s, where it is sent) */
	return apex_writer_opt_size(nsid ? cfg->nsid : NULL, nsid ? cfg->nsid_size : 0) +
	       (q->cookie_reply_size > 0 ? 4 + (size_t)q->cookie_reply_size : 0) +
	       (ede != EDE_NONE ? 4 + 2 + strlen(ede_text(ede)) : 0) +
	       (q->zoneversion ? 4 + ZONEVERSION_SIZE : 0);
}

/*
 * The EDNS EXPIRE option of an answer from zone (RFC 7314 section 2),
 * when the query asked for it and is an SOA or IXFR query
 * (apex_zone_expire_left()).  A secondary's needs the time of the query
 * (client): without one, no option.  Returns the room the option takes
 * in the OPT, 0 when none is sent: called before the answer is written,
 * so that room is kept only where the option goes (kept in any other
 * answer, an SOA query's non-authoritative one, of QCLASS ANY, it would
 * truncate over UDP an answer that fits, which would then differ from
 * TCP's).
 */
__attribute__((cold, noinline)) static size_t note_expire(apex_query_t *q, const apex_zone_t *zone,
							  const apex_answer_client_t *client)
{
	if (zone == NULL || (q->qtype != APEX_TYPE_SOA && q->qtype != APEX_TYPE_IXFR))
		return 0;
	if (client == NULL && atomic_load_explicit(&zone->expire_at, memory_order_relaxed) != 0)
		return 0;
	q->expire_seconds = apex_zone_expire_left(zone, client != NULL ? client->now : 0);
	q->expire_reply = true;
	return 4 + 4;
}

/* A response with no records: header, the question if known, OPT (with
 * the Extended DNS Error ede, if any). */
static size_t write_error_flags(const apex_query_t *q, const apex_answer_config_t *cfg,
				apex_transport_t transport, uint8_t rcode, ede_t ede, uint8_t *out,
				size_t capacity, apex_answer_info_t *info, uint16_t flags)
{
	apex_writer_t w;
	size_t limit = response_limit(q, cfg, transport, capacity);
	size_t reserve = reserve_opt(q, cfg, ede);
	apex_writer_init(&w, out, limit > reserve ? limit - reserve : 0, limit);
	if (q->has_question)
		(void)apex_writer_question(&w, q->qname, NULL, q->qtype, q->qclass);
	write_opt(&w, q, cfg, rcode, ede, NULL);
	if (info != NULL) {
		info->rcode = rcode;
		info->truncated = false;
	}
	return apex_writer_finish(&w, q->id, flags);
}

static size_t write_error(const apex_query_t *q, const apex_answer_config_t *cfg,
			  apex_transport_t transport, uint8_t rcode, ede_t ede, uint8_t *out,
			  size_t capacity, apex_answer_info_t *info)
{
	return write_error_flags(q, cfg, transport, rcode, ede, out, capacity, info,
				 response_flags(q, false, false, rcode));
}

/*
 * An opcode apex does not implement: NOTIMP with the ID and the opcode
 * copied and QR set, and no other flag of the query.  RD and CD mean
 * something in a QUERY only (RFC 1035 4.1.1, RFC 4035 3.2.2); BIND 9
 * clears them, and compliance tests count an echo against the server.
 * Kept out of apex_answer_from(): inlined, it cost every query 3
 * instructions (tests/perf).
 */
__attribute__((cold, noinline)) static size_t answer_unknown_opcode(const apex_query_t *q,
								    const apex_answer_config_t *cfg,
								    apex_transport_t transport,
								    uint8_t *out, size_t capacity,
								    apex_answer_info_t *info)
{
	uint16_t flags = APEX_FLAG_QR | (q->flags & 0x7800u) | APEX_RCODE_NOTIMP;

	return write_error_flags(q, cfg, transport, APEX_RCODE_NOTIMP, EDE_NONE, out, capacity,
				 info, flags);
}

/* ------------------------------------------------------------ CHAOS */

static size_t answer_chaos(const apex_query_t *q, const apex_answer_config_t *cfg,
			   apex_transport_t transport, uint8_t *out, size_t capacity,
			   apex_answer_info_t *info)
{
	static const struct {
		const uint8_t *name;
		bool version;
	} names[] = {
		{ (const uint8_t *)"\002id\006server", false },
		{ (const uint8_t *)"\010hostname\004bind", false },
		{ (const uint8_t *)"\007version\004bind", true },
		{ (const uint8_t *)"\007version\006server", true },
	};
	const char *text = NULL;
	if (q->qtype == APEX_TYPE_TXT || q->qtype == APEX_TYPE_ANY) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (apex_name_equal(q->qname, names[i].name))
				text = names[i].version ? cfg->chaos_version : cfg->chaos_id;
		}
	}
	if (text == NULL)
		return write_error(q, cfg, transport, APEX_RCODE_REFUSED, EDE_NOT_AUTHORITATIVE,
				   out, capacity, info);

	uint8_t rdata[256];
	size_t len = strlen(text);
	if (len > 255)
		len = 255;
	rdata[0] = (uint8_t)len;
	memcpy(rdata + 1, text, len);

	apex_writer_t w;
	size_t limit = response_limit(q, cfg, transport, capacity);
	size_t reserve = reserve_opt(q, cfg, EDE_NONE);
	apex_writer_init(&w, out, limit > reserve ? limit - reserve : 0, limit);
	bool tc = apex_writer_question(&w, q->qname, NULL, q->qtype, q->qclass) != APEX_OK ||
		  apex_writer_rr(&w, APEX_SECTION_ANSWER, q->qname, APEX_TYPE_TXT, APEX_CLASS_CH, 0,
				 rdata, len + 1) != APEX_OK;
	write_opt(&w, q, cfg, APEX_RCODE_NOERROR, EDE_NONE, NULL);
	if (info != NULL) {
		info->rcode = APEX_RCODE_NOERROR;
		info->truncated = tc;
	}
	return apex_writer_finish(&w, q->id, response_flags(q, true, tc, APEX_RCODE_NOERROR));
}

/* ------------------------------------------------------------ IXFR over UDP */

/*
 * RFC 1995 section 2: an IXFR over UDP is answered with the zone's SOA
 * alone when the client's serial is not older; otherwise with an empty
 * answer with TC set, so that the client asks over TCP (where transfers are
 * checked and served, src/apexd/transfers/xfr_out.c).  Only at a zone's apex.
 */
static size_t answer_ixfr_udp(const apex_zoneset_t *zones, apex_query_t *q,
			      const apex_answer_config_t *cfg, const apex_answer_client_t *client,
			      uint8_t *out, size_t capacity, apex_answer_info_t *info)
{
	apex_lookup_name_t k;
	apex_writer_t w;

	apex_lookup_name_init(&k, q->qname);
	const apex_zone_t *zone = apex_zoneset_find_name(zones, &k, k.labels);
	if (__builtin_expect(zones->unserved_count != 0, 0) &&
	    apex_zoneset_unserved(zones, &k, k.labels, zone != NULL ? zone->origin_labels : -1))
		return write_error(q, cfg, APEX_TRANSPORT_UDP, APEX_RCODE_SERVFAIL, EDE_NOT_LOADED,
				   out, capacity, info);
	if (zone == NULL || zone->origin_labels != k.labels)
		return write_error(q, cfg, APEX_TRANSPORT_UDP, APEX_RCODE_REFUSED,
				   EDE_NOT_AUTHORITATIVE, out, capacity, info);
	if (info != NULL)
		info->zone_slot = zone->stats_slot;
	if (atomic_load_explicit(&zone->expired, memory_order_relaxed))
		return write_error(q, cfg, APEX_TRANSPORT_UDP, APEX_RCODE_SERVFAIL, EDE_NOT_READY,
				   out, capacity, info);
	if (!q->ixfr_soa)
		return write_error(q, cfg, APEX_TRANSPORT_UDP, APEX_RCODE_FORMERR, EDE_NONE, out,
				   capacity, info);
	size_t limit = response_limit(q, cfg, APEX_TRANSPORT_UDP, capacity);
	size_t reserve = reserve_opt(q, cfg, EDE_NONE);
	if (q->expire)
		reserve += note_expire(q, zone, client);
	apex_writer_init(&w, out, limit > reserve ? limit - reserve : 0, limit);
	w.zone = zone;
	bool tc = apex_writer_question(&w, q->qname, zone->apex, q->qtype, q->qclass) != APEX_OK ||
		  apex_serial_newer(zone->serial, q->ixfr_serial) ||
		  apex_writer_rrset(&w, APEX_SECTION_ANSWER, q->qname, zone->apex, zone->soa,
				    zone->soa->ttl) != APEX_OK;
	write_opt(&w, q, cfg, APEX_RCODE_NOERROR, EDE_NONE, zone);
	if (info != NULL) {
		info->rcode = APEX_RCODE_NOERROR;
		info->truncated = tc;
	}
	return apex_writer_finish(&w, q->id, response_flags(q, true, tc, APEX_RCODE_NOERROR));
}

/* ------------------------------------------------------------ entry */

/* The answer's state before the lookup of q in zone. */
static inline void ctx_init(ctx_t *c, const apex_query_t *q, const apex_zone_t *zone,
			    apex_transport_t transport)
{
	c->q = q;
	c->zone = zone;
	c->qname_node = NULL;
	c->fragment = NULL;
	c->fragment_items = 0;
	c->fragment_whole = false;
	c->tail_count = 0;
	c->transport = transport;
	c->rcode = APEX_RCODE_NOERROR;
	c->aa = q->qclass == APEX_CLASS_IN;
	c->dnssec_ok = q->dnssec_ok;
	c->answer_count = c->authority_count = c->additional_count = 0;
	c->synth_count = 0;
}

/* The zone to answer from; DS at a zone apex goes to the parent zone if served. */
static inline const apex_zone_t *select_zone_of(const apex_zoneset_t *zones, const apex_query_t *q,
						const apex_lookup_name_t *k,
						const apex_zone_t *zone)
{
	if (zone != NULL && q->qtype == APEX_TYPE_DS && k->labels > 0 &&
	    zone->origin_labels == k->labels) {
		const apex_zone_t *parent = apex_zoneset_find_name(zones, k, k->labels - 1);
		if (parent != NULL)
			zone = parent;
	}
	return zone;
}

/* The zone to answer from, as above, the name found in none yet. */
static const apex_zone_t *select_zone(const apex_zoneset_t *zones, const apex_query_t *q,
				      const apex_lookup_name_t *k)
{
	return select_zone_of(zones, q, k, apex_zoneset_find_name(zones, k, k->labels));
}

/*
 * Why `zone`, the one select_zone() chose (NULL: none), cannot answer
 * the question, or EDE_NONE if it can: the name lies in a configured
 * zone that is not served (deeper than `zone`; a DS query at such a
 * zone's apex belongs to its parent if that is served, as select_zone()
 * has it), in no zone, or in an expired one.
 */
static inline ede_t zone_unusable(const apex_zoneset_t *zones, const apex_query_t *q,
				  const apex_lookup_name_t *k, const apex_zone_t *zone)
{
	if (__builtin_expect(zones->unserved_count != 0, 0)) {
		int labels = k->labels;
		if (q->qtype == APEX_TYPE_DS && zone != NULL && labels > 0)
			labels--;
		if (apex_zoneset_unserved(zones, k, labels,
					  zone != NULL ? zone->origin_labels : -1))
			return EDE_NOT_LOADED;
	}
	if (zone == NULL)
		return EDE_NOT_AUTHORITATIVE;
	if (__builtin_expect(atomic_load_explicit(&zone->expired, memory_order_relaxed), 0))
		return EDE_NOT_READY;
	return EDE_NONE;
}

/*
 * RFC 7873 5.2: verify the query's server cookie, if any, and prepare
 * the COOKIE option of the response: its client cookie and a fresh
 * server cookie.  Returns the apex_cookie_status_t.
 */
static uint8_t prepare_cookie(apex_query_t *q, const apex_answer_config_t *cfg,
			      const apex_answer_client_t *client)
{
	uint8_t status = APEX_COOKIE_CLIENT_ONLY;

	if (!q->cookie || !q->edns || cfg->cookie_secret == NULL || client == NULL)
		return APEX_COOKIE_NONE;
	if (q->cookie_server_size > 0)
		status = apex_cookie_verify(cfg->cookie_secret, q->cookie_client, q->cookie_server,
					    q->cookie_server_size, client->addr, client->addr_size,
					    client->now);
	/* one made with the staging secret is as good (a rotation under way) */
	if (status == APEX_COOKIE_INVALID && cfg->cookie_staging_secret != NULL)
		status = apex_cookie_verify(cfg->cookie_staging_secret, q->cookie_client,
					    q->cookie_server, q->cookie_server_size, client->addr,
					    client->addr_size, client->now);
	memcpy(q->cookie_reply, q->cookie_client, APEX_COOKIE_CLIENT_SIZE);
	apex_cookie_make(cfg->cookie_secret, q->cookie_client, client->addr, client->addr_size,
			 client->now, q->cookie_reply + APEX_COOKIE_CLIENT_SIZE);
	q->cookie_reply_size = APEX_COOKIE_CLIENT_SIZE + APEX_COOKIE_SERVER_SIZE;
	return status;
}

/* What the caller learns of q before it is answered. */
static inline void info_init(apex_answer_info_t *info, const apex_query_t *q, uint8_t cookie)
{
	info->qtype = q->has_question ? q->qtype : 0;
	info->rcode = 0;
	info->truncated = false;
	info->dropped = false;
	info->cookie = cookie;
	info->tsig = q->tsig;
	info->edns = q->edns;
	info->dnssec_ok = q->edns && q->dnssec_ok;
	info->zone_slot = APEX_ANSWER_NO_ZONE;
}

size_t apex_answer(const apex_zoneset_t *zones, const apex_answer_config_t *cfg,
		   apex_transport_t transport, const uint8_t *query, size_t query_size,
		   uint8_t *out, size_t out_capacity, apex_answer_info_t *info)
{
	return apex_answer_from(zones, cfg, transport, NULL, query, query_size, out, out_capacity,
				info);
}

/* apex_answer_from(), and apex_answer_ahead() when ahead is not NULL:
 * inline into both, so that the first pays nothing for the second. */
static inline __attribute__((always_inline)) size_t
answer(const apex_zoneset_t *zones, const apex_answer_config_t *cfg, apex_transport_t transport,
       const apex_answer_client_t *client, apex_answer_ahead_t *ahead, const uint8_t *query,
       size_t query_size, uint8_t *out, size_t out_capacity, apex_answer_info_t *info)
{
	apex_query_t q;
	apex_parse_result_t parsed = apex_query_parse(query, query_size, &q);
	uint8_t cookie = parsed == APEX_PARSE_OK || parsed == APEX_PARSE_BADVERS
				 ? prepare_cookie(&q, cfg, client)
				 : APEX_COOKIE_NONE;
	if (info != NULL)
		info_init(info, &q, cookie);
	if (parsed == APEX_PARSE_DROP || out_capacity < APEX_MIN_UDP_PAYLOAD) {
		if (info != NULL)
			info->dropped = true;
		return 0;
	}
	switch (parsed) {
	case APEX_PARSE_FORMERR:
		return write_error(&q, cfg, transport, APEX_RCODE_FORMERR, EDE_NONE, out,
				   out_capacity, info);
	case APEX_PARSE_NOTIMP:
		return answer_unknown_opcode(&q, cfg, transport, out, out_capacity, info);
	case APEX_PARSE_BADVERS:
		return write_error(&q, cfg, transport, APEX_RCODE_BADVERS, EDE_NONE, out,
				   out_capacity, info);
	default: break;
	}

	/* RFC 7873 5.2.3 and 5.2.4: a cookie but no valid server cookie, and
	 * the server requires one (UDP only: TCP is proof enough) */
	if (cfg->require_cookie && transport == APEX_TRANSPORT_UDP &&
	    (cookie == APEX_COOKIE_CLIENT_ONLY || cookie == APEX_COOKIE_INVALID))
		return write_error(&q, cfg, transport, APEX_RCODE_BADCOOKIE, EDE_NONE, out,
				   out_capacity, info);
	if (q.qclass == APEX_CLASS_CH)
		return answer_chaos(&q, cfg, transport, out, out_capacity, info);
	if (q.qclass != APEX_CLASS_IN && q.qclass != APEX_CLASS_ANY)
		return write_error(&q, cfg, transport, APEX_RCODE_REFUSED, EDE_NOT_SUPPORTED, out,
				   out_capacity, info);
	if (q.qtype == APEX_TYPE_AXFR && transport == APEX_TRANSPORT_UDP)
		return write_error(&q, cfg, transport, APEX_RCODE_NOTIMP, EDE_NONE, out,
				   out_capacity, info);
	if (q.qtype == APEX_TYPE_IXFR && transport == APEX_TRANSPORT_UDP)
		return answer_ixfr_udp(zones, &q, cfg, client, out, out_capacity, info);
	if (q.qtype == APEX_TYPE_AXFR || q.qtype == APEX_TYPE_IXFR)
		return write_error(&q, cfg, transport, APEX_RCODE_REFUSED, EDE_NONE, out,
				   out_capacity, info);

	/* The name and its zone as the query's lookahead prepared them (the
	 * same name: query/answer_ahead.h), or prepared here. */
	apex_lookup_name_t local;
	apex_lookup_name_t *kp = &local;
	const apex_zone_t *zone;
	if (ahead != NULL && ahead->named) {
		kp = &ahead->name;
		zone = select_zone_of(zones, &q, kp, ahead->zone);
	} else {
		apex_lookup_name_init(kp, q.qname);
		zone = select_zone(zones, &q, kp);
	}
	apex_lookup_name_t *const k = kp;
	ede_t unusable = zone_unusable(zones, &q, k, zone);
	if (info != NULL && zone != NULL)
		info->zone_slot = zone->stats_slot;
	if (__builtin_expect(unusable != EDE_NONE, 0))
		return write_error(&q, cfg, transport,
				   unusable == EDE_NOT_AUTHORITATIVE ? APEX_RCODE_REFUSED
								     : APEX_RCODE_SERVFAIL,
				   unusable, out, out_capacity, info);

	ctx_t c;
	ctx_init(&c, &q, zone, transport);

	const uint8_t *name = q.qname;
	for (int link = 0; link <= APEX_CHAIN_MAX && name != NULL; link++) {
		if (link > 0) {
			apex_lookup_name_init(k, name);
			c.zone = select_zone(zones, &q, k);
			if (c.zone == NULL)
				break; /* the chain leaves what we serve: the client follows it */
		}
		name = resolve(&c, name, k);
	}

	/* Write: answer, authority, additional (required glue first), OPT. */
	apex_writer_t w;
	size_t limit = response_limit(&q, cfg, transport, out_capacity);
	size_t reserve = reserve_opt(&q, cfg, EDE_NONE);
	if (__builtin_expect(q.expire, 0) && c.aa)
		reserve += note_expire(&q, zone, client);
	apex_writer_init(&w, out, limit > reserve ? limit - reserve : 0, limit);
	w.zone = zone; /* the question's zone: qname_node's */
	bool tc = apex_writer_question(&w, q.qname, c.qname_node, q.qtype, q.qclass) != APEX_OK ||
		  write_body(&w, &c);
	write_opt(&w, &q, cfg, c.rcode, EDE_NONE, zone);
	if (info != NULL) {
		info->rcode = c.rcode;
		info->truncated = tc;
	}
	return apex_writer_finish(&w, q.id, response_flags(&q, c.aa, tc, c.rcode));
}

size_t apex_answer_from(const apex_zoneset_t *zones, const apex_answer_config_t *cfg,
			apex_transport_t transport, const apex_answer_client_t *client,
			const uint8_t *query, size_t query_size, uint8_t *out, size_t out_capacity,
			apex_answer_info_t *info)
{
	return answer(zones, cfg, transport, client, NULL, query, query_size, out, out_capacity,
		      info);
}

size_t apex_answer_ahead(const apex_zoneset_t *zones, const apex_answer_config_t *cfg,
			 apex_transport_t transport, const apex_answer_client_t *client,
			 apex_answer_ahead_t *ahead, const uint8_t *query, size_t query_size,
			 uint8_t *out, size_t out_capacity, apex_answer_info_t *info)
{
	return answer(zones, cfg, transport, client, ahead, query, query_size, out, out_capacity,
		      info);
}

size_t apex_answer_badcookie(const apex_answer_config_t *cfg, const apex_answer_client_t *client,
			     const uint8_t *query, size_t query_size, uint8_t *out,
			     size_t out_capacity)
{
	apex_query_t q;

	if (apex_query_parse(query, query_size, &q) != APEX_PARSE_OK ||
	    out_capacity < APEX_MIN_UDP_PAYLOAD ||
	    prepare_cookie(&q, cfg, client) == APEX_COOKIE_NONE)
		return 0;
	return write_error(&q, cfg, APEX_TRANSPORT_UDP, APEX_RCODE_BADCOOKIE, EDE_NONE, out,
			   out_capacity, NULL);
}

/* ------------------------------------------------------------ precomputation */

bool apex_answer_record(const apex_zone_t *zone, apex_record_kind_t kind, const apex_node_t *node,
			const apex_query_t *q, apex_writer_t *w, apex_recorder_t *rec)
{
	ctx_t c; /* its counts set, not its arrays cleared: 3 KB for each referral */
	ctx_init(&c, q, zone, APEX_TRANSPORT_UDP);
	c.qname_node = kind == APEX_RECORD_REFERRAL ? node : zone->apex;
	c.aa = true;
	switch (kind) {
	case APEX_RECORD_REFERRAL: referral(&c, node); break;
	case APEX_RECORD_NEGATIVE:
		add_negative_soa(&c);
		if (node != NULL)
			add_nsec_of(&c, node->id);
		break;
	case APEX_RECORD_ANSWER: {
		apex_lookup_t lk;
		memset(&lk, 0, sizeof(lk));
		lk.node = lk.encloser = node;
		if (answer_node(&c, node, zone->origin, &lk, false) != NULL ||
		    c.answer_count != 1 || c.authority_count != 0 || c.fragment != NULL ||
		    c.rcode != APEX_RCODE_NOERROR)
			return false;
		break;
	}
	}
	bool tc = write_sections(w, &c, 0, rec);
	return !tc && (kind == APEX_RECORD_ANSWER) == (c.answer_count > 0);
}
