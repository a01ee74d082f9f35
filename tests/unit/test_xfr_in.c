/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/xfr_in: the reader of incoming AXFR/IXFR response streams takes a
 * whole zone, chained change sets and the up-to-date answer, undoes name
 * compression, drops records outside the zone, and refuses every stream
 * that is not one transfer of the zone asked for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "xfr/xfr_in.h"
#include "wire_msg.h"

#define ID 0x4242

/* ------------------------------------------------------------ messages */

/* A response header and, if qtype is not 0, the question. */
static void begin(msg_t *m, uint16_t id, uint8_t rcode, uint16_t qtype, const char *qname)
{
	memset(m, 0, sizeof(*m));
	msg_put_u16(m, id);
	msg_put_u16(m, (uint16_t)(APEX_FLAG_QR | APEX_FLAG_AA | rcode));
	msg_put_u16(m, qtype != 0 ? 1 : 0);
	msg_put_u16(m, 0);
	msg_put_u16(m, 0);
	msg_put_u16(m, 0);
	if (qtype != 0) {
		msg_put_name(m, qname);
		msg_put_u16(m, qtype);
		msg_put_u16(m, APEX_CLASS_IN);
	}
}

static void rr_head(msg_t *m, const char *owner, uint16_t type, uint16_t rclass, uint16_t rdlength)
{
	msg_put_name(m, owner);
	msg_put_u16(m, type);
	msg_put_u16(m, rclass);
	msg_put_u32(m, 3600);
	msg_put_u16(m, rdlength);
	m->ancount++;
	apex_write_u16(m->data + APEX_HDR_ANCOUNT, m->ancount);
}

static void soa(msg_t *m, uint32_t serial)
{
	/* ns. host. SERIAL 7200 3600 1209600 300 */
	rr_head(m, "example.", APEX_TYPE_SOA, APEX_CLASS_IN, 4 + 6 + 20);
	msg_put_name(m, "ns.");
	msg_put_name(m, "host.");
	msg_put_u32(m, serial);
	msg_put_u32(m, 7200);
	msg_put_u32(m, 3600);
	msg_put_u32(m, 1209600);
	msg_put_u32(m, 300);
}

static void a(msg_t *m, const char *owner, uint8_t last)
{
	uint8_t addr[4] = { 192, 0, 2, last };
	rr_head(m, owner, APEX_TYPE_A, APEX_CLASS_IN, 4);
	msg_put(m, addr, 4);
}

/* An MX whose exchange is a compression pointer to the question name
 * (offset 12), as primaries send it. */
static void mx_compressed(msg_t *m, const char *owner)
{
	rr_head(m, owner, APEX_TYPE_MX, APEX_CLASS_IN, 4);
	msg_put_u16(m, 10);
	msg_put_u16(m, 0xc000 | 12);
}

/* ------------------------------------------------------------ receiver */

typedef struct received {
	char records[64][160];
	size_t record_count;
	uint32_t sets[8][2];
	size_t removed[8], added[8];
	size_t set_count;
	bool take; /* the sets taken from the reader (xfr_in.h) */
	apex_changes_t taken[8];
} received_t;

static int on_record(void *ctx, const apex_rr_t *rr)
{
	received_t *r = ctx;
	char owner[1100];
	assert_true(r->record_count < 64);
	apex_name_to_str(rr->owner, owner, sizeof(owner));
	int n = snprintf(r->records[r->record_count], 160, "%s %u %u", owner, rr->type,
			 rr->rdlength);
	for (uint16_t i = 0; i < rr->rdlength && n < 150; i++)
		n += snprintf(r->records[r->record_count] + n, 160 - (size_t)n, i ? ".%u" : " %u",
			      rr->rdata[i]);
	r->record_count++;
	return APEX_OK;
}

static int on_changes(void *ctx, apex_changes_t *set)
{
	received_t *r = ctx;
	assert_true(r->set_count < 8);
	assert_true(apex_changes_complete(set));
	r->sets[r->set_count][0] = set->serial_from;
	r->sets[r->set_count][1] = set->serial_to;
	r->removed[r->set_count] = set->removed;
	r->added[r->set_count] = set->added;
	if (r->take) {
		r->taken[r->set_count] = *set;
		apex_changes_init(set);
	}
	r->set_count++;
	return APEX_OK;
}

