/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Precomputed referrals and negative answers (see precompute.h).
 *
 * A fragment is recorded by writing the response to a query for the
 * base name (the cut, or the apex for the negative SOA) with the engine
 * itself (query/answer_record.h), with the writer's log on: where the
 * compression pointers and the names are.  The bytes after the question
 * are kept with that log, which is what apex_writer_fragment() needs to
 * replay them after a question for any name below the base.
 */
#include "query/precompute.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer_record.h"
#include "query/parse.h"
#include "query/writer.h"
#include "util/arena.h"
#include "util/error.h"

#define FRAGMENT_SIZE_MAX 8192

/* Scratch space of one recording (too large for a thread's stack). */
typedef struct recording {
	uint8_t buf[FRAGMENT_SIZE_MAX + 512];
	apex_writer_t w;
	apex_writer_log_t log;
	apex_recorder_t rec;
	const uint8_t *labels[APEX_WRITER_LOG_MAX];
	unsigned label_count;
	size_t body;             /* offset of the first byte after the question */
	unsigned entries_before; /* compression entries of the question */
} recording_t;

/* What one recording writes (apex_answer_record()): the question is for
 * the cut's name in a referral, for the apex's otherwise. */
typedef struct what {
	apex_record_kind_t kind;
	const apex_node_t *node;
	uint16_t qtype;
	bool dnssec_ok;
} what_t;

static const apex_node_t *base_of(const apex_zone_t *zone, const what_t *what)
{
	return what->kind == APEX_RECORD_REFERRAL ? what->node : zone->apex;
}

/*
 * Write the records that follow the question of `what`, as the query
 * path writes them. Returns false if they cannot be a fragment.
 */
static bool record_sections(apex_zone_t *zone, const what_t *what, recording_t *sc)
{
	const apex_node_t *base_node = base_of(zone, what);
	apex_query_t q;
	memset(&q, 0, sizeof(q));
	memcpy(q.qname, base_node->name, base_node->name_size);
	q.qname_size = base_node->name_size;
	q.qtype = what->qtype;
	q.qclass = APEX_CLASS_IN;
	q.has_question = true;
	q.edns = true;
	q.dnssec_ok = what->dnssec_ok;

	apex_writer_init(&sc->w, sc->buf, sizeof(sc->buf), sizeof(sc->buf));
	sc->w.zone = zone;
	if (apex_writer_question(&sc->w, q.qname, base_node, q.qtype, q.qclass) != APEX_OK)
		return false;
	apex_writer_remember_question(&sc->w);
	sc->body = sc->w.pos;
	sc->entries_before = sc->w.compress_count;
	/* the counts alone: the arrays are written before they are read,
	 * and clearing 7 KB for each of a zone's referrals was a tenth of a
	 * small zone's precomputation */
	sc->log.pointer_count = 0;
	sc->log.name_count = 0;
	sc->log.overflow = false;
	sc->rec.counted = 0;
	sc->rec.count = 0;
	sc->rec.overflow = false;
	sc->rec.body = sc->body;
	sc->w.log = &sc->log;
	if (!apex_answer_record(zone, what->kind, what->node, &q, &sc->w, &sc->rec))
		return false;
	size_t size = sc->w.pos - sc->body;
	return !sc->log.overflow && !sc->rec.overflow && sc->rec.count > 0 &&
	       size <= FRAGMENT_SIZE_MAX && sc->w.compress_count < APEX_COMPRESS_MAX;
}

/* Additional units may be left out when they do not fit, so no pointer
 * after the first of them may point into them. */
static bool additional_units_detachable(const recording_t *sc)
{
	size_t end = sc->w.pos;
	size_t additional = end;
	for (unsigned u = 0; u < sc->rec.count; u++)
		if (sc->rec.units[u].section == APEX_SECTION_ADDITIONAL) {
			additional = sc->body + (u > 0 ? sc->rec.units[u - 1].end : 0);
			break;
		}
	for (unsigned i = 0; i < sc->log.pointer_count; i++) {
		size_t at = sc->log.pointers[i];
		if (at >= additional && (apex_read_u16(sc->buf + at) & 0x3FFFu) >= additional)
			return false;
	}
	return true;
}

/* The label just below the base of every name of the fragment below it
 * (those logged from names_from on), each once (apex_writer_fragment()
 * checks the query name against them). */
