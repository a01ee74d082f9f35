/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ZONEMD (RFC 8976): the root zone's own record (SHA-384, made by the
 * root zone maintainer) verifies, and fails once one record of the zone
 * changes; a zone digested by ldns (ldns-signzone -Z -z 1:2, SHA-512)
 * verifies; the cases of RFC 8976 section 4 (no record, unsupported
 * scheme or algorithm, serial not the SOA's, two records of one scheme
 * and algorithm, a digest of the wrong size) give their outcome.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dns/name.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/zone.h"
#include "zonemd/canonical_rdata.h"
#include "zonemd/zonemd.h"

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/apex-test-zonemd-XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[300];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static apex_zone_t *load_path(const char *path, const char *origin)
{
	char err[512];
	uint8_t o[APEX_NAME_MAX];
	apex_zone_t *zone = NULL;

	assert_true(apex_name_from_str(origin, o) > 0);
	if (apex_zone_load(path, o, &zone, err, sizeof(err)) != APEX_OK)
		fail_msg("%s: %s", path, err);
	return zone;
}

/* The zone of text (origin example.), written to a file and loaded. */
static apex_zone_t *load_text(const char *text)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/zone", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return load_path(path, "example.");
}

static apex_zonemd_status_t verify(const apex_zone_t *zone, char *detail, size_t size)
{
	apex_zonemd_result_t res;
	assert_int_equal(apex_zonemd_verify(zone, &res), APEX_OK);
	snprintf(detail, size, "%s", res.detail);
	return res.status;
}

static void test_root_zone(void **state)
{
	char path[512], detail[400];
	(void)state;
	snprintf(path, sizeof(path), "%s/zones/root.zone", APEX_SRCDIR);
	apex_zone_t *zone = load_path(path, ".");
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_VERIFIED);
	assert_non_null(strstr(detail, "SHA-384"));
	apex_zone_unref(zone);

	/* the same zone with one glue address changed */
	char cmd[2048], tampered[300];
	snprintf(tampered, sizeof(tampered), "%s/root.zone", dir);
	snprintf(
		cmd, sizeof(cmd),
		"sed 's/^a.root-servers.net.\\(.*\\)198.41.0.4$/a.root-servers.net.\\1198.41.0.5/' "
		"'%s' > '%s' && ! cmp -s '%s' '%s'",
		path, tampered, path, tampered);
	assert_int_equal(system(cmd), 0);
	zone = load_path(tampered, ".");
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_FAILED);
	if (strstr(detail, "ZONEMD digest mismatch (SHA-384): the zone's record has F1EA4385") ==
	    NULL)
		fail_msg("%s", detail);
	apex_zone_unref(zone);
}

/* The feature zone, digested by ldns-signzone -Z -z 1:2 (ldns 1.8.3):
 * mixed-case owners, wildcards, two-record RRsets, DNAMEs, RRsets of
 * several TTLs.  (Without its RRset whose records' TTLs differ: apex
 * keeps one TTL per RRset, the lowest, where ldns digests each record's
 * own.) */
static void test_ldns_digest(void **state)
{
	char path[512], detail[400];
	(void)state;
	snprintf(path, sizeof(path), "%s/tests/unit/data/example.zonemd.zone", APEX_SRCDIR);
	apex_zone_t *zone = load_path(path, "example.");
	apex_zonemd_status_t status = verify(zone, detail, sizeof(detail));
	if (status != APEX_ZONEMD_VERIFIED)
		fail_msg("%s", detail);
	assert_non_null(strstr(detail, "SHA-512"));
	apex_zone_unref(zone);
}

#define HEAD                                                                    \
	"$ORIGIN example.\n$TTL 60\n@ SOA ns1 hostmaster 7 2 3 4 5\n@ NS ns1\n" \
	"ns1 A 192.0.2.1\n"

static void test_section_4_cases(void **state)
{
	char detail[400];
	(void)state;
	apex_zone_t *zone = load_text(HEAD);
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_ABSENT);
	apex_zone_unref(zone);

	/* a private scheme and an unknown hash: not verified, not failed */
	zone = load_text(HEAD "@ ZONEMD 7 240 1 0102030405060708090A0B0C\n"
			      "@ ZONEMD 7 1 200 0102030405060708090A0B0C\n");
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_UNSUPPORTED);
	apex_zone_unref(zone);

	/* the serial is not the SOA's */
	zone = load_text(HEAD "@ ZONEMD 8 1 1 " /* 48 bytes */
			      "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
			      "202122232425262728292A2B2C2D2E2F\n");
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_FAILED);
	assert_non_null(strstr(detail, "ZONEMD serial 8 is not the SOA serial 7"));
	apex_zone_unref(zone);

	/* a SHA-384 digest of 12 bytes */
	zone = load_text(HEAD "@ ZONEMD 7 1 1 0102030405060708090A0B0C\n");
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_FAILED);
	assert_non_null(strstr(detail, "digest of 12 bytes (48 expected)"));
	apex_zone_unref(zone);

	/* two SHA-512 records (RFC 8976 section 2.4) */
	zone = load_text(HEAD "@ ZONEMD 7 1 2 0102030405060708090A0B0C\n"
			      "@ ZONEMD 7 1 2 0102030405060708090A0B0D\n");
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_FAILED);
	assert_non_null(strstr(detail, "two ZONEMD records"));
	apex_zone_unref(zone);
}

