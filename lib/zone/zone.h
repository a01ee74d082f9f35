/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One loaded version of a zone: immutable once published.
 *
 * A version is built by apex_zone_load() (lib/zone/load.h) and
 * finished by apex_zone_build() (lib/zone/build.h), which computes
 * everything a query needs (delegations, glue, additional data,
 * wildcard and empty non-terminal flags, NSEC and NSEC3 links); the
 * query layer then records the responses it precomputes
 * (query/precompute.h).  Once published, nothing in it is ever written
 * again, so any number of threads read it without locks.  Its memory
 * belongs to its arena, and for a version derived from another by an
 * IXFR (zone/derive.h) also to the versions it derives from, which it
 * holds a reference to; it is freed in one step when the last
 * reference is dropped.
 */
#ifndef APEX_ZONE_ZONE_H
#define APEX_ZONE_ZONE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dns/name.h"
#include "dns/name_hash.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/arena.h"
#include "zone/derive_profile.h"
#include "zone/file_digest.h"

struct apex_node;
struct apex_lookup_name; /* zone/lookup_name.h */

/*
 * One RRset.  rdata holds `count` records, each as a 16-bit big-endian
 * RDLENGTH followed by RDATA in uncompressed wire format, ready to copy
 * into a message (names in RDATA keep the case of the zone file).
 * Records are in DNSSEC canonical order and duplicates are removed.
 */
typedef struct apex_rrset {
	uint16_t type;
	uint16_t count; /* records in rdata */
	uint32_t ttl;
	uint32_t rdata_size; /* bytes in rdata */
	const uint8_t *rdata;
	/* RRSIGs at the same owner that cover this type (an RRset of type
	 * RRSIG, its own TTL), or NULL.  Always NULL for glue and other
	 * data below a zone cut, which is never signed. */
	const struct apex_rrset *rrsig;
	/* Additional-section data computed at load time, or NULL:
	 * glue for NS, address records of in-zone MX/SRV/NS targets. */
	const struct apex_additional *additional;
	/* For the types whose RDATA names are compressed in responses (NS,
	 * CNAME, PTR, MX: one name per record; SOA: two), the node (id) of
	 * each name or of its closest ancestor in the zone, in record order;
	 * APEX_NODE_NONE for names outside the zone.  The response writer
	 * takes the hashes of the names' suffixes from these nodes instead
	 * of reading the bytes.  NULL for other types.  (In a version derived
	 * by an IXFR, zone/derive.h, the node of a name added since without
	 * addresses may still be an ancestor farther up, and that of a name
	 * removed since without addresses the removed node, still in the
	 * pages: the writer reads the labels below the node it is given and
	 * compares names, so the answer is the same.) */
	const uint32_t *rdata_nodes;
} apex_rrset_t;

/* Names in the RDATA of one record of type that responses compress and
 * rrset->rdata_nodes has a node for (RFC 1035 section 4.1.4: NS, CNAME,
 * PTR, MX one, SOA two); 0 for the other types. */
static inline unsigned apex_rdata_compressed_names(uint16_t type)
{
	switch (type) {
	case APEX_TYPE_NS:
	case APEX_TYPE_CNAME:
	case APEX_TYPE_PTR:
	case APEX_TYPE_MX: return 1;
	case APEX_TYPE_SOA: return 2;
	default: return 0;
	}
}

/* Address records of one name, for the additional section. */
typedef struct apex_glue {
	const apex_rrset_t *a;    /* NULL if none */
	const apex_rrset_t *aaaa; /* NULL if none */
	uint32_t owner;           /* the target name's node (id) */
	/* RFC 9471: glue of an in-domain name server (at or below the
	 * delegation) must fit, or the response is truncated (TC). */
	bool required;
} apex_glue_t;

typedef struct apex_additional {
	uint16_t count;
	apex_glue_t items[]; /* in the order the targets appear in the RRset */
} apex_additional_t;

/* Node flags */
enum {
	APEX_NODE_APEX = 1 << 0,       /* the zone apex */
	APEX_NODE_DELEGATION = 1 << 1, /* has NS and is not the apex: a zone cut */
	APEX_NODE_OCCLUDED = 1 << 2,   /* strictly below a zone cut or a DNAME: glue or occluded */
	APEX_NODE_EMPTY = 1 << 3,      /* empty non-terminal: no RRsets */
	APEX_NODE_WILDCARD = 1 << 4,   /* first label is '*' */
	APEX_NODE_DNAME = 1 << 5,      /* has a DNAME RRset */
	APEX_NODE_CNAME = 1 << 6,      /* has a CNAME RRset */
};

