/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Query engine tests: each kind of answer on the repository's zones
 * (root.zone NSEC, fj.zone NSEC3, the example. feature zone unsigned,
 * NSEC-signed and NSEC3-signed), checked through ldns's decoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dns/rrtype.h"
#include "query/answer.h"
#include "query/precompute.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/zoneset.h"

#include "dnsmsg.h"

/* root + fj + example., example. unsigned, example. NSEC, example. NSEC3 */
enum { SET_ROOT, SET_PLAIN, SET_NSEC, SET_NSEC3, SET_COUNT };
static apex_zonetable_t tables[SET_COUNT];
static apex_zoneset_t *sets[SET_COUNT];
static apex_answer_config_t cfg;

static uint8_t query_buf[1024];
static size_t query_size;
static uint8_t resp[APEX_MAX_MESSAGE];
static size_t resp_size;
static apex_answer_info_t info;

static int load_into(apex_zonetable_t *table, const char *file, const char *origin)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/zones/%s", APEX_SRCDIR, file);
	uint8_t wire[APEX_NAME_MAX];
	if (apex_name_from_str(origin, wire) < 0)
		return -1;
	apex_zone_t *zone = NULL;
	char err[512] = "";
	if (apex_zone_load(path, wire, &zone, err, sizeof(err)) != APEX_OK ||
	    apex_precompute(zone) != APEX_OK) {
		fprintf(stderr, "load %s: %s\n", path, err);
		return -1;
	}
	return apex_zonetable_publish(table, zone) == APEX_OK ? 0 : -1;
}

static int setup(void **state)
{
	(void)state;
	apex_answer_config_init(&cfg);
	for (int i = 0; i < SET_COUNT; i++) {
		if (apex_zonetable_init(&tables[i]) != APEX_OK)
			return -1;
	}
	if (load_into(&tables[SET_ROOT], "root.zone", ".") ||
	    load_into(&tables[SET_ROOT], "fj.zone", "fj.") ||
	    load_into(&tables[SET_ROOT], "example.zone", "example.") ||
	    load_into(&tables[SET_PLAIN], "example.zone", "example.") ||
	    load_into(&tables[SET_NSEC], "example.nsec.zone", "example.") ||
	    load_into(&tables[SET_NSEC3], "example.nsec3.zone", "example."))
		return -1;
	for (int i = 0; i < SET_COUNT; i++) {
		unsigned long long gen;
		sets[i] = apex_zonetable_acquire(&tables[i], &gen);
		if (sets[i] == NULL)
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < SET_COUNT; i++) {
		apex_zoneset_release(sets[i]);
		apex_zonetable_destroy(&tables[i]);
	}
	return 0;
}

/* Answer the message in query_buf; returns it decoded (never NULL). */
static ldns_pkt *answer_raw(int set, apex_transport_t transport)
{
	resp_size = apex_answer(sets[set], &cfg, transport, query_buf, query_size, resp,
				sizeof(resp), &info);
	assert_true(resp_size >= APEX_HEADER_SIZE);
	ldns_pkt *pkt = NULL;
	assert_int_equal(ldns_wire2pkt(&pkt, resp, resp_size), LDNS_STATUS_OK);
	assert_non_null(pkt);
	assert_int_equal(apex_read_u16(resp), 0x1234);
	assert_true(ldns_pkt_qr(pkt));
	assert_false(ldns_pkt_ra(pkt));
	assert_false(ldns_pkt_ad(pkt));
	return pkt;
}

static ldns_pkt *ask_opts(int set, const char *name, uint16_t type, const dnsmsg_opts_t *o,
			  apex_transport_t transport)
{
	query_size = dnsmsg_query(query_buf, name, type, o);
	assert_true(query_size > 0);
	return answer_raw(set, transport);
}

static ldns_pkt *ask(int set, const char *name, uint16_t type, bool dnssec_ok)
{
	dnsmsg_opts_t o = { .edns = true, .dnssec_ok = dnssec_ok };
	return ask_opts(set, name, type, &o, APEX_TRANSPORT_UDP);
}

static uint32_t soa_ttl(ldns_pkt *pkt)
{
	ldns_rr *soa = dnsmsg_first(pkt, 2, LDNS_RR_TYPE_SOA);
	assert_non_null(soa);
	return ldns_rr_ttl(soa);
}

/* ------------------------------------------------------------ positive answers */

static void test_exact_answer(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_ROOT, ".", APEX_TYPE_SOA, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, ".", LDNS_RR_TYPE_SOA), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 1, ".", LDNS_RR_TYPE_SOA), 1);
	assert_int_equal(ldns_pkt_ancount(pkt), 2);
	assert_true(ldns_pkt_edns(pkt));
	assert_true(ldns_pkt_edns_do(pkt));
	assert_int_equal(ldns_pkt_edns_udp_size(pkt), 1232);
	assert_int_equal(info.qtype, APEX_TYPE_SOA);
	assert_int_equal(info.rcode, 0);
	assert_false(info.truncated);
	assert_false(info.dropped);
	ldns_pkt_free(pkt);

	/* without DO: no RRSIG, DO not echoed */
	pkt = ask(SET_ROOT, ".", APEX_TYPE_SOA, false);
	assert_int_equal(ldns_pkt_ancount(pkt), 1);
	assert_false(ldns_pkt_edns_do(pkt));
	ldns_pkt_free(pkt);

	/* the two-record RRset of the feature zone */
	pkt = ask(SET_PLAIN, "www.example.", APEX_TYPE_A, false);
	assert_int_equal(dnsmsg_count(pkt, 1, "www.example.", LDNS_RR_TYPE_A), 2);
	assert_int_equal(ldns_pkt_nscount(pkt), 0);
	assert_true(ldns_pkt_aa(pkt));
	ldns_pkt_free(pkt);

	/* mixed-case owner found with another case */
	pkt = ask(SET_PLAIN, "mixed.case.example.", APEX_TYPE_TXT, false);
	assert_int_equal(dnsmsg_count(pkt, 1, "mixed.case.example.", LDNS_RR_TYPE_TXT), 1);
	ldns_pkt_free(pkt);
}

static void test_question_case_echo(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_PLAIN, "WwW.ExAmPlE.", APEX_TYPE_A, false);
	/* the question is the client's bytes, letter for letter */
	assert_memory_equal(resp + APEX_HEADER_SIZE, query_buf + APEX_HEADER_SIZE,
			    apex_name_size(query_buf + APEX_HEADER_SIZE) + 4);
	assert_int_equal(dnsmsg_count(pkt, 1, "www.example.", LDNS_RR_TYPE_A), 2);
	ldns_pkt_free(pkt);
}

