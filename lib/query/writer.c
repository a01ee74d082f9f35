/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "dns/ascii.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/writer.h"
#include "util/error.h"

/* Compression pointers hold 14-bit offsets. */
#define POINTER_LIMIT 0x4000u

void apex_writer_init(apex_writer_t *w, uint8_t *buf, size_t limit, size_t capacity)
{
	w->log = NULL;
	w->zone = NULL;
	w->buf = buf;
	w->capacity = capacity;
	w->limit = limit < capacity ? limit : capacity;
	w->pos = APEX_HEADER_SIZE;
	memset(w->counts, 0, sizeof(w->counts));
	w->compress_count = 0;
	w->pending_name = NULL;
	w->pending_node = NULL;
	w->pending_zone = NULL;
	w->last_owner = NULL;
	w->last_owner_offset = 0;
	w->question = NULL;
	/* compress_slot: see clear_slots_if_empty(). */
}

void apex_writer_rollback(apex_writer_t *w, const apex_writer_mark_t *m)
{
	/* Free the slots of the entries added since, newest first: the table
	 * is then exactly as it was (linear probing allows removing the
	 * most recent insertions). */
	while (w->compress_count > m->compress_count)
		w->compress_slot[w->compress[--w->compress_count].slot] = 0;
	w->pos = m->pos;
	if (w->last_owner != NULL && w->last_owner_offset >= m->pos)
		w->last_owner = NULL;
	for (int i = 0; i < 4; i++)
		w->counts[i] = m->counts[i];
}

/* ------------------------------------------------------------ compression */

static unsigned home_slot(uint32_t hash)
{
	return (hash * 0x9E3779B1u) >> 24; /* 256 slots */
}

_Static_assert(APEX_COMPRESS_SLOTS == 256 && APEX_COMPRESS_MAX < APEX_COMPRESS_SLOTS,
	       "home_slot() and the probing assume 256 slots, never full");

/*
 * The suffixes of one name about to be written: where each starts, its
 * hash, and its zone node where known.  Suffix i has labels - i labels.
 * Hashes are filled as the search for a suffix already written goes
 * from the longest suffix to the shortest: those of the suffixes that
 * are nodes (the given node, its parent, ... up to the zone apex) come
 * from the nodes; only the labels below the node and above the apex
 * are read.
 */
typedef struct suffixes {
	const uint8_t *name;
	int labels;
	uint8_t size;
	int known;               /* hash[i] and node[i] are set for i < known */
	int first_node;          /* index of the given node's name (labels if none) */
	const apex_node_t *next; /* node of suffix `known` while it is in the chain */
	const apex_zone_t *zone; /* where node ids are (apex_writer_t) */
	uint8_t start[APEX_LABELS_MAX];
	uint32_t hash[APEX_LABELS_MAX];
	const apex_node_t *node[APEX_LABELS_MAX];
} suffixes_t;

/* Set up s for name; node, if not NULL, is the node of name or of an
 * ancestor, in zone (NULL: the node is not used). */
static void suffixes_init(suffixes_t *s, const uint8_t *name, const apex_node_t *node,
			  const apex_zone_t *zone)
{
	if (zone == NULL)
		node = NULL; /* its parents could not be followed */
	int labels = 0;
	size_t off = 0;
	while (name[off] != 0) {
		s->start[labels++] = (uint8_t)off;
		off += 1 + (size_t)name[off];
	}
	s->name = name;
	s->labels = labels;
	s->size = (uint8_t)(off + 1);
	s->known = 0;
	s->first_node = labels;
	s->next = NULL;
	s->zone = zone;
	if (node != NULL && node->labels <= labels) {
		s->first_node = labels - node->labels;
		s->next = node;
		/* Below the node: from the node's hash down. */
		uint32_t h = node->hash;
		for (int j = s->first_node - 1; j >= 0; j--) {
			h = apex_name_hash_label(h, name + s->start[j]);
			s->hash[j] = h;
			s->node[j] = NULL;
		}
		s->known = s->first_node;
	}
}

