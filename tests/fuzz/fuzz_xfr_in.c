/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the reader of incoming zone transfers
 * (lib/xfr/xfr_in.c), which takes whatever a primary sends.
 *
 * Input: one byte whose low bit chooses the request (0: AXFR, 1: IXFR
 * from serial 3), then the response messages, each after a two-byte
 * length as on TCP. The request ID is taken from the first message, so
 * that mutations reach past the header check. The zone is `example.`.
 *
 * Oracle (a violation aborts):
 * - every record handed on is of class IN, has an owner inside the zone
 *   and a type that may be in a zone; the first of a whole zone is its
 *   SOA;
 * - every change set is complete, reads back with its record counts,
 *   and the sets chain from serial 3 to the serial of the first SOA;
 * - a failure returns a documented code and says why, and the reader
 *   takes nothing after it; a reader that reports the transfer complete
 *   knows its style;
 * - every record handed on is written as a zone file line by the copy's
 *   fast writer (xfr/record_text.h) within its bound, or left to ldns;
 * - the change sets of a complete IXFR condense (xfr/condense.h) into one
 *   from serial 3 to the transfer's serial, with no more removals and
 *   additions than the sets had;
 * - the EDNS EXPIRE option (dns/edns.h) read from a message lies within it;
 * - each message's answer records, as xfr/xfr_message.h decodes them in
 *   place, are ldns's for the same message (owner, type, class, TTL and
 *   RDATA with its names uncompressed) whenever both take the message;
 * - the records of a whole zone go into a version builder as the
 *   secondary's do (zone/zone_from_wire.h: the RDATA shape checks of
 *   zone/record_wire.c, else ldns), which takes each or refuses it with
 *   a reason; a complete transfer whose records were all taken builds
 *   into a version with no more records than were sent, or is refused
 *   with a reason.
 */
#include <ldns/ldns.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/edns.h"
#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/changes.h"
#include "xfr/condense.h"
#include "xfr/record_text.h"
#include "xfr/xfr_in.h"
#include "xfr/xfr_message.h"
#include "zone/zone_from_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KNOWN_SERIAL 3
#define KEPT_SETS 16 /* change sets kept to condense */

typedef struct seen {
	uint8_t zone[APEX_NAME_MAX];
	uint64_t records, sets;
	uint32_t chain;                 /* where the change sets have got to */
	apex_changes_t kept[KEPT_SETS]; /* copies of the first sets */
	size_t kept_count, removed, added;
	apex_zone_from_wire_t *builder; /* NULL once a record was refused */
	char err[512];
} seen_t;

static void oracle(const char *why)
{
	fprintf(stderr, "apex fuzz oracle: %s\n", why);
	abort();
}

static int on_record(void *ctx, const apex_rr_t *rr)
{
	seen_t *s = ctx;
	if (rr->rclass != APEX_CLASS_IN || !apex_name_is_subdomain(rr->owner, s->zone))
		oracle("record of another class or outside the zone handed on");
	if (rr->type == 0 || rr->type == APEX_TYPE_OPT || (rr->type >= 128 && rr->type <= 255))
		oracle("meta type handed on");
	if (s->records == 0 && rr->type != APEX_TYPE_SOA)
		oracle("a whole zone that does not start with its SOA");
	static char line[APEX_RECORD_TEXT_MAX];
	size_t n = apex_record_text(rr, line);
	if (n > 0 &&
	    (n >= APEX_RECORD_TEXT_MAX || line[n - 1] != '\n' || memchr(line, '\n', n - 1) != NULL))
		oracle("a record line out of bounds or not one line");
	s->records++;
	if (s->builder != NULL) {
		s->err[0] = '\0';
		int rc = apex_zone_from_wire_add(s->builder, rr->owner, rr->type, rr->ttl,
						 rr->rdata, rr->rdlength);
		if (rc != APEX_OK && rc != APEX_ELOAD && rc != APEX_ENOMEM)
			oracle("a record refused without a documented code");
		if (rc == APEX_ELOAD && s->err[0] == '\0')
			oracle("a record refused without a reason");
		if (rc != APEX_OK) {
			apex_zone_from_wire_abort(s->builder);
			s->builder = NULL;
		}
	}
	return APEX_OK;
}

