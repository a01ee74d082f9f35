/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The query engine's hook for precomputation (query/precompute.c): write
 * the records of a referral or of a negative answer's SOA exactly as
 * apex_answer() writes them, and note where each unit (an RRset and its
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
	bool overflow; /* more units than fit, or the writer kept no log */
} apex_recorder_t;

/*
 * After the question for q->qname that w holds, write the sections of a
 * referral to cut (cut not NULL) or of a negative answer's SOA (cut NULL)
 * as apex_answer() would for a query with q's DO bit, recording units in
 * rec (its body set by the caller).  Returns false if the records do not
 * form a fragment: they did not all fit, or something went to the answer
 * section.
 */
bool apex_answer_record(const apex_zone_t *zone, const apex_node_t *cut, const apex_query_t *q,
			apex_writer_t *w, apex_recorder_t *rec);

#endif
