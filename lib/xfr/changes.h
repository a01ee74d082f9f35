/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A change set: the difference from one version of a zone to the next, in
 * the order an IXFR sends it (RFC 1995 section 4): the old SOA, the
 * records removed, the new SOA, the records added.
 *
 * It is kept serialised, as the records in uncompressed wire form back to
 * back (owner, type, class, TTL, RDLENGTH, RDATA), which is also the
 * payload of a journal entry (xfr/journal.h): what is recorded is what is
 * read back, with no second format. Records are told apart by position:
 * the first SOA opens the removals, the second SOA the additions.
 */
#ifndef APEX_XFR_CHANGES_H
#define APEX_XFR_CHANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/wire.h"

/* One resource record with uncompressed RDATA; the pointers are borrowed
 * from whoever produced it. */
typedef struct apex_rr {
	const uint8_t *owner; /* wire form */
	uint16_t type;
	uint16_t rclass;
	uint32_t ttl;
	uint16_t rdlength;
	const uint8_t *rdata;
} apex_rr_t;

typedef enum apex_change_kind {
	APEX_CHANGE_OLD_SOA,
	APEX_CHANGE_REMOVE,
	APEX_CHANGE_NEW_SOA,
	APEX_CHANGE_ADD,
} apex_change_kind_t;

/* A change set being written. It owns data (free with apex_changes_free()). */
typedef struct apex_changes {
	uint8_t *data;
	size_t size, capacity;
	uint32_t serial_from, serial_to; /* from the two SOAs */
	size_t removed, added;           /* records, the SOAs not counted */
	apex_change_kind_t next;         /* what the next record may be */
} apex_changes_t;

void apex_changes_init(apex_changes_t *c);
void apex_changes_free(apex_changes_t *c);

/*
 * Append one record. The first must be the old SOA (kind
 * APEX_CHANGE_OLD_SOA), then any removals, then the new SOA, then any
 * additions; a record out of that order, a SOA given as a removal or
 * addition, or an owner that is not a valid wire name is APEX_EINVAL.
 * APEX_ENOMEM if the set cannot grow; the set is then unchanged.
 */
int apex_changes_append(apex_changes_t *c, apex_change_kind_t kind, const apex_rr_t *rr);

/* Room for `bytes` more of records (each its owner's size, 10 and its
 * RDATA) without growing, which doubles: for a writer that knows the
 * size of the set, and whose set is large.  APEX_OK or APEX_ENOMEM. */
int apex_changes_reserve(apex_changes_t *c, size_t bytes);

/* The size of rr in a set. */
static inline size_t apex_changes_rr_size(const apex_rr_t *rr)
{
	size_t owner = 0;

	while (rr->owner[owner] != 0)
		owner += 1 + rr->owner[owner];
	return owner + 1 + 10 + rr->rdlength;
}

/* True once both SOAs are in: the set is complete (it may have no
 * removals or additions). */
bool apex_changes_complete(const apex_changes_t *c);

/* The serial of a SOA RDATA (uncompressed), or false if it is not one. */
bool apex_changes_soa_serial(const uint8_t *rdata, size_t size, uint32_t *serial);

/* Reads the records of a serialised change set in order. */
typedef struct apex_changes_reader {
	const uint8_t *data;
	size_t size, pos;
	apex_change_kind_t next;
} apex_changes_reader_t;

void apex_changes_reader_init(apex_changes_reader_t *r, const uint8_t *data, size_t size);

/* The fields of the record at p in a change set's data, whose owner name
 * is owner bytes long; rr points into the data.  No bounds are checked:
 * apex_changes_next() checks them before it calls this, and a record it
 * returned may be read again with it. */
static inline void apex_changes_record_at(const uint8_t *p, size_t owner, apex_rr_t *rr)
{
	rr->owner = p;
	rr->type = apex_read_u16(p + owner);
	rr->rclass = apex_read_u16(p + owner + 2);
	rr->ttl = apex_read_u32(p + owner + 4);
	rr->rdlength = apex_read_u16(p + owner + 8);
	rr->rdata = p + owner + 10;
}

/*
 * The next record and what it is. rr points into the reader's data.
 * Returns APEX_OK, APEX_ENOENT after the last record, or APEX_EMALFORMED
 * if the data is cut short, holds a bad name or does not begin with a SOA.
 * Reaching APEX_ENOENT before the new SOA is APEX_EMALFORMED too.
 */
int apex_changes_next(apex_changes_reader_t *r, apex_rr_t *rr, apex_change_kind_t *kind);

#endif
