/* SPDX-License-Identifier: BSD-3-Clause */
/* Zone loading: master file syntax, zone checks, warnings, real zones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "zone/build_steps.h"
#include "zone/file_map.h"
#include "zone/load.h"
#include "zone/load_tuning.h"
#include "zone/version_build.h"
#include "zone/zone.h"
#include "zone/zone_sink.h"

static char dir[256];

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/apex-zone-load-XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write text to dir/name; the path goes to path. */
static void write_file(const char *name, const char *text, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", dir, name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

static void wire(const char *str, uint8_t *out)
{
	assert_true(apex_name_from_str(str, out) > 0);
}

/* Load text as zone origin; returns the rc, the zone in *zone. */
static int load_text(const char *text, const char *origin, apex_zone_t **zone, char *err,
		     size_t err_size, char *path, size_t path_size)
{
	uint8_t o[APEX_NAME_MAX];
	wire(origin, o);
	write_file("test.zone", text, path, path_size);
	return apex_zone_load(path, o, zone, err, err_size);
}

/* Load text that must be rejected with "PATH:LINE: ..." containing reason. */
static void expect_reject(const char *text, int line, const char *reason)
{
	char err[512], path[300], prefix[320];
	apex_zone_t *zone = (apex_zone_t *)1;
	int rc = load_text(text, "example.", &zone, err, sizeof(err), path, sizeof(path));
	assert_int_equal(rc, APEX_ELOAD);
	assert_null(zone);
	if (line > 0)
		snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", path);
	if (strncmp(err, prefix, strlen(prefix)) != 0 || strstr(err, reason) == NULL)
		fail_msg("error '%s' does not start with '%s' and contain '%s'", err, prefix,
			 reason);
}

static const apex_node_t *find(const apex_zone_t *zone, const char *name)
{
	uint8_t n[APEX_NAME_MAX], key[APEX_KEY_MAX];
	wire(name, n);
	size_t key_size = apex_name_key(n, key, NULL);
	return apex_zone_find(zone, key, key_size);
}

static const apex_rrset_t *rrset(const apex_zone_t *zone, const char *name, uint16_t type)
{
	const apex_node_t *node = find(zone, name);
	return node ? apex_node_rrset(zone, node, type) : NULL;
}

/* Record i of an RRset: RDATA and its length. */
static const uint8_t *record(const apex_rrset_t *set, int i, size_t *rdlength)
{
	const uint8_t *p = set->rdata;
	for (;;) {
		size_t len = (size_t)p[0] << 8 | p[1];
		if (i-- == 0) {
			*rdlength = len;
			return p + 2;
		}
		p += 2 + len;
	}
}

static void test_directives_and_syntax(void **state)
{
	char inc_path[300];
	write_file("sub.inc",
		   "; included with origin inc.example.\n"
		   "@ A 192.0.2.9\n"
		   "host TXT \"included\"\n"
		   "$ORIGIN other.example.\n"
		   "x A 192.0.2.10\n",
		   inc_path, sizeof(inc_path));
	const char *text = "$ORIGIN example.\n"
			   "$TTL 1h\n"
			   "@ IN SOA ns1 hostmaster ( 2025010101 ; serial\n"
			   "        7200 3600\n"
			   "        1209600 300 )\n"
			   "@ NS ns1\n"
			   "ns1 600 A 192.0.2.1\n"
			   "    AAAA 2001:db8::1 ; blank owner: ns1 again\n"
			   "\n"
			   "$INCLUDE sub.inc inc\n"
			   "after A 192.0.2.11 ; origin is example. again\n"
			   "$TTL 120\n"
			   "unk TYPE65534 \\# 4 0A000001\n"
			   "unk TYPE1 \\# 4 C0000202\n"
			   "txt TXT \"a;b (c)\" plain\n"
			   "ttls 600 A 192.0.2.13 ; TTLs differ: the lowest is served\n"
			   "ttls 300 A 192.0.2.14\n"
			   "ttls 900 A 192.0.2.15\n"
			   "$ORIGIN deep.example.\n"
			   "a.b A 192.0.2.12\n";
	char err[512], path[300];
	apex_zone_t *zone = NULL;
	int rc = load_text(text, "example.", &zone, err, sizeof(err), path, sizeof(path));
	if (rc != APEX_OK)
		fail_msg("load failed: %s", err);

	assert_int_equal(zone->serial, 2025010101);
	assert_int_equal(zone->negative_ttl, 300);
	assert_int_equal(zone->record_count, 15);
	assert_int_equal(zone->dnssec, APEX_DNSSEC_NONE);
	assert_int_equal(zone->soa->ttl, 3600);

	const apex_rrset_t *set = rrset(zone, "ns1.example.", APEX_TYPE_A);
	assert_non_null(set);
	assert_int_equal(set->ttl, 600);
	set = rrset(zone, "ns1.example.", APEX_TYPE_AAAA);
	assert_non_null(set);
	assert_int_equal(set->ttl, 3600);
	/* RFC 2181 5.2: an RRset whose records' TTLs differ has the lowest */
	set = rrset(zone, "ttls.example.", APEX_TYPE_A);
	assert_non_null(set);
	assert_int_equal(set->count, 3);
	assert_int_equal(set->ttl, 300);

	/* $INCLUDE with an origin; $ORIGIN inside it does not leak out. */
	assert_non_null(rrset(zone, "inc.example.", APEX_TYPE_A));
	assert_non_null(rrset(zone, "host.inc.example.", APEX_TYPE_TXT));
	assert_non_null(rrset(zone, "x.other.example.", APEX_TYPE_A));
	assert_non_null(rrset(zone, "after.example.", APEX_TYPE_A));
	assert_null(find(zone, "after.other.example."));

	/* RFC 3597: unknown type kept as is, known type in \# form parsed. */
	set = rrset(zone, "unk.example.", 65534);
	assert_non_null(set);
	assert_int_equal(set->ttl, 120);
	size_t len;
	const uint8_t *rd = record(set, 0, &len);
	assert_int_equal(len, 4);
	assert_memory_equal(rd, "\x0a\x00\x00\x01", 4);
	set = rrset(zone, "unk.example.", APEX_TYPE_A);
	assert_non_null(set);
	rd = record(set, 0, &len);
	assert_memory_equal(rd, "\xc0\x00\x02\x02", 4);

	/* Quoted ';' and parentheses are data, not syntax. */
	set = rrset(zone, "txt.example.", APEX_TYPE_TXT);
	assert_non_null(set);
	rd = record(set, 0, &len);
	assert_int_equal(len, 8 + 6);
	assert_memory_equal(rd,
			    "\x07"
			    "a;b (c)"
			    "\x05"
			    "plain",
			    14);

	/* Relative names after a second $ORIGIN; empty non-terminal b. */
	const apex_node_t *node = find(zone, "a.b.deep.example.");
	assert_non_null(node);
	node = find(zone, "b.deep.example.");
	assert_non_null(node);
	assert_true(node->flags & APEX_NODE_EMPTY);
	apex_zone_unref(zone);
}

static void test_rejections(void **state)
{
	expect_reject("$ORIGIN example.\nns1 A 192.0.2.1\n", 0,
		      "no SOA record at the zone apex example.");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "@ SOA ns2 hostmaster 1 2 3 4 5\n",
		      4, "more than one SOA");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "sub SOA ns1 hostmaster 1 2 3 4 5\n",
		      4, "not at the zone apex");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "www.example.org. A 192.0.2.1\n",
		      4, "outside the zone");
	/* CNAME beside other data: reported at the later of the two. */
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "www CNAME host\n"
		      "host A 192.0.2.1\n"
		      "www A 192.0.2.2\n",
		      6, "CNAME and other data at www.example.");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "www A 192.0.2.2\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "www CNAME host\n",
		      5, "CNAME and other data");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "www CNAME a\n"
		      "www CNAME b\n",
		      5, "more than one CNAME");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "www CH TXT \"chaos\"\n",
		      4, "class 3 is not IN");
	/* Line numbers count the lines of a multi-line record. */
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster (\n 1 2\n 3 4\n 5 )\n"
		      "\n; comment\n"
		      "www A 192.0.2.300\n",
		      9, "bad rdata");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "www BOGUSTYPE 1\n",
		      4, "");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster ( 1 2 3 4 5\n",
		      3, "unbalanced parenthesis");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "$INCLUDE does-not-exist.inc\n",
		      4, "cannot open $INCLUDE file");
	expect_reject("$ORIGIN example.\n$TTL bogus\n", 2, "bad TTL");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "www 2147483648 A 192.0.2.1\n",
		      4, "TTL 2147483648 out of range");

	/* Too many fields for IPSECKEY or AMTRELAY, or a reserved gateway
	 * type.  apex parses their RDATA: ldns's parsers leak their copies
	 * of the fields on such a line (LeakSanitizer finds it in the ASan
	 * build). */
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "gw 60 IN IPSECKEY 10 1 2 192.0.2.38 "
		      "AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ== x\n",
		      4, "bad rdata");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "gw A 192.0.2.1\n"
		      "   60 IPSECKEY CNAME 13 2 3600 20351231000000 ( 20250101000000\n 40731 ) "
		      "example.\n",
		      5, "bad rdata");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "gw TYPE45 10 4 2 . AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==\n",
		      4, "bad rdata");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "relay AMTRELAY 10 0 1 203.0.113.15 extra\n",
		      4, "bad rdata");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "relay TYPE260 10 2 1 203.0.113.15\n",
		      4, "bad rdata");
	/* TYPEnnn beyond 16 bits: ldns would keep the low bits (type 0 and
	 * type 9024 here) */
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "u1 TYPE65536 \\# 0\n",
		      4, "TYPE65536: not a type (TYPE0 to TYPE65535)");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "@ NSEC ns1 A NS SOA TYPE0101000000\n",
		      4, "TYPE0101000000: not a type (TYPE0 to TYPE65535)");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "@ RRSIG TYPE70000 13 2 60 20351231000000 1735689600 1 example. QUJD\n",
		      4, "TYPE70000: not a type (TYPE0 to TYPE65535)");
	expect_reject(
		"$ORIGIN example.\n$TTL 60\n"
		"@ SOA ns1 hostmaster 1 2 3 4 5\n"
		"gw TYPE45x 10 1 2 192.0.2.38 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==\n",
		4, "TYPE45x: not a type (TYPE0 to TYPE65535)");

	/* Numbers too large for their field, or negative: ldns would keep
	 * the low bits (flags 0, 4464 iterations, serial 1, preference
	 * 65535); a field that takes a mnemonic is checked when it is a
	 * number, and an escaped blank does not end a name */
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "@ CAA 256 issue \"ca.example\"\n",
		      4, "CAA: 256 in RDATA field 1 is not a number from 0 to 255");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "@ NSEC3PARAM 1 0 70000 -\n",
		      4, "NSEC3PARAM: 70000 in RDATA field 3 is not a number from 0 to 65535");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 4294967297 2 3 4 5\n",
		      3, "SOA: 4294967297 in RDATA field 3 is not a number from 0 to 4294967295");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 4294967296 3 4 5\n",
		      3, "SOA: 4294967296 in RDATA field 4 is not a number from 0 to 4294967295");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 -4 5\n",
		      3, "SOA: -4 in RDATA field 6 is not a number from 0 to 4294967295");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "n NAPTR 10 -1 \"s\" \"SIP+D2U\" \"\" _sip._udp\n",
		      4, "NAPTR: -1 in RDATA field 2 is not a number from 0 to 65535");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "_443._tcp TLSA 3 1 257 aabb\n",
		      4, "TLSA: 257 in RDATA field 3 is not a number from 0 to 255");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "c CDS 60485 300 1 2BB183AF5F22588179A53B0A98631FAD1A292118\n",
		      4, "CDS: 300 in RDATA field 2 is not a number from 0 to 255");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1\\ x hostmaster 1 2 3 4 5\n"
		      "k KX 65536 a\\ b\n",
		      4, "KX: 65536 in RDATA field 1 is not a number from 0 to 65535");
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "y\\ z CAA 256 issue \"x\"\n",
		      4, "CAA: 256 in RDATA field 1 is not a number from 0 to 255");

	/* ldns reads this CAA as four fields (a second flags byte, 0x0a,
	 * from the generic form's length): served, its tag length would
	 * say 10 bytes where 3 follow, which no resolver could decode. */
	expect_reject("$ORIGIN example.\n$TTL 60\n"
		      "@ SOA ns1 hostmaster 1 2 3 4 5\n"
		      "u1 CAA 5534 \\# 4 0a000001\n",
		      4, "type 257: more rdata fields than the type has");

	/* An error inside an included file names that file and its line. */
	char inc_path[300], err[512], path[300], want[400];
	write_file("bad.inc", "ok A 192.0.2.1\nbad A not-an-address\n", inc_path, sizeof(inc_path));
	apex_zone_t *zone = NULL;
	int rc = load_text("$ORIGIN example.\n$TTL 60\n@ SOA ns1 hostmaster 1 2 3 4 5\n"
			   "$INCLUDE bad.inc\n",
			   "example.", &zone, err, sizeof(err), path, sizeof(path));
	assert_int_equal(rc, APEX_ELOAD);
	snprintf(want, sizeof(want), "%s:2: bad rdata", inc_path);
	assert_string_equal(err, want);
}