static void start(apex_xfr_in_t *x, received_t *r, uint16_t qtype, uint32_t known,
		  const apex_xfr_in_limits_t *limits)
{
	uint8_t zone[APEX_NAME_MAX];
	apex_xfr_in_handler_t h = { r, on_record, on_changes, NULL };
	memset(r, 0, sizeof(*r));
	assert_true(apex_name_from_str("Example.", zone) > 0);
	assert_int_equal(apex_xfr_in_init(x, zone, ID, qtype, known, &h, limits), APEX_OK);
}

static int feed(apex_xfr_in_t *x, const msg_t *m)
{
	return apex_xfr_in_message(x, m->data, m->size);
}

/* ------------------------------------------------------------ tests */

static void axfr_whole_zone(void **state)
{
	(void)state;
	apex_xfr_in_t x;
	received_t r;
	msg_t m;

	start(&x, &r, APEX_TYPE_AXFR, 0, NULL);
	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.");
	soa(&m, 5);
	a(&m, "www.example.", 1);
	assert_int_equal(feed(&x, &m), APEX_OK);
	assert_false(apex_xfr_in_done(&x));
	/* the next message: no question, an out-of-zone record, a
	 * compressed name, the closing SOA */
	begin(&m, ID, 0, 0, NULL);
	mx_compressed(&m, "EXAMPLE."); /* its owner is at offset 12 */
	a(&m, "www.example.org.", 2);
	soa(&m, 5);
	assert_int_equal(feed(&x, &m), APEX_OK);
	assert_true(apex_xfr_in_done(&x));
	assert_int_equal(x.style, APEX_XFR_STYLE_AXFR);
	assert_int_equal(x.serial, 5);
	assert_int_equal(x.out_of_zone, 1);
	assert_int_equal(x.messages, 2);
	assert_int_equal(r.record_count, 3);
	assert_non_null(strstr(r.records[0], "Example. 6 ")); /* the zone as configured */
	assert_string_equal(r.records[1], "www.example. 1 4 192.0.2.1");
	/* 10, then "EXAMPLE." in full: the pointer was undone */
	assert_string_equal(r.records[2], "EXAMPLE. 15 11 0.10.7.69.88.65.77.80.76.69.0");
	apex_xfr_in_free(&x);
}

/* An IXFR from serial 3 to 5 in two messages: two change sets, 3 to 4
 * (a and b removed, a added) and 4 to 5 (c added, and a record outside
 * the zone dropped). */
static void feed_two_sets(apex_xfr_in_t *x)
{
	msg_t m;

	begin(&m, ID, 0, APEX_TYPE_IXFR, "example.");
	soa(&m, 5);
	soa(&m, 3);
	a(&m, "a.example.", 1);
	a(&m, "b.example.", 2);
	soa(&m, 4);
	a(&m, "a.example.", 3);
	assert_int_equal(feed(x, &m), APEX_OK);
	assert_int_equal(x->style, APEX_XFR_STYLE_IXFR);
	begin(&m, ID, 0, 0, NULL);
	soa(&m, 4);
	soa(&m, 5);
	a(&m, "c.example.", 4);
	a(&m, "c.example.com.", 4); /* outside: dropped */
	soa(&m, 5);
	assert_int_equal(feed(x, &m), APEX_OK);
	assert_true(apex_xfr_in_done(x));
}

static void ixfr_change_sets(void **state)
{
	(void)state;
	apex_xfr_in_t x;
	received_t r;

	start(&x, &r, APEX_TYPE_IXFR, 3, NULL);
	feed_two_sets(&x);
	assert_int_equal(r.set_count, 2);
	assert_int_equal(r.sets[0][0], 3);
	assert_int_equal(r.sets[0][1], 4);
	assert_int_equal(r.removed[0], 2);
	assert_int_equal(r.added[0], 1);
	assert_int_equal(r.sets[1][0], 4);
	assert_int_equal(r.sets[1][1], 5);
	assert_int_equal(r.removed[1], 0);
	assert_int_equal(r.added[1], 1);
	assert_int_equal(r.record_count, 0);
	assert_int_equal(x.out_of_zone, 1);
	apex_xfr_in_free(&x);
}