typedef struct apex_nsec3 apex_nsec3_t;

/* A node's links to other nodes are ids: indices in the version's node
 * pages (apex_zone_node()); this one links to none. */
#define APEX_NODE_NONE UINT32_MAX

/* Nodes per page of a version's nodes (zone->node_pages): 512 nodes of
 * 48 bytes, 24 KiB; and RRsets pointers per page of its RRsets table
 * (zone->rrset_pages): the 512 nodes' of the node page of the same
 * index, 4 KiB. */
#define APEX_NODE_PAGE_BITS 9
#define APEX_NODE_PAGE (1u << APEX_NODE_PAGE_BITS)
/* A derived version's copy of a node page, and every page of RRsets
 * pointers, lies on whole system pages of this size
 * (zone/page_discard.h gives them back). */
#define APEX_NODE_PAGE_ALIGN 4096
#define APEX_RRSETS_PAGE_SIZE (APEX_NODE_PAGE * sizeof(void *))

/*
 * One owner name of the zone.  Empty non-terminals (RFC 4592 section
 * 2.2.2) are nodes too, flagged APEX_NODE_EMPTY, so that the closest
 * encloser of any name is found by exact lookups of its ancestors.
 */
typedef struct apex_node {
	/* Wire format, case as in the zone file, followed by the lookup key
	 * (dns/name.h; apex_node_key()): one pointer for both. */
	const uint8_t *name;
	uint16_t key_size;
	uint8_t name_size;
	uint8_t labels; /* apex_name_labels(name) */
	uint16_t flags; /* APEX_NODE_* */
	uint16_t rrset_count;
	uint32_t hash; /* apex_name_hash() of name (for name compression) */
	uint32_t id;   /* this node's id (see apex_zone_node()) */
	/* Its RRsets are the version's, by id (apex_node_rrsets()). */
	/* Links to other nodes, by id (APEX_NODE_NONE: none), so that a
	 * version derived from another can share the nodes that did not
	 * change.  parent: the nearest ancestor node (the name minus its
	 * first label: empty non-terminals are nodes); none at the apex.
	 * NSEC3 owners, which are not in the name index, have the apex as
	 * parent. */
	uint32_t parent;
	/* The highest zone cut (a DELEGATION node) or DNAME node at or above
	 * this node, excluding the apex; none if none.  For a delegation
	 * node itself this is the node (unless a higher cut occludes it). */
	uint32_t cut;
	uint32_t wildcard_child; /* the node "*.<name>" */
	/* NSEC zones: the node whose NSEC RRset matches this name or, for
	 * names without one (empty non-terminals, glue), covers it: the
	 * nearest node at or before this one in canonical order that has
	 * an NSEC.  None in other zones. */
	uint32_t nsec;
	/* NSEC3 zones: the NSEC3 owner node whose hash matches this name
	 * (none if none, e.g. occluded names or opt-out), and the one whose
	 * NSEC3 covers the hash of "*.<name>" (the wildcard proof when this
	 * node is the closest encloser; never at a delegation, which never
	 * is).  None in other zones. */
	uint32_t nsec3;
	union {
		uint32_t wildcard_nsec3;
		/* NSEC3 zones, at a delegation instead: the NSEC3 owner node
		 * matching or covering the hash of the name itself, which a
		 * referral's opt-out proof (RFC 5155 7.2.7) gives for the
		 * next closer name when its closest provable encloser is the
		 * delegation's parent (every unsigned delegation of a TLD):
		 * found once at load, not hashed and searched per query. */
		uint32_t own_nsec3;
		/* NSEC zones: the node whose NSEC covers (or matches)
		 * "*.<name>", i.e. the node "*.<name>" would follow in
		 * canonical order (the wildcard proof when this node is the
		 * closest encloser); none if that name would be too long. */
		uint32_t wildcard_nsec;
	};
} apex_node_t;

/* The node's lookup key, which follows its name in memory (an empty
 * non-terminal's name is the end of a name below it, whose key follows,
 * and its key a prefix of that key). */
static inline const uint8_t *apex_node_key(const apex_node_t *node)
{
	return node->name + node->name_size;
}

