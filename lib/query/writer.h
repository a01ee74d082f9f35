/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing a response message into a caller's buffer, with name
 * compression (RFC 1035 section 4.1.4).
 *
 * The writer keeps no pointer it does not get from the caller: the
 * compression table refers to names in the zone (immutable) or in the
 * caller's stack frame, which must outlive the writer's use.  Nothing
 * is allocated.
 *
 * Sections must be written in order (question, answer, authority,
 * additional).  An RRset is written whole or not at all: when it does
 * not fit, the buffer is left as it was and APEX_ESPACE is returned.
 */
#ifndef APEX_QUERY_WRITER_H
#define APEX_QUERY_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/zone.h"

/* Names remembered as compression targets; later names still get written, uncompressed. */
#define APEX_COMPRESS_MAX 128
/* Slots of the hash table over them: a power of two, at most half full. */
#define APEX_COMPRESS_SLOTS 256

enum {
	APEX_SECTION_QUESTION = 0,
	APEX_SECTION_ANSWER = 1,
	APEX_SECTION_AUTHORITY = 2,
	APEX_SECTION_ADDITIONAL = 3,
};

/*
 * A name written out in the message (a suffix of a name written),
 * which a later name may point to.  Two names are the same if their
 * hashes and sizes are equal and they are the same zone node, the same
 * bytes, or equal byte by byte (ASCII case-insensitively).
 */
typedef struct apex_compress_entry {
	const uint8_t *name;     /* uncompressed suffix, in zone or caller memory */
	const apex_node_t *node; /* the zone node of that name, or NULL if not known */
	uint32_t hash;           /* apex_name_hash(name) */
	uint16_t offset;         /* where it starts in the message */
	uint8_t size;            /* apex_name_size(name) */
	uint8_t slot;            /* its slot in compress_slot */
} apex_compress_entry_t;

/*
 * What the writer did, for recording a fragment (apex_answer_precompute()):
 * where it wrote compression pointers and every name it wrote.
 */
#define APEX_WRITER_LOG_MAX 512

typedef struct apex_writer_log {
	unsigned pointer_count;
	uint16_t pointers[APEX_WRITER_LOG_MAX]; /* offsets of the pointers in the message */
	unsigned name_count;
	const uint8_t *names[APEX_WRITER_LOG_MAX]; /* the names, uncompressed */
	bool overflow;                             /* more than APEX_WRITER_LOG_MAX of either */
} apex_writer_log_t;

typedef struct apex_writer {
	apex_writer_log_t *log; /* NULL, except while recording a fragment */
	/* The version the names and RRsets written come from, where the node
	 * ids they hold (parents, rrset->rdata_nodes) are; NULL: ids are not
	 * followed.  Set by the caller after apex_writer_init(). */
	const apex_zone_t *zone;
	uint8_t *buf;
	size_t limit;    /* end for the sections; space past it is reserved for OPT */
	size_t capacity; /* end of buf */
	size_t pos;
	uint16_t counts[4]; /* records per section */
	/* The question's name, written but not yet a compression target:
	 * it becomes one when the first record is written (a response
	 * copied from a fragment never needs it).  NULL: none pending. */
	const uint8_t *pending_name;
	const apex_node_t *pending_node;
	const apex_zone_t *pending_zone; /* zone when the question was written */
	/* The question's name as written first (apex_writer_question()),
	 * its size and labels, for the fragments that follow it. */
	const uint8_t *question;
	uint8_t question_size;
	uint8_t question_labels;
	/* The owner of the last RRset written and where the whole of it can
	 * be pointed at: its RRSIGs (and the next RRset of the same owner)
	 * point there without searching the table again. */
	const uint8_t *last_owner;
	size_t last_owner_offset;
	unsigned compress_count;
	/* Open addressing by hash, linear probing: 0 = free, else index + 1
	 * into compress (entries are only ever removed last-in first-out,
	 * by apex_writer_rollback(), which keeps the probe chains intact).
	 * Cleared when the first entry goes in, not by apex_writer_init():
	 * most responses are copied from fragments and never use it. */
	uint8_t compress_slot[APEX_COMPRESS_SLOTS];
	apex_compress_entry_t compress[APEX_COMPRESS_MAX];
} apex_writer_t;

/* A point to roll back to (see apex_writer_mark()). */
typedef struct apex_writer_mark {
	size_t pos;
	unsigned compress_count;
	uint16_t counts[4];
} apex_writer_mark_t;

/*
 * Start a message in buf[0..capacity): the header is left to
 * apex_writer_finish().  Sections may use bytes up to limit
 * (limit <= capacity); the rest is for the OPT record.
 */
void apex_writer_init(apex_writer_t *w, uint8_t *buf, size_t limit, size_t capacity);

/* Make the pending question name a compression target (see pending_name). */
void apex_writer_remember_question(apex_writer_t *w);

static inline void apex_writer_mark(apex_writer_t *w, apex_writer_mark_t *m)
{
	/* A rollback must not forget the question's name. */
	if (w->pending_name != NULL)
		apex_writer_remember_question(w);
	m->pos = w->pos;
	m->compress_count = w->compress_count;
	for (int i = 0; i < 4; i++)
		m->counts[i] = w->counts[i];
}

