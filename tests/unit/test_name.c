/* SPDX-License-Identifier: BSD-3-Clause */
/* Wire names: unpacking with compression, lookup keys and canonical order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dns/ascii.h"
#include "dns/name.h"
#include "dns/name_hash.h"
#include "dns/name_index.h"
#include "util/error.h"

static void wire(const char *str, uint8_t *out)
{
	assert_true(apex_name_from_str(str, out) > 0);
}

static void test_unpack_compression(void **state)
{
	/* 12 bytes of header, "example.com." at 12, "www" + pointer to 12 at 25. */
	uint8_t pkt[64] = { 0 };
	const uint8_t name[] = { 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0 };
	memcpy(pkt + 12, name, sizeof(name));
	const uint8_t www[] = { 3, 'W', 'w', 'w', 0xC0, 12 };
	memcpy(pkt + 25, www, sizeof(www));

	uint8_t out[APEX_NAME_MAX];
	size_t pos = 25;
	int n = apex_name_unpack(pkt, 31, &pos, out);
	assert_int_equal(n, 17);
	assert_int_equal(pos, 31); /* just past the pointer */
	char text[256];
	assert_string_equal(apex_name_to_str(out, text, sizeof(text)), "Www.example.com.");

	pos = 12;
	assert_int_equal(apex_name_unpack(pkt, 31, &pos, out), 13);
	assert_int_equal(pos, 25);
}

static void test_unpack_rejects(void **state)
{
	uint8_t out[APEX_NAME_MAX];
	size_t pos;

	/* A pointer to itself (loop). */
	uint8_t loop[16] = { 0 };
	loop[12] = 0xC0;
	loop[13] = 12;
	pos = 12;
	assert_int_equal(apex_name_unpack(loop, 14, &pos, out), APEX_EMALFORMED);

	/* A forward pointer. */
	uint8_t fwd[20] = { 0 };
	fwd[12] = 0xC0;
	fwd[13] = 16;
	fwd[16] = 0;
	pos = 12;
	assert_int_equal(apex_name_unpack(fwd, 17, &pos, out), APEX_EMALFORMED);

	/* Two names pointing at each other. */
	uint8_t pair[24] = { 0 };
	pair[12] = 1;
	pair[13] = 'a';
	pair[14] = 0xC0;
	pair[15] = 16;
	pair[16] = 1;
	pair[17] = 'b';
	pair[18] = 0xC0;
	pair[19] = 12;
	pos = 16;
	assert_int_equal(apex_name_unpack(pair, 20, &pos, out), APEX_EMALFORMED);

	/* Truncated label. */
	uint8_t trunc[16] = { 0 };
	trunc[12] = 5;
	trunc[13] = 'a';
	pos = 12;
	assert_int_equal(apex_name_unpack(trunc, 14, &pos, out), APEX_EMALFORMED);

	/* Reserved label type 0x40. */
	uint8_t ext[16] = { 0 };
	ext[12] = 0x41;
	pos = 12;
	assert_int_equal(apex_name_unpack(ext, 16, &pos, out), APEX_EMALFORMED);

	/* A name of more than 255 bytes: 5 labels of 63. */
	uint8_t big[12 + 5 * 64 + 1] = { 0 };
	for (int i = 0; i < 5; i++) {
		big[12 + i * 64] = 63;
		memset(big + 13 + i * 64, 'x', 63);
	}
	pos = 12;
	assert_int_equal(apex_name_unpack(big, sizeof(big), &pos, out), APEX_EMALFORMED);
}

static int compare_names(const void *a, const void *b)
{
	return apex_name_compare(*(const uint8_t *const *)a, *(const uint8_t *const *)b);
}

static void test_canonical_order(void **state)
{
	/* RFC 4034 section 6.1, in canonical order. */
	static const char *const ordered[] = {
		"example.",         "a.example.",      "yljkjljk.a.example.",
		"Z.a.example.",     "zABC.a.EXAMPLE.", "z.example.",
		"\\001.z.example.", "*.z.example.",    "\\200.z.example.",
	};
	enum { N = sizeof(ordered) / sizeof(ordered[0]) };
	uint8_t names[N][APEX_NAME_MAX];
	const uint8_t *shuffled[N];
	for (int i = 0; i < N; i++) {
		wire(ordered[i], names[i]);
		shuffled[(i * 5) % N] = names[i];
	}
	qsort(shuffled, N, sizeof(shuffled[0]), compare_names);
	for (int i = 0; i < N; i++)
		assert_ptr_equal(shuffled[i], names[i]);

	/* Keys order the same way and NUL bytes in labels stay distinct. */
	uint8_t a[APEX_NAME_MAX], b[APEX_NAME_MAX];
	wire("a\\000b.", a);
	wire("b.a.", b);
	assert_int_not_equal(apex_name_compare(a, b), 0);
	wire("\\000.", a);
	wire("\\001.", b);
	assert_true(apex_name_compare(a, b) < 0);
	wire("a.", a);
	wire("a\\000.", b);
	assert_true(apex_name_compare(a, b) < 0);
}