/* One NSEC3 record owner (hash.zone), kept apart from the name index. */
struct apex_nsec3 {
	uint8_t hash[20]; /* raw hash (base32hex-decoded owner label) */
	uint8_t hash_size;
	uint32_t node; /* id of the owner node holding the NSEC3 RRset (and its RRSIG) */
};

typedef struct apex_nsec3_params {
	uint8_t algorithm; /* 1 = SHA-1 */
	uint8_t flags;
	uint16_t iterations;
	uint8_t salt_size;
	uint8_t salt[255];
} apex_nsec3_params_t;

/* A precomputed part of a response. The query layer defines, records
 * (query/precompute.h) and reads it; the version only holds it, so the
 * zone layer never needs its layout. */
struct apex_fragment;

/* The precomputed referral to one zone cut (query/precompute.h). */
typedef struct apex_referral {
	const apex_node_t *cut;
	const struct apex_fragment *fragment[2]; /* without and with DO; NULL: none */
} apex_referral_t;

typedef enum {
	APEX_DNSSEC_NONE = 0,
	APEX_DNSSEC_NSEC,
	APEX_DNSSEC_NSEC3,
} apex_dnssec_t;

/* An RRSIG set kept beside the index (zone->stray_rrsigs). */
typedef struct apex_stray_rrsig {
	uint32_t node; /* the owner's id */
	const apex_rrset_t *sigs;
} apex_stray_rrsig_t;

/* The memory of the name index (order, key prefixes; its hash table's
 * pages lie in the version's arena, zone/derive_table.c) of a version
 * derived with names added or removed (zone/derive.h), or of its
 * NSEC3 chain and owner list when NSEC3 owners were: shared by the
 * versions derived from it without such changes.  Reference-counted, so
 * that it is freed once no version uses it, however long the chain of
 * versions whose records are shared lives. */
typedef struct apex_index_mem {
	atomic_uint refcount;
	apex_arena_t *arena;
	/* The name index's arrays, in a block its chain keeps for the next
	 * derivation once this is let go (zone/index_block.h), or NULL:
	 * of apex_huge_block_alloc(), of block_size bytes; keeper: that
	 * chain's whole build. */
	void *block;
	size_t block_size;
	struct apex_zone *keeper;
} apex_index_mem_t;

/* A new one (one reference), or NULL. */
apex_index_mem_t *apex_index_mem_new(void);
void apex_index_mem_ref(apex_index_mem_t *mem);
void apex_index_mem_unref(apex_index_mem_t *mem);

/* Pages kept for later copies (zone/page_discard.h): pages[0..count),
 * pointers into a chain's arenas, in a malloc'd array of cap. */
typedef struct apex_kept_pages {
	void **pages;
	uint32_t count, cap;
} apex_kept_pages_t;