static void test_flags_copied(void **state)
{
	(void)state;
	dnsmsg_opts_t o = { .flags = APEX_FLAG_RD | APEX_FLAG_CD | APEX_FLAG_AD };
	ldns_pkt *pkt = ask_opts(SET_PLAIN, "www.example.", APEX_TYPE_A, &o, APEX_TRANSPORT_UDP);
	assert_true(ldns_pkt_rd(pkt));
	assert_true(ldns_pkt_cd(pkt));
	assert_false(ldns_pkt_ad(pkt));
	assert_false(ldns_pkt_edns(pkt)); /* no OPT without one in the query */
	ldns_pkt_free(pkt);
	o.flags = 0;
	pkt = ask_opts(SET_PLAIN, "www.example.", APEX_TYPE_A, &o, APEX_TRANSPORT_UDP);
	assert_false(ldns_pkt_rd(pkt));
	assert_false(ldns_pkt_cd(pkt));
	ldns_pkt_free(pkt);
}

static void test_additional_mx_srv_ns(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_PLAIN, "example.", APEX_TYPE_MX, false);
	assert_int_equal(dnsmsg_count(pkt, 1, "example.", LDNS_RR_TYPE_MX), 1);
	ldns_rr *mx = dnsmsg_first(pkt, 1, LDNS_RR_TYPE_MX);
	assert_true(dnsmsg_dname_is(ldns_rr_rdf(mx, 1), "mail.example."));
	assert_int_equal(dnsmsg_count(pkt, 3, "mail.example.", LDNS_RR_TYPE_A), 1);
	assert_int_equal(dnsmsg_count(pkt, 3, "mail.example.", LDNS_RR_TYPE_AAAA), 1);
	ldns_pkt_free(pkt);

	pkt = ask(SET_PLAIN, "_sip._tcp.example.", APEX_TYPE_SRV, false);
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_SRV), 1);
	assert_int_equal(dnsmsg_count(pkt, 3, "sip.example.", LDNS_RR_TYPE_A), 1);
	ldns_pkt_free(pkt);

	/* NS at the apex: in-zone addresses, signed ones with RRSIGs under DO */
	pkt = ask(SET_NSEC, "example.", APEX_TYPE_NS, true);
	assert_int_equal(dnsmsg_count(pkt, 1, "example.", LDNS_RR_TYPE_NS), 2);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 1, "example.", LDNS_RR_TYPE_NS), 1);
	assert_int_equal(dnsmsg_count(pkt, 3, "ns1.example.", LDNS_RR_TYPE_A), 1);
	assert_int_equal(dnsmsg_count(pkt, 3, "ns2.example.", LDNS_RR_TYPE_AAAA), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 3, "ns1.example.", LDNS_RR_TYPE_A), 1);
	assert_true(ldns_pkt_aa(pkt));
	ldns_pkt_free(pkt);
}

static void test_any(void **state)
{
	(void)state;
	/* RFC 8482 over UDP: one RRset, the first by type (A before TXT) */
	ldns_pkt *pkt = ask(SET_PLAIN, "www.example.", APEX_TYPE_ANY, false);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, "www.example.", LDNS_RR_TYPE_A), 2);
	assert_int_equal(dnsmsg_count(pkt, 1, "www.example.", LDNS_RR_TYPE_TXT), 0);
	ldns_pkt_free(pkt);
	/* over TCP the same */
	dnsmsg_opts_t o = { 0 };
	pkt = ask_opts(SET_PLAIN, "www.example.", APEX_TYPE_ANY, &o, APEX_TRANSPORT_TCP);
	assert_int_equal(dnsmsg_count(pkt, 1, "www.example.", LDNS_RR_TYPE_A), 2);
	assert_int_equal(ldns_pkt_ancount(pkt), 2);
	ldns_pkt_free(pkt);
	/* with DO: the RRset and its RRSIG; an ENT has nothing: NODATA */
	pkt = ask(SET_NSEC, "www.example.", APEX_TYPE_ANY, true);
	assert_int_equal(dnsmsg_count(pkt, 1, "www.example.", LDNS_RR_TYPE_A), 2);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 1, "www.example.", LDNS_RR_TYPE_A), 1);
	assert_int_equal(ldns_pkt_ancount(pkt), 3);
	ldns_pkt_free(pkt);
	pkt = ask(SET_PLAIN, "c.ent.example.", APEX_TYPE_ANY, false);
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, "example.", LDNS_RR_TYPE_SOA), 1);
	ldns_pkt_free(pkt);
}

/* ------------------------------------------------------------ referrals */

static void test_referral_root_ds(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_ROOT, "example.com.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_false(ldns_pkt_aa(pkt));
	assert_false(ldns_pkt_tc(pkt));
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, "com.", LDNS_RR_TYPE_NS), 13);
	assert_int_equal(dnsmsg_count(pkt, 2, "com.", LDNS_RR_TYPE_DS), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 2, "com.", LDNS_RR_TYPE_DS), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 2, NULL, LDNS_RR_TYPE_NS), 0);
	/* sibling glue (gtld-servers.net is not below com.) added as it fits */
	assert_true(dnsmsg_count(pkt, 3, NULL, LDNS_RR_TYPE_A) > 0);
	ldns_pkt_free(pkt);

	/* no DO: no DS */
	pkt = ask(SET_ROOT, "example.com.", APEX_TYPE_A, false);
	assert_int_equal(dnsmsg_count(pkt, 2, "com.", LDNS_RR_TYPE_DS), 0);
	ldns_pkt_free(pkt);
}

static void test_referral_glue_in_zone(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_PLAIN, "www.sub.example.", APEX_TYPE_A, false);
	assert_false(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 2, "sub.example.", LDNS_RR_TYPE_NS), 2);
	assert_int_equal(dnsmsg_count(pkt, 3, "ns1.sub.example.", LDNS_RR_TYPE_A), 1);
	assert_int_equal(dnsmsg_count(pkt, 3, "ns1.sub.example.", LDNS_RR_TYPE_AAAA), 1);
	assert_int_equal(dnsmsg_count(pkt, 3, "ns2.sub.example.", LDNS_RR_TYPE_A), 1);
	ldns_pkt_free(pkt);

	/* an unsigned zone puts no DS in a referral, even with DO */
	pkt = ask(SET_PLAIN, "www.sub.example.", APEX_TYPE_A, true);
	assert_int_equal(dnsmsg_count(pkt, 2, "sub.example.", LDNS_RR_TYPE_NS), 2);
	assert_int_equal(dnsmsg_count(pkt, 2, NULL, LDNS_RR_TYPE_DS), 0);
	ldns_pkt_free(pkt);

	/* a query for the glue name itself is a referral too */
	pkt = ask(SET_PLAIN, "ns1.sub.example.", APEX_TYPE_A, false);
	assert_false(ldns_pkt_aa(pkt));
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, "sub.example.", LDNS_RR_TYPE_NS), 2);
	ldns_pkt_free(pkt);

	/* signed secure delegation: DS + RRSIG; insecure one in an NSEC zone: NSEC of the cut */
	pkt = ask(SET_NSEC, "www.sub.example.", APEX_TYPE_A, true);
	assert_int_equal(dnsmsg_count(pkt, 2, "sub.example.", LDNS_RR_TYPE_DS), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 2, "sub.example.", LDNS_RR_TYPE_DS), 1);
	ldns_pkt_free(pkt);
	pkt = ask(SET_NSEC, "www.nods.example.", APEX_TYPE_A, true);
	assert_int_equal(dnsmsg_count(pkt, 2, "nods.example.", LDNS_RR_TYPE_NS), 2);
	assert_int_equal(dnsmsg_count(pkt, 2, "nods.example.", LDNS_RR_TYPE_DS), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, "nods.example.", LDNS_RR_TYPE_NSEC), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 2, "nods.example.", LDNS_RR_TYPE_NSEC), 1);
	ldns_pkt_free(pkt);
}