static void test_dnssec_beside_cname_accepted(void **state)
{
	char err[512], path[300];
	apex_zone_t *zone = NULL;
	int rc =
		load_text("$ORIGIN example.\n$TTL 60\n"
			  "@ SOA ns1 hostmaster 1 2 3 4 5\n"
			  "www CNAME host\n"
			  "www NSEC zzz.example. CNAME RRSIG NSEC\n"
			  "www RRSIG CNAME 13 2 60 20351231000000 20250101000000 1 example. AAAA\n",
			  "example.", &zone, err, sizeof(err), path, sizeof(path));
	if (rc != APEX_OK)
		fail_msg("load failed: %s", err);
	const apex_node_t *www = find(zone, "www.example.");
	assert_non_null(www);
	assert_true(www->flags & APEX_NODE_CNAME);
	assert_non_null(apex_node_rrset(zone, www, APEX_TYPE_CNAME)->rrsig);
	apex_zone_unref(zone);
}

/* IPSECKEY (RFC 4025) and AMTRELAY (RFC 8777) records load in each form:
 * a key split by blanks, no key, no gateway, a name as gateway, the
 * mnemonic AMTRELAY (unknown to ldns 1.8.3), TYPEnnn, RFC 3597 "\#". */
static void test_ipseckey_amtrelay(void **state)
{
	char err[512], path[300];
	apex_zone_t *zone = NULL;
	int rc = load_text("$ORIGIN example.\n$TTL 60\n"
			   "@ SOA ns1 hostmaster 1 2 3 4 5\n"
			   "gw IPSECKEY 10 1 2 192.0.2.38 AQNRU3mG\n"
			   "   60 IN IPSECKEY 20 3 2 Gw.example. ( AQNR\n"
			   "   U3mG )\n"
			   "   TYPE45 30 0 0 .\n"
			   "   IPSECKEY \\# 3 280000\n"
			   "relay 60 IN AMTRELAY 10 1 3 relay.example.\n"
			   "      TYPE260 20 0 1 203.0.113.15\n"
			   "      AMTRELAY \\# 2 1e00\n",
			   "example.", &zone, err, sizeof(err), path, sizeof(path));
	if (rc != APEX_OK)
		fail_msg("load failed: %s", err);
	const apex_rrset_t *ipseckey =
		apex_node_rrset(zone, find(zone, "gw.example."), APEX_TYPE_IPSECKEY);
	assert_non_null(ipseckey);
	assert_int_equal(ipseckey->count, 4);
	/* Each record: 2-byte length, RDATA (records in canonical order). */
	static const uint8_t want_ipseckey[] = {
		/* 10, type 1, algorithm 2, 192.0.2.38, key AQNRU3mG */
		0, 13, 10, 1, 2, 192, 0, 2, 38, 0x01, 0x03, 0x51, 0x53, 0x79, 0x86,
		/* 20, type 3, algorithm 2, Gw.example. (case kept), the key */
		0, 21, 20, 3, 2, 2, 'G', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0x01, 0x03,
		0x51, 0x53, 0x79, 0x86,
		/* 30, no gateway, no key; 40 in the generic form */
		0, 3, 30, 0, 0, 0, 3, 40, 0, 0
	};
	assert_int_equal(ipseckey->rdata_size, sizeof(want_ipseckey));
	assert_memory_equal(ipseckey->rdata, want_ipseckey, sizeof(want_ipseckey));
	const apex_rrset_t *relay =
		apex_node_rrset(zone, find(zone, "relay.example."), APEX_TYPE_AMTRELAY);
	assert_non_null(relay);
	static const uint8_t want_relay[] = {
		/* 10, D=1 type 3, relay.example. */
		0, 17, 10, 0x83, 5, 'r', 'e', 'l', 'a', 'y', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e',
		0,
		/* 20, D=0 type 1, 203.0.113.15; 30 in the generic form */
		0, 6, 20, 1, 203, 0, 113, 15, 0, 2, 30, 0
	};
	assert_int_equal(relay->rdata_size, sizeof(want_relay));
	assert_memory_equal(relay->rdata, want_relay, sizeof(want_relay));
	apex_zone_unref(zone);
}