/* The records of a set the handler took, in order: "kind owner last-byte"
 * each, space separated (the SOAs as "kind example. serial"). */
static void taken_text(const apex_changes_t *set, char *text, size_t size)
{
	apex_changes_reader_t reader;
	apex_change_kind_t kind;
	apex_rr_t rr;
	size_t n = 0;
	int rc;

	text[0] = '\0';
	apex_changes_reader_init(&reader, set->data, set->size);
	while ((rc = apex_changes_next(&reader, &rr, &kind)) == APEX_OK && n < size) {
		char owner[1100];
		uint32_t value = rr.rdata[rr.rdlength - 1];
		if (rr.type == APEX_TYPE_SOA)
			assert_true(apex_changes_soa_serial(rr.rdata, rr.rdlength, &value));
		apex_name_to_str(rr.owner, owner, sizeof(owner));
		n += (size_t)snprintf(text + n, size - n, "%s%d %s %u", n ? " " : "", (int)kind,
				      owner, value);
	}
	assert_int_equal(rc, APEX_ENOENT);
}

/* A handler may take each set as it comes (the secondary does, so that a
 * large IXFR is not copied at its end): the reader starts the next set
 * afresh, and what was taken is whole and the handler's to free. */
static void ixfr_change_sets_taken(void **state)
{
	(void)state;
	apex_xfr_in_t x;
	received_t r;
	char text[400];

	start(&x, &r, APEX_TYPE_IXFR, 3, NULL);
	r.take = true;
	feed_two_sets(&x);
	assert_int_equal(r.set_count, 2);
	taken_text(&r.taken[0], text, sizeof(text));
	assert_string_equal(text, "0 example. 3 1 a.example. 1 1 b.example. 2 2 example. 4 "
				  "3 a.example. 3");
	taken_text(&r.taken[1], text, sizeof(text));
	assert_string_equal(text, "0 example. 4 2 example. 5 3 c.example. 4");
	assert_int_equal(r.taken[1].serial_from, 4);
	assert_int_equal(r.taken[1].serial_to, 5);
	apex_xfr_in_free(&x);
	apex_changes_free(&r.taken[0]);
	apex_changes_free(&r.taken[1]);
}

static void ixfr_up_to_date(void **state)
{
	(void)state;
	apex_xfr_in_t x;
	received_t r;
	msg_t m;

	start(&x, &r, APEX_TYPE_IXFR, 9, NULL);
	begin(&m, ID, 0, APEX_TYPE_IXFR, "example.");
	soa(&m, 9);
	assert_int_equal(feed(&x, &m), APEX_OK);
	assert_true(apex_xfr_in_done(&x));
	assert_int_equal(x.style, APEX_XFR_STYLE_UP_TO_DATE);
	assert_int_equal(r.record_count + r.set_count, 0);
	apex_xfr_in_free(&x);

	/* A newer SOA alone is not the end: the rest may follow. */
	start(&x, &r, APEX_TYPE_IXFR, 8, NULL);
	assert_int_equal(feed(&x, &m), APEX_OK);
	assert_false(apex_xfr_in_done(&x));
	apex_xfr_in_free(&x);
}

static void ixfr_answered_with_the_zone(void **state)
{
	(void)state;
	apex_xfr_in_t x;
	received_t r;
	msg_t m;

	start(&x, &r, APEX_TYPE_IXFR, 3, NULL);
	begin(&m, ID, 0, APEX_TYPE_IXFR, "example.");
	soa(&m, 5);
	a(&m, "a.example.", 1);
	soa(&m, 5);
	assert_int_equal(feed(&x, &m), APEX_OK);
	assert_true(apex_xfr_in_done(&x));
	assert_int_equal(x.style, APEX_XFR_STYLE_AXFR);
	assert_int_equal(r.record_count, 2);
	assert_int_equal(r.set_count, 0);
	apex_xfr_in_free(&x);
}

