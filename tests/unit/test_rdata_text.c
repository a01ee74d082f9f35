/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loader's fast text parser (lib/zone/rdata_text.c) against ldns,
 * and chunked parallel parsing against parsing on one thread.
 *
 *  - every one-line record of the zones in zones/ of a type the fast
 *    path handles is parsed by both apex_rdata_from_text() and
 *    ldns_rr_new_frm_str(): the fast path must take it and write the
 *    same wire RDATA byte for byte;
 *  - each zone loaded with the fast path on, off (ldns only), and cut
 *    into many chunks parsed on several threads, gives the same
 *    version: nodes, RRsets, TTLs, RDATA, RRSIGs, NSEC3 chain;
 *  - invalid forms are not taken by the fast path (ldns decides);
 *  - $ORIGIN/$TTL between chunks, and errors in a chunk (reported at
 *    the same line as on one thread).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>
#include <ldns/ldns.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/load.h"
#include "zone/load_tuning.h"
#include "zone/rdata_text.h"
#include "zone/zone.h"

static const struct {
	const char *file;
	const char *origin;
} zones[] = {
	{ "zones/root.zone", "." },
	{ "zones/fj.zone", "fj." },
	{ "zones/sl.zone", "sl." },
	{ "zones/example.zone", "example." },
	{ "zones/example.nsec.zone", "example." },
	{ "zones/example.nsec3.zone", "example." },
};

static char dir[256];

static void path_of(const char *rel, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", APEX_SRCDIR, rel);
}

/* ------------------------------------------------------------ per record */

static void test_records_match_ldns(void **state)
{
	size_t handled = 0;
	uint16_t types_seen[64];
	size_t type_count = 0;
	for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
		char path[512];
		path_of(zones[z].file, path, sizeof(path));
		FILE *fp = fopen(path, "r");
		assert_non_null(fp);
		uint8_t origin[APEX_NAME_MAX];
		assert_true(apex_name_from_str(zones[z].origin, origin) > 0);
		ldns_rdf *origin_rdf = ldns_dname_new_frm_str(zones[z].origin);
		char line[70000];
		int lineno = 0;
		while (fgets(line, sizeof(line), fp) != NULL && lineno < 2000000) {
			lineno++;
			line[strcspn(line, "\r\n")] = '\0';
			if (line[0] == '\0' || line[0] == ';' || line[0] == '$' || line[0] == ' ' ||
			    line[0] == '\t' || strpbrk(line, "();\"") != NULL)
				continue;
			ldns_rr *rr = NULL;
			if (ldns_rr_new_frm_str(&rr, line, 3600, origin_rdf, NULL) !=
			    LDNS_STATUS_OK)
				continue;
			uint16_t type = (uint16_t)ldns_rr_get_type(rr);
			if (!apex_rdata_text_supported(type)) {
				ldns_rr_free(rr);
				continue;
			}
			/* The text after the type field: skip owner, TTL, class, type. */
			const char *p = line + strcspn(line, " \t"); /* past the owner */
			for (;;) {
				p += strspn(p, " \t");
				size_t len = strcspn(p, " \t");
				bool ttl_or_class = (p[0] >= '0' && p[0] <= '9') ||
						    (len == 2 && strncasecmp(p, "IN", 2) == 0);
				p += len;
				if (!ttl_or_class)
					break; /* that was the type */
			}
			uint8_t want[APEX_RDATA_MAX], got[APEX_RDATA_MAX];
			size_t want_len = 0;
			for (size_t i = 0; i < ldns_rr_rd_count(rr); i++) {
				const ldns_rdf *rdf = ldns_rr_rdf(rr, i);
				memcpy(want + want_len, ldns_rdf_data(rdf), ldns_rdf_size(rdf));
				want_len += ldns_rdf_size(rdf);
			}
			int len = apex_rdata_from_text(type, p, origin, got);
			if (len < 0)
				fail_msg("%s:%d: fast path did not take: %s", zones[z].file, lineno,
					 line);
			if ((size_t)len != want_len || memcmp(got, want, want_len) != 0)
				fail_msg("%s:%d: RDATA differs from ldns's: %s", zones[z].file,
					 lineno, line);
			handled++;
			size_t t;
			for (t = 0; t < type_count && types_seen[t] != type; t++)
				;
			if (t == type_count && type_count < 64)
				types_seen[type_count++] = type;
			ldns_rr_free(rr);
		}
		ldns_rdf_deep_free(origin_rdf);
		fclose(fp);
	}
	/* The zones hold A, AAAA, NS, DS, DNSKEY, RRSIG, NSEC, NSEC3, CNAME, MX ... */
	if (handled < 40000)
		fail_msg("only %zu records compared", handled);
	static const uint16_t must[] = { APEX_TYPE_A,    APEX_TYPE_AAAA,   APEX_TYPE_NS,
					 APEX_TYPE_DS,   APEX_TYPE_DNSKEY, APEX_TYPE_RRSIG,
					 APEX_TYPE_NSEC, APEX_TYPE_NSEC3 };
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++) {
		size_t t;
		for (t = 0; t < type_count && types_seen[t] != must[i]; t++)
			;
		if (t == type_count)
			fail_msg("no record of type %u compared", must[i]);
	}
}