/* Records ending in a quoted string (CAA, HINFO) at the end of a line or
 * before a comment or a closing parenthesis load, with the right RDATA. */
static void test_final_quoted_string(void **state)
{
	char err[512], path[300];
	apex_zone_t *zone = NULL;
	int rc = load_text("$ORIGIN example.\n$TTL 60\n"
			   "@ SOA ns1 hostmaster 1 2 3 4 5\n"
			   "@ CAA 0 issue \"ca.example.net\"   \n"
			   "h HINFO \"cpu\" \"os\" ; a comment\n"
			   "p HINFO ( \"a\"\n \"b\" )\n",
			   "example.", &zone, err, sizeof(err), path, sizeof(path));
	if (rc != APEX_OK)
		fail_msg("load failed: %s", err);
	const apex_rrset_t *caa = apex_node_rrset(zone, find(zone, "example."), 257);
	assert_non_null(caa);
	/* RDLENGTH 21: flags 0, tag length 5, "issue", "ca.example.net" */
	assert_int_equal(caa->rdata_size, 2 + 21);
	assert_memory_equal(caa->rdata, "\0\x15\0\x05issueca.example.net", 23);
	const apex_rrset_t *hinfo =
		apex_node_rrset(zone, find(zone, "h.example."), APEX_TYPE_HINFO);
	assert_non_null(hinfo);
	assert_memory_equal(hinfo->rdata,
			    "\0\x07\x03"
			    "cpu\x02"
			    "os",
			    9);
	hinfo = apex_node_rrset(zone, find(zone, "p.example."), APEX_TYPE_HINFO);
	assert_non_null(hinfo);
	assert_memory_equal(hinfo->rdata,
			    "\0\x04\x01"
			    "a\x01"
			    "b",
			    6);
	apex_zone_unref(zone);
}

/* Numbers at the top of their field's width load as written, and a
 * field that takes a mnemonic takes it (the ones past their width are
 * refused: test_rejections()). */
static void test_numbers_at_their_width(void **state)
{
	char err[512], path[300];
	apex_zone_t *zone = NULL;
	int rc = load_text("$ORIGIN example.\n$TTL 60\n"
			   "@ SOA ns1 hostmaster 4294967295 4294967295 1h30m 1w 5\n"
			   "@ CAA 255 issue \"ca.example\"\n"
			   "u URI 65535 0 \"http://x\"\n"
			   "_443._tcp TLSA DANE-EE SPKI 255 aabb\n"
			   /* an escaped blank is part of the owner: an A record,
			    * not an MX whose preference would be "A" */
			   "x\\ MX A 192.0.2.7\n"
			   /* leading zeros are no part of the number's width */
			   "c CAA 000000000000128 issue \"ca.example\"\n",
			   "example.", &zone, err, sizeof(err), path, sizeof(path));
	if (rc != APEX_OK)
		fail_msg("load failed: %s", err);
	assert_int_equal(zone->serial, 4294967295u);
	/* the SOA's refresh, retry and expire after MNAME and RNAME */
	const uint8_t *soa = zone->soa->rdata + 2;
	size_t names = apex_name_size(soa);
	names += apex_name_size(soa + names);
	assert_memory_equal(soa + names + 4, "\xff\xff\xff\xff\0\0\x15\x18\0\x09\x3a\x80", 12);
	const apex_rrset_t *set = apex_node_rrset(zone, find(zone, "example."), 257);
	assert_non_null(set);
	assert_memory_equal(set->rdata, "\0\x11\xff\x05issueca.example", 19);
	set = apex_node_rrset(zone, find(zone, "u.example."), 256);
	assert_non_null(set);
	assert_memory_equal(set->rdata, "\0\x0c\xff\xff\0\0http://x", 14);
	set = apex_node_rrset(zone, find(zone, "_443._tcp.example."), 52);
	assert_non_null(set);
	assert_memory_equal(set->rdata, "\0\x05\x03\x01\xff\xaa\xbb", 7);
	set = apex_node_rrset(zone, find(zone, "x\\ MX.example."), APEX_TYPE_A);
	assert_non_null(set);
	assert_memory_equal(set->rdata, "\0\x04\xc0\0\x02\x07", 6);
	set = apex_node_rrset(zone, find(zone, "c.example."), 257);
	assert_non_null(set);
	assert_memory_equal(set->rdata, "\0\x11\x80\x05issueca.example", 19);
	apex_zone_unref(zone);
	(void)state;
}

/* Run a load with stderr captured into log (NUL-terminated). */
static int load_capturing(const char *text, apex_zone_t **zone, char *log, size_t log_size)
{
	char err[512], path[300], log_path[300];
	snprintf(log_path, sizeof(log_path), "%s/stderr.log", dir);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
	int rc = load_text(text, "example.", zone, err, sizeof(err), path, sizeof(path));
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	FILE *fp = fopen(log_path, "r");
	assert_non_null(fp);
	size_t n = fread(log, 1, log_size - 1, fp);
	log[n] = '\0';
	fclose(fp);
	return rc;
}

static void test_ttl_and_glue_warnings(void **state)
{
	char log[8192];
	apex_zone_t *zone = NULL;
	/* The RRset's records sort as .1 then .2; the file's first record
	 * (.2) has TTL 300, the other 100: the lowest is served (RFC 2181
	 * 5.2), the warning names the first. */
	int rc = load_capturing("$ORIGIN example.\n$TTL 60\n"
				"@ SOA ns1 hostmaster 1 2 3 4 5\n"
				"www 300 A 192.0.2.2\n"
				"www 100 A 192.0.2.1\n"
				"sub NS ns.sub\n"
				"sub NS ns.elsewhere.\n"
				"lone DS 1 13 2 ABCD\n",
				&zone, log, sizeof(log));
	assert_int_equal(rc, APEX_OK);
	const apex_rrset_t *set = rrset(zone, "www.example.", APEX_TYPE_A);
	assert_int_equal(set->count, 2);
	assert_int_equal(set->ttl, 100);
	size_t len;
	assert_memory_equal(record(set, 0, &len), "\xc0\x00\x02\x01", 4);
	assert_memory_equal(record(set, 1, &len), "\xc0\x00\x02\x02", 4);
	if (strstr(log, "test.zone:5: TTL 100 differs from the TTL 300 of the first") == NULL ||
	    strstr(log, "using the lowest, 100") == NULL)
		fail_msg("no TTL warning in: %s", log);
	if (strstr(log, "DS record at lone.example., which is not a delegation") == NULL)
		fail_msg("no stray DS warning in: %s", log);
	if (strstr(log, "missing glue") == NULL || strstr(log, "ns.sub.example.") == NULL)
		fail_msg("no missing glue warning in: %s", log);
	apex_zone_unref(zone);
}

static void test_duplicates_and_canonical_order(void **state)
{
	char err[512], path[300];
	apex_zone_t *zone = NULL;
	int rc = load_text("$ORIGIN example.\n$TTL 60\n"
			   "@ SOA ns1 hostmaster 1 2 3 4 5\n"
			   "@ NS B.example.\n"
			   "@ NS a.example.\n"
			   "@ NS A.EXAMPLE.\n" /* duplicate of a.example. (case) */
			   "www A 192.0.2.1\n"
			   "www A 192.0.2.1\n" /* exact duplicate */
			   "Mixed.Case A 192.0.2.3\n"
			   "mixed.case TXT \"t\"\n",
			   "example.", &zone, err, sizeof(err), path, sizeof(path));
	if (rc != APEX_OK)
		fail_msg("load failed: %s", err);
	assert_int_equal(zone->record_count, 6);
	const apex_rrset_t *ns = rrset(zone, "example.", APEX_TYPE_NS);
	assert_int_equal(ns->count, 2);
	size_t len;
	/* Canonical order compares lowercased names; the stored case is
	 * the one written (first occurrence). */
	assert_memory_equal(record(ns, 0, &len),
			    "\x01"
			    "a"
			    "\x07"
			    "example",
			    10);
	assert_memory_equal(record(ns, 1, &len),
			    "\x01"
			    "B"
			    "\x07"
			    "example",
			    10);
	assert_int_equal(rrset(zone, "www.example.", APEX_TYPE_A)->count, 1);
	const apex_node_t *node = find(zone, "MIXED.case.example.");
	assert_non_null(node);
	assert_memory_equal(node->name,
			    "\x05"
			    "Mixed"
			    "\x04"
			    "Case",
			    11);
	assert_int_equal(node->rrset_count, 2);
	apex_zone_unref(zone);
}

