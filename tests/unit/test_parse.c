/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * query/parse: the one question of a query, EDNS (RFC 6891: payload, DO,
 * version, options, one OPT only, in the additional section, owned by
 * the root), and what happens to malformed messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/parse.h"
#include "dnsmsg.h"

/* A message built field by field. */
typedef struct msg {
	uint8_t b[600];
	size_t n;
} msg_t;

static void u16(msg_t *m, uint16_t v)
{
	apex_write_u16(m->b + m->n, v);
	m->n += 2;
}

static void bytes(msg_t *m, const void *p, size_t n)
{
	if (n > 0) /* p may be NULL then */
		memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* Header with these counts, question "www.example." A IN. */
static void start(msg_t *m, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns, uint16_t ar)
{
	m->n = 0;
	u16(m, 0xbeef);
	u16(m, flags);
	u16(m, qd);
	u16(m, an);
	u16(m, ns);
	u16(m, ar);
	if (qd > 0) {
		bytes(m, "\003www\007example\000", 13);
		u16(m, APEX_TYPE_A);
		u16(m, APEX_CLASS_IN);
	}
}

/* An OPT record: owner root, payload, extended rcode 0, version, DO,
 * and options (opts[0..opts_size)). */
static void opt(msg_t *m, uint16_t payload, uint8_t version, bool dnssec_ok, const uint8_t *opts,
		uint16_t opts_size)
{
	m->b[m->n++] = 0;
	u16(m, APEX_TYPE_OPT);
	u16(m, payload);
	m->b[m->n++] = 0;
	m->b[m->n++] = version;
	u16(m, dnssec_ok ? 0x8000 : 0);
	u16(m, opts_size);
	bytes(m, opts, opts_size);
}

static apex_parse_result_t parse(const msg_t *m, apex_query_t *q)
{
	/* an exact-size copy: ASan sees any read past the message */
	uint8_t *copy = malloc(m->n ? m->n : 1);
	assert_non_null(copy);
	memcpy(copy, m->b, m->n);
	apex_parse_result_t r = apex_query_parse(copy, m->n, q);
	free(copy);
	return r;
}

static void one_question(void **state)
{
	(void)state;
	apex_query_t q;
	uint8_t buf[512];
	dnsmsg_opts_t o = { .flags = APEX_FLAG_RD };
	size_t n = dnsmsg_query(buf, "WwW.Example.", APEX_TYPE_AAAA, &o);

	assert_int_equal(apex_query_parse(buf, n, &q), APEX_PARSE_OK);
	assert_int_equal(q.id, 0x1234);
	assert_int_equal(q.flags, APEX_FLAG_RD);
	assert_true(q.has_question);
	assert_int_equal(q.qtype, APEX_TYPE_AAAA);
	assert_int_equal(q.qclass, APEX_CLASS_IN);
	assert_int_equal(q.qname_size, 13);
	assert_memory_equal(q.qname, "\003WwW\007Example\000", 13); /* case kept */
	assert_false(q.edns);
	assert_int_equal(q.udp_payload, 512);
}

static void edns_fields(void **state)
{
	(void)state;
	apex_query_t q;
	msg_t m;

	start(&m, 0, 1, 0, 0, 1);
	opt(&m, 4096, 0, true, NULL, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_OK);
	assert_true(q.edns);
	assert_true(q.dnssec_ok);
	assert_int_equal(q.udp_payload, 4096);
	assert_int_equal(q.edns_version, 0);

	/* a payload below 512 counts as 512 (RFC 6891 6.2.3) */
	start(&m, 0, 1, 0, 0, 1);
	opt(&m, 100, 0, false, NULL, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_OK);
	assert_int_equal(q.udp_payload, 512);
	assert_false(q.dnssec_ok);

	/* version 1: BADVERS, with EDNS known */
	start(&m, 0, 1, 0, 0, 1);
	opt(&m, 1232, 1, false, NULL, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_BADVERS);
	assert_true(q.edns);
	assert_int_equal(q.edns_version, 1);
}

static void edns_options(void **state)
{
	(void)state;
	apex_query_t q;
	msg_t m;
	/* NSID (empty), an unknown option, COOKIE with a client cookie and a
	 * 16-byte server cookie, then a second COOKIE (ignored) */
	uint8_t opts[] = {
		0,  3,  0,  0,    0xff, 0x01, 0,    2,    9,    9,    0,    10, 0,
		24, 1,  2,  3,    4,    5,    6,    7,    8,    10,   11,   12, 13,
		14, 15, 16, 17,   18,   19,   20,   21,   22,   23,   24,   25, 0,
		10, 0,  8,  0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee,
	};

	start(&m, 0, 1, 0, 0, 1);
	opt(&m, 1232, 0, false, opts, sizeof(opts));
	assert_int_equal(parse(&m, &q), APEX_PARSE_OK);
	assert_true(q.nsid);
	assert_true(q.cookie);
	assert_memory_equal(q.cookie_client, opts + 14, 8);
	assert_int_equal(q.cookie_server_size, 16);
	assert_memory_equal(q.cookie_server, opts + 22, 16);

	/* RFC 7873 5.2.2: a cookie of 9 bytes is FORMERR */
	uint8_t bad_cookie[] = { 0, 10, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	start(&m, 0, 1, 0, 0, 1);
	opt(&m, 1232, 0, false, bad_cookie, sizeof(bad_cookie));
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);
	assert_false(q.edns);

	/* an option running past the RDATA */
	uint8_t overrun[] = { 0, 3, 0, 5, 1 };
	start(&m, 0, 1, 0, 0, 1);
	opt(&m, 1232, 0, false, overrun, sizeof(overrun));
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);
}

