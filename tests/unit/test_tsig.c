/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tsig: keys from configuration text; sign and check round trips for
 * every algorithm; what a wrong signature, key, time or MAC length gets;
 * streams of messages; and another implementation both ways: messages
 * dnspython signed (tsig_vectors.h, from gen_tsig_vectors.py) are
 * accepted, and apex signs the same unsigned messages into exactly
 * dnspython's bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>
#include <cmocka.h>

#include "dns/wire.h"
#include "tsig/tsig.h"
#include "util/error.h"

#include "tsig_vectors.h"

#define NOW TSIG_VECTOR_TIME

static void key_of(const struct tsig_vector *v, apex_tsig_key_t *key)
{
	char err[256];
	if (apex_tsig_key_init(key, "xfr-key", v->alg, v->secret, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
}

/* Equal bytes, but for the letter case of ASCII letters: dnspython writes
 * the MD5 algorithm's name in capitals (HMAC-MD5.SIG-ALG.REG.INT, as RFC
 * 8945's table does), apex in lower case (as BIND does); the MAC covers the
 * name in lower case either way. */
static void assert_same_but_case(const uint8_t *a, const uint8_t *b, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		uint8_t x = a[i], y = b[i];
		if (x >= 'A' && x <= 'Z')
			x = (uint8_t)(x + 32);
		if (y >= 'A' && y <= 'Z')
			y = (uint8_t)(y + 32);
		if (x != y)
			fail_msg("byte %zu: 0x%02x, expected 0x%02x", i, a[i], b[i]);
	}
}

/* A copy of a vector's bytes with room to grow. */
static size_t copy(uint8_t *buf, const uint8_t *data, size_t size)
{
	memcpy(buf, data, size);
	return size;
}

static void keys_from_text(void **state)
{
	(void)state;
	apex_tsig_key_t key;
	char err[256];

	assert_int_equal(
		apex_tsig_key_init(&key, "Xfr-Key.", "hmac-sha256.", "c2VjcmV0", err, sizeof(err)),
		APEX_OK);
	assert_int_equal(key.alg, APEX_TSIG_HMAC_SHA256);
	assert_int_equal(key.secret_size, 6);
	assert_memory_equal(key.secret, "secret", 6);
	assert_memory_equal(key.name, "\007xfr-key\000", 9); /* lower case */
	assert_int_equal(
		apex_tsig_key_init(&key, "k", "hmac-sha1", "c2VjcmV0MQ==", err, sizeof(err)),
		APEX_OK);
	assert_int_equal(key.secret_size, 7);
	assert_int_equal(apex_tsig_key_init(&key, "k", "hmac-sha3", "c2VjcmV0", err, sizeof(err)),
			 APEX_EINVAL);
	assert_non_null(strstr(err, "unknown TSIG algorithm 'hmac-sha3'"));
	assert_int_equal(apex_tsig_key_init(&key, "k", "hmac-md5", "c2VjcmV", err, sizeof(err)),
			 APEX_EINVAL);
	assert_non_null(strstr(err, "base64"));
	assert_int_equal(apex_tsig_key_init(&key, "k", "hmac-md5", "c2V!cmV0", err, sizeof(err)),
			 APEX_EINVAL);
}

/* dnspython's signatures are accepted, and apex's are the same bytes. */
static void dnspython_both_ways(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tsig_vectors) / sizeof(tsig_vectors[0]); i++) {
		const struct tsig_vector *v = &tsig_vectors[i];
		apex_tsig_key_t key;
		apex_tsig_keyring_t ring = { &key, 1 };
		apex_tsig_result_t res;
		apex_tsig_mac_t query_mac;
		uint8_t buf[4096];
		size_t size;

		key_of(v, &key);
		/* the query: check dnspython's, sign ours */
		size = copy(buf, v->query_signed, v->query_signed_size);
		assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW + 10, &res),
				 APEX_OK);
		assert_int_equal(res.error, APEX_TSIG_NOERROR);
		assert_ptr_equal(res.key, &key);
		assert_int_equal(size, v->query_size);
		assert_memory_equal(buf, v->query, size); /* the TSIG record taken off */
		size = copy(buf, v->query, v->query_size);
		assert_int_equal(
			apex_tsig_sign(buf, &size, sizeof(buf), &key, NULL, NOW, &query_mac),
			APEX_OK);
		assert_int_equal(size, v->query_signed_size);
		assert_same_but_case(buf, v->query_signed, size);

		/* the response, signed with the query's MAC */
		size = copy(buf, v->resp, v->resp_size);
		assert_int_equal(
			apex_tsig_sign(buf, &size, sizeof(buf), &key, &query_mac, NOW, NULL),
			APEX_OK);
		assert_int_equal(size, v->resp_signed_size);
		assert_same_but_case(buf, v->resp_signed, size);
		size = copy(buf, v->resp_signed, v->resp_signed_size);
		assert_int_equal(apex_tsig_verify(buf, &size, &ring, &query_mac, NOW, &res),
				 APEX_OK);
		assert_int_equal(res.error, APEX_TSIG_NOERROR);
		/* without the request's MAC it does not verify */
		size = copy(buf, v->resp_signed, v->resp_signed_size);
		assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW, &res), APEX_OK);
		assert_int_equal(res.error, APEX_TSIG_BADSIG);

		/* a stream of three messages, both ways */
		apex_tsig_stream_t in, out;
		apex_tsig_stream_init(&in, &key, &query_mac);
		apex_tsig_stream_init(&out, &key, &query_mac);
		for (int m = 0; m < 3; m++) {
			size = copy(buf, v->stream_signed[m], v->stream_signed_size[m]);
			assert_int_equal(apex_tsig_stream_verify(&in, buf, &size, NOW, &res),
					 APEX_OK);
			if (res.error != APEX_TSIG_NOERROR)
				fail_msg("%s: stream message %d: TSIG error %d", v->alg, m,
					 res.error);
			assert_memory_equal(buf, v->stream[m], size);
			size = copy(buf, v->stream[m], v->stream_size[m]);
			assert_int_equal(apex_tsig_stream_sign(&out, buf, &size, sizeof(buf), NOW),
					 APEX_OK);
			assert_int_equal(size, v->stream_signed_size[m]);
			assert_same_but_case(buf, v->stream_signed[m], size);
		}
	}
}