/* A record written by hand: fast path against ldns (same bytes), or
 * not taken by the fast path at all (want_taken false). */
static void check_one(const char *rdata_text, uint16_t type, bool want_taken)
{
	uint8_t origin[APEX_NAME_MAX];
	assert_true(apex_name_from_str("example.", origin) > 0);
	uint8_t got[APEX_RDATA_MAX];
	int len = apex_rdata_from_text(type, rdata_text, origin, got);
	if (!want_taken) {
		if (len >= 0)
			fail_msg("fast path took type %u '%s'", type, rdata_text);
		return;
	}
	if (len < 0)
		fail_msg("fast path did not take type %u '%s'", type, rdata_text);
	char line[1024];
	char *mnemonic = ldns_rr_type2str(type);
	snprintf(line, sizeof(line), "x.example. 60 IN %s %s", mnemonic, rdata_text);
	free(mnemonic);
	ldns_rdf *origin_rdf = ldns_dname_new_frm_str("example.");
	ldns_rr *rr = NULL;
	assert_int_equal(ldns_rr_new_frm_str(&rr, line, 60, origin_rdf, NULL), LDNS_STATUS_OK);
	uint8_t want[APEX_RDATA_MAX];
	size_t want_len = 0;
	for (size_t i = 0; i < ldns_rr_rd_count(rr); i++) {
		memcpy(want + want_len, ldns_rdf_data(ldns_rr_rdf(rr, i)),
		       ldns_rdf_size(ldns_rr_rdf(rr, i)));
		want_len += ldns_rdf_size(ldns_rr_rdf(rr, i));
	}
	if ((size_t)len != want_len || memcmp(got, want, want_len) != 0)
		fail_msg("type %u '%s': RDATA differs from ldns's", type, rdata_text);
	ldns_rr_free(rr);
	ldns_rdf_deep_free(origin_rdf);
}