typedef struct apex_zone {
	atomic_uint refcount; /* see apex_zone_ref()/apex_zone_unref() */
	/* A secondary zone past its SOA expire time without a successful
	 * refresh (RFC 1034 section 4.3.5): answered SERVFAIL, never
	 * transferred out.  Set once by the transfer thread; a newer version
	 * replaces it.  With expire_at below, the only data of a published
	 * version that changes. */
	atomic_bool expired;
	/* A secondary's: the wall-clock second at which its copy expires
	 * unless refreshed, set by the transfer thread before it publishes a
	 * version and after each successful refresh; answered as the EDNS
	 * EXPIRE option's remaining time (RFC 7314).  0 in a zone loaded from
	 * its file (a primary's, or a secondary's copy before its first
	 * refresh): the option carries the SOA's expire field. */
	_Atomic uint64_t expire_at;
	apex_arena_t *arena; /* owns every byte of this version */

	const uint8_t *origin; /* wire format, case as in the file */
	const uint8_t *origin_key;
	uint16_t origin_key_size;
	uint8_t origin_labels;

	/* Every node, names and NSEC3 owners, by id: use apex_zone_node().
	 * The ids of a version's names need not follow their order.  Nodes
	 * lie in pages of APEX_NODE_PAGE nodes: page p holds the ids from
	 * p * APEX_NODE_PAGE, so that a version derived from another
	 * (derive.h) copies only the pages it changes and shares the rest.
	 * Ids are below id_count. */
	const apex_node_t *const *node_pages;
	size_t id_count;
	/* Every node's RRsets, by id: use apex_node_rrsets().  Sorted by
	 * type, RRSIG excluded (each RRset points at its own RRSIGs); NULL
	 * for a node without any.  Kept apart from the nodes, in pages of
	 * APEX_NODE_PAGE pointers as the nodes are, so that a version
	 * derived from another that only gives a node other RRsets (a
	 * re-pointed delegation, new glue) copies a 4 KiB page of pointers
	 * instead of the node page. */
	const apex_rrset_t *const *const *rrset_pages;
	/* Name index: every node except NSEC3 owners, in canonical order:
	 * order[rank] is the id of the rank-th (apex_zone_id_at()); NULL
	 * when that is rank itself, as a whole build numbers the names.  The
	 * NSEC3 owners are listed in nsec3_owners (all) and nsec3 (the
	 * chain, by hash). */
	const uint32_t *order;
	size_t node_count;       /* ranks */
	const apex_node_t *apex; /* rank 0, id 0 */
	/* The first 8 bytes of each node's key by rank, zero-padded, as
	 * big-endian integers (apex_key_prefix()): the binary search
	 * compares these and reads a key itself only on a tie. */
	const uint64_t *key_prefixes;
	/* Exact-match hash table of the name index (zone/node_slots.h):
	 * node->hash to the node's id; built by apex_node_table_build()
	 * once the hashes are set.  node_table_length slots, the first
	 * node_table_size of them the ones a hash starts at; each holds an
	 * id + 1 in its node_table_mask bits.  In pages of
	 * APEX_NODE_TABLE_PAGE slots (apex_node_table_get()), which derived
	 * versions share where their names do not change them. */
	const uint32_t *const *node_table_pages;
	uint32_t node_table_size;
	uint32_t node_table_length;
	uint32_t node_table_mask;

	const apex_rrset_t *soa; /* never NULL in a loaded zone */
	uint32_t serial;
	uint32_t negative_ttl; /* RFC 2308: min(SOA TTL, SOA MINIMUM) */

	apex_dnssec_t dnssec;
	apex_nsec3_params_t nsec3_params; /* valid if dnssec == APEX_DNSSEC_NSEC3 */
	const apex_nsec3_t *nsec3;        /* sorted by hash */
	size_t nsec3_count;
	/* Every owner that holds NSEC3 records only (and their RRSIGs),
	 * outside the name index, by id in canonical order: the chain's and
	 * any other (a second chain while the salt changes, NSEC3 records
	 * without NSEC3PARAM), which transfers and copies carry like every
	 * other record although no answer uses them. */
	const uint32_t *nsec3_owners;
	size_t nsec3_owner_count;
	/* Bucket v of the hashes' first nsec3_bits bits is
	 * nsec3[nsec3_start[v] .. nsec3_start[v + 1]) (zone/nsec3_index.h);
	 * NULL until apex_nsec3_index_build(). */
	const uint32_t *nsec3_start;
	unsigned nsec3_bits;

	/* Precomputed responses (query/precompute.h, set after the build
	 * and before publication): referrals in node order (sorted by cut
	 * address), and the SOA of a negative answer (without and with DO).
	 * None: 0 and NULL. */
	const apex_referral_t *referrals;
	size_t referral_count;
	/* By node id (< id_count): 1 + the index of the node's referral, 0
	 * if none; NULL in zones of many ids (then searched by address). */
	const uint16_t *referral_index;
	const struct apex_fragment *negative[2]; /* without and with DO */
	/* By node id (< id_count), or NULL: a node's NSEC RRset as a tail of
	 * negative[1] (query/precompute.h), NULL if it has none. */
	const struct apex_fragment *const *nsec_tails;
	/* By index in apex->rrsets, without and with DO, or NULL: the answer
	 * to a query for the apex and that RRset's type (NS, SOA, DNSKEY). */
	const struct apex_fragment *const *apex_answers[2];

	/* RRSIG sets that no answer uses, kept so that transfers, the copy
	 * and the ZONEMD digest carry every record of the zone: those below
	 * a zone cut or at a cut covering another type than DS and NSEC
	 * (signed glue, occluded data), and those covering a type their
	 * owner lacks.  Sorted by node id (apex_zone_stray_rrsigs()). */
	const apex_stray_rrsig_t *stray_rrsigs;
	size_t stray_rrsig_count;

	/* A version derived from another (zone/derive.h) shares the memory
	 * of that one: base holds a reference to it, dropped when this
	 * version is freed; NULL for a version built whole.  derived_depth
	 * counts the versions derived since the last whole build. */
	struct apex_zone *base;
	unsigned derived_depth;
	/* Bytes the arenas of the versions derived since the last whole build
	 * hold, this one's included (0 for a whole build): what a chain keeps
	 * beyond the whole build's, replaced records among it. */
	size_t chain_memory;
	/* Of a derived version: the milliseconds its derivation took, step
	 * by step (zone/derive_profile.h); zero for a whole build. */
	float derive_ms[APEX_DERIVE_STEPS];
	bool cuts_as_base; /* derived without a zone cut added or removed */
	/* Of refcount, the references of versions derived from this one
	 * (their base): whoever waits for the users of a replaced version to
	 * let go (apexd's retire) does not wait for these. */
	atomic_uint base_refs;
	/* Set by apex_zone_release_index(): replaced, and nobody but the
	 * versions derived from it reads it (zone/page_discard.h). */
	atomic_bool released;
	/* Of a whole build: the bytes of node pages its chain of derived
	 * versions gave back to the system (zone/page_discard.h). */
	atomic_size_t pages_discarded;
	/* Of a whole build: the bytes of its own name index and NSEC3
	 * arrays given back once no version of its chain read them
	 * (zone/page_discard.h), and which of them (page_discard.c's GIVEN_BACK_*), under
	 * spare_lock. */
	atomic_size_t arrays_discarded;
	uint8_t arrays_given_back;
	/* Of a whole build: node pages and 4 KiB pages (of RRsets pointers,
	 * or of hash table slots: spare_small) of its chain that no version
	 * reads any more, kept for the copies of the chain's next derivations
	 * (zone/page_discard.h), under spare_lock. */
	pthread_mutex_t spare_lock;
	apex_kept_pages_t spare_nodes, spare_small;
	/* Of a whole build, under spare_lock: the block of a name index its
	 * chain no longer reads, kept for the next derivation's (of
	 * apex_huge_block_alloc(), of spare_index_size bytes;
	 * zone/index_block.h), or NULL. */
	void *spare_index;
	size_t spare_index_size;
	/* Of a whole build, under spare_lock: versions being derived from
	 * its chain (their copies may lie in its kept pages, reachable from
	 * no version yet: zone/chain_sweep.h waits for none). */
	unsigned deriving;
	/* What the chain held beyond its whole build (apex_zone_chain_memory())
	 * when it was last made compact part by part (xfr/version_part.h):
	 * what parts leave that a whole build would not (names and ids of
	 * names removed since the whole build, among names kept), which the
	 * rules that bound a chain leave out; the versions derived from it
	 * inherit it.  0 for a chain never made compact so.  Set by the thread
	 * that made the parts, once the last is published. */
	atomic_size_t compact_held;
	/* A version built again part by part (xfr/version_part.h): once its
	 * base is released, the chain's memory no version reads is given
	 * back (zone/chain_sweep.h). */
	bool sweeps_base;
	/* Where the name index lives when not in arena (one reference), or
	 * NULL.  Dropped with the version, or before by
	 * apex_zone_release_index() once it is replaced and only versions
	 * derived from it hold it, which use an index of their own or hold
	 * their own reference to this memory. */
	_Atomic(apex_index_mem_t *) index_mem;
	/* Where nsec3 and nsec3_owners live when not in a whole build's arena
	 * (one reference), or NULL: memory of their own, made by the
	 * derivation that last changed them.  A version derived without an
	 * NSEC3 owner added or removed shares them, not copies them.  Dropped
	 * with index_mem. */
	_Atomic(apex_index_mem_t *) nsec3_mem;

	/* The zone's statistics slot (zoneset.h): the same for every
	 * version of one origin, set by apex_zonetable_publish(). */
	uint32_t stats_slot;

	/* What zone-status reports. */
	char *file; /* path it was loaded from */
	/* The SHA-256 of that file as loaded, when the load read it alone
	 * (zone/file_digest.h): a reload of the same bytes keeps this
	 * version.  Not valid for a transfer's version or an IXFR's. */
	apex_file_digest_t file_digest;
	size_t record_count; /* RRs in the file, after duplicates were removed */
	size_t memory;       /* bytes held by arena and by base's */
	/* The bytes of RDATA (with the records' lengths) its RRsets read
	 * when it was built whole, all in its arena: what a rebuild in parts
	 * (xfr/version_part.h) borrows from. */
	size_t rdata_bytes;
	struct timespec loaded_at; /* CLOCK_REALTIME when the load finished */
	double load_seconds;
} apex_zone_t;