/* The RDATA of an RRset whose records were written back to back in
 * canonical order is used where the loader wrote it; every other RRset
 * (split, out of order, a duplicate between its records) is copied.
 * Either way the RRset holds exactly its records, in canonical order. */
static void test_rrset_rdata_in_place_or_copied(void **state)
{
	char err[512], path[300];
	apex_zone_t *zone = NULL;
	int rc = load_text("$ORIGIN example.\n$TTL 60\n"
			   "@ SOA ns1 hostmaster 1 2 3 4 5\n"
			   "@ NS ns1\n"
			   "a A 192.0.2.1\n"
			   "a A 192.0.2.2\n" /* back to back, in order */
			   "b A 192.0.2.2\n"
			   "c TXT \"x\"\n"
			   "b A 192.0.2.1\n" /* split by c, out of order */
			   "d A 192.0.2.9\n"
			   "d A 192.0.2.8\n" /* back to back, out of order */
			   "e A 192.0.2.1\n"
			   "e A 192.0.2.2\n"
			   "e A 192.0.2.1\n" /* duplicate after the set */
			   "f A 192.0.2.1\n"
			   "f A 192.0.2.1\n" /* duplicate inside the set */
			   "f A 192.0.2.2\n",
			   "example.", &zone, err, sizeof(err), path, sizeof(path));
	if (rc != APEX_OK)
		fail_msg("load failed: %s", err);
	const struct {
		const char *name;
		uint8_t first, second;
	} want[] = { { "a.example.", 1, 2 },
		     { "b.example.", 1, 2 },
		     { "d.example.", 8, 9 },
		     { "e.example.", 1, 2 },
		     { "f.example.", 1, 2 } };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const apex_rrset_t *set = rrset(zone, want[i].name, APEX_TYPE_A);
		assert_non_null(set);
		assert_int_equal(set->count, 2);
		assert_int_equal(set->rdata_size, 12);
		size_t len;
		const uint8_t *rd = record(set, 0, &len);
		assert_int_equal(len, 4);
		assert_int_equal(rd[3], want[i].first);
		rd = record(set, 1, &len);
		assert_int_equal(len, 4);
		assert_int_equal(rd[3], want[i].second);
	}
	const apex_rrset_t *txt = rrset(zone, "c.example.", APEX_TYPE_TXT);
	assert_non_null(txt);
	assert_int_equal(txt->count, 1);
	assert_int_equal(txt->rdata_size, 4);
	assert_memory_equal(txt->rdata, "\x00\x02\x01x", 4);
	apex_zone_unref(zone);
}

/* The TTL each record of ttl_zone_text() must get: see test_default_ttl. */
static const struct {
	const char *name;
	uint16_t type;
	uint32_t ttl;
} ttl_expected[] = {
	{ "example.", APEX_TYPE_SOA, 0 },
	{ "example.", APEX_TYPE_NS, 0 },
	{ "ns1.example.", APEX_TYPE_A, 0 },
	{ "ns1.example.", APEX_TYPE_AAAA, 0 },
	{ "txt.example.", APEX_TYPE_TXT, 0 },
	{ "ptr.example.", APEX_TYPE_PTR, 0 },
	{ "mx.example.", APEX_TYPE_MX, 0 },
	{ "naptr.example.", APEX_TYPE_NAPTR, 0 },
	{ "caa.example.", 257, 0 },
	{ "loc.example.", 29, 0 },
	{ "unk.example.", 65534, 0 },
	{ "unk.example.", APEX_TYPE_HINFO, 0 },
	{ "gen.example.", APEX_TYPE_A, 0 },
	{ "esc\\ 1.example.", APEX_TYPE_TXT, 0 },
	{ "esc\\ 2.example.", APEX_TYPE_TXT, 77 },
	{ "explicit.example.", APEX_TYPE_TXT, 300 },
	{ "explicit.example.", APEX_TYPE_A, 300 },
	{ "explicit.example.", 257, 300 },
	{ "explicit.example.", APEX_TYPE_AAAA, 120 },
	{ "units.example.", APEX_TYPE_TXT, 300 },
	{ "sixty.example.", APEX_TYPE_TXT, 60 },
	{ "sixty.example.", APEX_TYPE_A, 60 },
	{ "sixty.example.", APEX_TYPE_NAPTR, 60 },
	{ "zero.example.", APEX_TYPE_TXT, 0 },
	{ "zero.example.", APEX_TYPE_A, 0 },
	{ "zero.example.", 257, 0 },
};

/* The zone of test_default_ttl: $TTL 0, then 60, then 0 again, each
 * followed by `filler` records without a TTL (an A and a TXT in turn,
 * named a0, b0, c0 ...) for the file to be cut into chunks while each
 * is in force.  Returns a malloc'd text. */
static char *ttl_zone_text(int filler)
{
	size_t size = 4096 + (size_t)filler * 3 * 40, len = 0;
	char *text = malloc(size);
	assert_non_null(text);
	len += (size_t)snprintf(text + len, size - len,
				"$ORIGIN example.\n"
				"$TTL 0\n"
				"@ SOA ns1 host 1 3600 600 86400 0\n"
				"@ NS ns1\n"
				"ns1 A 192.0.2.1\n"
				"    AAAA 2001:db8::1\n"
				"txt TXT \"x\"\n"
				"ptr PTR host\n"
				"mx MX 10 host\n"
				"naptr NAPTR 100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp\n"
				"caa CAA 0 issue \"ca.example\"\n"
				"loc LOC 52 22 23.000 N 4 53 32.000 E -2.00m 1m 10000m 10m\n"
				"unk TYPE65534 \\# 1 01\n"
				"    HINFO \"cpu\" \"os\" ; no owner: unk\n"
				"gen A \\# 4 C0000201 ; a fast type in the generic form: ldns\n"
				"esc\\ 1 TXT \"escaped blank in the owner\"\n"
				"esc\\ 2 77 TXT \"and a TTL after it\"\n"
				"explicit 300 TXT \"explicit\"\n"
				"explicit 300 A 192.0.2.2\n"
				"explicit 300 IN CAA 0 issue \"ca.example\"\n"
				"explicit 120 IN AAAA 2001:db8::2\n"
				"units 5m TXT \"5 minutes\"\n");
	for (int i = 0; i < filler; i++)
		len += (size_t)snprintf(text + len, size - len,
					i % 2 ? "a%d TXT \"f\"\n" : "a%d A 192.0.2.3\n", i);
	len += (size_t)snprintf(text + len, size - len,
				"$TTL 60\n"
				"sixty TXT \"sixty\"\n");
	for (int i = 0; i < filler; i++)
		len += (size_t)snprintf(text + len, size - len,
					i % 2 ? "b%d TXT \"f\"\n" : "b%d A 192.0.2.3\n", i);
	len += (size_t)snprintf(text + len, size - len,
				"sixty A 192.0.2.4\n"
				"sixty NAPTR 100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp\n"
				"$TTL 0\n"
				"zero TXT \"zero\"\n");
	for (int i = 0; i < filler; i++)
		len += (size_t)snprintf(text + len, size - len,
					i % 2 ? "c%d TXT \"f\"\n" : "c%d A 192.0.2.3\n", i);
	len += (size_t)snprintf(text + len, size - len,
				"zero A 192.0.2.5\n"
				"zero CAA 0 issue \"ca.example\"\n");
	assert_true(len < size - 1);
	return text;
}

/* Every RRset of ttl_expected and of the filler has its TTL. */
static void check_ttls(const apex_zone_t *zone, int filler, const char *how)
{
	for (size_t i = 0; i < sizeof(ttl_expected) / sizeof(ttl_expected[0]); i++) {
		const apex_rrset_t *set = rrset(zone, ttl_expected[i].name, ttl_expected[i].type);
		if (set == NULL)
			fail_msg("%s: no %s type %u", how, ttl_expected[i].name,
				 ttl_expected[i].type);
		if (set->ttl != ttl_expected[i].ttl)
			fail_msg("%s: %s type %u: TTL %u, not %u", how, ttl_expected[i].name,
				 ttl_expected[i].type, set->ttl, ttl_expected[i].ttl);
	}
	static const struct {
		char prefix;
		uint32_t ttl;
	} fillers[] = { { 'a', 0 }, { 'b', 60 }, { 'c', 0 } };
	for (size_t f = 0; f < 3; f++) {
		for (int i = 0; i < filler; i++) {
			char name[32];
			snprintf(name, sizeof(name), "%c%d.example.", fillers[f].prefix, i);
			const apex_rrset_t *set =
				rrset(zone, name, i % 2 ? APEX_TYPE_TXT : APEX_TYPE_A);
			if (set == NULL || set->ttl != fillers[f].ttl)
				fail_msg("%s: %s: TTL %d, not %u", how, name,
					 set ? (int)set->ttl : -1, fillers[f].ttl);
		}
	}
	assert_int_equal(zone->soa->ttl, 0);
	assert_int_equal(zone->negative_ttl, 0);
}