/* A digest put into the zone is verified; one changed record or TTL is
 * not; a wrong record beside a right one (an algorithm rollover) is. */
static void test_roundtrip(void **state)
{
	char detail[400], text[2048], hexd[2 * APEX_ZONEMD_DIGEST_MAX + 1];
	uint8_t digest[APEX_ZONEMD_DIGEST_MAX];
	size_t size;
	(void)state;
	/* %s: lines before the records (a record, a $TTL), %s: the digest */
	const char *body =
		HEAD "%s"
		     "www A 192.0.2.80\nwww A 192.0.2.81\nMail.Example. MX 10 MX.EXAMPLE.\n"
		     "@ ZONEMD 7 1 1 %s\n";
	/* the digest leaves the ZONEMD record out: compute it over a
	 * placeholder of the right size */
	char zeros[97];
	memset(zeros, '0', 96);
	zeros[96] = '\0';
	snprintf(text, sizeof(text), body, "", zeros);
	apex_zone_t *zone = load_text(text);
	assert_int_equal(apex_zonemd_digest(zone, APEX_ZONEMD_SHA384, digest, &size), APEX_OK);
	assert_int_equal(size, 48);
	apex_zone_unref(zone);
	for (size_t i = 0; i < size; i++)
		snprintf(hexd + 2 * i, 3, "%02x", digest[i]);

	snprintf(text, sizeof(text), body, "", hexd);
	zone = load_text(text);
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_VERIFIED);
	apex_zone_unref(zone);
	/* the case of names does not count (canonical form) */
	snprintf(text, sizeof(text), body, "", hexd);
	for (char *p = strstr(text, "MX.EXAMPLE."); *p != '\n'; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	zone = load_text(text);
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_VERIFIED);
	apex_zone_unref(zone);

	snprintf(text, sizeof(text), body, "www A 192.0.2.82\n", hexd);
	zone = load_text(text);
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_FAILED);
	apex_zone_unref(zone);
	/* the same records with another TTL */
	snprintf(text, sizeof(text), body, "$TTL 61\n", hexd);
	zone = load_text(text);
	assert_int_equal(verify(zone, detail, sizeof(detail)), APEX_ZONEMD_FAILED);
	apex_zone_unref(zone);

	snprintf(text, sizeof(text), body,
		 "@ ZONEMD 7 1 2 "
		 "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
		 "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F\n",
		 hexd);
	zone = load_text(text);
	if (verify(zone, detail, sizeof(detail)) != APEX_ZONEMD_VERIFIED)
		fail_msg("%s", detail);
	apex_zone_unref(zone);
}

static void test_canonical_rdata(void **state)
{
	uint8_t out[64];
	(void)state;
	/* MX: preference kept, the name lowercased */
	apex_canonical_rdata(15,
			     (const uint8_t *)"\x00\x0a\x02"
					      "MX\x02"
					      "Ex\x00",
			     9, out);
	assert_memory_equal(out,
			    "\x00\x0a\x02mx\x02"
			    "ex\x00",
			    9);
	/* NSEC: the next owner keeps its case (RFC 6840 section 5.1) */
	apex_canonical_rdata(47,
			     (const uint8_t *)"\x01"
					      "A\x00\x00\x01\x40",
			     6, out);
	assert_memory_equal(out,
			    "\x01"
			    "A\x00\x00\x01\x40",
			    6);
	/* SOA: both names */
	apex_canonical_rdata(6,
			     (const uint8_t *)"\x01"
					      "N\x00\x01"
					      "H\x00"
					      "\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03"
					      "\x00\x00\x00\x04\x00\x00\x00\x05",
			     26, out);
	assert_memory_equal(out, "\x01n\x00\x01h\x00", 6);
	/* TXT: left as it is */
	apex_canonical_rdata(16,
			     (const uint8_t *)"\x02"
					      "Ab",
			     3, out);
	assert_memory_equal(out,
			    "\x02"
			    "Ab",
			    3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_zone),       cmocka_unit_test(test_ldns_digest),
		cmocka_unit_test(test_section_4_cases), cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_canonical_rdata),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
