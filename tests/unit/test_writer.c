/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * query/writer: the response writer's contracts.  Names are compressed
 * against earlier names (the question's kept in the client's letter
 * case); an RRset goes in whole or not at all, leaving the message as it
 * was; a rollback forgets records and their compression targets; the
 * OPT record has its reserved space past the limit; the header carries
 * the section counts.  Messages are checked byte by byte and decoded by
 * ldns (an independent decoder).
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
#include "query/writer.h"
#include "util/error.h"
#include "dnsmsg.h"

/* An RRset of names (NS) or of addresses (A), built by hand. */
typedef struct rrset_buf {
	apex_rrset_t rrset;
	uint8_t rdata[512];
} rrset_buf_t;

static void ns_rrset(rrset_buf_t *r, const char *const *targets, int count)
{
	size_t pos = 0;
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < count; i++) {
		int n = apex_name_from_str(targets[i], r->rdata + pos + 2);
		assert_true(n > 0);
		apex_write_u16(r->rdata + pos, (uint16_t)n);
		pos += 2 + (size_t)n;
	}
	r->rrset = (apex_rrset_t){ .type = APEX_TYPE_NS,
				   .count = (uint16_t)count,
				   .ttl = 3600,
				   .rdata_size = (uint32_t)pos,
				   .rdata = r->rdata };
}

static void a_rrset(rrset_buf_t *r, int count)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < count; i++) {
		uint8_t *p = r->rdata + 6 * i;
		apex_write_u16(p, 4);
		p[2] = 192, p[3] = 0, p[4] = 2, p[5] = (uint8_t)(i + 1);
	}
	r->rrset = (apex_rrset_t){ .type = APEX_TYPE_A,
				   .count = (uint16_t)count,
				   .ttl = 300,
				   .rdata_size = (uint32_t)(6 * count),
				   .rdata = r->rdata };
}

static void wire(const char *text, uint8_t *out)
{
	assert_true(apex_name_from_str(text, out) > 0);
}

static ldns_pkt *decode(const uint8_t *buf, size_t size)
{
	ldns_pkt *pkt = NULL;
	assert_int_equal(ldns_wire2pkt(&pkt, buf, size), LDNS_STATUS_OK);
	return pkt;
}

static void compression_and_case(void **state)
{
	(void)state;
	uint8_t buf[512], qname[APEX_NAME_MAX], owner[APEX_NAME_MAX];
	apex_writer_t w;
	rrset_buf_t ns;
	const char *targets[] = { "ns1.ExAmple.", "ns2.example." };

	wire("ExAmple.", qname);
	wire("ExAmple.", owner);
	ns_rrset(&ns, targets, 2);
	apex_writer_init(&w, buf, sizeof(buf), sizeof(buf));
	assert_int_equal(apex_writer_question(&w, qname, NULL, APEX_TYPE_NS, APEX_CLASS_IN),
			 APEX_OK);
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_ANSWER, owner, NULL, &ns.rrset, 3600),
			 APEX_OK);
	size_t size = apex_writer_finish(&w, 0x4242, APEX_FLAG_QR | APEX_FLAG_AA);

	/* the question as sent, then the owner as a pointer to it (offset 12) */
	assert_memory_equal(buf + 12, "\007ExAmple\000", 9);
	assert_int_equal(apex_read_u16(buf + 12 + 9 + 4), 0xc000 | 12);
	/* the second target's suffix points at the question name too:
	 * "ns2" then a pointer, 3 + 1 + 2 bytes */
	assert_int_equal(apex_read_u16(buf + size - 2), 0xc000 | 12);
	assert_int_equal(apex_read_u16(buf + size - 8), 6); /* its RDLENGTH */

	ldns_pkt *pkt = decode(buf, size);
	assert_int_equal(ldns_pkt_id(pkt), 0x4242);
	assert_int_equal(ldns_pkt_ancount(pkt), 2);
	assert_int_equal(dnsmsg_count(pkt, 1, "example.", LDNS_RR_TYPE_NS), 2);
	assert_true(dnsmsg_dname_is(ldns_rr_rdf(ldns_rr_list_rr(ldns_pkt_answer(pkt), 1), 0),
				    "ns2.example."));
	ldns_pkt_free(pkt);
}