static void test_referral_nsec3(void **state)
{
	(void)state;
	/* fj.: no opt-out, the delegation has its own NSEC3 */
	ldns_pkt *pkt = ask(SET_ROOT, "www.101domain.com.fj.", APEX_TYPE_A, true);
	assert_false(ldns_pkt_aa(pkt));
	assert_true(dnsmsg_count(pkt, 2, "101domain.com.fj.", LDNS_RR_TYPE_NS) > 0);
	assert_int_equal(dnsmsg_count(pkt, 2, NULL, LDNS_RR_TYPE_NSEC3), 1);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "101domain.com.fj."), 2);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 2, NULL, LDNS_RR_TYPE_NSEC3), 1);
	ldns_pkt_free(pkt);

	/* example. NSEC3 opt-out: nods. has no NSEC3; closest provable
	 * encloser proof (RFC 5155 7.2.7) */
	pkt = ask(SET_NSEC3, "www.nods.example.", APEX_TYPE_A, true);
	assert_int_equal(dnsmsg_count(pkt, 2, "nods.example.", LDNS_RR_TYPE_NS), 2);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "example."), 2);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "nods.example."), 1);
	ldns_pkt_free(pkt);
}

static void test_ds_at_cut(void **state)
{
	(void)state;
	/* answered from the parent side, authoritatively */
	ldns_pkt *pkt = ask(SET_ROOT, "com.", APEX_TYPE_DS, true);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, "com.", LDNS_RR_TYPE_DS), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 1, "com.", LDNS_RR_TYPE_DS), 1);
	assert_int_equal(dnsmsg_count(pkt, 2, NULL, LDNS_RR_TYPE_NS), 0);
	ldns_pkt_free(pkt);

	/* fj. is served too: its DS still comes from the root zone */
	pkt = ask(SET_ROOT, "fj.", APEX_TYPE_DS, true);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, "fj.", LDNS_RR_TYPE_DS), 1);
	ldns_rr *sig = NULL;
	for (size_t i = 0; i < ldns_pkt_ancount(pkt); i++) {
		if (ldns_rr_get_type(ldns_rr_list_rr(ldns_pkt_answer(pkt), i)) ==
		    LDNS_RR_TYPE_RRSIG)
			sig = ldns_rr_list_rr(ldns_pkt_answer(pkt), i);
	}
	assert_non_null(sig);
	assert_true(dnsmsg_dname_is(ldns_rr_rrsig_signame(sig), "."));
	ldns_pkt_free(pkt);

	/* DS at an insecure cut: NODATA with the cut's NSEC */
	pkt = ask(SET_NSEC, "nods.example.", APEX_TYPE_DS, true);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, "example.", LDNS_RR_TYPE_SOA), 1);
	assert_int_equal(dnsmsg_count(pkt, 2, "nods.example.", LDNS_RR_TYPE_NSEC), 1);
	ldns_pkt_free(pkt);

	/* DS at the apex of a zone whose parent is not served: NODATA */
	pkt = ask(SET_PLAIN, "example.", APEX_TYPE_DS, false);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, "example.", LDNS_RR_TYPE_SOA), 1);
	ldns_pkt_free(pkt);
}

/* ------------------------------------------------------------ negative answers */

static void test_nxdomain_nsec(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_ROOT, "xx--nonexistent.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NXDOMAIN);
	assert_int_equal(info.rcode, LDNS_RCODE_NXDOMAIN);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, ".", LDNS_RR_TYPE_SOA), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 2, ".", LDNS_RR_TYPE_SOA), 1);
	assert_true(dnsmsg_nsec_covers(pkt, "xx--nonexistent."));
	assert_true(dnsmsg_nsec_covers(pkt, "*."));
	int nsecs = dnsmsg_count(pkt, 2, NULL, LDNS_RR_TYPE_NSEC);
	assert_true(nsecs >= 1 && nsecs <= 2);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 2, NULL, LDNS_RR_TYPE_NSEC), nsecs);
	ldns_pkt_free(pkt);

	/* RFC 2308: SOA TTL = min(TTL, MINIMUM): 3600 and 300 in example. */
	pkt = ask(SET_NSEC, "nothere.example.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NXDOMAIN);
	assert_int_equal(soa_ttl(pkt), 300);
	/* ... and its RRSIG's TTL with it (3600 in the file) */
	ldns_rr_list *auth = ldns_pkt_authority(pkt);
	int soa_sigs = 0;
	for (size_t i = 0; i < ldns_rr_list_rr_count(auth); i++) {
		ldns_rr *rr = ldns_rr_list_rr(auth, i);
		if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_RRSIG &&
		    ldns_rdf2rr_type(ldns_rr_rrsig_typecovered(rr)) == LDNS_RR_TYPE_SOA) {
			assert_int_equal(ldns_rr_ttl(rr), 300);
			soa_sigs++;
		}
	}
	assert_int_equal(soa_sigs, 1);
	assert_true(dnsmsg_nsec_covers(pkt, "nothere.example."));
	assert_true(dnsmsg_nsec_covers(pkt, "*.example."));
	ldns_pkt_free(pkt);

	/* unsigned zone: no proof at all even with DO */
	pkt = ask(SET_PLAIN, "nothere.example.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NXDOMAIN);
	assert_int_equal(ldns_pkt_nscount(pkt), 1);
	ldns_pkt_free(pkt);
}

static void test_nodata_nsec(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_ROOT, ".", APEX_TYPE_MX, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, ".", LDNS_RR_TYPE_SOA), 1);
	assert_int_equal(dnsmsg_count(pkt, 2, ".", LDNS_RR_TYPE_NSEC), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 2, ".", LDNS_RR_TYPE_NSEC), 1);
	ldns_pkt_free(pkt);
}