/* Make hash[i] and node[i] known (suffixes are asked for in order). */
static void suffixes_need(suffixes_t *s, int i)
{
	while (s->known <= i) {
		const apex_node_t *n = s->next;
		int k = s->known;
		if (n != NULL && n->labels == s->labels - k) {
			s->hash[k] = n->hash;
			s->node[k] = n;
			s->next = apex_zone_node(s->zone, n->parent);
			s->known++;
			continue;
		}
		/* Past the last node (above the apex, or no node at all): the
		 * rest from the root down, at once. */
		uint32_t h = APEX_NAME_HASH_ROOT;
		for (int j = s->labels - 1; j >= k; j--) {
			h = apex_name_hash_label(h, s->name + s->start[j]);
			s->hash[j] = h;
			s->node[j] = NULL;
		}
		s->known = s->labels;
	}
}

/* The table's slots are valid only while it holds an entry (a rollback
 * to none leaves them all free); the first entry clears them. */
static inline void clear_slots_if_empty(apex_writer_t *w)
{
	if (w->compress_count == 0)
		memset(w->compress_slot, 0, sizeof(w->compress_slot));
}

/* Offset of an earlier occurrence of suffix i, or -1. */
static int find_suffix(const apex_writer_t *w, suffixes_t *s, int i)
{
	suffixes_need(s, i); /* remember() needs it too */
	if (w->compress_count == 0)
		return -1;
	const uint8_t *suffix = s->name + s->start[i];
	uint8_t size = (uint8_t)(s->size - s->start[i]);
	uint32_t hash = s->hash[i];
	const apex_node_t *node = s->node[i];
	for (unsigned slot = home_slot(hash);; slot = (slot + 1) % APEX_COMPRESS_SLOTS) {
		unsigned index = w->compress_slot[slot];
		if (index == 0)
			return -1;
		const apex_compress_entry_t *e = &w->compress[index - 1];
		/* the same bytes first: names in a zone are mostly written in
		 * one case, and memcmp() compares them a word at a time where
		 * apex_name_equal() folds the case of each byte */
		if (e->hash == hash && e->size == size &&
		    ((node != NULL && e->node == node) || e->name == suffix ||
		     memcmp(e->name, suffix, size) == 0 || apex_name_equal(e->name, suffix)))
			return e->offset;
	}
}

/* Remember suffix i (already looked for), written at offset. */
static void remember(apex_writer_t *w, const suffixes_t *s, int i, size_t offset)
{
	if (offset >= POINTER_LIMIT || w->compress_count >= APEX_COMPRESS_MAX)
		return;
	clear_slots_if_empty(w);
	unsigned slot = home_slot(s->hash[i]);
	while (w->compress_slot[slot] != 0)
		slot = (slot + 1) % APEX_COMPRESS_SLOTS;
	apex_compress_entry_t *e = &w->compress[w->compress_count++];
	e->name = s->name + s->start[i];
	e->node = s->node[i];
	e->hash = s->hash[i];
	e->offset = (uint16_t)offset;
	e->size = (uint8_t)(s->size - s->start[i]);
	e->slot = (uint8_t)slot;
	w->compress_slot[slot] = (uint8_t)w->compress_count;
}

static void log_name(apex_writer_log_t *log, const uint8_t *name)
{
	if (log->name_count < APEX_WRITER_LOG_MAX)
		log->names[log->name_count++] = name;
	else
		log->overflow = true;
}

/* A compression pointer to offset at w->pos (space checked by the caller). */
static void write_pointer(apex_writer_t *w, int offset)
{
	if (w->log != NULL) {
		if (w->log->pointer_count < APEX_WRITER_LOG_MAX)
			w->log->pointers[w->log->pointer_count++] = (uint16_t)w->pos;
		else
			w->log->overflow = true;
	}
	apex_write_u16(w->buf + w->pos, (uint16_t)(0xC000u | (unsigned)offset));
	w->pos += 2;
}

/*
 * Write name (at or below node, if not NULL) at w->pos, bounded by
 * w->limit.  The longest suffix already in the message becomes a
 * pointer, and the labels written out become compression targets.
 * *full_offset is set to where the whole name can be pointed at from
 * now on, or -1.  Returns 0 or APEX_ESPACE.
 */