static void rrset_whole_or_not_at_all(void **state)
{
	(void)state;
	uint8_t buf[512], qname[APEX_NAME_MAX];
	apex_writer_t w;
	rrset_buf_t a;

	wire("www.example.", qname);
	a_rrset(&a, 10); /* 10 records of 16 bytes each (compressed owner) */
	/* room for the header, the question and 5 records only */
	size_t limit = 12 + 17 + 5 * 16; /* question: 13-byte name, type, class */
	apex_writer_init(&w, buf, limit, sizeof(buf));
	assert_int_equal(apex_writer_question(&w, qname, NULL, APEX_TYPE_A, APEX_CLASS_IN),
			 APEX_OK);
	size_t pos = w.pos;
	memset(buf + pos, 0x5a, sizeof(buf) - pos);
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_ANSWER, qname, NULL, &a.rrset, 300),
			 APEX_ESPACE);
	assert_int_equal(w.pos, pos);
	assert_int_equal(w.counts[APEX_SECTION_ANSWER], 0);
	/* five fit exactly */
	a_rrset(&a, 5);
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_ANSWER, qname, NULL, &a.rrset, 300),
			 APEX_OK);
	assert_int_equal(w.pos, limit);
	assert_int_equal(w.counts[APEX_SECTION_ANSWER], 5);
	/* one more record does not */
	a_rrset(&a, 1);
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_ADDITIONAL, qname, NULL, &a.rrset, 300),
			 APEX_ESPACE);
	assert_int_equal(w.pos, limit);
	assert_int_equal(w.counts[APEX_SECTION_ADDITIONAL], 0);
}

static void rollback_forgets(void **state)
{
	(void)state;
	uint8_t buf[512], qname[APEX_NAME_MAX], owner[APEX_NAME_MAX];
	apex_writer_t w;
	apex_writer_mark_t mark;
	rrset_buf_t ns, a;
	const char *targets[] = { "ns.sub.example." };

	wire("example.", qname);
	wire("sub.example.", owner);
	ns_rrset(&ns, targets, 1);
	a_rrset(&a, 1);
	apex_writer_init(&w, buf, sizeof(buf), sizeof(buf));
	assert_int_equal(apex_writer_question(&w, qname, NULL, APEX_TYPE_A, APEX_CLASS_IN),
			 APEX_OK);
	apex_writer_mark(&w, &mark);
	unsigned targets_before = w.compress_count;
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_AUTHORITY, owner, NULL, &ns.rrset, 60),
			 APEX_OK);
	assert_true(w.compress_count > targets_before);
	apex_writer_rollback(&w, &mark);
	assert_int_equal(w.pos, mark.pos);
	assert_int_equal(w.counts[APEX_SECTION_AUTHORITY], 0);
	assert_int_equal(w.compress_count, targets_before);
	/* "sub.example." is no target any more: written again in full
	 * (its "sub" label, then a pointer to the question's "example.") */
	size_t at = w.pos;
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_ANSWER, owner, NULL, &a.rrset, 60),
			 APEX_OK);
	assert_memory_equal(buf + at, "\003sub", 4);
	assert_int_equal(apex_read_u16(buf + at + 4), 0xc000 | 12);
	size_t size = apex_writer_finish(&w, 1, APEX_FLAG_QR);
	ldns_pkt *pkt = decode(buf, size);
	assert_int_equal(ldns_pkt_ancount(pkt), 1);
	assert_int_equal(ldns_pkt_nscount(pkt), 0);
	ldns_pkt_free(pkt);
}