static void test_forms(void **state)
{
	/* Relative names, @, escapes, TYPEnnn, times as numbers, split fields. */
	check_one("ns1", APEX_TYPE_NS, true);
	check_one("@", APEX_TYPE_CNAME, true);
	check_one("a\\.b.c\\065\\\\.example.", APEX_TYPE_PTR, true);
	check_one("10 Mail.Example.", APEX_TYPE_MX, true);
	check_one("000000000010 mail.example.", APEX_TYPE_MX, true); /* leading zeros */
	check_one("1 2 3 srv.example.", APEX_TYPE_SRV, true);
	check_one("2001:db8::1", APEX_TYPE_AAAA, true);
	check_one("12345 8 2 4A263B9DF71A62AA53E1F4CA34C401FDC7A70CE8A6FE2677E04F307A E0BC84EF",
		  APEX_TYPE_DS, true);
	check_one("257 3 13 gJLPi7PE8A2LDuGXAddMss0nS9VPxSgnQwxXz2qdbViZRyTHH5HzADs1 "
		  "dF+4fv9aixLWRq2PJaHMFDug048s/A==",
		  APEX_TYPE_DNSKEY, true);
	check_one("TYPE65534 13 2 60 20351231000000 1735689600 1 example. QUJD", APEX_TYPE_RRSIG,
		  true);
	check_one("A 13 2 60 20240229235959 19700101000000 65535 Example. QQ==", APEX_TYPE_RRSIG,
		  true);
	check_one("zzz.example. A NS SOA RRSIG NSEC TYPE1234 CAA", APEX_TYPE_NSEC, true);
	check_one("1 1 10 AABBCC 2VPTU5TIMAMQTTGL4LUU9KG21E0AOR3S A RRSIG", APEX_TYPE_NSEC3, true);
	check_one("1 0 0 - 2vptu5timamqttgl4luu9kg21e0aor3s NS DS RRSIG", APEX_TYPE_NSEC3, true);

	/* Not taken: ldns decides (and rejects or accepts as before). */
	check_one("\\# 4 C0000201", APEX_TYPE_A, false);
	check_one("192.0.2.300", APEX_TYPE_A, false);
	check_one("192.0.2.1 extra", APEX_TYPE_A, false);
	check_one("70000 mx.example.", APEX_TYPE_MX, false);
	check_one("a..b", APEX_TYPE_NS, false);
	check_one("12345 8 2 4A2", APEX_TYPE_DS, false);          /* odd hex */
	check_one("12345 RSASHA256 2 4A26", APEX_TYPE_DS, false); /* mnemonic */
	check_one("257 3 13 gJL=Pi7P", APEX_TYPE_DNSKEY, false);  /* '=' inside */
	check_one("257 3 13 QR==", APEX_TYPE_DNSKEY, false);      /* stray bits */
	check_one("257 3 13 QUJ", APEX_TYPE_DNSKEY, false);       /* not whole quanta */
	check_one("A 13 2 60 20240230000000 20240101000000 1 example. QQ==", APEX_TYPE_RRSIG,
		  false);
	check_one("A 13 2 60 2024010100000 20240101000000 1 example. QQ==", APEX_TYPE_RRSIG, false);
	check_one("A 13 2 60 20240101246000 20240101000000 1 example. QQ==", APEX_TYPE_RRSIG,
		  false);
	check_one("BOGUS 13 2 60 20240101000000 20240101000000 1 example. QQ==", APEX_TYPE_RRSIG,
		  false);
	check_one("1 0 0 - =9 A", APEX_TYPE_NSEC3, false); /* not base32hex */
	check_one("1 0 0 - 2VPTU5TIMAMQTTGL4LUU9KG21E0AOR3W A", APEX_TYPE_NSEC3, false); /* W */
	check_one("1 0 0 ABC 2VPTU5TIMAMQTTGL4LUU9KG21E0AOR3S A", APEX_TYPE_NSEC3, false);
	check_one("1 0 0 - 2VPTU5TIMAMQTTGL4LUU9KG21E0AOR3S", APEX_TYPE_NSEC3, true); /* no types */
	check_one("next.example.", APEX_TYPE_NSEC, true);
	check_one("zzz.example. A \"NS\"", APEX_TYPE_NSEC, false);
	check_one("ns1", APEX_TYPE_TXT, false); /* not a fast-path type */
}

/* TYPEnnn (RFC 3597 section 5) is a 16-bit decimal number and nothing
 * else: a larger one is no type (ldns's atoi() took 101000000). */
static void test_type_numbers(void **state)
{
	(void)state;
	assert_int_equal(apex_rrtype_from_text("TYPE65534", 9), 65534);
	assert_int_equal(apex_rrtype_from_text("type1234", 8), 1234);
	assert_int_equal(apex_rrtype_from_text("TYPE65535", 9), 65535);
	assert_int_equal(apex_rrtype_from_text("TYPE0001", 8), 1);
	assert_int_equal(apex_rrtype_from_text("rrsig", 5), APEX_TYPE_RRSIG);
	assert_int_equal(apex_rrtype_from_text("TYPE65536", 9), -1);
	assert_int_equal(apex_rrtype_from_text("TYPE0101000000", 14), -1);
	assert_int_equal(apex_rrtype_from_text("TYPE99999999999999999999", 24), -1);
	assert_int_equal(apex_rrtype_from_text("TYPE12a", 7), -1);
	assert_int_equal(apex_rrtype_from_text("TYPE-1", 6), -1);
	assert_int_equal(apex_rrtype_from_text("BOGUS", 5), -1);
	/* in a type bitmap and as an RRSIG's type covered: not taken */
	check_one("zzz.example. A TYPE0101000000", APEX_TYPE_NSEC, false);
	check_one("zzz.example. A TYPE65536", APEX_TYPE_NSEC, false);
	check_one("TYPE70000 13 2 60 20351231000000 1735689600 1 example. QUJD", APEX_TYPE_RRSIG,
		  false);
}