/* The MAC of the query of vector v, as dnspython signed it. */
static apex_tsig_mac_t query_mac_of(const struct tsig_vector *v, apex_tsig_key_t *key)
{
	apex_tsig_keyring_t ring = { key, 1 };
	apex_tsig_result_t res;
	uint8_t buf[4096];
	size_t size = copy(buf, v->query_signed, v->query_signed_size);

	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_NOERROR);
	return res.mac;
}

/* Check the sparse stream of v (its first message tampered with, or its
 * byte at offset `at` of message `which` changed); the result of its last
 * message. */
static int check_sparse(const struct tsig_vector *v, int which, size_t at, bool *complete)
{
	apex_tsig_key_t key;
	apex_tsig_stream_t in;
	apex_tsig_result_t res;
	uint8_t buf[4096];
	size_t size;

	key_of(v, &key);
	apex_tsig_mac_t query_mac = query_mac_of(v, &key);
	apex_tsig_stream_init(&in, &key, &query_mac);
	for (int m = 0; m < 4; m++) {
		size = copy(buf, v->sparse[m], v->sparse_size[m]);
		if (m == which)
			buf[at] ^= 0x01;
		assert_int_equal(apex_tsig_stream_verify(&in, buf, &size, NOW, &res), APEX_OK);
		if (m < 3)
			assert_int_equal(res.error, APEX_TSIG_NOERROR);
		assert_int_equal(apex_tsig_stream_complete(&in), m == 0 || m == 3);
	}
	*complete = apex_tsig_stream_complete(&in);
	apex_tsig_stream_clear(&in);
	return res.error;
}

/* RFC 8945 section 5.3.1: after the first message, up to 99 in a row may
 * come unsigned, and the next signed one's MAC covers them (dnspython's
 * streams, every algorithm). */