/* The version of a whole zone whose every record was taken. */
static void build_whole(seen_t *s)
{
	apex_zone_t *zone = NULL;
	int rc = apex_zone_from_wire_finish(s->builder, &zone);

	s->builder = NULL;
	if (rc == APEX_OK && (zone == NULL || zone->record_count > s->records))
		oracle("a version with more records than were sent");
	if (rc == APEX_ELOAD && s->err[0] == '\0')
		oracle("a zone refused without a reason");
	if (rc != APEX_OK && rc != APEX_ELOAD && rc != APEX_ENOMEM)
		oracle("a zone refused without a documented code");
	if (zone != NULL)
		apex_zone_unref(zone);
}

static int on_changes(void *ctx, apex_changes_t *set)
{
	seen_t *s = ctx;
	apex_changes_reader_t r;
	apex_rr_t rr;
	apex_change_kind_t kind;
	size_t removed = 0, added = 0;
	int rc;

	if (!apex_changes_complete(set) || set->serial_from != s->chain)
		oracle("incomplete or unchained change set");
	apex_changes_reader_init(&r, set->data, set->size);
	while ((rc = apex_changes_next(&r, &rr, &kind)) == APEX_OK) {
		if (kind == APEX_CHANGE_REMOVE || kind == APEX_CHANGE_ADD) {
			if (!apex_name_is_subdomain(rr.owner, s->zone) ||
			    rr.rclass != APEX_CLASS_IN)
				oracle("change outside the zone");
			removed += kind == APEX_CHANGE_REMOVE;
			added += kind == APEX_CHANGE_ADD;
		}
	}
	if (rc != APEX_ENOENT || removed != set->removed || added != set->added)
		oracle("change set does not read back");
	s->chain = set->serial_to;
	s->sets++;
	s->removed += removed;
	s->added += added;
	if (s->kept_count < KEPT_SETS) {
		apex_changes_t *k = &s->kept[s->kept_count++];
		*k = *set;
		k->data = malloc(set->size ? set->size : 1);
		if (k->data == NULL)
			abort();
		memcpy(k->data, set->data, set->size);
	}
	return APEX_OK;
}

/* The kept sets of a complete IXFR condensed, and checked. */
static void condense_kept(seen_t *s, uint32_t serial)
{
	apex_changes_t one;

	if (s->kept_count == 0 || s->kept_count < s->sets)
		return;
	if (apex_changes_condense(s->kept, s->kept_count, &one) != APEX_OK)
		oracle("the sets of a transfer do not condense");
	if (one.serial_from != KNOWN_SERIAL || one.serial_to != serial ||
	    one.removed > s->removed || one.added > s->added)
		oracle("condensed sets that say something else");
	apex_changes_free(&one);
}

/* The answer records of msg as xfr_message.c reads them and as ldns
 * reads them: the same, when both take the message. */
