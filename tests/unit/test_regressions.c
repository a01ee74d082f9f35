/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Regression tests from fuzzing (tests/fuzz/), in the plain build: no
 * clang or libFuzzer needed, and the sanitizer build of `make check`
 * runs them under ASan and UBSan.
 *
 * The fuzz targets are compiled in here with their entry points
 * renamed, so every input goes through exactly the checks the fuzzer
 * applies (the response oracle of tests/fuzz/fuzz_common.h; the zone
 * invariants of fuzz_zone_load.c).  A failed check aborts.
 *
 *   - every committed seed of tests/fuzz/corpus/query, corpus/zone,
 *     corpus/xfr_in, corpus/tsig, corpus/ixfr_version,
 *     corpus/tls_stream and corpus/catalog;
 *   - each input that once made a target fail, as its own test.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define LLVMFuzzerInitialize fuzz_query_init
#define LLVMFuzzerTestOneInput fuzz_query_one
#include "../fuzz/fuzz_query.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerInitialize fuzz_zone_init
#define LLVMFuzzerTestOneInput fuzz_zone_one
#include "../fuzz/fuzz_zone_load.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput fuzz_xfr_in_one
#include "../fuzz/fuzz_xfr_in.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput fuzz_tsig_one
#include "../fuzz/fuzz_tsig.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerInitialize fuzz_tls_stream_init
#define LLVMFuzzerTestOneInput fuzz_tls_stream_one
#include "../fuzz/fuzz_tls_stream.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerInitialize fuzz_ixfr_init
#define LLVMFuzzerTestOneInput fuzz_ixfr_one
#include "../fuzz/fuzz_ixfr_version.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerInitialize fuzz_catalog_init
#define LLVMFuzzerTestOneInput fuzz_catalog_one
#include "../fuzz/fuzz_catalog.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput

typedef int (*one_input_fn)(const uint8_t *data, size_t size);

/* Feed every file of tests/fuzz/corpus/<sub> to fn; returns how many. */
static size_t replay_corpus(const char *sub, one_input_fn fn)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/%s", APEX_SRCDIR, sub);
	DIR *d = opendir(path);
	assert_non_null(d);
	size_t count = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char file[8192];
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		FILE *fp = fopen(file, "rb");
		assert_non_null(fp);
		static uint8_t data[1 << 17]; /* the largest seed is a little over 64 KiB */
		size_t size = fread(data, 1, sizeof(data), fp);
		assert_int_equal(ferror(fp), 0);
		fclose(fp);
		/* An exact-size heap copy, as libFuzzer passes inputs: ASan
		 * sees a read past the end. */
		uint8_t *copy = malloc(size ? size : 1);
		assert_non_null(copy);
		memcpy(copy, data, size);
		assert_int_equal(fn(copy, size), 0);
		free(copy);
		count++;
	}
	closedir(d);
	return count;
}

static void test_query_corpus(void **state)
{
	(void)state;
	/* gen_corpus.py writes about 600; fewer means the corpus is missing. */
	assert_true(replay_corpus("query", fuzz_query_one) >= 500);
}

static void test_zone_corpus(void **state)
{
	(void)state;
	assert_true(replay_corpus("zone", fuzz_zone_one) >= 20);
}

static void test_xfr_in_corpus(void **state)
{
	(void)state;
	assert_true(replay_corpus("xfr_in", fuzz_xfr_in_one) >= 10);
}

/* An IXFR's change sets derived in place and built whole agree. */
static void test_ixfr_version_corpus(void **state)
{
	(void)state;
	fuzz_ixfr_init(NULL, NULL);
	assert_true(replay_corpus("ixfr_version", fuzz_ixfr_one) >= 30);
}

/* DNS over TLS: streams framed and answered after a handshake, and
 * garbage instead of TLS (fuzz_tls_stream.c). */
static void test_tls_stream_corpus(void **state)
{
	(void)state;
	assert_true(replay_corpus("tls_stream", fuzz_tls_stream_one) >= 20);
}

/* Catalog zones read (fuzz_catalog.c). */
static void test_catalog_corpus(void **state)
{
	(void)state;
	assert_true(replay_corpus("catalog", fuzz_catalog_one) >= 5);
}

static void test_tsig_corpus(void **state)
{
	(void)state;
	assert_true(replay_corpus("tsig", fuzz_tsig_one) >= 5);
}

/*
 * fuzz_zone_load, oracle failure ("ldns cannot decode the response:
 * answer section incomplete"), minimized input:
 *     " SOA\tn h 0 0 0 1 3\n3 NSEC3\t1 1 0 - =9\n SPF O"
 * ldns_rr_new_frm_str() reads the next hashed owner "=9" as a length
 * byte of 1 followed by no hash at all, so the NSEC3 RDATA it returns
 * (01 01 00 00 00 01) lies about its own length.  apex_zone_load()
 * accepted it and apex_answer() served it: no resolver can decode that
 * answer.  NSD ("invalid base32 data") and BIND ("bad base32 encoding")
 * reject the file.  The loader must too, at the record's line.
 */