static void unsigned_messages_in_streams(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tsig_vectors) / sizeof(tsig_vectors[0]); i++) {
		const struct tsig_vector *v = &tsig_vectors[i];
		bool complete;

		assert_int_equal(check_sparse(v, -1, 0, &complete), APEX_TSIG_NOERROR);
		assert_true(complete);
		/* a changed byte in either unsigned message breaks the MAC after them */
		assert_int_equal(check_sparse(v, 1, v->sparse_size[1] - 1, &complete),
				 APEX_TSIG_BADSIG);
		assert_int_equal(check_sparse(v, 2, 0, &complete), APEX_TSIG_BADSIG);
	}

	const struct tsig_vector *v = &tsig_vectors[3];
	apex_tsig_key_t key;
	apex_tsig_stream_t in;
	apex_tsig_result_t res;
	uint8_t buf[4096];
	size_t size;

	key_of(v, &key);
	apex_tsig_mac_t query_mac = query_mac_of(v, &key);
	/* the first message must be signed */
	apex_tsig_stream_init(&in, &key, &query_mac);
	size = copy(buf, v->sparse[1], v->sparse_size[1]);
	assert_int_equal(apex_tsig_stream_verify(&in, buf, &size, NOW, &res), APEX_ENOENT);
	assert_false(apex_tsig_stream_complete(&in));
	apex_tsig_stream_clear(&in);
	/* 99 unsigned in a row are accepted, the 100th is not; a stream
	 * ending unsigned is not complete */
	apex_tsig_stream_init(&in, &key, &query_mac);
	size = copy(buf, v->sparse[0], v->sparse_size[0]);
	assert_int_equal(apex_tsig_stream_verify(&in, buf, &size, NOW, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_NOERROR);
	for (int m = 0; m < APEX_TSIG_UNSIGNED_MAX; m++) {
		size = copy(buf, v->sparse[1], v->sparse_size[1]);
		assert_int_equal(apex_tsig_stream_verify(&in, buf, &size, NOW, &res), APEX_OK);
		assert_int_equal(res.error, APEX_TSIG_NOERROR);
		assert_int_equal(size, v->sparse_size[1]);
	}
	assert_false(apex_tsig_stream_complete(&in));
	size = copy(buf, v->sparse[1], v->sparse_size[1]);
	assert_int_equal(apex_tsig_stream_verify(&in, buf, &size, NOW, &res), APEX_ENOENT);
	apex_tsig_stream_clear(&in);
}

static void failures(void **state)
{
	(void)state;
	const struct tsig_vector *v = &tsig_vectors[3]; /* hmac-sha256 */
	apex_tsig_key_t key, other;
	apex_tsig_keyring_t ring = { &key, 1 }, wrong = { &other, 1 };
	apex_tsig_result_t res;
	uint8_t buf[4096];
	size_t size;
	char err[256];

	key_of(v, &key);
	assert_int_equal(
		apex_tsig_key_init(&other, "other-key", "hmac-sha256", v->secret, err, sizeof(err)),
		APEX_OK);

	/* unsigned: nothing to check, nothing changed */
	size = copy(buf, v->query, v->query_size);
	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW, &res), APEX_ENOENT);
	assert_int_equal(size, v->query_size);

	/* a byte of the message changed */
	size = copy(buf, v->query_signed, v->query_signed_size);
	buf[APEX_HEADER_SIZE + 1] ^= 0x20;
	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_BADSIG);
	assert_int_equal(size, v->query_size); /* still taken off */

	/* an unknown key */
	size = copy(buf, v->query_signed, v->query_signed_size);
	assert_int_equal(apex_tsig_verify(buf, &size, &wrong, NULL, NOW, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_BADKEY);
	assert_null(res.key);

	/* outside the fudge (300 s), either way */
	size = copy(buf, v->query_signed, v->query_signed_size);
	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW + 301, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_BADTIME);
	size = copy(buf, v->query_signed, v->query_signed_size);
	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW - 301, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_BADTIME);
	size = copy(buf, v->query_signed, v->query_signed_size);
	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW + 300, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_NOERROR);

	/* the ID changed on the way (the original ID is in the record) */
	size = copy(buf, v->query_signed, v->query_signed_size);
	apex_write_u16(buf, 0x7777);
	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_NOERROR);
	assert_int_equal(res.original_id, 0x1003);

	/* cut short: the record is malformed */
	size = v->query_signed_size - 3;
	memcpy(buf, v->query_signed, size);
	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_FORMERR);

	/* no room to sign */
	size = copy(buf, v->query, v->query_size);
	assert_int_equal(apex_tsig_sign(buf, &size, v->query_size + 20, &key, NULL, NOW, NULL),
			 APEX_ESPACE);
	assert_int_equal(size, v->query_size);
}

/* The fields of the TSIG record that starts at msg[start] (its owner and
 * algorithm uncompressed): error, other data and MAC. */