static void same_as_ldns(const uint8_t *msg, size_t size)
{
	static apex_xfr_record_buf_t buf;
	apex_xfr_message_t m;
	ldns_pkt *pkt = NULL;
	apex_rr_t rr;
	size_t i = 0;
	int rc;

	if (apex_xfr_message_open(&m, msg, size) != APEX_OK ||
	    ldns_wire2pkt(&pkt, msg, size) != LDNS_STATUS_OK) {
		ldns_pkt_free(pkt);
		return;
	}
	ldns_rr_list *answer = ldns_pkt_answer(pkt);
	ldns_buffer *lb = ldns_buffer_new(1024);
	if (lb == NULL)
		abort();
	while ((rc = apex_xfr_message_next(&m, &buf, &rr)) == 1) {
		if (i >= ldns_rr_list_rr_count(answer))
			oracle("more answer records than ldns reads");
		const ldns_rr *l = ldns_rr_list_rr(answer, i++);
		const ldns_rdf *owner = ldns_rr_owner(l);
		ldns_buffer_clear(lb);
		if (ldns_rr_rdata2buffer_wire(lb, l) != LDNS_STATUS_OK)
			continue; /* ldns cannot write it: apex has read it by ldns */
		if (apex_name_size(rr.owner) != ldns_rdf_size(owner) ||
		    memcmp(rr.owner, ldns_rdf_data(owner), ldns_rdf_size(owner)) != 0 ||
		    rr.type != ldns_rr_get_type(l) || rr.rclass != ldns_rr_get_class(l) ||
		    rr.ttl != (ldns_rr_ttl(l) > INT32_MAX ? 0 : ldns_rr_ttl(l)) ||
		    rr.rdlength != ldns_buffer_position(lb) ||
		    memcmp(rr.rdata, ldns_buffer_begin(lb), rr.rdlength) != 0)
			oracle("a record decoded otherwise than by ldns");
	}
	/* refused: a pointer forward, which ldns follows */
	if (rc == 0 && i != ldns_rr_list_rr_count(answer))
		oracle("fewer answer records than ldns reads");
	ldns_buffer_free(lb);
	ldns_pkt_free(pkt);
	apex_xfr_record_buf_free(&buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	apex_xfr_in_t x;
	seen_t seen = { .chain = KNOWN_SERIAL };
	apex_xfr_in_handler_t handler = { &seen, on_record, on_changes, NULL };
	apex_xfr_in_limits_t limits = { .max_bytes = 1 << 20, .max_records = 10000 };
	int rc = APEX_OK;

	if (size < 3)
		return 0;
	apex_log_set_level(APEX_LOG_ERROR); /* the build's warnings are expected */
	uint16_t qtype = (data[0] & 1) ? APEX_TYPE_IXFR : APEX_TYPE_AXFR;
	uint16_t id = size >= 5 ? apex_read_u16(data + 3) : 0;
	apex_name_from_str("example.", seen.zone);
	if (apex_xfr_in_init(&x, seen.zone, id, qtype, KNOWN_SERIAL, &handler, &limits) !=
		    APEX_OK ||
	    apex_zone_from_wire_begin(&seen.builder, seen.zone, "fuzz", seen.err,
				      sizeof(seen.err)) != APEX_OK)
		abort();
	size_t pos = 1;
	while (pos + 2 <= size && rc == APEX_OK) {
		size_t len = apex_read_u16(data + pos);
		pos += 2;
		if (len > size - pos)
			len = size - pos;
		/* a heap block of exactly the message: ASan sees any over-read */
		uint8_t *msg = malloc(len ? len : 1);
		if (msg == NULL)
			abort();
		memcpy(msg, data + pos, len);
		same_as_ldns(msg, len);
		/* the EDNS EXPIRE option the client reads from each message */
		const uint8_t *option = NULL;
		int option_len = apex_message_opt_option(msg, len, APEX_EDNS_EXPIRE, &option);
		if (option_len >= 0 && (option < msg || option + option_len > msg + len))
			oracle("an EDNS option outside its message");
		rc = apex_xfr_in_message(&x, msg, len);
		free(msg);
		pos += len;
	}
	if (rc != APEX_OK) {
		if ((rc != APEX_EMALFORMED && rc != APEX_EREFUSED && rc != APEX_ESPACE) ||
		    x.err[0] == '\0')
			oracle("failure without a documented code or a reason");
		if (apex_xfr_in_done(&x) || apex_xfr_in_message(&x, data, size) != APEX_EMALFORMED)
			oracle("the reader goes on after a failure");
	} else if (apex_xfr_in_done(&x)) {
		if (x.style == APEX_XFR_STYLE_UNKNOWN)
			oracle("complete without a style");
		if (x.style == APEX_XFR_STYLE_IXFR && seen.chain != x.serial)
			oracle("change sets that do not reach the serial sent");
		if (x.style == APEX_XFR_STYLE_IXFR)
			condense_kept(&seen, x.serial);
		if (x.style == APEX_XFR_STYLE_AXFR && seen.records == 0)
			oracle("a whole zone without records");
		if (x.style == APEX_XFR_STYLE_AXFR && seen.builder != NULL)
			build_whole(&seen);
	}
	if (seen.builder != NULL)
		apex_zone_from_wire_abort(seen.builder);
	apex_xfr_in_free(&x);
	for (size_t i = 0; i < seen.kept_count; i++)
		apex_changes_free(&seen.kept[i]);
	return 0;
}