static int write_name(apex_writer_t *w, const uint8_t *name, const apex_node_t *node,
		      int *full_offset)
{
	if (w->pending_name != NULL)
		apex_writer_remember_question(w);
	suffixes_t s;
	suffixes_init(&s, name, node, w->zone);
	int pointer = -1, matched = s.labels; /* first suffix found */
	for (int i = 0; i < s.labels; i++) {
		pointer = find_suffix(w, &s, i);
		if (pointer >= 0) {
			matched = i;
			break;
		}
	}
	size_t prefix =
		matched < s.labels ? s.start[matched] : s.size; /* bytes written as labels */
	size_t need = prefix + (pointer >= 0 ? 2 : 0);
	if (w->pos + need > w->limit)
		return APEX_ESPACE;
	memcpy(w->buf + w->pos, name, prefix);
	unsigned before = w->compress_count;
	for (int i = 0; i < matched; i++)
		remember(w, &s, i, w->pos + s.start[i]);
	if (full_offset != NULL) {
		if (matched == 0)
			*full_offset = pointer;
		else if (s.labels > 0 && w->compress_count > before)
			*full_offset = (int)w->pos; /* remembered whole */
		else
			*full_offset = -1;
	}
	w->pos += prefix;
	if (w->log != NULL)
		log_name(w->log, name);
	if (pointer >= 0)
		write_pointer(w, pointer);
	return APEX_OK;
}

void apex_writer_remember_question(apex_writer_t *w)
{
	if (w->pending_name == NULL)
		return;
	/* The question is the first name: all its suffixes are new. */
	suffixes_t s;
	suffixes_init(&s, w->pending_name, w->pending_node, w->pending_zone);
	w->pending_name = NULL;
	for (int i = 0; i < s.labels; i++) {
		suffixes_need(&s, i);
		remember(w, &s, i, APEX_HEADER_SIZE + s.start[i]);
	}
}

int apex_writer_question(apex_writer_t *w, const uint8_t *qname, const apex_node_t *qname_node,
			 uint16_t qtype, uint16_t qclass)
{
	size_t size = 0;
	int labels = 0;
	for (; qname[size] != 0; size += 1 + (size_t)qname[size])
		labels++;
	size++;
	if (w->pos + size + 4 > w->limit)
		return APEX_ESPACE;
	/* Copy the bytes as received; later names may point at them. */
	if (w->pos == APEX_HEADER_SIZE && w->compress_count == 0) {
		w->question = qname;
		w->question_size = (uint8_t)size;
		w->question_labels = (uint8_t)labels;
		memcpy(w->buf + w->pos, qname, size);
		w->pos += size;
		w->pending_name = qname;
		w->pending_node = qname_node;
		w->pending_zone = w->zone;
	} else {
		int ret = write_name(w, qname, qname_node, NULL);
		if (ret != APEX_OK)
			return ret;
	}
	apex_write_u16(w->buf + w->pos, qtype);
	apex_write_u16(w->buf + w->pos + 2, qclass);
	w->pos += 4;
	w->counts[APEX_SECTION_QUESTION]++;
	return APEX_OK;
}

/* The node of entry i of a record's rdata_nodes (NULL: none given), or
 * NULL; ids are only given with w->zone set. */
static const apex_node_t *node_of(const apex_writer_t *w, const uint32_t *ids, unsigned i)
{
	return ids != NULL ? apex_zone_node(w->zone, ids[i]) : NULL;
}

/*
 * RDATA of one record with its names compressed (types whose RDATA
 * names RFC 1035 allows to compress).  rdata is the uncompressed form
 * of size rdlen, which is valid wire data from the zone; nodes are the
 * record's entries of rrset->rdata_nodes, or NULL.
 */
