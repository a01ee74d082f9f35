/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An outgoing incremental zone transfer (IXFR, RFC 1995 section 4): the
 * messages that carry the change sets from a secondary's serial to the
 * version served, one at a time, into a buffer the caller sends.
 *
 * The change sets are the journal's (xfr/changes.h serialisation), in
 * order, the first starting at the secondary's serial and the last ending
 * at the served version's.  The stream is that version's SOA, then each
 * set (old SOA, removals, new SOA, additions), then the SOA again; as
 * many records per message as fit.  With no change set (the secondary is
 * up to date) it is the SOA alone.  Nothing is allocated; the sets and the
 * version stay the caller's and must live until the transfer ends.
 */
#ifndef APEX_XFR_IXFR_OUT_H
#define APEX_XFR_IXFR_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/name.h"
#include "xfr/changes.h"
#include "zone/zone.h"

typedef struct apex_ixfr_out {
	const apex_zone_t *zone; /* the version served: its SOA opens and closes */
	uint16_t id;
	uint8_t qname[APEX_NAME_MAX];
	const uint8_t *const *sets; /* serialised change sets, in order */
	const size_t *set_sizes;
	size_t set_count;
	/* where the transfer is */
	int phase;
	size_t set;
	apex_changes_reader_t reader;
	apex_rr_t pending; /* read from a set, not yet written */
	bool has_pending;
	unsigned messages;
} apex_ixfr_out_t;

void apex_ixfr_out_init(apex_ixfr_out_t *x, const apex_zone_t *zone, uint16_t id,
			const uint8_t *qname, const uint8_t *const *sets, const size_t *set_sizes,
			size_t set_count);

/*
 * Write the next message into buf[0..capacity): *size is its size, 0 once
 * the transfer is complete.  APEX_ESPACE when one record does not fit in a
 * message of that capacity, APEX_EMALFORMED when a change set does not
 * read back (the transfer cannot go on: answer with the whole zone).
 */
int apex_ixfr_out_next(apex_ixfr_out_t *x, uint8_t *buf, size_t capacity, size_t *size);

#endif