static void collect_labels(recording_t *sc, const apex_node_t *base_node, unsigned names_from)
{
	int base_labels = base_node->labels;

	sc->label_count = 0;
	for (unsigned i = names_from; i < sc->log.name_count; i++) {
		const uint8_t *name = sc->log.names[i];
		int below = apex_name_labels(name) - base_labels;
		if (below <= 0)
			continue;
		const uint8_t *label = name;
		for (int k = 1; k < below; k++)
			label = apex_name_parent(label);
		if (!apex_name_equal(apex_name_parent(label), base_node->name))
			continue;
		bool seen = false;
		for (unsigned k = 0; k < sc->label_count && !seen; k++)
			seen = sc->labels[k][0] == label[0] &&
			       apex_name_equal(sc->labels[k],
					       label); /* compares the first label on */
		if (!seen)
			sc->labels[sc->label_count++] = label;
	}
}

/* The compression targets the fragment's names added, for fragments
 * that more records may follow. */
static const apex_compress_entry_t *copy_targets(apex_arena_t *arena, const recording_t *sc,
						 unsigned entries)
{
	apex_compress_entry_t *copy = apex_arena_alloc(arena, (entries + 1) * sizeof(*copy));
	if (copy == NULL)
		return NULL;
	for (unsigned i = 0; i < entries; i++) {
		copy[i] = sc->w.compress[sc->entries_before + i];
		copy[i].offset = (uint16_t)(copy[i].offset - sc->body);
	}
	return copy;
}

/* Where the units from `first` on start: offset in the body, pointer and
 * compression entry indices. */
typedef struct kept_from {
	size_t offset;
	unsigned pointers;
	unsigned entries;
} kept_from_t;

static kept_from_t kept_from(const recording_t *sc, unsigned first)
{
	if (first == 0)
		return (kept_from_t){ 0, 0, sc->entries_before };
	const apex_fragment_unit_t *before = &sc->rec.units[first - 1];
	return (kept_from_t){ before->end, before->pointers_end, sc->rec.entries_end[first - 1] };
}

/*
 * The recording's units from `first` on as a fragment in the zone's
 * arena; NULL if out of memory.  Its pointers keep the values they had
 * in the recording (the message offsets after a question for the base),
 * so the units after the first are a tail: valid only right after the
 * fragment of the units before them (apex_writer_fragment_tails()).
 */
static const apex_fragment_t *keep_fragment(apex_arena_t *arena, const recording_t *sc,
					    const apex_node_t *base_node, bool targets,
					    unsigned first)
{
	kept_from_t from = kept_from(sc, first);
	size_t start = sc->body + from.offset;
	size_t size = sc->w.pos - start;
	unsigned unit_count = sc->rec.count - first;
	unsigned pointer_count = sc->log.pointer_count - from.pointers;
	/* One allocation, in the order of the members' alignments (a zone of
	 * many small fragments, as a TLD's referrals are, pays the arena's
	 * alignment once a fragment). */
	_Static_assert(sizeof(apex_fragment_t) % _Alignof(const uint8_t *) == 0 &&
			       _Alignof(apex_fragment_unit_t) <= _Alignof(uint16_t),
		       "a fragment's parts are laid out back to back");
	size_t need = sizeof(apex_fragment_t) + sc->label_count * sizeof(const uint8_t *) +
		      unit_count * sizeof(apex_fragment_unit_t) + pointer_count * sizeof(uint16_t) +
		      size;
	apex_fragment_t *f = apex_arena_alloc(arena, need);
	if (f == NULL)
		return NULL;
	memset(f, 0, sizeof(*f));
	const uint8_t **labels = (const uint8_t **)(f + 1);
	apex_fragment_unit_t *units = (apex_fragment_unit_t *)(labels + sc->label_count);
	uint16_t *pointers = (uint16_t *)(units + unit_count);
	uint8_t *bytes = (uint8_t *)(pointers + pointer_count);
	memcpy(bytes, sc->buf + start, size);
	f->relocatable = true;
	for (unsigned u = 0; u < unit_count; u++) {
		units[u] = sc->rec.units[first + u];
		units[u].end = (uint16_t)(units[u].end - from.offset);
		units[u].pointers_end = (uint16_t)(units[u].pointers_end - from.pointers);
	}
	for (unsigned i = 0; i < pointer_count; i++) {
		size_t at = sc->log.pointers[from.pointers + i];
		pointers[i] = (uint16_t)(at - start);
		/* A pointer into the fragment itself moves with it. */
		if ((apex_read_u16(sc->buf + at) & 0x3FFFu) >= start)
			f->relocatable = false;
	}
	memcpy(labels, sc->labels, sc->label_count * sizeof(*labels));
	f->base = base_node->name;
	f->base_size = base_node->name_size;
	f->base_labels = base_node->labels;
	f->entries = (uint8_t)(sc->w.compress_count - from.entries);
	f->size = (uint16_t)size;
	f->bytes = bytes;
	for (unsigned u = 0; u < unit_count; u++)
		f->records[units[u].section] += units[u].records;
	f->pointer_count = (uint16_t)pointer_count;
	f->unit_count = (uint16_t)unit_count;
	f->units = units;
	f->pointers = pointers;
	f->label_count = (uint16_t)sc->label_count;
	f->labels = labels;
	if (targets) {
		f->targets = copy_targets(arena, sc, f->entries);
		if (f->targets == NULL)
			return NULL;
	}
	return f;
}