static int write_rdata_compressed(apex_writer_t *w, uint16_t type, const uint8_t *rdata,
				  size_t rdlen, const uint32_t *nodes)
{
	size_t off = 0;
	switch (type) {
	case APEX_TYPE_MX:
		if (w->pos + 2 > w->limit)
			return APEX_ESPACE;
		memcpy(w->buf + w->pos, rdata, 2);
		w->pos += 2;
		off = 2;
		/* fall through */
	case APEX_TYPE_NS:
	case APEX_TYPE_CNAME:
	case APEX_TYPE_PTR: {
		int ret = write_name(w, rdata + off, node_of(w, nodes, 0), NULL);
		if (ret != APEX_OK)
			return ret;
		off += apex_name_size(rdata + off);
		break;
	}
	case APEX_TYPE_SOA:
		for (int i = 0; i < 2; i++) {
			int ret = write_name(w, rdata + off, node_of(w, nodes, i), NULL);
			if (ret != APEX_OK)
				return ret;
			off += apex_name_size(rdata + off);
		}
		break;
	default: break;
	}
	/* Whatever follows the names (SOA counters) is copied as is. */
	if (off < rdlen) {
		if (w->pos + (rdlen - off) > w->limit)
			return APEX_ESPACE;
		memcpy(w->buf + w->pos, rdata + off, rdlen - off);
		w->pos += rdlen - off;
	}
	return APEX_OK;
}

int apex_writer_rrset(apex_writer_t *w, int section, const uint8_t *owner,
		      const apex_node_t *owner_node, const apex_rrset_t *rrset, uint32_t ttl)
{
	apex_writer_mark_t mark;
	apex_writer_mark(w, &mark);
	const uint8_t *p = rrset->rdata;
	unsigned names = apex_rdata_compressed_names(rrset->type);
	/* After the first record the owner is a pointer to where it was
	 * first written (what the suffix search would find again); so is it
	 * from the first if the last RRset had the same owner. */
	int owner_offset = owner == w->last_owner ? (int)w->last_owner_offset : -1;
	for (unsigned i = 0; i < rrset->count; i++) {
		uint16_t rdlen = apex_read_u16(p);
		const uint8_t *rdata = p + 2;
		p += 2 + rdlen;
		if (owner_offset >= 0) {
			if (w->pos + 2 > w->limit)
				goto nospace;
			write_pointer(w, owner_offset);
		} else if (write_name(w, owner, owner_node, &owner_offset) != APEX_OK) {
			goto nospace;
		} else if (owner_offset >= 0) {
			w->last_owner = owner;
			w->last_owner_offset = (size_t)owner_offset;
		}
		if (w->pos + 10 > w->limit)
			goto nospace;
		uint8_t *fixed = w->buf + w->pos;
		apex_write_u16(fixed, rrset->type);
		apex_write_u16(fixed + 2, 1); /* IN */
		apex_write_u32(fixed + 4, ttl);
		w->pos += 10;
		size_t start = w->pos;
		if (names > 0) {
			const uint32_t *nodes = rrset->rdata_nodes != NULL && w->zone != NULL
							? rrset->rdata_nodes + (size_t)i * names
							: NULL;
			if (write_rdata_compressed(w, rrset->type, rdata, rdlen, nodes) != APEX_OK)
				goto nospace;
		} else {
			if (w->pos + rdlen > w->limit)
				goto nospace;
			memcpy(w->buf + w->pos, rdata, rdlen);
			w->pos += rdlen;
		}
		apex_write_u16(fixed + 8, (uint16_t)(w->pos - start));
		w->counts[section]++;
	}
	return APEX_OK;
nospace:
	apex_writer_rollback(w, &mark);
	return APEX_ESPACE;
}

int apex_writer_rr(apex_writer_t *w, int section, const uint8_t *owner, uint16_t type,
		   uint16_t rclass, uint32_t ttl, const uint8_t *rdata, size_t rdata_size)
{
	apex_writer_mark_t mark;
	apex_writer_mark(w, &mark);
	if (rdata_size > 0xFFFF || write_name(w, owner, NULL, NULL) != APEX_OK ||
	    w->pos + 10 + rdata_size > w->limit) {
		apex_writer_rollback(w, &mark);
		return APEX_ESPACE;
	}
	uint8_t *p = w->buf + w->pos;
	apex_write_u16(p, type);
	apex_write_u16(p + 2, rclass);
	apex_write_u32(p + 4, ttl);
	apex_write_u16(p + 8, (uint16_t)rdata_size);
	memcpy(p + 10, rdata, rdata_size);
	w->pos += 10 + rdata_size;
	w->counts[section]++;
	return APEX_OK;
}

