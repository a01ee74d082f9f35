/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The query engine's hook for precomputation (query/precompute.c): write
 * the records of a referral, of a negative answer's SOA (and an NSEC
 * after it) or of an answer at the apex exactly as apex_answer() writes
 * them, and note where each unit (an RRset and its
 * RRSIGs) ends.  Build time only: never called on the query path.
 */
#ifndef APEX_QUERY_ANSWER_RECORD_H
#define APEX_QUERY_ANSWER_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/parse.h"
#include "query/writer.h"
#include "zone/zone.h"

#define APEX_RECORDER_UNITS_MAX 128

/* The units written since recording began. */
typedef struct apex_recorder {
	size_t body;      /* message offset of the first byte after the question */
	uint16_t counted; /* records of the units so far */
	unsigned count;
	apex_fragment_unit_t units[APEX_RECORDER_UNITS_MAX];
	/* At the end of each unit: the names the writer had logged and the
	 * compression entries it had, for keeping the units after one. */
	uint16_t names_end[APEX_RECORDER_UNITS_MAX];
	uint16_t entries_end[APEX_RECORDER_UNITS_MAX];
	bool overflow; /* more units than fit, or the writer kept no log */
} apex_recorder_t;

/* What a recording writes (apex_answer_record()). */
typedef enum apex_record_kind {
	APEX_RECORD_REFERRAL, /* the referral to the cut `node` */
	APEX_RECORD_NEGATIVE, /* a negative answer's SOA, then `node`'s NSEC if not NULL */
	APEX_RECORD_ANSWER,   /* the answer of `node` (the apex) for q->qtype */
} apex_record_kind_t;

/*
 * After the question for q->qname that w holds, write the sections of
 * what `kind` names as apex_answer() would for a query with q's type and
 * DO bit, recording units in rec (its body set by the caller).  Returns
 * false if the records do not form a fragment: they did not all fit, the
 * answer is not a plain one (an answer recording that is not one RRset
 * of the node with its additional data), or a referral or negative
 * answer put something in the answer section.
 */
bool apex_answer_record(const apex_zone_t *zone, apex_record_kind_t kind, const apex_node_t *node,
			const apex_query_t *q, apex_writer_t *w, apex_recorder_t *rec);

#endif