/* ------------------------------------------------------------ whole zones */

static void rrset_equal(const apex_rrset_t *a, const apex_rrset_t *b, const char *what)
{
	if ((a == NULL) != (b == NULL))
		fail_msg("%s: RRSIG set present in one version only", what);
	if (a == NULL)
		return;
	if (a->type != b->type || a->count != b->count || a->ttl != b->ttl ||
	    a->rdata_size != b->rdata_size || memcmp(a->rdata, b->rdata, a->rdata_size) != 0)
		fail_msg("%s: RRset of type %u differs", what, a->type);
}

static void node_equal(const apex_zone_t *za, const apex_node_t *a, const apex_zone_t *zb,
		       const apex_node_t *b)
{
	char name[APEX_NAME_MAX * 4 + 1];
	apex_name_to_str(a->name, name, sizeof(name));
	if (a->name_size != b->name_size || memcmp(a->name, b->name, a->name_size) != 0 ||
	    a->flags != b->flags || a->rrset_count != b->rrset_count)
		fail_msg("node %s differs", name);
	for (size_t i = 0; i < a->rrset_count; i++) {
		rrset_equal(&apex_node_rrsets(za, a)[i], &apex_node_rrsets(zb, b)[i], name);
		rrset_equal(apex_node_rrsets(za, a)[i].rrsig, apex_node_rrsets(zb, b)[i].rrsig,
			    name);
	}
}

static void zones_equal(const apex_zone_t *a, const apex_zone_t *b)
{
	assert_int_equal(a->record_count, b->record_count);
	assert_int_equal(a->node_count, b->node_count);
	assert_int_equal(a->nsec3_count, b->nsec3_count);
	assert_int_equal(a->serial, b->serial);
	for (size_t i = 0; i < a->node_count; i++)
		node_equal(a, apex_zone_node_of(a, (uint32_t)i), b,
			   apex_zone_node_of(b, (uint32_t)i));
	for (size_t i = 0; i < a->nsec3_count; i++) {
		assert_memory_equal(a->nsec3[i].hash, b->nsec3[i].hash, a->nsec3[i].hash_size);
		node_equal(a, apex_zone_node(a, a->nsec3[i].node), b,
			   apex_zone_node(b, b->nsec3[i].node));
	}
}

static apex_zone_t *load(const char *path, const char *origin_text, bool fast, size_t chunk_min,
			 unsigned threads)
{
	uint8_t origin[APEX_NAME_MAX];
	assert_true(apex_name_from_str(origin_text, origin) > 0);
	atomic_store(&apex_load_fast_rdata, fast);
	atomic_store(&apex_load_chunk_min, chunk_min);
	atomic_store(&apex_load_threads, threads);
	apex_zone_t *zone = NULL;
	char err[512];
	int rc = apex_zone_load(path, origin, &zone, err, sizeof(err));
	atomic_store(&apex_load_fast_rdata, true);
	atomic_store(&apex_load_chunk_min, (size_t)8 << 20);
	atomic_store(&apex_load_threads, 0);
	if (rc != APEX_OK)
		fail_msg("%s: %s", path, err);
	return zone;
}