static void record_fields(const uint8_t *msg, size_t start, uint16_t *error, uint16_t *other_size,
			  const uint8_t **other, const uint8_t **mac, uint16_t *mac_size)
{
	size_t pos = start + apex_name_size(msg + start) + 10; /* type, class, TTL, RDLENGTH */

	pos += apex_name_size(msg + pos) + 8; /* algorithm, time signed, fudge */
	*mac_size = apex_read_u16(msg + pos);
	*mac = msg + pos + 2;
	pos += 2 + *mac_size + 2; /* MAC, original ID */
	*error = apex_read_u16(msg + pos);
	*other_size = apex_read_u16(msg + pos + 2);
	*other = msg + pos + 4;
}

/* RFC 8945 section 5.3.2: BADKEY and BADSIG unsigned with the error, BADTIME
 * signed with the request's MAC and time and the server's time as other
 * data.  The BADTIME MAC is checked against one computed here from the
 * RFC's layout (section 4.3.3) with OpenSSL directly. */
static void error_records(void **state)
{
	(void)state;
	const struct tsig_vector *v = &tsig_vectors[3]; /* hmac-sha256 */
	apex_tsig_key_t key, other;
	apex_tsig_keyring_t ring = { &key, 1 }, wrong = { &other, 1 };
	apex_tsig_result_t req, res;
	uint8_t buf[4096], answer[4096];
	size_t size, n;
	uint16_t error, other_size, mac_size;
	const uint8_t *other_data, *mac;
	char err[256];

	key_of(v, &key);
	assert_int_equal(
		apex_tsig_key_init(&other, "other-key", "hmac-sha256", v->secret, err, sizeof(err)),
		APEX_OK);

	/* BADKEY: the record names the request's key, an empty MAC, error 17 */
	size = copy(buf, v->query_signed, v->query_signed_size);
	assert_int_equal(apex_tsig_verify(buf, &size, &wrong, NULL, NOW, &req), APEX_OK);
	assert_int_equal(req.error, APEX_TSIG_BADKEY);
	n = copy(answer, v->query, v->query_size);
	answer[2] |= 0x80;
	assert_int_equal(apex_tsig_error_record(answer, &n, sizeof(answer), &req, NOW), APEX_OK);
	assert_int_equal(apex_read_u16(answer + APEX_HDR_ARCOUNT),
			 apex_read_u16(v->query + APEX_HDR_ARCOUNT) + 1);
	record_fields(answer, v->query_size, &error, &other_size, &other_data, &mac, &mac_size);
	assert_int_equal(error, APEX_TSIG_BADKEY);
	assert_int_equal(other_size, 0);
	assert_int_equal(mac_size, 0);
	/* read back: the key is ours, the empty MAC does not verify */
	size = n;
	assert_int_equal(apex_tsig_verify(answer, &size, &ring, &req.mac, NOW, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_BADSIG);
	assert_int_equal(size, v->query_size);

	/* BADTIME: signed */
	size = copy(buf, v->query_signed, v->query_signed_size);
	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW + 1000, &req), APEX_OK);
	assert_int_equal(req.error, APEX_TSIG_BADTIME);
	n = copy(answer, v->query, v->query_size);
	answer[2] |= 0x80;
	answer[3] = (uint8_t)((answer[3] & 0xf0) | 9);
	size_t unsigned_size = n;
	assert_int_equal(apex_tsig_error_record(answer, &n, sizeof(answer), &req, NOW + 1000),
			 APEX_OK);
	record_fields(answer, unsigned_size, &error, &other_size, &other_data, &mac, &mac_size);
	assert_int_equal(error, APEX_TSIG_BADTIME);
	assert_int_equal(other_size, 6);
	assert_int_equal(apex_read_u32(other_data + 2), NOW + 1000);

	/* the MAC, from the RFC: prior MAC (length, bytes), the message as
	 * unsigned, then key name, class ANY, TTL 0, algorithm, time signed (the
	 * request's), fudge, error, other length and data */
	uint8_t digest_in[8192], *d = digest_in;
	apex_write_u16(d, (uint16_t)req.mac.size);
	memcpy(d + 2, req.mac.bytes, req.mac.size);
	d += 2 + req.mac.size;
	memcpy(d, answer, unsigned_size);
	apex_write_u16(d + APEX_HDR_ARCOUNT, apex_read_u16(answer + APEX_HDR_ARCOUNT) - 1);
	d += unsigned_size;
	memcpy(d, key.name, apex_name_size(key.name));
	d += apex_name_size(key.name);
	apex_write_u16(d, 255);
	apex_write_u32(d + 2, 0);
	d += 6;
	static const uint8_t alg[] = "\013hmac-sha256";
	memcpy(d, alg, sizeof(alg));
	d += sizeof(alg);
	apex_write_u16(d, 0);
	apex_write_u32(d + 2, (uint32_t)req.time_signed);
	apex_write_u16(d + 6, APEX_TSIG_FUDGE);
	apex_write_u16(d + 8, APEX_TSIG_BADTIME);
	apex_write_u16(d + 10, 6);
	memcpy(d + 12, other_data, 6);
	d += 18;
	uint8_t want[EVP_MAX_MD_SIZE];
	unsigned want_size = 0;
	assert_non_null(HMAC(EVP_sha256(), key.secret, (int)key.secret_size, digest_in,
			     (size_t)(d - digest_in), want, &want_size));
	assert_int_equal(want_size, 32);
	assert_int_equal(mac_size, 32);
	assert_memory_equal(mac, want, 32);
	/* and the record carries the request's time (it is before the fudge and MAC size) */
	assert_int_equal(apex_read_u32(mac - 8), (uint32_t)req.time_signed);
}