static void test_nxdomain_nsec3(void **state)
{
	(void)state;
	/* with RSA-2048 signatures the full proof (1513 bytes) exceeds 1232:
	 * over UDP it is truncated, over TCP complete */
	ldns_pkt *pkt = ask(SET_ROOT, "xx--nonexistent.fj.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NXDOMAIN);
	assert_true(ldns_pkt_tc(pkt));
	assert_true(resp_size <= 1232);
	ldns_pkt_free(pkt);
	dnsmsg_opts_t tcp = { .edns = true, .dnssec_ok = true };
	pkt = ask_opts(SET_ROOT, "xx--nonexistent.fj.", APEX_TYPE_A, &tcp, APEX_TRANSPORT_TCP);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NXDOMAIN);
	assert_false(ldns_pkt_tc(pkt));
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 2, "fj.", LDNS_RR_TYPE_SOA), 1);
	assert_int_equal(soa_ttl(pkt), 3600);
	assert_int_equal(dnsmsg_count(pkt, 2, NULL, LDNS_RR_TYPE_NSEC3), 3);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 2, NULL, LDNS_RR_TYPE_NSEC3), 3);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "fj."), 2);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "xx--nonexistent.fj."), 1);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "*.fj."), 1);
	ldns_pkt_free(pkt);

	/* deeper name: closest encloser is com.fj. (an empty non-terminal with an NSEC3) */
	pkt = ask_opts(SET_ROOT, "a.b.xx--nonexistent.com.fj.", APEX_TYPE_A, &tcp,
		       APEX_TRANSPORT_TCP);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NXDOMAIN);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "com.fj."), 2);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "xx--nonexistent.com.fj."), 1);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "*.com.fj."), 1);
	ldns_pkt_free(pkt);

	/* NODATA: the NSEC3 matching the name */
	pkt = ask(SET_NSEC3, "www.example.", APEX_TYPE_MX, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, NULL, LDNS_RR_TYPE_NSEC3), 1);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "www.example."), 2);
	ldns_pkt_free(pkt);
}

static void test_empty_non_terminal(void **state)
{
	(void)state;
	static const char *const names[] = { "c.ent.example.", "b.c.ent.example.", "ent.example." };
	for (size_t i = 0; i < 3; i++) {
		ldns_pkt *pkt = ask(SET_PLAIN, names[i], APEX_TYPE_A, false);
		assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
		assert_true(ldns_pkt_aa(pkt));
		assert_int_equal(ldns_pkt_ancount(pkt), 0);
		assert_int_equal(dnsmsg_count(pkt, 2, "example.", LDNS_RR_TYPE_SOA), 1);
		ldns_pkt_free(pkt);
	}
	/* NSEC zone: the NSEC covering the ENT; NSEC3 zone: the ENT's own NSEC3 */
	ldns_pkt *pkt = ask(SET_NSEC, "c.ent.example.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(dnsmsg_nsec_covers(pkt, "c.ent.example."));
	ldns_pkt_free(pkt);
	pkt = ask(SET_NSEC3, "c.ent.example.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "c.ent.example."), 2);
	ldns_pkt_free(pkt);
}

/* ------------------------------------------------------------ wildcards */

static void test_wildcard(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_PLAIN, "foo.wild.example.", APEX_TYPE_A, false);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, "foo.wild.example.", LDNS_RR_TYPE_A), 1);
	ldns_pkt_free(pkt);

	/* an explicit name beside the wildcard is not synthesized */
	pkt = ask(SET_PLAIN, "explicit.wild.example.", APEX_TYPE_TXT, false);
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	ldns_pkt_free(pkt);

	/* NSEC: RRSIG keeps the wildcard's label count, NSEC covers the name */
	pkt = ask(SET_NSEC, "a.b.wild.example.", APEX_TYPE_A, true);
	assert_int_equal(dnsmsg_count(pkt, 1, "a.b.wild.example.", LDNS_RR_TYPE_A), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 1, "a.b.wild.example.", LDNS_RR_TYPE_A), 1);
	ldns_rr *sig = dnsmsg_first(pkt, 1, LDNS_RR_TYPE_RRSIG);
	assert_int_equal(ldns_rdf2native_int8(ldns_rr_rrsig_labels(sig)), 2);
	assert_true(dnsmsg_nsec_covers(pkt, "a.b.wild.example."));
	assert_int_equal(dnsmsg_count(pkt, 2, NULL, LDNS_RR_TYPE_SOA), 0);
	ldns_pkt_free(pkt);

	/* NSEC3: the NSEC3 covering the next closer name */
	pkt = ask(SET_NSEC3, "a.b.wild.example.", APEX_TYPE_A, true);
	assert_int_equal(dnsmsg_count(pkt, 1, "a.b.wild.example.", LDNS_RR_TYPE_A), 1);
	assert_int_equal(dnsmsg_count(pkt, 2, NULL, LDNS_RR_TYPE_NSEC3), 1);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "b.wild.example."), 1);
	ldns_pkt_free(pkt);

	/* wildcard NODATA, NSEC: covering NSEC + the wildcard's NSEC */
	pkt = ask(SET_NSEC, "foo.wild.example.", APEX_TYPE_MX, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_true(dnsmsg_nsec_covers(pkt, "foo.wild.example."));
	assert_int_equal(dnsmsg_count(pkt, 2, "*.wild.example.", LDNS_RR_TYPE_NSEC), 1);
	ldns_pkt_free(pkt);

	/* wildcard NODATA, NSEC3 (RFC 5155 7.2.5) */
	pkt = ask(SET_NSEC3, "foo.wild.example.", APEX_TYPE_MX, true);
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "wild.example."), 2);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "foo.wild.example."), 1);
	assert_int_equal(dnsmsg_nsec3_proves(pkt, "*.wild.example."), 2);
	ldns_pkt_free(pkt);

	/* a wildcard CNAME: synthesized CNAME, then its target */
	pkt = ask(SET_PLAIN, "x.wc.example.", APEX_TYPE_A, false);
	assert_int_equal(dnsmsg_count(pkt, 1, "x.wc.example.", LDNS_RR_TYPE_CNAME), 1);
	assert_int_equal(dnsmsg_count(pkt, 1, "www.example.", LDNS_RR_TYPE_A), 2);
	ldns_pkt_free(pkt);
}

/* ------------------------------------------------------------ CNAME and DNAME */