static void test_zones_match_ldns_and_chunks(void **state)
{
	for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
		char path[512];
		path_of(zones[z].file, path, sizeof(path));
		apex_zone_t *ldns_only = load(path, zones[z].origin, false, (size_t)1 << 40, 1);
		apex_zone_t *fast = load(path, zones[z].origin, true, (size_t)1 << 40, 1);
		apex_zone_t *chunked = load(path, zones[z].origin, true, 4096, 7);
		zones_equal(ldns_only, fast);
		zones_equal(ldns_only, chunked);
		apex_zone_unref(ldns_only);
		apex_zone_unref(fast);
		apex_zone_unref(chunked);
	}
}

static void write_file(const char *name, const char *text, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", dir, name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
	assert_int_equal(fclose(fp), 0);
}

/* A text of n padded records with directives in between. */
static char *big_text(int records, bool with_error, int *error_line)
{
	size_t cap = (size_t)records * 200 + 4096, len = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	int line = 0;
#define EMIT(...) (len += (size_t)snprintf(text + len, cap - len, __VA_ARGS__), line++)
	EMIT("$ORIGIN example.\n");
	EMIT("$TTL 300\n");
	EMIT("@ SOA ns1 hostmaster ( 1 2 3\n");
	EMIT("    4 5 ) ; multi-line\n");
	EMIT("@ NS ns1\n");
	EMIT("ns1 A 192.0.2.1\n");
	for (int i = 0; i < records; i++) {
		if (i % 997 == 500)
			EMIT("$ORIGIN sub%d.example.\n", i);
		if (i % 1409 == 700)
			EMIT("$TTL %d\n", 100 + i);
		if (i % 3 == 0)
			EMIT("h%d A 192.0.2.%d ; comment\n", i, i % 250);
		else if (i % 3 == 1)
			EMIT("  TXT \"text %d (with parens) ; and semicolon\"\n", i);
		else
			EMIT("h%d 60 IN MX ( %d\n    mx%d )\n", i, i % 100, i), line++;
		if (with_error && i == records * 2 / 3) {
			EMIT("bad A 192.0.2.300\n");
			*error_line = line;
		}
	}
#undef EMIT
	return text;
}

static void test_chunks_with_directives(void **state)
{
	char path[512];
	char *text = big_text(20000, false, NULL);
	write_file("big.zone", text, path, sizeof(path));
	free(text);
	apex_zone_t *one = load(path, "example.", false, (size_t)1 << 40, 1);
	apex_zone_t *many = load(path, "example.", true, 20000, 5);
	zones_equal(one, many);
	/* The directives really moved names and TTLs. */
	assert_true(one->record_count > 20000);
	apex_zone_unref(one);
	apex_zone_unref(many);
}

static void test_chunk_error_line(void **state)
{
	char path[512], err1[512], err2[512];
	int error_line = 0;
	char *text = big_text(20000, true, &error_line);
	write_file("bad.zone", text, path, sizeof(path));
	free(text);
	uint8_t origin[APEX_NAME_MAX];
	assert_true(apex_name_from_str("example.", origin) > 0);
	apex_zone_t *zone = (apex_zone_t *)1;
	atomic_store(&apex_load_chunk_min, (size_t)1 << 40);
	assert_int_equal(apex_zone_load(path, origin, &zone, err1, sizeof(err1)), APEX_ELOAD);
	assert_null(zone);
	atomic_store(&apex_load_chunk_min, 20000);
	atomic_store(&apex_load_threads, 5);
	zone = (apex_zone_t *)1;
	assert_int_equal(apex_zone_load(path, origin, &zone, err2, sizeof(err2)), APEX_ELOAD);
	atomic_store(&apex_load_chunk_min, (size_t)8 << 20);
	atomic_store(&apex_load_threads, 0);
	assert_null(zone);
	assert_string_equal(err1, err2);
	char want[600];
	snprintf(want, sizeof(want), "%s:%d: bad rdata", path, error_line);
	assert_string_equal(err1, want);
}

static int setup(void **state)
{
	apex_log_set_level(APEX_LOG_ERROR);
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/apex-rdata-text-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/big.zone", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bad.zone", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_match_ldns),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_type_numbers),
		cmocka_unit_test(test_zones_match_ldns_and_chunks),
		cmocka_unit_test(test_chunks_with_directives),
		cmocka_unit_test(test_chunk_error_line),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