/*
 * Whether the recording (its labels collected) is fragment f byte for
 * byte, with the same pointers, units and labels: the answer with DO is
 * often the one without (an unsigned zone), and is then kept once.
 */
static bool recorded_as(const recording_t *sc, const apex_fragment_t *f)
{
	size_t size = sc->w.pos - sc->body;
	if (f == NULL || f->targets != NULL || f->size != size ||
	    f->pointer_count != sc->log.pointer_count || f->unit_count != sc->rec.count ||
	    f->label_count != sc->label_count ||
	    f->entries != sc->w.compress_count - sc->entries_before ||
	    memcmp(f->bytes, sc->buf + sc->body, size) != 0 ||
	    memcmp(f->units, sc->rec.units, f->unit_count * sizeof(*f->units)) != 0 ||
	    memcmp(f->labels, sc->labels, f->label_count * sizeof(*f->labels)) != 0)
		return false;
	for (unsigned i = 0; i < f->pointer_count; i++)
		if (f->pointers[i] != sc->log.pointers[i] - sc->body)
			return false;
	return true;
}

/*
 * Record the records of `what` into *out; *out is NULL when they cannot
 * be replayed for every name below the base (see apex_writer_fragment()):
 * the query path then writes them itself.  targets: keep the compression
 * targets (more records may follow).  same_as: a fragment *out is when
 * the recording is byte for byte that one, or NULL.
 * Returns 0 or APEX_ENOMEM.
 */
static int record_fragment(apex_zone_t *zone, const what_t *what, bool targets,
			   const apex_fragment_t *same_as, recording_t *sc,
			   const apex_fragment_t **out)
{
	const apex_node_t *base_node = base_of(zone, what);

	*out = NULL;
	if (!record_sections(zone, what, sc) || !additional_units_detachable(sc))
		return APEX_OK;
	collect_labels(sc, base_node, 0);
	if (!targets && recorded_as(sc, same_as)) {
		*out = same_as;
		return APEX_OK;
	}
	*out = keep_fragment(zone->arena, sc, base_node, targets, 0);
	return *out != NULL ? APEX_OK : APEX_ENOMEM;
}

/*
 * The NSEC RRset of node (and its RRSIGs) as it follows the negative SOA
 * with DO after a question for a name below the apex: a tail of
 * zone->negative[1] into *out, or NULL if it cannot be one.
 */
static int record_nsec_tail(apex_zone_t *zone, const apex_node_t *node, recording_t *sc,
			    const apex_fragment_t **out)
{
	*out = NULL;
	what_t what = { APEX_RECORD_NEGATIVE, node, APEX_TYPE_A, true };
	if (!record_sections(zone, &what, sc) || sc->rec.count != 2 ||
	    sc->rec.units[1].section != APEX_SECTION_AUTHORITY)
		return APEX_OK;
	collect_labels(sc, zone->apex, sc->rec.names_end[0]);
	*out = keep_fragment(zone->arena, sc, zone->apex, false, 1);
	return *out != NULL ? APEX_OK : APEX_ENOMEM;
}