static void test_cname_chain(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_PLAIN, "chain1.example.", APEX_TYPE_A, false);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_CNAME), 3);
	assert_int_equal(dnsmsg_count(pkt, 1, "www.example.", LDNS_RR_TYPE_A), 2);
	ldns_pkt_free(pkt);

	/* the CNAME itself when asked for */
	pkt = ask(SET_PLAIN, "chain1.example.", APEX_TYPE_CNAME, false);
	assert_int_equal(ldns_pkt_ancount(pkt), 1);
	ldns_pkt_free(pkt);

	/* leaving the zone: the chain stops */
	pkt = ask(SET_PLAIN, "chainout.example.", APEX_TYPE_A, false);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_CNAME), 2);
	assert_int_equal(ldns_pkt_ancount(pkt), 2);
	ldns_pkt_free(pkt);

	/* ... unless the target's zone is served too (RFC 1034 4.3.2 step 3a
	 * goes back to step 1): here the root zone refers to net. */
	pkt = ask(SET_ROOT, "chainout.example.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_CNAME), 2);
	assert_int_equal(dnsmsg_count(pkt, 2, "net.", LDNS_RR_TYPE_NS), 13);
	assert_int_equal(dnsmsg_count(pkt, 2, "net.", LDNS_RR_TYPE_DS), 1);
	ldns_pkt_free(pkt);
	/* there the glue is optional: in 512 bytes some is left out, no TC */
	dnsmsg_opts_t plain = { 0 };
	pkt = ask_opts(SET_ROOT, "chainout.example.", APEX_TYPE_A, &plain, APEX_TRANSPORT_UDP);
	assert_false(ldns_pkt_tc(pkt));
	assert_int_equal(dnsmsg_count(pkt, 2, "net.", LDNS_RR_TYPE_NS), 13);
	assert_true(ldns_pkt_arcount(pkt) < 26);
	ldns_pkt_free(pkt);

	/* a loop: NOERROR with each CNAME once */
	pkt = ask(SET_PLAIN, "loop1.example.", APEX_TYPE_A, false);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_CNAME), 2);
	ldns_pkt_free(pkt);

	/* to a name that does not exist: NXDOMAIN (RFC 6604) with the CNAME */
	pkt = ask(SET_NSEC, "dangling.example.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NXDOMAIN);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, "dangling.example.", LDNS_RR_TYPE_CNAME), 1);
	assert_int_equal(dnsmsg_count_rrsig(pkt, 1, "dangling.example.", LDNS_RR_TYPE_CNAME), 1);
	assert_true(dnsmsg_nsec_covers(pkt, "nothere.example."));
	ldns_pkt_free(pkt);

	/* into a delegation: CNAME (authoritative) then the referral */
	pkt = ask(SET_PLAIN, "tosub.example.", APEX_TYPE_A, false);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, "tosub.example.", LDNS_RR_TYPE_CNAME), 1);
	assert_int_equal(dnsmsg_count(pkt, 2, "sub.example.", LDNS_RR_TYPE_NS), 2);
	ldns_pkt_free(pkt);
}

static void test_dname(void **state)
{
	(void)state;
	ldns_pkt *pkt = ask(SET_PLAIN, "host.dname.example.", APEX_TYPE_A, false);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(dnsmsg_count(pkt, 1, "dname.example.", LDNS_RR_TYPE_DNAME), 1);
	ldns_rr *cname = dnsmsg_first(pkt, 1, LDNS_RR_TYPE_CNAME);
	assert_non_null(cname);
	assert_true(dnsmsg_dname_is(ldns_rr_owner(cname), "host.dname.example."));
	assert_true(dnsmsg_dname_is(ldns_rr_rdf(cname, 0), "host.target.example."));
	ldns_rr *dn = dnsmsg_first(pkt, 1, LDNS_RR_TYPE_DNAME);
	assert_int_equal(ldns_rr_ttl(cname), ldns_rr_ttl(dn));
	assert_int_equal(dnsmsg_count(pkt, 1, "host.target.example.", LDNS_RR_TYPE_A), 1);
	ldns_pkt_free(pkt);

	/* the DNAME owner itself is answered normally */
	pkt = ask(SET_PLAIN, "dname.example.", APEX_TYPE_DNAME, false);
	assert_int_equal(ldns_pkt_ancount(pkt), 1);
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_CNAME), 0);
	ldns_pkt_free(pkt);

	/* target does not exist: NXDOMAIN with both proofs (RFC 4035 3.1.3.2) */
	pkt = ask(SET_NSEC, "nothere.dname.example.", APEX_TYPE_A, true);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NXDOMAIN);
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_DNAME), 1);
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_CNAME), 1);
	assert_true(dnsmsg_nsec_covers(pkt, "nothere.target.example."));
	ldns_pkt_free(pkt);

	/* the substituted name would exceed 255 bytes: YXDOMAIN.  Three
	 * 62-byte labels and one of 50 (240 bytes) under dname.example. (15)
	 * make a 255-byte name; under target.example. (16) it would be 256. */
	char name[300] = "";
	for (int i = 0; i < 3; i++)
		strcat(name, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.");
	strcat(name, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.dname.example.");
	pkt = ask(SET_PLAIN, name, APEX_TYPE_A, false);
	assert_int_equal(ldns_pkt_get_rcode(pkt), 6 /* YXDOMAIN */);
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_DNAME), 1);
	assert_int_equal(dnsmsg_count(pkt, 1, NULL, LDNS_RR_TYPE_CNAME), 0);
	ldns_pkt_free(pkt);
}

/* A query of type CNAME below a DNAME is answered by the DNAME and the
 * synthesized CNAME alone (RFC 6672 section 3.3, RFC 1034 section 4.3.2
 * step 3a): no lookup of the target, so no NXDOMAIN, NODATA or proof for
 * it, whether the target exists or not, signed or not, in any case. */
static void test_dname_qtype_cname(void **state)
{
	(void)state;
	static const int zone_sets[] = { SET_PLAIN, SET_NSEC, SET_NSEC3 };
	static const char *const names[] = { "host.dname.example.", "nothere.dname.example.",
					     "HoSt.DnAmE.example.", "deep.host.dname.example." };

	for (size_t s = 0; s < 3; s++) {
		for (size_t n = 0; n < 4; n++) {
			for (int dnssec_ok = 0; dnssec_ok < 2; dnssec_ok++) {
				ldns_pkt *pkt = ask(zone_sets[s], names[n], APEX_TYPE_CNAME,
						    dnssec_ok != 0);
				bool signed_set = zone_sets[s] != SET_PLAIN && dnssec_ok;

				assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
				assert_true(ldns_pkt_aa(pkt));
				assert_int_equal(
					dnsmsg_count(pkt, 1, "dname.example.", LDNS_RR_TYPE_DNAME),
					1);
				assert_int_equal(dnsmsg_count(pkt, 1, names[n], LDNS_RR_TYPE_CNAME),
						 1);
				assert_int_equal(ldns_pkt_ancount(pkt), signed_set ? 3 : 2);
				assert_int_equal(ldns_pkt_nscount(pkt), 0);
				ldns_pkt_free(pkt);
			}
		}
	}
}