static size_t parsed_sinks;

static void note_parse(const char *file, apex_load_phase_t phase, size_t records, double seconds,
		       size_t threads)
{
	if (phase == APEX_LOAD_PARSED)
		parsed_sinks = threads;
}

/*
 * A record without a TTL takes the $TTL in force, 0 included (RFC 2308
 * section 4; as BIND), whichever parser reads it: the fast path (A, AAAA,
 * NS, PTR, MX) or ldns (SOA, TXT, NAPTR, CAA, LOC, HINFO, an RFC 3597
 * form, and every type with the fast path off); on one thread or in
 * chunks on several, each chunk starting with the $TTL in force where it
 * starts.  A TTL written in the record wins.  Without $TTL: 3600 for
 * every record without a TTL (ldns's default, which the fast path
 * follows), not the previous record's.
 */
static void test_default_ttl(void **state)
{
	char err[512], path[300];
	const int filler = 300;
	char *text = ttl_zone_text(filler);

	apex_load_set_progress(note_parse);
	for (int fast = 1; fast >= 0; fast--) {
		for (int chunked = 0; chunked <= 1; chunked++) {
			char how[64];
			snprintf(how, sizeof(how), "fast path %s, %s", fast ? "on" : "off",
				 chunked ? "in chunks" : "one thread");
			atomic_store(&apex_load_fast_rdata, fast != 0);
			atomic_store(&apex_load_threads, chunked ? 4u : 1u);
			atomic_store(&apex_load_chunk_min,
				     chunked ? (size_t)1024 : (size_t)8 << 20);
			apex_zone_t *zone = NULL;
			parsed_sinks = 0;
			int rc = load_text(text, "example.", &zone, err, sizeof(err), path,
					   sizeof(path));
			atomic_store(&apex_load_fast_rdata, true);
			atomic_store(&apex_load_threads, 0u);
			atomic_store(&apex_load_chunk_min, (size_t)8 << 20);
			if (rc != APEX_OK)
				fail_msg("%s: load failed: %s", how, err);
			if (chunked ? parsed_sinks < 3 : parsed_sinks != 1)
				fail_msg("%s: parsed in %zu parts", how, parsed_sinks);
			check_ttls(zone, filler, how);
			apex_zone_unref(zone);
		}
	}
	apex_load_set_progress(NULL);
	free(text);

	/* No $TTL at all. */
	apex_zone_t *zone = NULL;
	int rc = load_text("$ORIGIN example.\n"
			   "@ SOA ns1 host 1 3600 600 86400 0\n"
			   "@ NS ns1\n"
			   "ns1 77 A 192.0.2.1\n"
			   "txt TXT \"x\"\n"
			   "ns1 AAAA 2001:db8::1\n"
			   "caa 5 CAA 0 issue \"ca.example\"\n"
			   "    CAA 0 issuewild \"ca.example\"\n",
			   "example.", &zone, err, sizeof(err), path, sizeof(path));
	if (rc != APEX_OK)
		fail_msg("load failed: %s", err);
	assert_int_equal(zone->soa->ttl, 3600);
	assert_int_equal(rrset(zone, "example.", APEX_TYPE_NS)->ttl, 3600);
	assert_int_equal(rrset(zone, "ns1.example.", APEX_TYPE_A)->ttl, 77);
	assert_int_equal(rrset(zone, "txt.example.", APEX_TYPE_TXT)->ttl, 3600);
	assert_int_equal(rrset(zone, "ns1.example.", APEX_TYPE_AAAA)->ttl, 3600);
	/* the RRset's lowest: 5, the other record's 3600 */
	const apex_rrset_t *caa = rrset(zone, "caa.example.", 257);
	assert_int_equal(caa->count, 2);
	assert_int_equal(caa->ttl, 5);
	apex_zone_unref(zone);
}

static apex_zone_t *load_real(const char *file, const char *origin)
{
	char path[512], err[512];
	uint8_t o[APEX_NAME_MAX];
	snprintf(path, sizeof(path), "%s/zones/%s", APEX_SRCDIR, file);
	wire(origin, o);
	apex_zone_t *zone = NULL;
	int rc = apex_zone_load(path, o, &zone, err, sizeof(err));
	if (rc != APEX_OK)
		fail_msg("%s: %s", file, err);
	return zone;
}

/* A file parsed in chunks on several threads: an owner that appears in
 * two chunks is one node, spelled as first written, with the records of
 * both; the result is that of one thread. */
static void test_owner_in_two_chunks(void **state)
{
	char err[512], path[300];
	size_t size = 64 * 1024, len = 0;
	char *text = malloc(size);
	assert_non_null(text);
	len += (size_t)snprintf(text + len, size - len,
				"$ORIGIN example.\n$TTL 60\n@ SOA ns1 hostmaster 1 2 3 4 5\n"
				"@ NS ns1\nns1 A 192.0.2.53\nSplit A 192.0.2.1\n");
	for (int i = 0; i < 1000; i++)
		len += (size_t)snprintf(text + len, size - len, "h%d A 192.0.2.%d\n", i, i % 250);
	len += (size_t)snprintf(text + len, size - len,
				"SPLIT TXT \"second\"\nsplit A 192.0.2.2\n");
	assert_true(len < size - 1);

	int counts[2];
	size_t nodes[2];
	for (int threads = 1; threads <= 2; threads++) {
		atomic_store(&apex_load_threads, (unsigned)threads);
		atomic_store(&apex_load_chunk_min, (size_t)1024);
		apex_zone_t *zone = NULL;
		int rc = load_text(text, "example.", &zone, err, sizeof(err), path, sizeof(path));
		atomic_store(&apex_load_threads, 0u);
		atomic_store(&apex_load_chunk_min, (size_t)8 << 20);
		if (rc != APEX_OK)
			fail_msg("load failed: %s", err);
		const apex_node_t *node = find(zone, "split.example.");
		assert_non_null(node);
		assert_memory_equal(node->name,
				    "\x05"
				    "Split"
				    "\x07"
				    "example",
				    15);
		assert_int_equal(node->rrset_count, 2);
		assert_int_equal(rrset(zone, "split.example.", APEX_TYPE_A)->count, 2);
		assert_non_null(rrset(zone, "split.example.", APEX_TYPE_TXT));
		counts[threads - 1] = (int)zone->record_count;
		nodes[threads - 1] = zone->node_count;
		apex_zone_unref(zone);
	}
	assert_int_equal(counts[0], 1006);
	assert_int_equal(counts[1], counts[0]);
	assert_int_equal(nodes[1], nodes[0]);
	free(text);
}

/* An owner met again after tens of thousands of others, on one parser
 * thread: the loader's cache of recent owners has long forgotten it and
 * lists it twice; the build makes the two one node, spelled as first
 * written, with the records of both and a record written in both places
 * once. */
