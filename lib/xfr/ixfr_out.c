/* SPDX-License-Identifier: BSD-3-Clause */
/* The messages of an outgoing IXFR (see ixfr_out.h). */
#include "xfr/ixfr_out.h"

#include <string.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/writer.h"
#include "util/error.h"

enum phase { OPENING_SOA, SETS, CLOSING_SOA, DONE };

void apex_ixfr_out_init(apex_ixfr_out_t *x, const apex_zone_t *zone, uint16_t id,
			const uint8_t *qname, const uint8_t *const *sets, const size_t *set_sizes,
			size_t set_count)
{
	memset(x, 0, sizeof(*x));
	x->zone = zone;
	x->id = id;
	memcpy(x->qname, qname, apex_name_size(qname));
	x->sets = sets;
	x->set_sizes = set_sizes;
	x->set_count = set_count;
	x->phase = OPENING_SOA;
	if (set_count > 0)
		apex_changes_reader_init(&x->reader, sets[0], set_sizes[0]);
}

/* The next record of the change sets into x->pending (x->has_pending),
 * or, after the last one, x->phase moved on.  APEX_EMALFORMED when a set
 * does not read back. */
static int next_record(apex_ixfr_out_t *x)
{
	while (x->set < x->set_count) {
		apex_change_kind_t kind;
		int rc = apex_changes_next(&x->reader, &x->pending, &kind);
		if (rc == APEX_OK) {
			x->has_pending = true;
			return APEX_OK;
		}
		if (rc != APEX_ENOENT)
			return APEX_EMALFORMED;
		if (++x->set < x->set_count)
			apex_changes_reader_init(&x->reader, x->sets[x->set], x->set_sizes[x->set]);
	}
	x->phase = CLOSING_SOA;
	return APEX_OK;
}

/* apex_writer's APEX_ESPACE into a message that holds records: full. */
static int written(int rc, const apex_writer_t *w, bool *full)
{
	if (rc == APEX_ESPACE && w->counts[APEX_SECTION_ANSWER] > 0) {
		*full = true;
		return APEX_OK;
	}
	return rc;
}

static int write_sets(apex_ixfr_out_t *x, apex_writer_t *w, bool *full)
{
	while (x->phase == SETS) {
		if (!x->has_pending) {
			int rc = next_record(x);
			if (rc != APEX_OK || x->phase != SETS)
				return rc;
		}
		const apex_rr_t *rr = &x->pending;
		int rc = apex_writer_rr(w, APEX_SECTION_ANSWER, rr->owner, rr->type, rr->rclass,
					rr->ttl, rr->rdata, rr->rdlength);
		if (rc != APEX_OK)
			return written(rc, w, full);
		x->has_pending = false;
	}
	return APEX_OK;
}

static int write_soa(apex_ixfr_out_t *x, apex_writer_t *w, bool *full)
{
	const apex_zone_t *z = x->zone;
	int rc = apex_writer_rrset(w, APEX_SECTION_ANSWER, z->origin, z->apex, z->soa, z->soa->ttl);
	if (rc != APEX_OK)
		return written(rc, w, full);
	/* no change set: the secondary is up to date, the SOA alone says so */
	x->phase = x->phase == OPENING_SOA && x->set_count == 0 ? DONE : x->phase + 1;
	return APEX_OK;
}

int apex_ixfr_out_next(apex_ixfr_out_t *x, uint8_t *buf, size_t capacity, size_t *size)
{
	apex_writer_t w;
	bool full = false;
	int rc = APEX_OK;

	*size = 0;
	if (x->phase == DONE)
		return APEX_OK;
	if (capacity > APEX_MAX_MESSAGE)
		capacity = APEX_MAX_MESSAGE;
	apex_writer_init(&w, buf, capacity, capacity);
	if (x->messages == 0 &&
	    apex_writer_question(&w, x->qname, NULL, APEX_TYPE_IXFR, APEX_CLASS_IN) != APEX_OK)
		return APEX_ESPACE;
	while (rc == APEX_OK && !full && x->phase != DONE) {
		if (x->phase == SETS)
			rc = write_sets(x, &w, &full);
		else
			rc = write_soa(x, &w, &full);
	}
	if (rc != APEX_OK)
		return rc;
	x->messages++;
	*size = apex_writer_finish(&w, x->id, APEX_FLAG_QR | APEX_FLAG_AA);
	return APEX_OK;
}