int apex_writer_opt(apex_writer_t *w, uint16_t payload, uint8_t ext_rcode, bool dnssec_ok,
		    const uint8_t *nsid, uint16_t nsid_size)
{
	size_t size = apex_writer_opt_size(nsid, nsid_size);
	if (w->pos + size > w->capacity)
		return APEX_ESPACE;
	uint8_t *p = w->buf + w->pos;
	p[0] = 0; /* root owner */
	apex_write_u16(p + 1, APEX_TYPE_OPT);
	apex_write_u16(p + 3, payload);
	/* TTL: extended rcode, version 0, DO, Z */
	p[5] = ext_rcode;
	p[6] = 0;
	apex_write_u16(p + 7, dnssec_ok ? 0x8000u : 0);
	apex_write_u16(p + 9, (uint16_t)(size - 11));
	if (nsid != NULL) {
		apex_write_u16(p + 11, 3); /* NSID */
		apex_write_u16(p + 13, nsid_size);
		memcpy(p + 15, nsid, nsid_size);
	}
	w->pos += size;
	w->counts[APEX_SECTION_ADDITIONAL]++;
	return APEX_OK;
}

/* True if the label just below f->base in qname is one of f->labels. */
static bool shares_labels(const apex_fragment_t *f, const uint8_t *qname, int qlabels)
{
	const uint8_t *label = qname;
	for (int i = qlabels - f->base_labels - 1; i > 0; i--)
		label += 1 + label[0];
	for (unsigned i = 0; i < f->label_count; i++) {
		const uint8_t *other = f->labels[i];
		if (other[0] != label[0])
			continue;
		unsigned j = 1;
		while (j <= label[0] && apex_ascii_lower(other[j]) == apex_ascii_lower(label[j]))
			j++;
		if (j > label[0])
			return true;
	}
	return false;
}

/* The compression targets of fragment f, written at offset start. */
static void add_targets(apex_writer_t *w, const apex_fragment_t *f, size_t start)
{
	if (w->pending_name != NULL)
		apex_writer_remember_question(w); /* the question's come first */
	if (f->entries > 0)
		clear_slots_if_empty(w);
	for (unsigned i = 0; i < f->entries; i++) {
		const apex_compress_entry_t *t = &f->targets[i];
		unsigned slot = home_slot(t->hash);
		while (w->compress_slot[slot] != 0)
			slot = (slot + 1) % APEX_COMPRESS_SLOTS;
		apex_compress_entry_t *e = &w->compress[w->compress_count++];
		*e = *t;
		e->offset = (uint16_t)(start + t->offset);
		e->slot = (uint8_t)slot;
		w->compress_slot[slot] = (uint8_t)w->compress_count;
	}
}

/* Whether fragment f (entries: the compression entries written before
 * it beyond the question's) replays after a question for qname: the
 * extra labels of qname must not change a compression decision, so no
 * name of f may end in them, and the table must not fill up. */
static inline __attribute__((always_inline)) bool fragment_applies(const apex_fragment_t *f,
								   const uint8_t *qname,
								   int qlabels, size_t qsize,
								   unsigned entries)
{
	return qlabels >= f->base_labels && qsize >= f->base_size &&
	       qlabels + entries + f->entries <= APEX_COMPRESS_MAX &&
	       (qlabels == f->base_labels || !shares_labels(f, qname, qlabels));
}

/* Copy size bytes of f from `from` to w->pos, its pointers from index
 * `pointer` to `pointers_end` moved by delta. */
