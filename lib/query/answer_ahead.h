/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A query read ahead of its answer, so that a batch of queries asks the
 * memory for what their lookups will read before the first is answered
 * (zone/lookup_ahead.h): the question's name prepared for lookups, the
 * zone it falls in, and the lookahead of the name there.  The answer
 * (apex_answer_ahead(), query/answer.h) takes the prepared name and zone
 * from it instead of preparing them again, so the lookahead costs only
 * its prefetches.  Read-only on the zoneset; no allocation.
 *
 * A batch runs, for each query j in turn, apex_answer_ahead_begin() on
 * query j + APEX_AHEAD_BEGIN, apex_lookup_ahead_nodes() on j +
 * APEX_AHEAD_NODES, apex_lookup_ahead_data() on j + APEX_AHEAD_DATA,
 * apex_lookup_ahead_rdata() on j + APEX_AHEAD_RDATA
 * (apex_answer_ahead_step()), then answers j: each step reads what the
 * step before asked for some queries earlier (src/apexd/serve/udp.c).
 */
#ifndef APEX_QUERY_ANSWER_AHEAD_H
#define APEX_QUERY_ANSWER_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/lookup_ahead.h"
#include "zone/lookup_name.h"
#include "zone/zoneset.h"

/* The distances, in queries, of the three steps ahead of the answer, and
 * the ring of queries read ahead that they need. */
#define APEX_AHEAD_BEGIN 8
#define APEX_AHEAD_NODES 4
#define APEX_AHEAD_DATA 2
#define APEX_AHEAD_RDATA 1
#define APEX_AHEAD_RING 16 /* a power of two above APEX_AHEAD_BEGIN */

typedef struct apex_answer_ahead {
	/* The question's name is a plain name (no compression) at its
	 * place in the message, and name and zone below are its. */
	bool named;
	const apex_zone_t *zone; /* apex_zoneset_find_name()'s, NULL: none */
	apex_lookup_ahead_t lookup;
	apex_lookup_name_t name;
} apex_answer_ahead_t;

/* Read the question's name of query[0..query_size) into a, find its zone
 * in zones and ask for the slots of its lookup.  A message whose name
 * cannot be read this way leaves a->named false (the answer then reads
 * the message as it would without a). */
void apex_answer_ahead_begin(apex_answer_ahead_t *a, const apex_zoneset_t *zones,
			     const uint8_t *query, size_t query_size);

/*
 * The lookahead's steps before query i of a batch of n is answered, the
 * batch's queries read ahead into ring (query j at ring[j %
 * APEX_AHEAD_RING]): query i + APEX_AHEAD_BEGIN, which the caller gives
 * as next (ignored past the batch's end), begun; the nodes of query i +
 * APEX_AHEAD_NODES asked for, the keys and RRsets of query i +
 * APEX_AHEAD_DATA, then the RDATA and additional data of query i +
 * APEX_AHEAD_RDATA's first RRsets.  Called for i = -APEX_AHEAD_BEGIN .. -1 first, it
 * starts the batch.
 */
static inline void apex_answer_ahead_step(apex_answer_ahead_t *ring, const apex_zoneset_t *zones,
					  int i, int n, const uint8_t *next, size_t next_size)
{
	int j = i + APEX_AHEAD_BEGIN;
	if (j >= 0 && j < n)
		apex_answer_ahead_begin(&ring[j % APEX_AHEAD_RING], zones, next, next_size);
	j = i + APEX_AHEAD_NODES;
	if (j >= 0 && j < n)
		apex_lookup_ahead_nodes(&ring[j % APEX_AHEAD_RING].lookup);
	j = i + APEX_AHEAD_DATA;
	if (j >= 0 && j < n)
		apex_lookup_ahead_data(&ring[j % APEX_AHEAD_RING].lookup);
	j = i + APEX_AHEAD_RDATA;
	if (j >= 0 && j < n)
		apex_lookup_ahead_rdata(&ring[j % APEX_AHEAD_RING].lookup);
}

#endif