static void test_owner_met_again_far_apart(void **state)
{
	char err[512], path[300];
	size_t size = 2 * 1024 * 1024, len = 0;
	char *text = malloc(size);
	assert_non_null(text);
	len += (size_t)snprintf(text + len, size - len,
				"$ORIGIN example.\n$TTL 60\n@ SOA ns1 hostmaster 1 2 3 4 5\n"
				"@ NS ns1\nns1 A 192.0.2.53\nFar A 192.0.2.1\nfar TXT \"first\"\n");
	for (int i = 0; i < 50000; i++)
		len += (size_t)snprintf(text + len, size - len, "h%d A 192.0.2.%d\n", i, i % 250);
	len += (size_t)snprintf(text + len, size - len,
				"FAR A 192.0.2.2\nfar A 192.0.2.1\nfar AAAA 2001:db8::1\n");
	assert_true(len < size - 1);

	atomic_store(&apex_load_threads, 1u);
	apex_zone_t *zone = NULL;
	int rc = load_text(text, "example.", &zone, err, sizeof(err), path, sizeof(path));
	atomic_store(&apex_load_threads, 0u);
	if (rc != APEX_OK)
		fail_msg("load failed: %s", err);
	const apex_node_t *node = find(zone, "far.example.");
	assert_non_null(node);
	assert_memory_equal(node->name,
			    "\x03"
			    "Far"
			    "\x07"
			    "example",
			    13);
	assert_int_equal(node->rrset_count, 3);
	assert_int_equal(rrset(zone, "far.example.", APEX_TYPE_A)->count, 2);
	assert_int_equal(rrset(zone, "far.example.", APEX_TYPE_TXT)->count, 1);
	assert_int_equal(rrset(zone, "far.example.", APEX_TYPE_AAAA)->count, 1);
	assert_int_equal(zone->record_count, 3 + 50000 + 4);
	/* every name once: the apex, ns1, far and the 50000 */
	assert_int_equal(zone->node_count, 3 + 50000);
	apex_zone_unref(zone);
	free(text);
}

/* Everything a node holds that the build sets, folded into *h (FNV-1a). */
static void fold(uint64_t *h, const void *data, size_t size)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < size; i++)
		*h = (*h ^ p[i]) * 1099511628211u;
}

static uint64_t zone_digest(const apex_zone_t *zone)
{
	uint64_t h = 14695981039346656037u;
	for (size_t i = 0; i < zone->node_count; i++) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		fold(&h, node->name, node->name_size);
		fold(&h, &node->flags, sizeof(node->flags));
		fold(&h, &node->parent, sizeof(node->parent));
		fold(&h, &node->cut, sizeof(node->cut));
		fold(&h, &node->hash, sizeof(node->hash));
		for (uint16_t k = 0; k < node->rrset_count; k++) {
			const apex_rrset_t *set = &apex_node_rrsets(zone, node)[k];
			fold(&h, &set->type, sizeof(set->type));
			fold(&h, &set->count, sizeof(set->count));
			fold(&h, &set->ttl, sizeof(set->ttl));
			fold(&h, set->rdata, set->rdata_size);
			if (set->additional != NULL)
				fold(&h, &set->additional->count, sizeof(set->additional->count));
			unsigned names = apex_rdata_compressed_names(set->type) * set->count;
			if (set->rdata_nodes != NULL)
				fold(&h, set->rdata_nodes, names * sizeof(*set->rdata_nodes));
		}
	}
	return h;
}

/* Two texts of size bytes (owned, freed by the caller) for one zone's
 * records in two orders, both begun with its SOA and NS; *a and *b how
 * much each holds. */
static void two_texts(size_t size, char **sorted, char **reversed, size_t *a, size_t *b)
{
	const char *head = "$ORIGIN example.\n$TTL 60\n@ SOA ns1 hostmaster 1 2 3 4 5\n"
			   "@ NS ns1\n";

	*sorted = malloc(size);
	*reversed = malloc(size);
	assert_non_null(*sorted);
	assert_non_null(*reversed);
	*a = (size_t)snprintf(*sorted, size, "%s", head);
	*b = (size_t)snprintf(*reversed, size, "%s", head);
}

/* A zone whose records come in canonical order (a copy written by apexd,
 * a signer's output) is built with its records renumbered where they lie,
 * and a zone of more records than a few 2 MiB units of the build's array
 * has that array given back as its nodes are filled (util/give_back.h):
 * either way the zone built is the one its records in another order give,
 * on one thread and on two. */
static void test_records_in_order_built_in_place(void **state)
{
	enum { NAMES = 120000 };
	char err[512], path[300];
	size_t size = (size_t)16 << 20, a, b;
	char *sorted, *reversed;

	(void)state;
	two_texts(size, &sorted, &reversed, &a, &b);
	/* "hNNNNNN": one length, so text order is canonical order; ns1 after */
	for (int i = 0; i < NAMES; i++)
		a += (size_t)snprintf(sorted + a, size - a,
				      "h%06d A 192.0.2.%d\nh%06d TXT \"t%d\"\n", i, i % 250, i, i);
	a += (size_t)snprintf(sorted + a, size - a, "ns1 A 192.0.2.53\n");
	b += (size_t)snprintf(reversed + b, size - b, "ns1 A 192.0.2.53\n");
	for (int i = NAMES - 1; i >= 0; i--)
		b += (size_t)snprintf(reversed + b, size - b,
				      "h%06d TXT \"t%d\"\nh%06d A 192.0.2.%d\n", i, i, i, i % 250);
	assert_true(a < size - 1 && b < size - 1);

	uint64_t digests[4];
	for (int run = 0; run < 4; run++) {
		atomic_store(&apex_load_threads, (unsigned)(1 + run / 2));
		apex_zone_t *zone = NULL;
		int rc = load_text(run % 2 == 0 ? sorted : reversed, "example.", &zone, err,
				   sizeof(err), path, sizeof(path));
		atomic_store(&apex_load_threads, 0u);
		if (rc != APEX_OK)
			fail_msg("load failed: %s", err);
		assert_int_equal(zone->record_count, 3 + 2 * (size_t)NAMES);
		assert_int_equal(zone->node_count, 2 + (size_t)NAMES);
		assert_int_equal(rrset(zone, "h000007.example.", APEX_TYPE_A)->count, 1);
		assert_non_null(rrset(zone, "h119999.example.", APEX_TYPE_TXT));
		digests[run] = zone_digest(zone);
		apex_zone_unref(zone);
	}
	for (int run = 1; run < 4; run++)
		assert_true(digests[run] == digests[0]);
	free(sorted);
	free(reversed);
}

/* A file in canonical order whose owners come to the build in key order
 * (zone/build_sort.c takes them as they lie, without sorting), one of
 * them written in two spellings across two parser chunks, so that it is
 * two entries side by side with one key: one node spelled as first
 * written, with the records of both, and the zone the same as that of
 * the same records in reverse order. */
static void test_owners_in_key_order_split_in_chunks(void **state)
{
	char err[512], path[300];
	size_t size = 256 * 1024, a, b;
	char *sorted, *reversed;

	(void)state;
	two_texts(size, &sorted, &reversed, &a, &b);
	/* "aNNN", then "Big" (200 TXT, then "big" 200 more: chunks of 1 KiB
	 * cut it), then "ns1": canonical order */
	for (int i = 0; i < 300; i++)
		a += (size_t)snprintf(sorted + a, size - a, "a%03d A 192.0.2.%d\n", i, i % 250);
	for (int i = 0; i < 400; i++)
		a += (size_t)snprintf(sorted + a, size - a, "%s TXT \"t%d\"\n",
				      i < 200 ? "Big" : "big", i);
	a += (size_t)snprintf(sorted + a, size - a, "ns1 A 192.0.2.53\n");
	b += (size_t)snprintf(reversed + b, size - b, "ns1 A 192.0.2.53\n");
	for (int i = 0; i < 400; i++) /* "Big" still first written */
		b += (size_t)snprintf(reversed + b, size - b, "%s TXT \"t%d\"\n",
				      i < 200 ? "Big" : "big", 399 - i + (i < 200 ? -200 : 200));
	for (int i = 299; i >= 0; i--)
		b += (size_t)snprintf(reversed + b, size - b, "a%03d A 192.0.2.%d\n", i, i % 250);
	assert_true(a < size - 1 && b < size - 1);

	uint64_t digests[2];
	for (int run = 0; run < 2; run++) {
		atomic_store(&apex_load_threads, 2u);
		atomic_store(&apex_load_chunk_min, (size_t)1024);
		apex_zone_t *zone = NULL;
		int rc = load_text(run == 0 ? sorted : reversed, "example.", &zone, err,
				   sizeof(err), path, sizeof(path));
		atomic_store(&apex_load_threads, 0u);
		atomic_store(&apex_load_chunk_min, (size_t)8 << 20);
		if (rc != APEX_OK)
			fail_msg("load failed: %s", err);
		assert_int_equal(zone->record_count, 2 + 300 + 400 + 1);
		assert_int_equal(zone->node_count, 1 + 300 + 1 + 1);
		const apex_node_t *node = find(zone, "BIG.example.");
		assert_non_null(node);
		assert_memory_equal(node->name,
				    "\x03"
				    "Big",
				    4);
		assert_int_equal(rrset(zone, "big.example.", APEX_TYPE_TXT)->count, 400);
		digests[run] = zone_digest(zone);
		apex_zone_unref(zone);
	}
	assert_true(digests[1] == digests[0]);
	free(sorted);
	free(reversed);
}