/* The zone of the records text (after an apex SOA, NS and the name
 * server's address, lines 1 to 3) is refused with an error containing
 * want. */
static void expect_refused(const char *text, const char *want)
{
	static const char head[] = "@ 300 SOA ns hostmaster 1 2 3 4 5\n"
				   "@ 300 NS ns\n"
				   "ns 300 A 192.0.2.1\n";
	char whole[1024];
	int size = snprintf(whole, sizeof(whole), "%s%s", head, text);
	assert_true(size > 0 && (size_t)size < sizeof(whole));
	write_file(zone_path, (const uint8_t *)whole, (size_t)size);
	apex_zone_t *zone = NULL;
	char err[512] = "";
	int rc = apex_zone_load(zone_path, origin, &zone, err, sizeof(err));
	if (zone != NULL)
		apex_zone_unref(zone);
	assert_int_equal(rc, APEX_ELOAD);
	if (strstr(err, want) == NULL)
		fail_msg("error '%s' does not contain '%s'", err, want);
}

static void test_nsec3_next_owner_not_base32(void **state)
{
	(void)state;
	expect_refused("x 300 NSEC3 1 1 0 - =9\n", "zone:4: ");

	/* And the fuzzer's own input goes through its checks. */
	static const char found[] = " SOA\tn h 0 0 0 1 3\n3 NSEC3\t1 1 0 - =9\n SPF O";
	assert_int_equal(fuzz_zone_one((const uint8_t *)found, sizeof(found) - 1), 0);
}

/*
 * fuzz_zone_load, oracle failure ("ldns cannot decode the response:
 * answer section incomplete"), input tests/fuzz/corpus/zone/
 * caa-generic-length.zone: ldns_rr_new_frm_str() reads
 * "u1 CAA 5534 \# 4 0a000001" as a CAA of four fields (flags 0x9e, then
 * the generic form's length as a second byte 0x0a, an empty tag and
 * 00 01), RDATA whose tag length says 10 bytes where 3 follow.
 * apex_zone_load() accepted it and apex_answer() served it.  The loader
 * refuses a record of more fields than its type has, at its line.
 */
static void test_caa_more_fields_than_its_type(void **state)
{
	(void)state;
	expect_refused("u1 300 CAA 5534 \\# 4 0a000001\n",
		       "zone:4: type 257: more rdata fields than the type has");
}

/*
 * fuzz_query, oracle failure ("the 1031-byte TCP response fits in UDP
 * (limit 1032) but UDP differs"): an SOA query of QCLASS ANY for a name
 * the root zone lacks, with the DO bit, a payload of 1032 and two EDNS
 * EXPIRE options.  The answer (NXDOMAIN and its proofs) is not
 * authoritative, so it carries no EXPIRE; but the room for one was kept
 * in every SOA query's answer, and over UDP the answer, 1031 bytes with
 * its OPT, was cut at 1024.  The room is kept only where EXPIRE is sent.
 */
static void test_expire_room_only_where_sent(void **state)
{
	static const uint8_t query[] = {
		0x80, 0xf6, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x09,
		0x61, 0x71, 0x75, 0x61, 0x72, 0x65, 0x6c, 0x6c, 0x3e, 0x00, 0x00, 0x06, 0x00,
		0xff, 0x00, 0x00, 0x29, 0x04, 0x08, 0x00, 0x00, 0x80, 0x00, 0x00, 0x18, 0x00,
		0x09, 0x00, 0x08, 0x01, 0x05, 0x02, 0x00, 0x04, 0x03, 0x06, 0x07, 0x00, 0x09,
		0x00, 0x08, 0x01, 0x05, 0x02, 0x00, 0x04, 0x05, 0x06, 0x07,
	};

	(void)state;
	assert_int_equal(fuzz_query_one(query, sizeof(query)), 0);
}

static int setup(void **state)
{
	(void)state;
	/* fuzz_common.h finds the zones through $APEX_SRCDIR. */
	setenv("APEX_SRCDIR", APEX_SRCDIR, 0);
	/* first: it counts OpenSSL's memory if nothing has used OpenSSL yet */
	fuzz_tls_stream_init(NULL, NULL);
	fuzz_query_init(NULL, NULL);
	fuzz_zone_init(NULL, NULL);
	fuzz_catalog_init(NULL, NULL);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_corpus),
		cmocka_unit_test(test_zone_corpus),
		cmocka_unit_test(test_caa_more_fields_than_its_type),
		cmocka_unit_test(test_xfr_in_corpus),
		cmocka_unit_test(test_tsig_corpus),
		cmocka_unit_test(test_tls_stream_corpus),
		cmocka_unit_test(test_ixfr_version_corpus),
		cmocka_unit_test(test_catalog_corpus),
		cmocka_unit_test(test_nsec3_next_owner_not_base32),
		cmocka_unit_test(test_expire_room_only_where_sent),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