/* An index block (zone/index_block.h: one a version's index was written
 * in, or one made ahead) kept by root's chain when it keeps none, else
 * freed; NULL: nothing. */
void apex_zone_keep_index_block(apex_zone_t *root, void *block, size_t size);

/* The whole build of zone's chain: the version without a base that zone
 * is derived from in the end (zone itself for a whole build).  Where a
 * chain keeps the memory its versions no longer read. */
static inline apex_zone_t *apex_zone_chain_root(const apex_zone_t *zone)
{
	while (zone->base != NULL)
		zone = zone->base;
	return (apex_zone_t *)zone;
}

/* The stray RRSIG sets of node (zone->stray_rrsigs), *count of them. */
const apex_stray_rrsig_t *apex_zone_stray_rrsigs(const apex_zone_t *zone, const apex_node_t *node,
						 size_t *count);

/* The node with id `id` (not APEX_NODE_NONE). */
static inline const apex_node_t *apex_zone_node_of(const apex_zone_t *zone, uint32_t id)
{
	return &zone->node_pages[id >> APEX_NODE_PAGE_BITS][id & (APEX_NODE_PAGE - 1)];
}

/* The node with id `id`, or NULL for APEX_NODE_NONE. */
static inline const apex_node_t *apex_zone_node(const apex_zone_t *zone, uint32_t id)
{
	return id == APEX_NODE_NONE ? NULL : apex_zone_node_of(zone, id);
}

