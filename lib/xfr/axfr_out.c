/* SPDX-License-Identifier: BSD-3-Clause */
/* The messages of an outgoing AXFR (see axfr_out.h). */
#include "xfr/axfr_out.h"

#include <string.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/writer.h"
#include "util/error.h"

enum phase { OPENING_SOA, NAMES, NSEC3_OWNERS, CLOSING_SOA, DONE };

void apex_axfr_out_init(apex_axfr_out_t *a, const apex_zone_t *zone, uint16_t id,
			const uint8_t *qname)
{
	memset(a, 0, sizeof(*a));
	a->zone = zone;
	a->id = id;
	memcpy(a->qname, qname, apex_name_size(qname));
	a->qtype = APEX_TYPE_AXFR;
	a->phase = OPENING_SOA;
}

/* The node the cursor is at in the current phase, or NULL past the end. */
static const apex_node_t *current_node(const apex_axfr_out_t *a)
{
	if (a->phase == NAMES)
		return a->node < a->zone->node_count ? apex_zone_node_at(a->zone, a->node) : NULL;
	return a->node < a->zone->nsec3_owner_count ? apex_zone_nsec3_owner_at(a->zone, a->node)
						    : NULL;
}

/* Move the cursor to the next RRset (or RRSIG set) to send; false when
 * the phase has none left. */
static bool next_rrset(apex_axfr_out_t *a, const apex_node_t **node, const apex_rrset_t **rs)
{
	for (const apex_node_t *n; (n = current_node(a)) != NULL; a->node++, a->rrset = 0) {
		while (a->rrset < n->rrset_count) {
			const apex_rrset_t *r = &apex_node_rrsets(a->zone, n)[a->rrset];
			if (a->rrsig_next) {
				if (r->rrsig != NULL) {
					*node = n;
					*rs = r->rrsig;
					return true;
				}
				a->rrsig_next = false;
				a->rrset++;
				continue;
			}
			/* the SOA opens and closes the transfer; its RRSIGs go here */
			if (r->type == APEX_TYPE_SOA && n == a->zone->apex) {
				a->rrsig_next = true;
				continue;
			}
			*node = n;
			*rs = r;
			return true;
		}
		/* past the RRsets, the node's stray RRSIG sets (zone.h), one
		 * at a time (a->rrset counts on) */
		size_t strays;
		const apex_stray_rrsig_t *stray = apex_zone_stray_rrsigs(a->zone, n, &strays);
		if (a->rrset - n->rrset_count < strays) {
			*node = n;
			*rs = stray[a->rrset - n->rrset_count].sigs;
			return true;
		}
	}
	return false;
}

/* The cursor past what next_rrset() gave. */
static void advance(apex_axfr_out_t *a)
{
	const apex_node_t *n = current_node(a);

	if (n != NULL && a->rrset >= n->rrset_count) {
		a->rrset++; /* a stray RRSIG set */
		return;
	}
	if (a->rrsig_next) {
		a->rrsig_next = false;
		a->rrset++;
	} else {
		a->rrsig_next = true;
	}
}

/* What apex_writer_rrset() returned, for a message: APEX_ESPACE into a
 * message that holds records already means it is full (*full set, the
 * RRset goes first in the next one); into an empty one, that the RRset
 * fits in no message. */
static int written(int rc, const apex_writer_t *w, bool *full)
{
	if (rc == APEX_ESPACE && w->counts[APEX_SECTION_ANSWER] > 0) {
		*full = true;
		return APEX_OK;
	}
	return rc;
}

/* The RRsets of the current phase until the message is full or the phase
 * is over (a->phase moves on). */
static int fill(apex_axfr_out_t *a, apex_writer_t *w, bool *full)
{
	const apex_node_t *node;
	const apex_rrset_t *rs;

	while (next_rrset(a, &node, &rs)) {
		int rc = apex_writer_rrset(w, APEX_SECTION_ANSWER, node->name, node, rs, rs->ttl);
		if (rc != APEX_OK)
			return written(rc, w, full);
		advance(a);
	}
	a->phase++;
	a->node = a->rrset = 0;
	a->rrsig_next = false;
	return APEX_OK;
}

static int write_soa(apex_axfr_out_t *a, apex_writer_t *w, bool *full)
{
	const apex_zone_t *z = a->zone;
	int rc = apex_writer_rrset(w, APEX_SECTION_ANSWER, z->origin, z->apex, z->soa, z->soa->ttl);
	if (rc != APEX_OK)
		return written(rc, w, full);
	a->phase++;
	return APEX_OK;
}

int apex_axfr_out_next(apex_axfr_out_t *a, uint8_t *buf, size_t capacity, size_t *size)
{
	apex_writer_t w;
	bool full = false;
	int rc = APEX_OK;

	*size = 0;
	if (a->phase == DONE)
		return APEX_OK;
	if (capacity > APEX_MAX_MESSAGE)
		capacity = APEX_MAX_MESSAGE;
	apex_writer_init(&w, buf, capacity, capacity);
	w.zone = a->zone;
	/* RFC 5936 section 2.2.1: the first message repeats the question */
	if (a->messages == 0 &&
	    apex_writer_question(&w, a->qname, NULL, a->qtype, APEX_CLASS_IN) != APEX_OK)
		return APEX_ESPACE;
	while (rc == APEX_OK && !full && a->phase != DONE) {
		if (a->phase == OPENING_SOA || a->phase == CLOSING_SOA)
			rc = write_soa(a, &w, &full);
		else
			rc = fill(a, &w, &full);
	}
	if (rc != APEX_OK)
		return rc;
	a->messages++;
	*size = apex_writer_finish(&w, a->id, APEX_FLAG_QR | APEX_FLAG_AA);
	return APEX_OK;
}