int apex_precompute_negative(apex_zone_t *zone)
{
	recording_t *sc = malloc(sizeof(*sc));
	if (sc == NULL)
		return APEX_ENOMEM;
	/* With DO, NSEC/NSEC3 proofs follow the SOA: keep its targets. */
	what_t without = { APEX_RECORD_NEGATIVE, NULL, APEX_TYPE_A, false };
	what_t with = { APEX_RECORD_NEGATIVE, NULL, APEX_TYPE_A, true };
	int rc = record_fragment(zone, &without, false, NULL, sc, &zone->negative[0]);
	if (rc == APEX_OK)
		rc = record_fragment(zone, &with, true, NULL, sc, &zone->negative[1]);
	free(sc);
	return rc;
}

int apex_precompute_referrals(apex_zone_t *zone, apex_referral_t *referrals, size_t count)
{
	recording_t *sc = malloc(sizeof(*sc));
	int rc = sc != NULL ? APEX_OK : APEX_ENOMEM;

	for (size_t i = 0; i < count && rc == APEX_OK; i++) {
		apex_referral_t *r = &referrals[i];
		what_t without = { APEX_RECORD_REFERRAL, r->cut, APEX_TYPE_A, false };
		what_t with = { APEX_RECORD_REFERRAL, r->cut, APEX_TYPE_A, true };
		rc = record_fragment(zone, &without, false, NULL, sc, &r->fragment[0]);
		if (rc == APEX_OK)
			rc = record_fragment(zone, &with, false, r->fragment[0], sc,
					     &r->fragment[1]);
	}
	free(sc);
	return rc;
}

/* A referral comes from the highest cut above the name: only those. */
static bool highest_cut(const apex_node_t *node)
{
	return (node->flags & APEX_NODE_DELEGATION) && node->cut == node->id;
}

/* Referrals by the address of their cut. */
static int by_cut(const void *a, const void *b)
{
	const apex_node_t *x = ((const apex_referral_t *)a)->cut;
	const apex_node_t *y = ((const apex_referral_t *)b)->cut;
	return (x > y) - (x < y);
}

/* zone->referrals: every highest cut, sorted by the cut's address, which
 * the query path's binary search relies on (ids, and so addresses, need
 * not follow the canonical order).  The count stops at one past the
 * limit: a zone with more cuts (a TLD: most of its names) records none,
 * and a version derived from it is not walked whole to find that out
 * again. */
static int precompute_all_referrals(apex_zone_t *zone)
{
	size_t cuts = 0;
	for (size_t i = 0; i < zone->node_count && cuts <= APEX_PRECOMPUTED_CUTS_MAX; i++)
		cuts += highest_cut(apex_zone_node_at(zone, i));
	if (cuts == 0 || cuts > APEX_PRECOMPUTED_CUTS_MAX)
		return APEX_OK;
	apex_referral_t *referrals = apex_arena_calloc(zone->arena, cuts, sizeof(*referrals));
	if (referrals == NULL)
		return APEX_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < zone->node_count; i++)
		if (highest_cut(apex_zone_node_at(zone, i)))
			referrals[n++].cut = apex_zone_node_at(zone, i);
	qsort(referrals, n, sizeof(*referrals), by_cut);
	int rc = apex_precompute_referrals(zone, referrals, n);
	zone->referrals = referrals;
	zone->referral_count = n;
	zone->referral_index = NULL;
	if (rc == APEX_OK && zone->id_count <= APEX_REFERRAL_INDEX_IDS_MAX) {
		uint16_t *index = apex_arena_calloc(zone->arena, zone->id_count, sizeof(*index));
		if (index == NULL)
			return APEX_ENOMEM;
		for (size_t i = 0; i < n; i++)
			index[referrals[i].cut->id] = (uint16_t)(i + 1);
		zone->referral_index = index;
	}
	return rc;
}

/* The types asked for at an apex often enough to keep their answers:
 * NS (priming, resolvers checking delegations), SOA, DNSKEY (validators). */
static bool asked_at_apex(uint16_t type)
{
	return type == APEX_TYPE_NS || type == APEX_TYPE_SOA || type == APEX_TYPE_DNSKEY;
}

