/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The answer to a query signed with TSIG (RFC 8945 section 5.3): a
 * secondary's SOA query, for one.  The query engine answers it as any
 * query; the answer is then signed with the query's key and MAC, or, when
 * the query's signature does not verify, replaced by an unsigned NOTAUTH
 * (FORMERR for a malformed TSIG record) that repeats the question.
 */
#ifndef APEX_TSIG_SIGNED_ANSWER_H
#define APEX_TSIG_SIGNED_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "tsig/tsig.h"

/*
 * query[0..query_size) the signed query, answer[0..size) the engine's
 * answer in a buffer of capacity bytes, now the wall clock in seconds.
 * Returns the new size of the answer (0: send nothing).
 */
size_t apex_tsig_signed_answer(const uint8_t *query, size_t query_size,
			       const apex_tsig_keyring_t *ring, uint64_t now, uint8_t *answer,
			       size_t size, size_t capacity);

#endif