/* ------------------------------------------------------------ sizes */

static void test_truncation(void **state)
{
	(void)state;
	/* net.: 13 in-domain name servers; their glue is required (RFC 9471)
	 * and does not fit 512 bytes: TC */
	dnsmsg_opts_t o = { 0 };
	ldns_pkt *pkt = ask_opts(SET_ROOT, "example.net.", APEX_TYPE_A, &o, APEX_TRANSPORT_UDP);
	assert_true(resp_size <= 512);
	assert_true(ldns_pkt_tc(pkt));
	assert_true(info.truncated);
	ldns_pkt_free(pkt);

	/* with a 1232-byte payload all of it fits */
	pkt = ask(SET_ROOT, "example.net.", APEX_TYPE_A, false);
	assert_false(ldns_pkt_tc(pkt));
	assert_int_equal(dnsmsg_count(pkt, 3, NULL, LDNS_RR_TYPE_A), 13);
	assert_int_equal(dnsmsg_count(pkt, 3, NULL, LDNS_RR_TYPE_AAAA), 13);
	ldns_pkt_free(pkt);

	/* EDNS 512 + DO on com.: NS + DS + RRSIG do not fit, TC, OPT kept */
	o = (dnsmsg_opts_t){ .edns = true, .dnssec_ok = true, .payload = 512 };
	pkt = ask_opts(SET_ROOT, "example.com.", APEX_TYPE_A, &o, APEX_TRANSPORT_UDP);
	assert_true(resp_size <= 512);
	assert_true(ldns_pkt_tc(pkt));
	assert_true(ldns_pkt_edns(pkt));
	ldns_pkt_free(pkt);

	/* com. without EDNS, no DO: optional sibling glue only: no TC */
	o = (dnsmsg_opts_t){ 0 };
	pkt = ask_opts(SET_ROOT, "example.com.", APEX_TYPE_A, &o, APEX_TRANSPORT_UDP);
	assert_true(resp_size <= 512);
	assert_false(ldns_pkt_tc(pkt));
	assert_int_equal(dnsmsg_count(pkt, 2, "com.", LDNS_RR_TYPE_NS), 13);
	ldns_pkt_free(pkt);

	/* TCP: everything */
	pkt = ask_opts(SET_ROOT, "example.net.", APEX_TYPE_A, &o, APEX_TRANSPORT_TCP);
	assert_false(ldns_pkt_tc(pkt));
	assert_int_equal(dnsmsg_count(pkt, 3, NULL, LDNS_RR_TYPE_AAAA), 13);
	ldns_pkt_free(pkt);

	/* the client's payload above ours: ours bounds the response */
	o = (dnsmsg_opts_t){ .edns = true, .dnssec_ok = true, .payload = 4096 };
	pkt = ask_opts(SET_ROOT, ".", APEX_TYPE_DNSKEY, &o, APEX_TRANSPORT_UDP);
	assert_true(resp_size <= 1232);
	ldns_pkt_free(pkt);
}

static void test_compression(void **state)
{
	(void)state;
	/* the exact size shows every name compressed: header 12, question
	 * "example." 9 + 4; two NS: owner pointer 2 + 10 + "ns1" and a
	 * pointer 6; additional owners are pointers to the NS RDATA names:
	 * A 2 + 10 + 4, AAAA 2 + 10 + 16, twice. */
	dnsmsg_opts_t o = { 0 };
	ldns_pkt *pkt = ask_opts(SET_PLAIN, "example.", APEX_TYPE_NS, &o, APEX_TRANSPORT_UDP);
	assert_int_equal(ldns_pkt_ancount(pkt), 2);
	assert_int_equal(ldns_pkt_arcount(pkt), 4);
	assert_int_equal(resp_size, 12 + 13 + 2 * 18 + 2 * (16 + 28));
	ldns_pkt_free(pkt);

	/* 13 NS records of com.: decoded intact */
	pkt = ask(SET_ROOT, "example.com.", APEX_TYPE_A, false);
	ldns_rr_list *ns = ldns_pkt_authority(pkt);
	for (size_t i = 0; i < ldns_rr_list_rr_count(ns); i++) {
		ldns_rr *rr = ldns_rr_list_rr(ns, i);
		assert_true(dnsmsg_dname_is(ldns_rr_owner(rr), "com."));
		char *s = ldns_rdf2str(ldns_rr_rdf(rr, 0));
		assert_non_null(strstr(s, ".gtld-servers.net."));
		free(s);
	}
	ldns_pkt_free(pkt);

	/* SOA RDATA names compressed against the owner, decoded intact */
	pkt = ask_opts(SET_PLAIN, "EXAMPLE.", APEX_TYPE_SOA, &o, APEX_TRANSPORT_UDP);
	ldns_rr *soa = dnsmsg_first(pkt, 1, LDNS_RR_TYPE_SOA);
	assert_non_null(soa);
	assert_true(dnsmsg_dname_is(ldns_rr_rdf(soa, 0), "ns1.example."));
	assert_true(dnsmsg_dname_is(ldns_rr_rdf(soa, 1), "hostmaster.example."));
	assert_int_equal(ldns_rdf2native_int32(ldns_rr_rdf(soa, 2)), 2025010101);
	/* header 12 + question 13 + owner pointer 2 + 10 + rdata (ns1 + ptr = 6,
	 * hostmaster + ptr = 13, 20) */
	assert_int_equal(resp_size, 12 + 13 + 2 + 10 + 6 + 13 + 20);
	ldns_pkt_free(pkt);

	/* DNAME RDATA is never compressed (RFC 6672 2.5) */
	pkt = ask_opts(SET_PLAIN, "dname.example.", APEX_TYPE_DNAME, &o, APEX_TRANSPORT_UDP);
	assert_int_equal(resp_size, 12 + 19 + 2 + 10 + 16);
	ldns_pkt_free(pkt);
}

/* ------------------------------------------------------------ errors */

static void expect_rcode(int set, apex_transport_t tr, int rcode)
{
	ldns_pkt *pkt = answer_raw(set, tr);
	assert_int_equal(ldns_pkt_get_rcode(pkt), rcode);
	assert_int_equal(info.rcode, rcode);
	assert_false(ldns_pkt_aa(pkt));
	ldns_pkt_free(pkt);
}