/* Where version zone keeps the RRsets pointer of node id (its page of
 * pointers): reached by id alone, without reading the node. */
static inline const apex_rrset_t *const *apex_zone_rrsets_slot(const apex_zone_t *zone, uint32_t id)
{
	return &zone->rrset_pages[id >> APEX_NODE_PAGE_BITS][id & (APEX_NODE_PAGE - 1)];
}

/* The RRsets of node, a node of version zone: node->rrset_count of them,
 * sorted by type. */
static inline const apex_rrset_t *apex_node_rrsets(const apex_zone_t *zone, const apex_node_t *node)
{
	return *apex_zone_rrsets_slot(zone, node->id);
}

/* The expire field of the version's SOA, in seconds (RFC 1035 3.3.13). */
static inline uint32_t apex_zone_soa_expire(const apex_zone_t *zone)
{
	const uint8_t *rdata = zone->soa->rdata;

	return apex_read_u32(rdata + 2 + apex_read_u16(rdata) - 8);
}

/*
 * The EDNS EXPIRE value (RFC 7314) of the version at wall-clock second
 * now: a secondary's seconds left before its copy expires (0 once past),
 * or the SOA's expire field for a version loaded from its file.
 */
static inline uint32_t apex_zone_expire_left(const apex_zone_t *zone, uint64_t now)
{
	uint64_t at = atomic_load_explicit(&zone->expire_at, memory_order_relaxed);

	if (at == 0)
		return apex_zone_soa_expire(zone);
	return at > now ? (uint32_t)(at - now) : 0;
}

/* The id of the rank-th node of the name index (rank < node_count). */
static inline uint32_t apex_zone_id_at(const apex_zone_t *zone, size_t rank)
{
	return zone->order != NULL ? zone->order[rank] : (uint32_t)rank;
}

/* The node of the name index at rank (< node_count), in canonical order. */
static inline const apex_node_t *apex_zone_node_at(const apex_zone_t *zone, size_t rank)
{
	return apex_zone_node_of(zone, apex_zone_id_at(zone, rank));
}

/* The i-th (< nsec3_owner_count) owner of NSEC3 records only. */
static inline const apex_node_t *apex_zone_nsec3_owner_at(const apex_zone_t *zone, size_t i)
{
	return apex_zone_node_of(zone, zone->nsec3_owners[i]);
}

/* The id of a node, or APEX_NODE_NONE for NULL. */
static inline uint32_t apex_node_id(const apex_node_t *node)
{
	return node == NULL ? APEX_NODE_NONE : node->id;
}

/* The first 8 bytes of a lookup key, zero-padded, as a big-endian
 * integer: integer order is memcmp() order of the keys, except that
 * equal prefixes say nothing. */