static void opt_in_reserved_space(void **state)
{
	(void)state;
	uint8_t buf[512], qname[APEX_NAME_MAX];
	apex_writer_t w;
	rrset_buf_t a;
	const uint8_t nsid[] = "ns1";

	wire("www.example.", qname);
	size_t opt = apex_writer_opt_size(nsid, 3);
	size_t limit = 12 + 17 + 16;
	apex_writer_init(&w, buf, limit, limit + opt);
	assert_int_equal(apex_writer_question(&w, qname, NULL, APEX_TYPE_A, APEX_CLASS_IN),
			 APEX_OK);
	a_rrset(&a, 2);
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_ANSWER, qname, NULL, &a.rrset, 300),
			 APEX_ESPACE);
	a_rrset(&a, 1);
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_ANSWER, qname, NULL, &a.rrset, 300),
			 APEX_OK);
	assert_int_equal(apex_writer_opt(&w, 1232, 0, true, nsid, 3), APEX_OK);
	size_t size = apex_writer_finish(&w, 7, APEX_FLAG_QR | APEX_FLAG_TC);
	assert_int_equal(size, limit + opt);
	ldns_pkt *pkt = decode(buf, size);
	assert_true(ldns_pkt_edns(pkt));
	assert_true(ldns_pkt_edns_do(pkt));
	assert_int_equal(ldns_pkt_edns_udp_size(pkt), 1232);
	assert_true(ldns_pkt_tc(pkt));
	assert_int_equal(ldns_pkt_ancount(pkt), 1);
	assert_int_equal(apex_read_u16(buf + APEX_HDR_ARCOUNT), 1); /* ldns takes the OPT out */
	ldns_pkt_free(pkt);
	/* with no room at all, the OPT is refused */
	apex_writer_init(&w, buf, limit, limit);
	assert_int_equal(apex_writer_question(&w, qname, NULL, APEX_TYPE_A, APEX_CLASS_IN),
			 APEX_OK);
	w.pos = limit;
	assert_int_equal(apex_writer_opt(&w, 1232, 0, false, NULL, 0), APEX_ESPACE);
}

static void header_counts(void **state)
{
	(void)state;
	uint8_t buf[512], qname[APEX_NAME_MAX];
	apex_writer_t w;
	rrset_buf_t a;

	wire("example.", qname);
	apex_writer_init(&w, buf, sizeof(buf), sizeof(buf));
	assert_int_equal(apex_writer_question(&w, qname, NULL, APEX_TYPE_A, APEX_CLASS_IN),
			 APEX_OK);
	a_rrset(&a, 3);
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_ANSWER, qname, NULL, &a.rrset, 300), 0);
	a_rrset(&a, 2);
	assert_int_equal(apex_writer_rrset(&w, APEX_SECTION_AUTHORITY, qname, NULL, &a.rrset, 300),
			 0);
	assert_int_equal(apex_writer_rr(&w, APEX_SECTION_ADDITIONAL, qname, APEX_TYPE_TXT,
					APEX_CLASS_IN, 60, (const uint8_t *)"\002hi", 3),
			 APEX_OK);
	size_t size = apex_writer_finish(&w, 0xabcd, APEX_FLAG_QR | APEX_FLAG_AA | 3);
	assert_int_equal(apex_read_u16(buf + APEX_HDR_ID), 0xabcd);
	assert_int_equal(apex_read_u16(buf + APEX_HDR_FLAGS), APEX_FLAG_QR | APEX_FLAG_AA | 3);
	assert_int_equal(apex_read_u16(buf + APEX_HDR_QDCOUNT), 1);
	assert_int_equal(apex_read_u16(buf + APEX_HDR_ANCOUNT), 3);
	assert_int_equal(apex_read_u16(buf + APEX_HDR_NSCOUNT), 2);
	assert_int_equal(apex_read_u16(buf + APEX_HDR_ARCOUNT), 1);
	ldns_pkt_free(decode(buf, size));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(compression_and_case), cmocka_unit_test(rrset_whole_or_not_at_all),
		cmocka_unit_test(rollback_forgets),     cmocka_unit_test(opt_in_reserved_space),
		cmocka_unit_test(header_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
