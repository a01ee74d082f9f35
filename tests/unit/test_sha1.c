/* SPDX-License-Identifier: BSD-3-Clause */
/* SHA-1 test vectors (FIPS 180-2) and NSEC3 hashes from RFC 5155 Appendix A. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "dns/sha1.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void digest_of(const void *data, size_t size, char *out)
{
	apex_sha1_t ctx;
	uint8_t d[APEX_SHA1_SIZE];
	apex_sha1_init(&ctx);
	apex_sha1_update(&ctx, data, size);
	apex_sha1_final(&ctx, d);
	hex(d, sizeof(d), out);
}

static void test_sha1_vectors(void **state)
{
	char out[41];
	digest_of("", 0, out);
	assert_string_equal(out, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	digest_of("abc", 3, out);
	assert_string_equal(out, "a9993e364706816aba3e25717850c26c9cd0d89d");
	const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	digest_of(two_blocks, strlen(two_blocks), out);
	assert_string_equal(out, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");

	/* One million 'a', fed in uneven pieces. */
	apex_sha1_t ctx;
	uint8_t d[APEX_SHA1_SIZE];
	char chunk[997];
	memset(chunk, 'a', sizeof(chunk));
	apex_sha1_init(&ctx);
	size_t left = 1000000;
	while (left > 0) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
		apex_sha1_update(&ctx, chunk, n);
		left -= n;
	}
	apex_sha1_final(&ctx, d);
	hex(d, sizeof(d), out);
	assert_string_equal(out, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

static void nsec3_of(const char *name, char *text)
{
	static const uint8_t salt[] = { 0xaa, 0xbb, 0xcc, 0xdd };
	uint8_t wire[APEX_NAME_MAX], hash[APEX_SHA1_SIZE];
	assert_true(apex_name_from_str(name, wire) > 0);
	assert_int_equal(apex_nsec3_hash(1, salt, sizeof(salt), 12, wire, hash), APEX_SHA1_SIZE);
	apex_base32hex_encode(hash, sizeof(hash), text);
}

static void test_nsec3_rfc5155(void **state)
{
	char text[40];
	static const char *const cases[][2] = {
		{ "example.", "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom" },
		{ "a.example.", "35mthgpgcu1qg68fab165klnsnk3dpvl" },
		{ "ai.example.", "gjeqe526plbf1g8mklp59enfd789njgi" },
		{ "ns1.example.", "2t7b4g4vsa5smi47k61mv5bv1a22bojr" },
		{ "w.example.", "k8udemvp1j2f7eg6jebps17vp3n8i58h" },
		{ "*.w.example.", "r53bq7cc2uvmubfu5ocmm6pers9tk9en" },
		{ "x.w.example.", "b4um86eghhds6nea196smvmlo4ors995" },
		{ "xx.example.", "t644ebqk9bibcna874givr6joj62mlhv" },
		/* Hashing lowercases the name first. */
		{ "XX.Example.", "t644ebqk9bibcna874givr6joj62mlhv" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		nsec3_of(cases[i][0], text);
		assert_string_equal(text, cases[i][1]);
	}
}

static void test_base32hex(void **state)
{
	uint8_t out[32];
	const char *text = "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom";
	assert_int_equal(apex_base32hex_decode(text, strlen(text), out, sizeof(out)), 20);
	char back[40];
	apex_base32hex_encode(out, 20, back);
	assert_string_equal(back, text);
	/* Upper case decodes the same. */
	uint8_t upper[32];
	assert_int_equal(
		apex_base32hex_decode("0P9MHAVEQVM6T7VBL5LOP2U3T2RP3TOM", 32, upper, sizeof(upper)),
		20);
	assert_memory_equal(out, upper, 20);
	/* Characters outside the alphabet and too small a buffer are rejected. */
	assert_true(apex_base32hex_decode("0p9w", 4, out, sizeof(out)) < 0);
	assert_true(apex_base32hex_decode(text, strlen(text), out, 10) < 0);
	/* Unknown hash algorithm. */
	uint8_t wire[] = { 0 };
	assert_true(apex_nsec3_hash(2, NULL, 0, 0, wire, out) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha1_vectors),
		cmocka_unit_test(test_nsec3_rfc5155),
		cmocka_unit_test(test_base32hex),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