/* Feed one message that must be refused with rc, x->err containing why. */
static void refused(uint16_t qtype, uint32_t known, const msg_t *first, const msg_t *second, int rc,
		    const char *why)
{
	apex_xfr_in_t x;
	received_t r;

	start(&x, &r, qtype, known, NULL);
	int got = feed(&x, first);
	if (second != NULL && got == APEX_OK)
		got = feed(&x, second);
	assert_int_equal(got, rc);
	if (strstr(x.err, why) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", x.err, why);
	assert_false(apex_xfr_in_done(&x));
	/* Over: nothing more is taken. */
	assert_int_equal(feed(&x, first), APEX_EMALFORMED);
	apex_xfr_in_free(&x);
}

static void bad_streams_are_refused(void **state)
{
	(void)state;
	msg_t m, n;

	begin(&m, ID + 1, 0, APEX_TYPE_AXFR, "example.");
	soa(&m, 5);
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EMALFORMED, "not a response");

	begin(&m, ID, 9, APEX_TYPE_AXFR, "example.");
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EREFUSED, "NOTAUTH");

	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.org.");
	soa(&m, 5);
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EMALFORMED, "question");

	begin(&m, ID, 0, 0, NULL);
	soa(&m, 5);
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EMALFORMED, "no question");

	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.");
	a(&m, "www.example.", 1);
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EMALFORMED, "first record");

	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.");
	soa(&m, 5);
	a(&m, "www.example.", 1);
	soa(&m, 6);
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EMALFORMED, "closing SOA serial 6");

	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.");
	soa(&m, 5);
	soa(&m, 5);
	a(&m, "www.example.", 1);
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EMALFORMED, "after the closing SOA");

	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.");
	soa(&m, 5);
	soa(&m, 5);
	begin(&n, ID, 0, 0, NULL);
	a(&n, "www.example.", 1);
	refused(APEX_TYPE_AXFR, 0, &m, &n, APEX_EMALFORMED, "after the end");

	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.");
	soa(&m, 5);
	rr_head(&m, "www.example.", APEX_TYPE_A, APEX_CLASS_CH, 4);
	msg_put_u32(&m, 0);
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EMALFORMED, "class 3");

	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.");
	soa(&m, 5);
	rr_head(&m, "example.", APEX_TYPE_SOA, APEX_CLASS_IN, 2);
	msg_put_u16(&m, 0);
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EMALFORMED, "SOA");

	/* IXFR: the chain of serials must hold. */
	begin(&m, ID, 0, APEX_TYPE_IXFR, "example.");
	soa(&m, 5);
	soa(&m, 3);
	soa(&m, 4);
	soa(&m, 7);
	refused(APEX_TYPE_IXFR, 3, &m, NULL, APEX_EMALFORMED, "SOA serial 7");

	/* cut in the middle of a record */
	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.");
	soa(&m, 5);
	a(&m, "www.example.", 1);
	m.size -= 2;
	refused(APEX_TYPE_AXFR, 0, &m, NULL, APEX_EMALFORMED, "undecodable");
}

static void limits_hold(void **state)
{
	(void)state;
	apex_xfr_in_t x;
	received_t r;
	msg_t m;
	apex_xfr_in_limits_t records = { .max_records = 3 }, bytes = { .max_bytes = 100 };

	begin(&m, ID, 0, APEX_TYPE_AXFR, "example.");
	soa(&m, 5);
	a(&m, "a.example.", 1);
	a(&m, "b.example.", 1);
	a(&m, "c.example.", 1);
	soa(&m, 5);
	start(&x, &r, APEX_TYPE_AXFR, 0, &records);
	assert_int_equal(feed(&x, &m), APEX_ESPACE);
	assert_non_null(strstr(x.err, "more than 3 records"));
	assert_false(apex_xfr_in_done(&x));
	apex_xfr_in_free(&x);

	start(&x, &r, APEX_TYPE_AXFR, 0, &bytes);
	assert_int_equal(feed(&x, &m), APEX_ESPACE);
	assert_false(apex_xfr_in_done(&x));
	apex_xfr_in_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(axfr_whole_zone),
		cmocka_unit_test(ixfr_change_sets),
		cmocka_unit_test(ixfr_change_sets_taken),
		cmocka_unit_test(ixfr_up_to_date),
		cmocka_unit_test(ixfr_answered_with_the_zone),
		cmocka_unit_test(bad_streams_are_refused),
		cmocka_unit_test(limits_hold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