static void test_formerr(void **state)
{
	(void)state;
	dnsmsg_opts_t o = { .edns = true };

	/* QDCOUNT 2 */
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, NULL);
	apex_write_u16(query_buf + APEX_HDR_QDCOUNT, 2);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);
	/* QDCOUNT 0 */
	apex_write_u16(query_buf + APEX_HDR_QDCOUNT, 0);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);

	/* a pointer loop as qname */
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, NULL);
	query_buf[12] = 0xC0;
	query_buf[13] = 12;
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);

	/* question cut short */
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, NULL) - 2;
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);

	/* trailing garbage */
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	query_buf[query_size++] = 0;
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);

	/* OPT with a non-root owner ("x."): the 10 fixed bytes moved behind it */
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	size_t opt = query_size - 11;
	uint8_t fixed[10];
	memcpy(fixed, query_buf + opt + 1, 10);
	query_buf[opt] = 1;
	query_buf[opt + 1] = 'x';
	query_buf[opt + 2] = 0;
	memcpy(query_buf + opt + 3, fixed, 10);
	query_size = opt + 13;
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);

	/* two OPT records */
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	memcpy(query_buf + query_size, query_buf + query_size - 11, 11);
	query_size += 11;
	apex_write_u16(query_buf + APEX_HDR_ARCOUNT, 2);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);

	/* OPT in the answer section */
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	apex_write_u16(query_buf + APEX_HDR_ARCOUNT, 0);
	apex_write_u16(query_buf + APEX_HDR_ANCOUNT, 1);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);

	/* an option running past the OPT RDATA */
	o.nsid = true;
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	apex_write_u16(query_buf + query_size - 2, 1); /* NSID length 1, no byte */
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);

	/* a record whose RDLENGTH runs past the message */
	o.nsid = false;
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	apex_write_u16(query_buf + query_size - 2, 4);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);

	/* a malformed cookie (5 bytes, RFC 7873 5.2.2) */
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	apex_write_u16(query_buf + query_size - 2, 9);
	apex_write_u16(query_buf + query_size, 10);
	apex_write_u16(query_buf + query_size + 2, 5);
	memset(query_buf + query_size + 4, 0xAB, 5);
	query_size += 9;
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);
	/* ... while an 8-byte client cookie is fine */
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	apex_write_u16(query_buf + query_size - 2, 12);
	apex_write_u16(query_buf + query_size, 10);
	apex_write_u16(query_buf + query_size + 2, 8);
	memset(query_buf + query_size + 4, 0xAB, 8);
	query_size += 12;
	ldns_pkt *pkt = answer_raw(SET_PLAIN, APEX_TRANSPORT_UDP);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_int_equal(ldns_pkt_ancount(pkt), 2);
	ldns_pkt_free(pkt);
}

static void test_notimp_badvers_refused_drop(void **state)
{
	(void)state;
	/* opcode STATUS (2), with RD and CD: NOTIMP, question echoed, ID and
	 * opcode copied, QR set, no other flag (RD and CD not echoed) */
	dnsmsg_opts_t o = { .flags = 2 << 11 | APEX_FLAG_RD | APEX_FLAG_CD };
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	ldns_pkt *pkt = answer_raw(SET_PLAIN, APEX_TRANSPORT_UDP);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOTIMPL);
	assert_int_equal(ldns_pkt_qdcount(pkt), 1);
	assert_int_equal(ldns_pkt_get_opcode(pkt), LDNS_PACKET_STATUS);
	assert_int_equal(apex_read_u16(resp), apex_read_u16(query_buf));
	assert_int_equal(apex_read_u16(resp + 2), APEX_FLAG_QR | 2 << 11 | APEX_RCODE_NOTIMP);
	ldns_pkt_free(pkt);
	/* a QUERY (opcode 0) that is NOTIMP (AXFR over UDP) keeps RD and CD */
	o = (dnsmsg_opts_t){ .flags = APEX_FLAG_RD | APEX_FLAG_CD };
	query_size = dnsmsg_query(query_buf, "example.", APEX_TYPE_AXFR, &o);
	pkt = answer_raw(SET_PLAIN, APEX_TRANSPORT_UDP);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOTIMPL);
	assert_true(ldns_pkt_rd(pkt));
	assert_true(ldns_pkt_cd(pkt));
	ldns_pkt_free(pkt);

	/* EDNS version 1: BADVERS (16) = rcode 0 + extended 1, OPT present */
	o = (dnsmsg_opts_t){ .edns = true, .version = 1 };
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	resp_size = apex_answer(sets[SET_PLAIN], &cfg, APEX_TRANSPORT_UDP, query_buf, query_size,
				resp, sizeof(resp), &info);
	assert_int_equal(info.rcode, 16);
	assert_int_equal(APEX_RCODE(apex_read_u16(resp + 2)), 0);
	assert_int_equal(apex_read_u16(resp + APEX_HDR_ARCOUNT), 1);
	assert_int_equal(apex_read_u16(resp + APEX_HDR_ANCOUNT), 0);
	assert_int_equal(resp[resp_size - 11 + 5], 1); /* extended rcode high bits */
	assert_int_equal(apex_read_u16(resp + resp_size - 11 + 1), APEX_TYPE_OPT);

	/* a name in no served zone: REFUSED without AA */
	query_size = dnsmsg_query(query_buf, "www.example.org.", APEX_TYPE_A, NULL);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_REFUSED);
	/* class HS */
	o = (dnsmsg_opts_t){ .qclass = 4 };
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_REFUSED);
	/* CHAOS not configured */
	o = (dnsmsg_opts_t){ .qclass = APEX_CLASS_CH };
	query_size = dnsmsg_query(query_buf, "version.bind.", APEX_TYPE_TXT, &o);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_REFUSED);
	/* AXFR: NOTIMP over UDP, REFUSED over TCP (as NSD; the daemon's transfer
	 * threads take them before the engine); IXFR over TCP: REFUSED; over UDP
	 * without the client's SOA: FORMERR (RFC 1995 section 3) */
	query_size = dnsmsg_query(query_buf, "example.", APEX_TYPE_AXFR, NULL);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_NOTIMPL);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_TCP, LDNS_RCODE_REFUSED);
	query_size = dnsmsg_query(query_buf, "example.", APEX_TYPE_IXFR, NULL);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_FORMERR);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_TCP, LDNS_RCODE_REFUSED);
	/* MAILA: an ordinary lookup, NODATA (as NSD and Knot) */
	query_size = dnsmsg_query(query_buf, "example.", APEX_TYPE_MAILA, NULL);
	pkt = answer_raw(SET_PLAIN, APEX_TRANSPORT_UDP);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_aa(pkt));
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	assert_int_equal(dnsmsg_count(pkt, 2, "example.", LDNS_RR_TYPE_SOA), 1);
	ldns_pkt_free(pkt);

	/* dropped: a response (QR=1), and a message shorter than a header */
	o = (dnsmsg_opts_t){ .flags = APEX_FLAG_QR };
	query_size = dnsmsg_query(query_buf, "www.example.", APEX_TYPE_A, &o);
	assert_int_equal(apex_answer(sets[SET_PLAIN], &cfg, APEX_TRANSPORT_UDP, query_buf,
				     query_size, resp, sizeof(resp), &info),
			 0);
	assert_true(info.dropped);
	assert_int_equal(apex_answer(sets[SET_PLAIN], &cfg, APEX_TRANSPORT_UDP, query_buf, 11, resp,
				     sizeof(resp), &info),
			 0);
	assert_true(info.dropped);
}