static inline __attribute__((always_inline)) void
copy_fragment(apex_writer_t *w, const apex_fragment_t *f, size_t from, size_t size,
	      unsigned pointer, unsigned pointers_end, uint16_t delta)
{
	uint8_t *out = w->buf + w->pos;
	memcpy(out, f->bytes + from, size);
	for (; pointer < pointers_end; pointer++) {
		uint8_t *p = out + (f->pointers[pointer] - from);
		apex_write_u16(p, (uint16_t)(apex_read_u16(p) + delta));
	}
	w->pos += size;
}

int apex_writer_fragment(apex_writer_t *w, const apex_fragment_t *f, bool more, bool *truncated)
{
	const uint8_t *qname = w->question;
	int qlabels = w->question_labels;
	size_t qsize = w->question_size;
	if (qname == NULL || !fragment_applies(f, qname, qlabels, qsize, 0))
		return APEX_EINVAL;
	uint16_t delta = (uint16_t)(qsize - f->base_size);
	*truncated = false;
	if (w->pos + f->size <= w->limit) {
		/* All of it fits (the usual case): one copy. */
		if (more && f->targets != NULL)
			add_targets(w, f, w->pos);
		copy_fragment(w, f, 0, f->size, 0, f->pointer_count, delta);
		for (int s = 0; s < 4; s++)
			w->counts[s] += f->records[s];
		return APEX_OK;
	}
	size_t from = 0;
	unsigned pointer = 0;
	for (unsigned u = 0; u < f->unit_count; u++) {
		const apex_fragment_unit_t *unit = &f->units[u];
		size_t size = unit->end - from;
		if (w->pos + size > w->limit) {
			if (unit->required) {
				*truncated = true;
				break;
			}
		} else {
			copy_fragment(w, f, from, size, pointer, unit->pointers_end, delta);
			w->counts[unit->section] += unit->records;
		}
		pointer = unit->pointers_end;
		from = unit->end;
	}
	/* The fragment's names are not in the compression table: a name
	 * written after it could only point at the question. */
	return APEX_OK;
}

int apex_writer_fragment_tails(apex_writer_t *w, const apex_fragment_t *f,
			       const apex_fragment_t *const *tails, unsigned tail_count)
{
	const uint8_t *qname = w->question;
	int qlabels = w->question_labels;
	size_t qsize = w->question_size;
	size_t size = f->size;
	unsigned entries = f->entries;
	if (qname == NULL || !fragment_applies(f, qname, qlabels, qsize, 0))
		return APEX_EINVAL;
	for (unsigned t = 0; t < tail_count; t++) {
		const apex_fragment_t *tail = tails[t];
		if ((t > 0 && !tail->relocatable) || tail->base != f->base ||
		    !fragment_applies(tail, qname, qlabels, qsize, entries))
			return APEX_EINVAL;
		size += tail->size;
		entries += tail->entries;
	}
	if (w->pos + size > w->limit)
		return APEX_EINVAL;
	uint16_t delta = (uint16_t)(qsize - f->base_size);
	copy_fragment(w, f, 0, f->size, 0, f->pointer_count, delta);
	for (int s = 0; s < 4; s++)
		w->counts[s] += f->records[s];
	for (unsigned t = 0; t < tail_count; t++) {
		copy_fragment(w, tails[t], 0, tails[t]->size, 0, tails[t]->pointer_count, delta);
		for (int s = 0; s < 4; s++)
			w->counts[s] += tails[t]->records[s];
	}
	return APEX_OK;
}

size_t apex_writer_finish(apex_writer_t *w, uint16_t id, uint16_t flags)
{
	uint8_t *h = w->buf;
	apex_write_u16(h + APEX_HDR_ID, id);
	apex_write_u16(h + APEX_HDR_FLAGS, flags);
	apex_write_u16(h + APEX_HDR_QDCOUNT, w->counts[APEX_SECTION_QUESTION]);
	apex_write_u16(h + APEX_HDR_ANCOUNT, w->counts[APEX_SECTION_ANSWER]);
	apex_write_u16(h + APEX_HDR_NSCOUNT, w->counts[APEX_SECTION_AUTHORITY]);
	apex_write_u16(h + APEX_HDR_ARCOUNT, w->counts[APEX_SECTION_ADDITIONAL]);
	return w->pos;
}