static void opt_placement(void **state)
{
	(void)state;
	apex_query_t q;
	msg_t m;

	/* two OPT records */
	start(&m, 0, 1, 0, 0, 2);
	opt(&m, 1232, 0, false, NULL, 0);
	opt(&m, 1232, 0, false, NULL, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);
	assert_true(q.has_question); /* the question can be echoed */

	/* an OPT in the authority section */
	start(&m, 0, 1, 0, 1, 0);
	opt(&m, 1232, 0, false, NULL, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);

	/* an OPT not owned by the root */
	start(&m, 0, 1, 0, 0, 1);
	bytes(&m, "\001x\000", 3);
	u16(&m, APEX_TYPE_OPT);
	u16(&m, 1232);
	u16(&m, 0);
	u16(&m, 0);
	u16(&m, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);
}

static void malformed_messages(void **state)
{
	(void)state;
	apex_query_t q;
	msg_t m;

	/* shorter than a header, or a response: no answer at all */
	start(&m, 0, 1, 0, 0, 0);
	m.n = 11;
	assert_int_equal(parse(&m, &q), APEX_PARSE_DROP);
	start(&m, APEX_FLAG_QR, 1, 0, 0, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_DROP);

	/* no question, two questions */
	start(&m, 0, 0, 0, 0, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);
	assert_false(q.has_question);
	start(&m, 0, 2, 0, 0, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);

	/* a question cut short */
	start(&m, 0, 1, 0, 0, 0);
	m.n -= 2;
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);
	assert_false(q.has_question);

	/* a name pointer that points forward, and one that loops */
	start(&m, 0, 1, 0, 0, 0);
	m.n = 12;
	u16(&m, 0xc000 | 20);
	u16(&m, APEX_TYPE_A);
	u16(&m, APEX_CLASS_IN);
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);
	start(&m, 0, 1, 0, 0, 0);
	m.n = 12;
	u16(&m, 0xc000 | 12);
	u16(&m, APEX_TYPE_A);
	u16(&m, APEX_CLASS_IN);
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);

	/* counts that promise a record that is not there, trailing bytes */
	start(&m, 0, 1, 1, 0, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);
	start(&m, 0, 1, 0, 0, 0);
	m.b[m.n++] = 0;
	assert_int_equal(parse(&m, &q), APEX_PARSE_FORMERR);

	/* another opcode: NOTIMP, the question still known */
	start(&m, 2u << 11, 1, 0, 0, 0);
	assert_int_equal(parse(&m, &q), APEX_PARSE_NOTIMP);
	assert_true(q.has_question);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_question),       cmocka_unit_test(edns_fields),
		cmocka_unit_test(edns_options),       cmocka_unit_test(opt_placement),
		cmocka_unit_test(malformed_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
