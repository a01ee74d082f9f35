/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/xfr_message: a transfer's response message decoded in place gives
 * the records ldns gives for the same message, names in owners and RDATA
 * uncompressed, letter case kept: for every type read without ldns and
 * for types left to ldns, in a message built as primaries build them and
 * in thousands of its mutations (bounded, deterministic); a message cut
 * short or with a pointer that loops is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "xfr/xfr_message.h"
#include "wire_msg.h"

#define MUTATIONS 20000

/* A label sequence then a pointer to offset to (0: the root label). */
static void put_labels(msg_t *m, const char *label, uint16_t to)
{
	if (label != NULL) {
		msg_put(m, (uint8_t[]){ (uint8_t)strlen(label) }, 1);
		msg_put(m, label, strlen(label));
	}
	if (to != 0)
		msg_put_u16(m, (uint16_t)(0xC000 | to));
	else
		msg_put(m, (uint8_t[]){ 0 }, 1);
}

/* A record's owner, type, class, TTL; the RDATA length is set by
 * rr_end(). Returns where the owner starts. */
static size_t rr_begin(msg_t *m, const char *label, uint16_t to, uint16_t type, size_t *len_at)
{
	size_t at = m->size;
	put_labels(m, label, to);
	msg_put_u16(m, type);
	msg_put_u16(m, APEX_CLASS_IN);
	msg_put_u32(m, 3600);
	*len_at = m->size;
	msg_put_u16(m, 0);
	return at;
}

static void rr_end(msg_t *m, size_t len_at)
{
	apex_write_u16(m->data + len_at, (uint16_t)(m->size - len_at - 2));
	m->ancount++;
	apex_write_u16(m->data + 6, m->ancount);
}

/* One message with a record of each type read without ldns, and some
 * left to ldns, with names compressed everywhere they may be. */
static void build(msg_t *m)
{
	size_t len, www, sub;
	uint8_t bytes[64];

	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 7 + 1);
	memset(m, 0, sizeof(*m));
	msg_put_u16(m, 0x4242);
	msg_put_u16(m, APEX_FLAG_QR | APEX_FLAG_AA);
	msg_put_u16(m, 1);
	msg_put_u16(m, 0);
	msg_put_u16(m, 0);
	msg_put_u16(m, 0);
	put_labels(m, "Example", 0); /* the question name, at 12 */
	msg_put_u16(m, APEX_TYPE_AXFR);
	msg_put_u16(m, APEX_CLASS_IN);
	rr_begin(m, NULL, 12, APEX_TYPE_SOA, &len);
	put_labels(m, "NS", 12);
	put_labels(m, "Host", 12);
	msg_put(m, bytes, 20);
	rr_end(m, len);
	www = rr_begin(m, "WWW", 12, APEX_TYPE_A, &len);
	msg_put(m, bytes, 4);
	rr_end(m, len);
	rr_begin(m, NULL, (uint16_t)www, APEX_TYPE_AAAA, &len);
	msg_put(m, bytes, 16);
	rr_end(m, len);
	sub = rr_begin(m, "Sub", 12, APEX_TYPE_NS, &len);
	put_labels(m, "ns1", (uint16_t)sub);
	rr_end(m, len);
	uint16_t named[] = { APEX_TYPE_CNAME, APEX_TYPE_DNAME, APEX_TYPE_PTR };
	for (size_t i = 0; i < 3; i++) {
		rr_begin(m, i == 0 ? "alias" : "d", 12, named[i], &len);
		put_labels(m, NULL, (uint16_t)www);
		rr_end(m, len);
	}
	rr_begin(m, NULL, 12, APEX_TYPE_MX, &len);
	msg_put_u16(m, 10);
	put_labels(m, "Mail", 12);
	rr_end(m, len);
	rr_begin(m, "_sip", 12, APEX_TYPE_SRV, &len);
	msg_put(m, bytes, 6);
	put_labels(m, NULL, (uint16_t)www);
	rr_end(m, len);
	rr_begin(m, NULL, (uint16_t)www, APEX_TYPE_RRSIG, &len);
	msg_put_u16(m, APEX_TYPE_A);
	msg_put(m, bytes, 16);
	put_labels(m, NULL, 12);
	msg_put(m, bytes, 40);
	rr_end(m, len);
	rr_begin(m, NULL, (uint16_t)www, APEX_TYPE_NSEC, &len);
	put_labels(m, "Zz", 12);
	msg_put(m, (uint8_t[]){ 0, 2, 0x40, 0x01 }, 4);
	rr_end(m, len);
	rr_begin(m, NULL, (uint16_t)sub, APEX_TYPE_DS, &len);
	msg_put(m, bytes, 24);
	rr_end(m, len);
	rr_begin(m, NULL, 12, APEX_TYPE_DNSKEY, &len);
	msg_put_u16(m, 257);
	msg_put(m, (uint8_t[]){ 3, 13 }, 2);
	msg_put(m, bytes, 32);
	rr_end(m, len);
	rr_begin(m, "h", 12, APEX_TYPE_NSEC3, &len);
	msg_put(m, (uint8_t[]){ 1, 0, 0, 0, 2, 0xAB, 0xCD, 20 }, 8);
	msg_put(m, bytes, 20);
	msg_put(m, (uint8_t[]){ 0, 1, 0x40 }, 3);
	rr_end(m, len);
	rr_begin(m, NULL, 12, APEX_TYPE_NSEC3PARAM, &len);
	msg_put(m, (uint8_t[]){ 1, 0, 0, 0, 2, 0xAB, 0xCD }, 7);
	rr_end(m, len);
	rr_begin(m, "t", 12, APEX_TYPE_TXT, &len);
	msg_put(m, (uint8_t[]){ 3, 'a', 'b', 'c', 0, 1, 'Z' }, 7);
	rr_end(m, len);
	/* left to ldns: HINFO, and NAPTR whose replacement is compressed */
	rr_begin(m, "hi", 12, APEX_TYPE_HINFO, &len);
	msg_put(m, (uint8_t[]){ 1, 'x', 1, 'y' }, 4);
	rr_end(m, len);
	rr_begin(m, "n", 12, APEX_TYPE_NAPTR, &len);
	msg_put(m, (uint8_t[]){ 0, 1, 0, 2, 1, 'u', 0, 0 }, 8);
	put_labels(m, NULL, (uint16_t)www);
	rr_end(m, len);
}