/* A zone built with every step split into parts on two threads (parts of
 * 16 names or records, chunks of 1 KiB) is the zone built on one: owners
 * in scrambled order, spelled differently in different chunks, empty
 * non-terminals, delegations with glue, and duplicate records in
 * different chunks and in the same one. */
static void test_build_in_parts(void **state)
{
	char err[512], path[300];
	size_t size = 1 << 20, len = 0;
	char *text = malloc(size);
	assert_non_null(text);
	len += (size_t)snprintf(text + len, size - len,
				"$ORIGIN example.\n$TTL 60\n@ SOA ns1 hostmaster 1 2 3 4 5\n"
				"@ NS ns1\nns1 A 192.0.2.53\n");
	uint32_t x = 12345;
	for (int i = 0; i < 3000; i++) {
		x = x * 1103515245u + 12345u;
		unsigned k = (x >> 8) % 1000;
		switch (i % 6) {
		case 0: /* a delegation, its glue below it */
			len += (size_t)snprintf(
				text + len, size - len,
				"d%u NS ns1.d%u\nd%u NS ns2.d%u\nns1.d%u A 10.0.%u.1\n"
				"ns2.d%u A 10.0.%u.2\n",
				k, k, k, k, k, k % 250, k, k % 250);
			break;
		case 1: /* under empty non-terminals */
			len += (size_t)snprintf(text + len, size - len,
						"h%u.e%u.f%u A 192.0.2.%u\n", k, k % 7, k % 3,
						k % 250);
			break;
		case 2: /* the same owner spelled otherwise, a record twice */
			len += (size_t)snprintf(text + len, size - len,
						"H%u.E%u.f%u A 192.0.2.%u\nh%u.e%u.F%u TXT \"t\"\n",
						k, k % 7, k % 3, k % 250, k, k % 7, k % 3);
			break;
		case 3:
			len += (size_t)snprintf(text + len, size - len,
						"m%u MX 10 h%u.e%u.f%u\nm%u MX 10 H%u.e%u.f%u\n", k,
						k, k % 7, k % 3, k, k, k % 7, k % 3);
			break;
		case 4:
			len += (size_t)snprintf(text + len, size - len, "*.w%u TXT \"w\"\n",
						k % 50);
			break;
		default:
			len += (size_t)snprintf(text + len, size - len, "c%u CNAME d%u\n", k, k);
			break;
		}
	}
	assert_true(len < size - 1);

	uint64_t digests[2];
	size_t records[2], nodes[2];
	for (int threads = 1; threads <= 2; threads++) {
		atomic_store(&apex_load_threads, (unsigned)threads);
		atomic_store(&apex_load_chunk_min, threads == 1 ? (size_t)8 << 20 : (size_t)1024);
		atomic_store(&apex_build_part_min, threads == 1 ? (size_t)32768 : (size_t)16);
		apex_zone_t *zone = NULL;
		int rc = load_text(text, "example.", &zone, err, sizeof(err), path, sizeof(path));
		atomic_store(&apex_load_threads, 0u);
		atomic_store(&apex_load_chunk_min, (size_t)8 << 20);
		atomic_store(&apex_build_part_min, (size_t)32768);
		if (rc != APEX_OK)
			fail_msg("load failed: %s", err);
		/* canonical order, each name once */
		for (size_t i = 1; i < zone->node_count; i++)
			assert_true(apex_name_compare(apex_zone_node_at(zone, i - 1)->name,
						      apex_zone_node_at(zone, i)->name) < 0);
		digests[threads - 1] = zone_digest(zone);
		records[threads - 1] = zone->record_count;
		nodes[threads - 1] = zone->node_count;
		apex_zone_unref(zone);
	}
	assert_true(nodes[0] > 2000);
	assert_int_equal(records[1], records[0]);
	assert_int_equal(nodes[1], nodes[0]);
	assert_true(digests[1] == digests[0]);
	free(text);
}

static void test_real_zones(void **state)
{
	/* Counts from zones/ (see the shared SOURCES.md of these dumps). */
	apex_zone_t *zone = load_real("root.zone", ".");
	assert_int_equal(zone->record_count, 25047);
	assert_int_equal(zone->serial, 2024101100);
	assert_int_equal(zone->dnssec, APEX_DNSSEC_NSEC);
	assert_int_equal(zone->negative_ttl, 86400);
	size_t delegations = 0, with_ds = 0;
	for (size_t i = 0; i < zone->node_count; i++) {
		if (apex_zone_node_at(zone, i)->flags & APEX_NODE_DELEGATION) {
			delegations++;
			with_ds += apex_node_rrset(zone, apex_zone_node_at(zone, i),
						   APEX_TYPE_DS) != NULL;
		}
	}
	assert_int_equal(delegations, 1445);
	assert_int_equal(with_ds, 1343);
	assert_true(zone->load_seconds > 0);
	assert_true(zone->memory > 0);
	apex_zone_unref(zone);

	zone = load_real("fj.zone", "fj.");
	assert_int_equal(zone->record_count, 12949);
	assert_int_equal(zone->serial, 2024101207);
	assert_int_equal(zone->dnssec, APEX_DNSSEC_NSEC3);
	assert_int_equal(zone->nsec3_count, 2929);
	assert_int_equal(zone->nsec3_params.iterations, 5);
	assert_int_equal(zone->nsec3_params.salt_size, 8);
	assert_memory_equal(zone->nsec3_params.salt, "\x9f\x28\x44\xdf\x1e\x60\xa1\xb7", 8);
	delegations = 0;
	for (size_t i = 0; i < zone->node_count; i++)
		delegations += (apex_zone_node_at(zone, i)->flags & APEX_NODE_DELEGATION) != 0;
	assert_int_equal(delegations, 2871);
	apex_zone_unref(zone);

	/* sl.: owner names in mixed case, kept as written. */
	zone = load_real("sl.zone", "sl.");
	assert_int_equal(zone->record_count, 11454);
	assert_int_equal(zone->serial, 2915240283u);
	assert_int_equal(zone->dnssec, APEX_DNSSEC_NSEC);
	assert_memory_equal(zone->apex->name,
			    "\x02"
			    "SL",
			    4);
	const apex_node_t *node = find(zone, "carone.sl.");
	assert_non_null(node);
	assert_memory_equal(node->name,
			    "\x06"
			    "carone"
			    "\x02"
			    "SL",
			    11);
	apex_zone_unref(zone);
}

/* No-op filter of a filtered parse: every record dropped. */
static int drop_all(void *ctx, const uint8_t *owner, uint16_t type, uint32_t ttl,
		    const uint8_t *rdata, size_t rdlength)
{
	return 1;
}

static void restart_none(void *ctx)
{
}

/* The SHA-256 a version keeps of the file it was loaded from: that of
 * the file's bytes (the known digest of a fixed text), the same for the
 * same bytes written anew and for a parsed-only (filtered) read, in one
 * thread or several; another for one byte changed; none when an
 * $INCLUDE was read, nor after a failed parse. */
/* A builder given the records of a zone whose name server's name is
 * written in capitals (its canonical RDATA a copy in lower case), and the
 * sink's memory as apex_version_finish() hands it over (version_build.h). */