int apex_precompute_apex_answers(apex_zone_t *zone)
{
	const apex_node_t *apex = zone->apex;
	zone->apex_answers[0] = zone->apex_answers[1] = NULL;
	if (apex->rrset_count == 0)
		return APEX_OK;
	recording_t *sc = malloc(sizeof(*sc));
	const apex_fragment_t **answers[2];
	for (int d = 0; d < 2; d++)
		answers[d] = apex_arena_calloc(zone->arena, apex->rrset_count, sizeof(**answers));
	int rc = sc != NULL && answers[0] != NULL && answers[1] != NULL ? APEX_OK : APEX_ENOMEM;
	for (unsigned i = 0; i < apex->rrset_count && rc == APEX_OK; i++) {
		if (!asked_at_apex(apex_node_rrsets(zone, apex)[i].type))
			continue;
		what_t without = { APEX_RECORD_ANSWER, apex, apex_node_rrsets(zone, apex)[i].type,
				   false };
		what_t with = { APEX_RECORD_ANSWER, apex, apex_node_rrsets(zone, apex)[i].type,
				true };
		rc = record_fragment(zone, &without, false, NULL, sc, &answers[0][i]);
		if (rc == APEX_OK)
			rc = record_fragment(zone, &with, false, answers[0][i], sc, &answers[1][i]);
	}
	free(sc);
	if (rc == APEX_OK) {
		zone->apex_answers[0] = answers[0];
		zone->apex_answers[1] = answers[1];
	}
	return rc;
}

/* The nodes with an NSEC RRset, up to one past the limit. */
static size_t count_nsec_owners(const apex_zone_t *zone)
{
	size_t n = 0;
	for (size_t i = 0; i < zone->node_count && n <= APEX_PRECOMPUTED_NSEC_MAX; i++)
		n += apex_node_rrset(zone, apex_zone_node_at(zone, i), APEX_TYPE_NSEC) != NULL;
	return n;
}

int apex_precompute_nsec_tails(apex_zone_t *zone)
{
	zone->nsec_tails = NULL;
	if (zone->dnssec != APEX_DNSSEC_NSEC || zone->negative[1] == NULL ||
	    (zone->base != NULL && zone->base->nsec_tails == NULL) ||
	    count_nsec_owners(zone) > APEX_PRECOMPUTED_NSEC_MAX)
		return APEX_OK;
	const apex_fragment_t **tails =
		apex_arena_calloc(zone->arena, zone->id_count, sizeof(*tails));
	recording_t *sc = malloc(sizeof(*sc));
	int rc = tails != NULL && sc != NULL ? APEX_OK : APEX_ENOMEM;
	for (size_t i = 0; i < zone->node_count && rc == APEX_OK; i++) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		if (apex_node_rrset(zone, node, APEX_TYPE_NSEC) != NULL)
			rc = record_nsec_tail(zone, node, sc, &tails[node->id]);
	}
	free(sc);
	if (rc == APEX_OK)
		zone->nsec_tails = tails;
	return rc;
}

int apex_precompute(apex_zone_t *zone)
{
	struct timespec start, end;

	clock_gettime(CLOCK_MONOTONIC, &start);
	zone->referrals = NULL;
	zone->referral_count = 0;
	zone->referral_index = NULL;
	zone->negative[0] = zone->negative[1] = NULL;
	zone->nsec_tails = NULL;
	zone->apex_answers[0] = zone->apex_answers[1] = NULL;
	int rc = apex_precompute_negative(zone);
	if (rc == APEX_OK)
		rc = apex_precompute_apex_answers(zone);
	/* A version derived with the cuts of its base (zone/derive.h) has
	 * none to record if the base recorded none (too many, or none). */
	if (rc == APEX_OK &&
	    (zone->base == NULL || !zone->cuts_as_base || zone->base->referral_count > 0))
		rc = precompute_all_referrals(zone);
	if (rc == APEX_OK)
		rc = apex_precompute_nsec_tails(zone);
	apex_arena_trim(zone->arena); /* the version is complete */
	zone->memory = apex_arena_footprint(zone->arena) + (zone->base ? zone->base->memory : 0);
	zone->chain_memory =
		zone->base ? apex_arena_footprint(zone->arena) + zone->base->chain_memory : 0;
	clock_gettime(CLOCK_MONOTONIC, &end);
	zone->load_seconds +=
		(double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
	return rc;
}