/* A random name of few short labels over a small alphabet that has
 * both cases and the bytes the keys escape, so that prefixes, equal
 * labels and case-only differences are frequent. */
static void random_name(uint8_t *out, unsigned *seed)
{
	static const uint8_t alphabet[] = { 0x00, 0x01, 0x02, '-', 'a', 'A', 'b', 'B', 0xff };
	int labels = (int)(rand_r(seed) % 4);
	size_t n = 0;

	for (int i = 0; i < labels; i++) {
		uint8_t len = (uint8_t)(1 + rand_r(seed) % 3);

		out[n++] = len;
		for (uint8_t j = 0; j < len; j++)
			out[n++] = alphabet[rand_r(seed) % sizeof(alphabet)];
	}
	out[n] = 0;
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static void test_compare_matches_keys(void **state)
{
	unsigned seed = 38;

	for (int i = 0; i < 200000; i++) {
		uint8_t a[APEX_NAME_MAX], b[APEX_NAME_MAX];
		uint8_t ka[APEX_KEY_MAX], kb[APEX_KEY_MAX];

		random_name(a, &seed);
		random_name(b, &seed);
		size_t la = apex_name_key(a, ka, NULL);
		size_t lb = apex_name_key(b, kb, NULL);
		int want = sign(apex_key_compare(ka, la, kb, lb));

		assert_int_equal(sign(apex_name_compare(a, b)), want);
		assert_int_equal(sign(apex_name_compare(b, a)), -want);
		assert_int_equal(apex_name_compare(a, b) == 0, apex_name_equal(a, b));
	}
}

static void test_key_prefixes(void **state)
{
	uint8_t name[APEX_NAME_MAX], parent[APEX_NAME_MAX];
	uint8_t key[APEX_KEY_MAX], pkey[APEX_KEY_MAX];
	uint16_t ends[APEX_LABELS_MAX];
	wire("www.Example.COM.", name);
	size_t n = apex_name_key(name, key, ends);
	assert_int_equal(n, sizeof("com.example.www.") - 1);
	assert_memory_equal(key, "com\0example\0www\0", n);
	assert_int_equal(ends[0], 0);
	assert_int_equal(ends[1], 4);
	assert_int_equal(ends[2], 12);
	assert_int_equal(ends[3], 16);

	wire("example.com.", parent);
	size_t pn = apex_name_key(parent, pkey, NULL);
	assert_int_equal(pn, ends[2]);
	assert_memory_equal(pkey, key, pn);

	uint8_t root[1] = { 0 };
	assert_int_equal(apex_name_key(root, key, ends), 0);
}

static void test_relations(void **state)
{
	uint8_t a[APEX_NAME_MAX], b[APEX_NAME_MAX];
	wire("WWW.example.com", a);
	wire("www.EXAMPLE.com.", b);
	assert_true(apex_name_equal(a, b));
	assert_int_equal(apex_name_compare(a, b), 0);
	assert_int_equal(apex_name_labels(a), 3);
	assert_int_equal(apex_name_size(a), 17);
	wire("example.com.", b);
	assert_true(apex_name_is_subdomain(a, b));
	assert_false(apex_name_is_subdomain(b, a));
	assert_true(apex_name_equal(apex_name_parent(a), b));
	wire("le.com.", b);
	assert_false(apex_name_is_subdomain(a, b));
	wire("*.example.", a);
	assert_true(apex_name_is_wildcard(a));
	apex_name_lower(a);
	uint8_t root[1] = { 0 };
	assert_true(apex_name_is_subdomain(a, root));
	assert_int_equal(apex_name_labels(root), 0);
}

/* The name index finds every indexed name, in either case, and no other;
 * an empty index finds nothing. */
static void test_name_index(void **state)
{
	(void)state;
	enum { COUNT = 5000 };
	static uint8_t names[COUNT][32], upper[COUNT][32];
	static apex_name_ref_t refs[COUNT];
	apex_name_index_t index;
	char text[64];

	for (size_t i = 0; i < COUNT; i++) {
		snprintf(text, sizeof(text), "m%zu.tld%zu.", i, i % 7);
		assert_true(apex_name_from_str(text, names[i]) > 0);
		snprintf(text, sizeof(text), "M%zu.TLD%zu.", i, i % 7);
		assert_true(apex_name_from_str(text, upper[i]) > 0);
		refs[i] = (apex_name_ref_t){ names[i], COUNT - i };
	}
	assert_int_equal(apex_name_index_init(&index, refs, COUNT), APEX_OK);
	for (size_t i = 0; i < COUNT; i++) {
		const apex_name_ref_t *found = apex_name_index_find(&index, upper[i]);
		assert_non_null(found);
		assert_ptr_equal(found, &refs[i]);
		assert_int_equal(found->index, COUNT - i);
	}
	uint8_t other[32];
	assert_true(apex_name_from_str("m5000.tld2.", other) > 0);
	assert_null(apex_name_index_find(&index, other));
	assert_true(apex_name_from_str("m1.tld2.", other) > 0); /* m1 is under tld1 */
	assert_null(apex_name_index_find(&index, other));
	assert_true(apex_name_from_str("tld1.", other) > 0);
	assert_null(apex_name_index_find(&index, other));
	apex_name_index_free(&index);

	/* with the hash known: the same finds; a wrong hash finds nothing */
	static uint32_t hashes[COUNT];
	for (size_t i = 0; i < COUNT; i++)
		hashes[i] = apex_name_hash(names[i]);
	assert_int_equal(apex_name_index_init(&index, refs, COUNT), APEX_OK);
	for (size_t i = 0; i < COUNT; i++) {
		assert_ptr_equal(apex_name_index_find_hashed(&index, upper[i], hashes[i]),
				 &refs[i]);
		assert_ptr_equal(apex_name_index_find(&index, names[i]), &refs[i]);
	}
	assert_null(apex_name_index_find_hashed(&index, names[1], hashes[1] ^ 0x5A5A5A5Au));
	apex_name_index_free(&index);

	assert_int_equal(apex_name_index_init(&index, refs, 0), APEX_OK);
	assert_null(apex_name_index_find(&index, names[0]));
	apex_name_index_free(&index);
}

/* The table folds 'A' to 'Z' and leaves every other byte, and the hash of
 * a name is the same in any case (RFC 4343). */
static void test_ascii_lower(void **state)
{
	(void)state;
	for (unsigned c = 0; c < 256; c++)
		assert_int_equal(apex_ascii_lower((uint8_t)c), c >= 'A' && c <= 'Z' ? c + 32 : c);

	uint8_t a[64], b[64];
	wire("Ns1.ProVider-7.EXAMPLE.", a);
	wire("ns1.provider-7.example.", b);
	assert_int_equal(apex_name_hash(a), apex_name_hash(b));
	assert_true(apex_name_equal(a, b));
	wire("ns1.provider-8.example.", b);
	assert_false(apex_name_equal(a, b));
}

static void test_presentation(void **state)
{
	uint8_t w[APEX_NAME_MAX];
	char text[1024];
	wire("a\\.b.c\\032d.\\255.", w);
	assert_int_equal(w[0], 3);
	assert_string_equal(apex_name_to_str(w, text, sizeof(text)), "a\\.b.c\\032d.\\255.");
	assert_int_equal(apex_name_from_str(".", w), 1);
	assert_string_equal(apex_name_to_str(w, text, sizeof(text)), ".");
	assert_int_equal(apex_name_from_str("a..b.", w), APEX_EINVAL);
	char longlabel[80];
	memset(longlabel, 'x', 64);
	longlabel[64] = '\0';
	assert_int_equal(apex_name_from_str(longlabel, w), APEX_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unpack_compression),
		cmocka_unit_test(test_unpack_rejects),
		cmocka_unit_test(test_canonical_order),
		cmocka_unit_test(test_compare_matches_keys),
		cmocka_unit_test(test_key_prefixes),
		cmocka_unit_test(test_relations),
		cmocka_unit_test(test_presentation),
		cmocka_unit_test(test_ascii_lower),
		cmocka_unit_test(test_name_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