static apex_zone_builder_t *parsed_builder(apex_version_build_t *v, apex_sink_t *s)
{
	uint8_t origin[APEX_NAME_MAX], ns[APEX_NAME_MAX], soa[128], addr[4] = { 192, 0, 2, 1 };
	uint8_t upper[APEX_NAME_MAX], lower[APEX_NAME_MAX];
	apex_loader_t ld = { .b = &v->b };
	uint16_t file = 0;
	char err[256] = "";

	wire("example.", origin);
	wire("ns1.example.", ns);
	wire("NS1.Example.", upper);
	wire("ns1.example.", lower);
	size_t n = apex_name_size(ns), size = 2 * n;
	memcpy(soa, ns, n);
	memcpy(soa + n, ns, n);
	memset(soa + size, 0, 20);
	assert_int_equal(apex_version_begin(v, origin, "test", err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_loader_add_file(&ld, "test", &file), APEX_OK);
	assert_int_equal(
		apex_sink_add_rr(s, origin, APEX_TYPE_SOA, 300, soa, size + 20, NULL, file, 1),
		APEX_OK);
	assert_int_equal(apex_sink_add_rr(s, origin, APEX_TYPE_NS, 300, upper, n, lower, file, 2),
			 APEX_OK);
	assert_int_equal(apex_sink_add_rr(s, ns, APEX_TYPE_A, 300, addr, 4, NULL, file, 3),
			 APEX_OK);
	v->b.owners = s->owners;
	v->b.owner_count = s->owner_count;
	v->b.rrs = s->rrs;
	v->b.rr_count = s->rr_count;
	s->owners = NULL;
	s->rrs = NULL;
	apex_arena_adopt(v->arena, s->keep);
	s->keep = NULL;
	v->b.names = s->names;
	v->b.canonical = s->scratch;
	s->names = s->scratch = NULL;
	return &v->b;
}

/* The loader's memory goes with the build as soon as it is read
 * (build.h): the owners' names as parsed once the sort has copied them,
 * the canonical RDATA once the RRsets hold the records; the version
 * reads its own copies (under ASan, a read of the freed memory fails). */
static void test_parsed_memory_freed_once_read(void **state)
{
	apex_version_build_t v;
	apex_sink_t *s = apex_sink_new();
	apex_build_t bd;

	(void)state;
	assert_non_null(s);
	apex_zone_builder_t *b = parsed_builder(&v, s);
	assert_non_null(b->names);
	assert_non_null(b->canonical);
	assert_int_equal(apex_build_begin(&bd, b), APEX_OK);
	assert_null(b->names);
	assert_non_null(b->canonical); /* the fill reads it */
	apex_build_end(&bd);
	apex_version_abort(&v);
	apex_sink_free(s);

	s = apex_sink_new();
	assert_non_null(s);
	b = parsed_builder(&v, s);
	assert_int_equal(apex_zone_build(b), APEX_OK);
	assert_null(b->names);
	assert_null(b->canonical);
	apex_zone_t *zone = b->zone;
	v.arena = NULL; /* the version's */
	apex_version_abort(&v);
	apex_sink_free(s);
	uint8_t name[APEX_NAME_MAX], key[APEX_KEY_MAX];
	wire("ns1.example.", name);
	const apex_node_t *ns = apex_zone_find(zone, key, apex_name_key(name, key, NULL));
	assert_non_null(ns);
	assert_non_null(apex_node_rrset(zone, ns, APEX_TYPE_A));
	const apex_rrset_t *set = apex_node_rrset(zone, zone->apex, APEX_TYPE_NS);
	assert_non_null(set);
	wire("NS1.Example.", name); /* served as written */
	assert_memory_equal(set->rdata + 2, name, apex_name_size(name));
	apex_zone_unref(zone);
}

static void test_file_digest(void **state)
{
	static const char text[] = "$ORIGIN example.\n$TTL 60\n@ SOA ns1 hostmaster 1 2 3 4 5\n"
				   "@ NS ns1\nns1 A 192.0.2.53\n";
	/* sha256sum(1) of exactly those bytes */
	static const char known[] =
		"ca3252bcf65e636ad4e3ac74e770abc1dd78d3ae81f81daaadbc9667aef7b919";
	char err[512], path[300], path2[300], hex[2 * APEX_FILE_DIGEST_SIZE + 1];
	apex_file_digest_t digest, again, filtered;
	uint8_t origin[APEX_NAME_MAX];
	apex_zone_t *zone = NULL;

	wire("example.", origin);
	assert_int_equal(load_text(text, "example.", &zone, err, sizeof(err), path, sizeof(path)),
			 APEX_OK);
	assert_true(zone->file_digest.valid);
	assert_int_equal(apex_file_digest_path(path, &digest, err, sizeof(err)), APEX_OK);
	assert_true(apex_file_digest_equal(&zone->file_digest, &digest));
	for (size_t i = 0; i < APEX_FILE_DIGEST_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", zone->file_digest.bytes[i]);
	assert_string_equal(hex, known);
	apex_zone_unref(zone);

	/* the same bytes in another file, and a parse that builds nothing */
	write_file("copy.zone", text, path2, sizeof(path2));
	assert_int_equal(apex_file_digest_path(path2, &again, err, sizeof(err)), APEX_OK);
	assert_true(apex_file_digest_equal(&again, &digest));
	apex_load_filter_t filter = { drop_all, restart_none, NULL, NULL };
	assert_int_equal(
		apex_zone_load_filtered(path2, origin, &filter, &filtered, err, sizeof(err)),
		APEX_OK);
	assert_true(apex_file_digest_equal(&filtered, &digest));

	/* one byte changed: the serial 1 to 2 */
	char *edited = strdup(text);
	assert_non_null(edited);
	*strstr(edited, " 1 2 3") = '\0';
	char text2[256];
	snprintf(text2, sizeof(text2), "%s 2 2 3 4 5\n@ NS ns1\nns1 A 192.0.2.53\n", edited);
	free(edited);
	assert_int_equal(strlen(text2), strlen(text));
	assert_int_equal(load_text(text2, "example.", &zone, err, sizeof(err), path, sizeof(path)),
			 APEX_OK);
	assert_true(zone->file_digest.valid);
	assert_false(apex_file_digest_equal(&zone->file_digest, &digest));
	apex_zone_unref(zone);

	/* in chunks on two threads: the same digest as on one */
	size_t size = 64 * 1024, len = 0;
	char *big = malloc(size);
	assert_non_null(big);
	len += (size_t)snprintf(big + len, size - len, "%s", text);
	for (int i = 0; i < 1000; i++)
		len += (size_t)snprintf(big + len, size - len, "h%d A 192.0.2.%d\n", i, i % 250);
	apex_file_digest_t one;
	for (int threads = 1; threads <= 2; threads++) {
		atomic_store(&apex_load_threads, (unsigned)threads);
		atomic_store(&apex_load_chunk_min, (size_t)1024);
		int rc = load_text(big, "example.", &zone, err, sizeof(err), path, sizeof(path));
		atomic_store(&apex_load_threads, 0u);
		atomic_store(&apex_load_chunk_min, (size_t)8 << 20);
		if (rc != APEX_OK)
			fail_msg("load failed: %s", err);
		assert_true(zone->file_digest.valid);
		if (threads == 1)
			one = zone->file_digest;
		else
			assert_true(apex_file_digest_equal(&zone->file_digest, &one));
		apex_zone_unref(zone);
	}
	free(big);

	/* an $INCLUDE read: no digest, the included file may change alone */
	write_file("part.inc", "ns1 A 192.0.2.53\n", path2, sizeof(path2));
	char with_include[512];
	snprintf(with_include, sizeof(with_include),
		 "$ORIGIN example.\n$TTL 60\n@ SOA ns1 hostmaster 1 2 3 4 5\n@ NS ns1\n"
		 "$INCLUDE %s\n",
		 path2);
	assert_int_equal(
		load_text(with_include, "example.", &zone, err, sizeof(err), path, sizeof(path)),
		APEX_OK);
	assert_false(zone->file_digest.valid);
	apex_zone_unref(zone);
	assert_int_equal(
		apex_zone_load_filtered(path, origin, &filter, &filtered, err, sizeof(err)),
		APEX_OK);
	assert_false(filtered.valid);

	/* a file that does not parse: no digest from the filtered read */
	write_file("bad.zone", "$ORIGIN example.\n@ SOA ns1 hostmaster 1 2 3 4 5\n@ BOGUS x\n",
		   path2, sizeof(path2));
	assert_int_equal(
		apex_zone_load_filtered(path2, origin, &filter, &filtered, err, sizeof(err)),
		APEX_ELOAD);
	assert_false(filtered.valid);

	/* a file that cannot be read */
	assert_int_equal(apex_file_digest_path("/nonexistent/zone", &again, err, sizeof(err)),
			 APEX_ELOAD);
	assert_false(again.valid);
	assert_non_null(strstr(err, "/nonexistent/zone: cannot open"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_directives_and_syntax),
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_dnssec_beside_cname_accepted),
		cmocka_unit_test(test_ipseckey_amtrelay),
		cmocka_unit_test(test_final_quoted_string),
		cmocka_unit_test(test_numbers_at_their_width),
		cmocka_unit_test(test_ttl_and_glue_warnings),
		cmocka_unit_test(test_default_ttl),
		cmocka_unit_test(test_owners_in_key_order_split_in_chunks),
		cmocka_unit_test(test_duplicates_and_canonical_order),
		cmocka_unit_test(test_rrset_rdata_in_place_or_copied),
		cmocka_unit_test(test_owner_in_two_chunks),
		cmocka_unit_test(test_owner_met_again_far_apart),
		cmocka_unit_test(test_build_in_parts),
		cmocka_unit_test(test_records_in_order_built_in_place),
		cmocka_unit_test(test_real_zones),
		cmocka_unit_test(test_file_digest),
		cmocka_unit_test(test_parsed_memory_freed_once_read),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