/* A MAC cut to 16 of SHA-256's 32 bytes is allowed; to 10 it is not
 * (RFC 8945 section 5.2.2.1), and longer than the hash is malformed. */
static void truncation(void **state)
{
	(void)state;
	const struct tsig_vector *v = &tsig_vectors[3];
	apex_tsig_key_t key;
	apex_tsig_keyring_t ring = { &key, 1 };
	apex_tsig_result_t res;
	uint8_t buf[4096];
	size_t size;

	key_of(v, &key);
	size_t mac_at = v->query_size + 9 /* owner */ + 10 + 13 /* algorithm */ + 10;
	for (int cut = 0; cut < 3; cut++) {
		size_t keep = cut == 0 ? 16 : cut == 1 ? 10 : 33;
		size = copy(buf, v->query_signed, v->query_signed_size);
		assert_int_equal(apex_read_u16(buf + mac_at - 2), 32);
		if (keep <= 32) {
			/* MAC size, then the rest moved up */
			apex_write_u16(buf + mac_at - 2, (uint16_t)keep);
			memmove(buf + mac_at + keep, buf + mac_at + 32, size - mac_at - 32);
			size -= 32 - keep;
		} else {
			apex_write_u16(buf + mac_at - 2, (uint16_t)keep);
			memmove(buf + mac_at + keep, buf + mac_at + 32, size - mac_at - 32);
			buf[mac_at + 32] = 0;
			size += 1;
		}
		/* the RDLENGTH follows */
		size_t rdlen_at = v->query_size + 9 + 8;
		apex_write_u16(buf + rdlen_at, (uint16_t)(size - rdlen_at - 2));
		assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW, &res), APEX_OK);
		assert_int_equal(res.error, cut == 0   ? APEX_TSIG_NOERROR
					    : cut == 1 ? APEX_TSIG_BADTRUNC
						       : APEX_TSIG_FORMERR);
	}
}

/* A TSIG record must be the last one: one earlier is malformed. */
static void tsig_not_last(void **state)
{
	(void)state;
	const struct tsig_vector *v = &tsig_vectors[3];
	apex_tsig_key_t key;
	apex_tsig_keyring_t ring = { &key, 1 };
	apex_tsig_result_t res;
	uint8_t buf[4096];
	size_t size;

	key_of(v, &key);
	size = copy(buf, v->query_signed, v->query_signed_size);
	/* append an A record after it */
	memcpy(buf + size, "\000\000\001\000\001\000\000\000\000\000\004\300\000\002\001", 15);
	size += 15;
	apex_write_u16(buf + APEX_HDR_ARCOUNT,
		       (uint16_t)(apex_read_u16(buf + APEX_HDR_ARCOUNT) + 1));
	assert_int_equal(apex_tsig_verify(buf, &size, &ring, NULL, NOW, &res), APEX_OK);
	assert_int_equal(res.error, APEX_TSIG_FORMERR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys_from_text),
		cmocka_unit_test(dnspython_both_ways),
		cmocka_unit_test(unsigned_messages_in_streams),
		cmocka_unit_test(failures),
		cmocka_unit_test(truncation),
		cmocka_unit_test(tsig_not_last),
		cmocka_unit_test(error_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