/* Forget everything written since the mark was taken. */
void apex_writer_rollback(apex_writer_t *w, const apex_writer_mark_t *m);

/*
 * Names given to the writer come with the zone node they are known to
 * be at or below (owner_node, qname_node), or NULL: the node only
 * makes compression cheaper (its precomputed hashes and identity stand
 * in for reading bytes) and never changes what is written.  A node
 * given must be the node of the name itself or of an ancestor.
 */

/* The question, name bytes exactly as given (the client's letter case). */
int apex_writer_question(apex_writer_t *w, const uint8_t *qname, const apex_node_t *qname_node,
			 uint16_t qtype, uint16_t qclass);

/*
 * Every record of rrset, class IN, owned by owner, with the given TTL
 * (the RRset's own TTL, or another, e.g. RFC 2308's negative TTL).
 * Names in the RDATA of NS, CNAME, SOA, MX and PTR are compressed.
 * Returns 0 or APEX_ESPACE (nothing written).
 */
int apex_writer_rrset(apex_writer_t *w, int section, const uint8_t *owner,
		      const apex_node_t *owner_node, const apex_rrset_t *rrset, uint32_t ttl);

/*
 * One record with raw RDATA (rdata_size bytes, no length prefix).
 * Names in the RDATA are not compressed.  Returns 0 or APEX_ESPACE.
 */
int apex_writer_rr(apex_writer_t *w, int section, const uint8_t *owner, uint16_t type,
		   uint16_t rclass, uint32_t ttl, const uint8_t *rdata, size_t rdata_size);

/*
 * The OPT record (RFC 6891), written in the reserved space past limit:
 * our payload size, the upper 8 bits of the extended rcode, the DO bit,
 * and the NSID option if nsid is not NULL.  Returns 0 or APEX_ESPACE.
 */
int apex_writer_opt(apex_writer_t *w, uint16_t payload, uint8_t ext_rcode, bool dnssec_ok,
		    const uint8_t *nsid, uint16_t nsid_size);

/* Bytes the OPT record of apex_writer_opt() takes. */
static inline size_t apex_writer_opt_size(const uint8_t *nsid, uint16_t nsid_size)
{
	return 11 + (nsid != NULL ? 4 + (size_t)nsid_size : 0);
}

/*
 * A precomputed part of a response: the records that follow a question
 * for the name `base`, as the writer wrote them, in units (an RRset and
 * its RRSIGs) that are written whole or not at all.  It is valid after
 * a question for any name at or below base, whose extra labels only
 * move every compression pointer by the same number of bytes, as long
 * as none of the fragment's names shares those labels (checked through
 * `labels`) and the compression table does not fill up.  Additional
 * units point only at the question and the authority section, so an
 * optional unit that does not fit can be left out.
 */
typedef struct apex_fragment_unit {
	uint16_t end;          /* bytes of the fragment up to the end of this unit */
	uint16_t pointers_end; /* entries of pointers up to the end of this unit */
	uint16_t records;
	uint8_t section; /* APEX_SECTION_* */
	bool required;   /* does not fit: TC (else it is left out) */
} apex_fragment_unit_t;

typedef struct apex_fragment {
	const uint8_t *base; /* the question's name when it was recorded */
	uint8_t base_size;
	uint8_t base_labels;
	uint8_t entries; /* compression targets the fragment's names added */
	uint16_t size;
	const uint8_t *bytes;
	uint16_t records[4]; /* records per section, all units */
	uint16_t pointer_count;
	uint16_t unit_count;
	const apex_fragment_unit_t *units;
	const uint16_t *pointers; /* offsets in bytes of the compression pointers */
	uint16_t label_count;
	const uint8_t *const *labels; /* the label just below base of each name below base */
	/* The compression targets its names added (offsets from its start),
	 * for fragments that more records may follow; NULL otherwise. */
	const apex_compress_entry_t *targets;
	/* No pointer of it points into it: a tail may then follow another. */
	bool relocatable;
} apex_fragment_t;

/*
 * Write fragment f after the question just written (nothing else
 * written yet), as far as it fits: *truncated is set if a required
 * unit did not.  With more, when all of f was written and it has
 * targets, more records may follow, compressed as if written one by
 * one; otherwise only the OPT record should (the fragment's names are
 * not compression targets).  Returns 0, or
 * APEX_EINVAL (nothing written) if f does not apply to the question, and
 * the caller writes the records itself.
 */
int apex_writer_fragment(apex_writer_t *w, const apex_fragment_t *f, bool more, bool *truncated);

/*
 * Write fragment f and its tails after the question just written
 * (nothing else written yet), all of it, nothing following but
 * the OPT record.  A tail is the rest of a recording whose first part
 * was f (precompute.h): the first follows f where it was recorded, each
 * later one must be relocatable.  Returns 0, or APEX_EINVAL (nothing
 * written) if one does not apply to the question or all of it does not fit:
 * the caller then writes the records itself.
 */
int apex_writer_fragment_tails(apex_writer_t *w, const apex_fragment_t *f,
			       const apex_fragment_t *const *tails, unsigned tail_count);

/* Write the header (id, flags, section counts); returns the message size. */
size_t apex_writer_finish(apex_writer_t *w, uint16_t id, uint16_t flags);

#endif