static inline uint64_t apex_key_prefix(const uint8_t *key, size_t key_size)
{
	uint64_t v = 0;
	if (key_size >= 8) {
		for (size_t i = 0; i < 8; i++) /* a big-endian load */
			v = v << 8 | key[i];
		return v;
	}
	for (size_t i = 0; i < 8; i++)
		v = v << 8 | (i < key_size ? key[i] : 0);
	return v;
}

/* Result of apex_zone_lookup(). */
typedef struct apex_lookup {
	/* The node of the name itself, or NULL if the name does not exist
	 * (as a node: an empty non-terminal exists). */
	const apex_node_t *node;
	/* Closest encloser: the node itself on an exact match, else the
	 * deepest existing ancestor (the apex at worst). */
	const apex_node_t *encloser;
	/* On a miss: the node just before the name in canonical order
	 * (never NULL: the apex sorts first).  On a hit: the node itself.
	 * apex_zone_lookup_name() leaves it NULL on a miss: only NSEC
	 * proofs need it (apex_lookup_previous()). */
	const apex_node_t *previous;
	/* The key looked up. */
	const uint8_t *key;
	size_t key_size;
} apex_lookup_t;

/*
 * Look up a name in the zone by its key (apex_name_key()), with
 * label_ends as filled by apex_name_key() and labels the number of
 * labels of the name.  The name must be at or below the origin.
 * Never allocates, never writes shared memory.
 */
void apex_zone_lookup(const apex_zone_t *zone, const uint8_t *key, size_t key_size,
		      const uint16_t *label_ends, int labels, apex_lookup_t *out);

/*
 * The same as apex_zone_lookup() for a name prepared with
 * apex_lookup_name_init(), by hash probes of the name and its
 * ancestors; out->previous is NULL on a miss (apex_lookup_previous()).
 * The query path's lookup.  Never allocates, never writes shared memory.
 */
void apex_zone_lookup_name(const apex_zone_t *zone, const struct apex_lookup_name *name,
			   apex_lookup_t *out);

/* out->previous of a lookup, found by a binary search if the lookup left it NULL. */
const apex_node_t *apex_lookup_previous(const apex_zone_t *zone, const apex_lookup_t *lk);

/* The rank of the first name of the index whose key is >= key
 * (node_count if none). */
size_t apex_zone_rank(const apex_zone_t *zone, const uint8_t *key, size_t key_size);

/* Exact lookup of a key; NULL if absent. */
const apex_node_t *apex_zone_find(const apex_zone_t *zone, const uint8_t *key, size_t key_size);

/* The same, by the node table when the version has one: hash is
 * apex_name_hash() of the name (one probe where apex_zone_find() compares
 * keys down the index). */
const apex_node_t *apex_zone_find_hashed(const apex_zone_t *zone, uint32_t hash, const uint8_t *key,
					 size_t key_size);

/* The RRset of type at node, a node of version zone, or NULL.  Inline:
 * the query path asks it of most nodes it writes (6.4 times a query on
 * the signed TLD of tests/perf), and inlined it costs about 7
 * instructions less a time than as a call. */
static inline const apex_rrset_t *apex_node_rrset(const apex_zone_t *zone, const apex_node_t *node,
						  uint16_t type)
{
	const apex_rrset_t *sets = apex_node_rrsets(zone, node);

	/* RRsets are sorted by type and nodes have few: a linear scan. */
	for (uint16_t i = 0; i < node->rrset_count; i++) {
		if (sets[i].type == type)
			return &sets[i];
		if (sets[i].type > type)
			break;
	}
	return NULL;
}

/*
 * NSEC3 whose hash equals hash (matches) or, failing that, that covers
 * it (the last NSEC3 with a smaller hash, wrapping around to the last
 * one).  *matched says which.  The zone must have NSEC3.
 */
const apex_nsec3_t *apex_zone_nsec3_find(const apex_zone_t *zone, const uint8_t *hash,
					 size_t hash_size, bool *matched);

/* Take one more reference to a version (atomic). */
static inline void apex_zone_ref(apex_zone_t *zone)
{
	atomic_fetch_add_explicit(&zone->refcount, 1, memory_order_relaxed);
}

/* Drop a reference; the last one frees the version. */
void apex_zone_unref(apex_zone_t *zone);

/* Let go of the memory of zone's name index before zone is freed: zone
 * was replaced and nobody looks names up in it any more (its references
 * are the caller's and those of versions derived from it, base_refs).
 * The versions derived from it keep what they share of it. */
void apex_zone_release_index(apex_zone_t *zone);

#endif