static void test_chaos_and_nsid(void **state)
{
	(void)state;
	apex_answer_config_t saved = cfg;
	static const uint8_t nsid[] = "apex-1";
	cfg.chaos_version = "apex 0.1";
	cfg.chaos_id = "host-1";
	cfg.nsid = nsid;
	cfg.nsid_size = 6;

	dnsmsg_opts_t o = { .qclass = APEX_CLASS_CH };
	ldns_pkt *pkt = ask_opts(SET_PLAIN, "VERSION.bind.", APEX_TYPE_TXT, &o, APEX_TRANSPORT_UDP);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	ldns_rr *txt = dnsmsg_first(pkt, 1, LDNS_RR_TYPE_TXT);
	assert_non_null(txt);
	assert_int_equal(ldns_rr_get_class(txt), LDNS_RR_CLASS_CH);
	char *s = ldns_rdf2str(ldns_rr_rdf(txt, 0));
	assert_string_equal(s, "\"apex 0.1\"");
	free(s);
	ldns_pkt_free(pkt);

	pkt = ask_opts(SET_PLAIN, "id.server.", APEX_TYPE_TXT, &o, APEX_TRANSPORT_UDP);
	txt = dnsmsg_first(pkt, 1, LDNS_RR_TYPE_TXT);
	assert_non_null(txt);
	s = ldns_rdf2str(ldns_rr_rdf(txt, 0));
	assert_string_equal(s, "\"host-1\"");
	free(s);
	ldns_pkt_free(pkt);

	/* NSID only when asked for */
	o = (dnsmsg_opts_t){ .edns = true, .nsid = true };
	pkt = ask_opts(SET_PLAIN, "www.example.", APEX_TYPE_A, &o, APEX_TRANSPORT_UDP);
	ldns_pkt_free(pkt);
	assert_int_equal(apex_read_u16(resp + resp_size - 10), 3);
	assert_int_equal(apex_read_u16(resp + resp_size - 8), 6);
	assert_memory_equal(resp + resp_size - 6, "apex-1", 6);
	o.nsid = false;
	pkt = ask_opts(SET_PLAIN, "www.example.", APEX_TYPE_A, &o, APEX_TRANSPORT_UDP);
	ldns_pkt_free(pkt);
	assert_int_equal(apex_read_u16(resp + resp_size - 2), 0); /* empty OPT RDATA */
	cfg = saved;
}

/* An IXFR query with the client's SOA (serial) in the authority section. */
static void ixfr_query(const char *zone, uint32_t serial)
{
	ldns_pkt *q = NULL;
	ldns_rr *soa = NULL;
	char text[256];
	uint8_t *wire = NULL;
	size_t size = 0;

	assert_int_equal(
		ldns_pkt_query_new_frm_str(&q, zone, LDNS_RR_TYPE_IXFR, LDNS_RR_CLASS_IN, 0),
		LDNS_STATUS_OK);
	ldns_pkt_set_id(q, 0x1234);
	snprintf(text, sizeof(text), "%s 0 IN SOA . . %u 0 0 0 0", zone, serial);
	assert_int_equal(ldns_rr_new_frm_str(&soa, text, 0, NULL, NULL), LDNS_STATUS_OK);
	assert_true(ldns_pkt_push_rr(q, LDNS_SECTION_AUTHORITY, soa));
	assert_int_equal(ldns_pkt2wire(&wire, q, &size), LDNS_STATUS_OK);
	memcpy(query_buf, wire, size);
	query_size = size;
	free(wire);
	ldns_pkt_free(q);
}

/* IXFR over UDP (RFC 1995 section 2): the SOA alone when the client is up
 * to date (or newer), an empty TC answer when it is older, REFUSED below a
 * zone's apex. */
static void test_ixfr_udp(void **state)
{
	(void)state;
	ldns_pkt *pkt;

	ixfr_query("example.", 2025010101);
	pkt = answer_raw(SET_PLAIN, APEX_TRANSPORT_UDP);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_aa(pkt));
	assert_false(ldns_pkt_tc(pkt));
	assert_int_equal(ldns_pkt_ancount(pkt), 1);
	assert_int_equal(dnsmsg_count(pkt, 1, "example.", LDNS_RR_TYPE_SOA), 1);
	ldns_pkt_free(pkt);

	ixfr_query("example.", 2025010102); /* newer than ours */
	pkt = answer_raw(SET_PLAIN, APEX_TRANSPORT_UDP);
	assert_int_equal(ldns_pkt_ancount(pkt), 1);
	assert_false(ldns_pkt_tc(pkt));
	ldns_pkt_free(pkt);

	ixfr_query("example.", 2025010100); /* older: ask over TCP */
	pkt = answer_raw(SET_PLAIN, APEX_TRANSPORT_UDP);
	assert_int_equal(ldns_pkt_get_rcode(pkt), LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_tc(pkt));
	assert_int_equal(ldns_pkt_ancount(pkt), 0);
	ldns_pkt_free(pkt);

	ixfr_query("www.example.", 2025010101);
	expect_rcode(SET_PLAIN, APEX_TRANSPORT_UDP, LDNS_RCODE_REFUSED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ixfr_udp),
		cmocka_unit_test(test_exact_answer),
		cmocka_unit_test(test_question_case_echo),
		cmocka_unit_test(test_flags_copied),
		cmocka_unit_test(test_additional_mx_srv_ns),
		cmocka_unit_test(test_any),
		cmocka_unit_test(test_referral_root_ds),
		cmocka_unit_test(test_referral_glue_in_zone),
		cmocka_unit_test(test_referral_nsec3),
		cmocka_unit_test(test_ds_at_cut),
		cmocka_unit_test(test_nxdomain_nsec),
		cmocka_unit_test(test_nodata_nsec),
		cmocka_unit_test(test_nxdomain_nsec3),
		cmocka_unit_test(test_empty_non_terminal),
		cmocka_unit_test(test_wildcard),
		cmocka_unit_test(test_cname_chain),
		cmocka_unit_test(test_dname),
		cmocka_unit_test(test_dname_qtype_cname),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_compression),
		cmocka_unit_test(test_formerr),
		cmocka_unit_test(test_notimp_badvers_refused_drop),
		cmocka_unit_test(test_chaos_and_nsid),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