/* Every record of msg by both decoders: the same, or refused by apex.
 * Returns 1 if both took the message, 0 if not. */
static int compare(const uint8_t *data, size_t size)
{
	static apex_xfr_record_buf_t buf;
	apex_xfr_message_t m;
	ldns_pkt *pkt = NULL;
	apex_rr_t rr;
	int rc = apex_xfr_message_open(&m, data, size);
	size_t i = 0;

	if (ldns_wire2pkt(&pkt, data, size) != LDNS_STATUS_OK) {
		/* apex may take what ldns does not (not its other sections,
		 * which are not read): nothing to compare */
		return 0;
	}
	ldns_rr_list *answer = ldns_pkt_answer(pkt);
	ldns_buffer *lb = ldns_buffer_new(1024);
	assert_non_null(lb);
	while (rc == APEX_OK && (rc = apex_xfr_message_next(&m, &buf, &rr)) == 1) {
		assert_true(i < ldns_rr_list_rr_count(answer));
		const ldns_rr *l = ldns_rr_list_rr(answer, i++);
		const ldns_rdf *owner = ldns_rr_owner(l);
		assert_int_equal(apex_name_size(rr.owner), ldns_rdf_size(owner));
		assert_memory_equal(rr.owner, ldns_rdf_data(owner), ldns_rdf_size(owner));
		assert_int_equal(rr.type, ldns_rr_get_type(l));
		assert_int_equal(rr.rclass, ldns_rr_get_class(l));
		assert_int_equal(rr.ttl, ldns_rr_ttl(l) > INT32_MAX ? 0 : ldns_rr_ttl(l));
		ldns_buffer_clear(lb);
		assert_int_equal(ldns_rr_rdata2buffer_wire(lb, l), LDNS_STATUS_OK);
		assert_int_equal(rr.rdlength, ldns_buffer_position(lb));
		assert_memory_equal(rr.rdata, ldns_buffer_begin(lb), rr.rdlength);
		rc = APEX_OK;
	}
	/* apex refuses pointers that point forward; ldns follows them */
	if (rc == 0)
		assert_int_equal(i, ldns_rr_list_rr_count(answer));
	ldns_buffer_free(lb);
	ldns_pkt_free(pkt);
	apex_xfr_record_buf_free(&buf);
	return rc == 0;
}

static void same_records_as_ldns(void **state)
{
	(void)state;
	msg_t m;
	build(&m);
	assert_int_equal(compare(m.data, m.size), 1);
	assert_int_equal(m.ancount, 18);
}

static void mutations_read_as_ldns_reads_them(void **state)
{
	(void)state;
	msg_t m, x;
	uint32_t seed = 12345;
	int both = 0;

	build(&m);
	for (int i = 0; i < MUTATIONS; i++) {
		x = m;
		int flips = 1 + i % 3;
		for (int f = 0; f < flips; f++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = 12 + (seed >> 8) % (x.size - 12);
			seed = seed * 1103515245u + 12345u;
			x.data[at] = (uint8_t)(seed >> 16);
		}
		if (i % 10 == 0)
			x.size -= (seed >> 4) % 32;
		both += compare(x.data, x.size);
	}
	/* enough of them are well formed to compare records */
	assert_true(both > MUTATIONS / 20);
}

static void broken_messages_are_refused(void **state)
{
	(void)state;
	static apex_xfr_record_buf_t buf;
	apex_xfr_message_t m;
	apex_rr_t rr;
	msg_t x;

	build(&x);
	assert_int_equal(apex_xfr_message_open(&m, x.data, 11), APEX_EMALFORMED);
	/* cut inside the last record: the records before it come */
	assert_int_equal(apex_xfr_message_open(&m, x.data, x.size - 3), APEX_OK);
	int rc, n = 0;
	while ((rc = apex_xfr_message_next(&m, &buf, &rr)) == 1)
		n++;
	assert_int_equal(rc, APEX_EMALFORMED);
	assert_int_equal(n, x.ancount - 1);
	assert_non_null(m.why);
	/* a pointer to itself as the first record's owner */
	size_t first = 12 + 9 + 4;
	x.data[first] = 0xC0;
	x.data[first + 1] = (uint8_t)first;
	assert_int_equal(apex_xfr_message_open(&m, x.data, x.size), APEX_OK);
	assert_int_equal(apex_xfr_message_next(&m, &buf, &rr), APEX_EMALFORMED);
	/* an authority record cut short, after the answers */
	build(&x);
	apex_write_u16(x.data + 8, 1);
	assert_int_equal(apex_xfr_message_open(&m, x.data, x.size), APEX_OK);
	while ((rc = apex_xfr_message_next(&m, &buf, &rr)) == 1)
		;
	assert_int_equal(rc, APEX_EMALFORMED);
	apex_xfr_record_buf_free(&buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_records_as_ldns),
		cmocka_unit_test(mutations_read_as_ldns_reads_them),
		cmocka_unit_test(broken_messages_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
