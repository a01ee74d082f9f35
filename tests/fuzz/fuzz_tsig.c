/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the TSIG checker (lib/tsig/tsig.c), which reads the
 * signed messages of transfers and NOTIFY from any peer.
 *
 * The input is one DNS message.  It is checked against a keyring of one
 * hmac-sha256 key (the key of the seeds in corpus/tsig/).  Oracle (a
 * violation aborts):
 * - the checker never reads outside the message (an exact-size heap copy)
 *   and returns APEX_ENOENT with the message unchanged, or APEX_OK with a
 *   known TSIG error; unless FORMERR the record is taken off: the message
 *   shrinks and its ARCOUNT drops by one;
 * - a message without a TSIG record, signed by apex, checks as NOERROR and
 *   comes back byte for byte once the record is taken off;
 * - as the second message of a stream whose first apex signed, a message
 *   without a TSIG record is taken unchanged (RFC 8945 section 5.3.1 lets
 *   it come unsigned), one with a record gets a known outcome, and the
 *   stream's pending MAC is freed (the leak checker watches it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/wire.h"
#include "tsig/tsig.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_TSIG_NOW 1700000000

static void tsig_oracle(const char *why)
{
	fprintf(stderr, "apex fuzz oracle: %s\n", why);
	abort();
}

static bool known_error(int e)
{
	return e == APEX_TSIG_NOERROR || e == APEX_TSIG_FORMERR || e == APEX_TSIG_BADSIG ||
	       e == APEX_TSIG_BADKEY || e == APEX_TSIG_BADTIME || e == APEX_TSIG_BADTRUNC;
}

/* data as the second message of a stream whose first message apex signed. */
static void stream_second(const apex_tsig_key_t *key, const uint8_t *data, size_t size)
{
	static const uint8_t first[] = { 0, 1, 0x84, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	apex_tsig_mac_t request = { .size = 32 };
	apex_tsig_stream_t out, in;
	apex_tsig_result_t res;
	uint8_t head[256];
	size_t n = sizeof(first);

	memcpy(head, first, n);
	apex_tsig_stream_init(&out, key, &request);
	apex_tsig_stream_init(&in, key, &request);
	if (apex_tsig_stream_sign(&out, head, &n, sizeof(head), FUZZ_TSIG_NOW) != APEX_OK ||
	    apex_tsig_stream_verify(&in, head, &n, FUZZ_TSIG_NOW, &res) != APEX_OK ||
	    res.error != APEX_TSIG_NOERROR)
		tsig_oracle("the first message of a stream does not check");
	uint8_t *msg = malloc(size ? size : 1);
	if (msg == NULL)
		abort();
	memcpy(msg, data, size);
	n = size;
	int rc = apex_tsig_stream_verify(&in, msg, &n, FUZZ_TSIG_NOW, &res);
	if (rc != APEX_OK || !known_error(res.error))
		tsig_oracle("an unknown outcome in a stream");
	if (!apex_tsig_stream_complete(&in) && (n != size || memcmp(msg, data, size) != 0))
		tsig_oracle("an unsigned message of a stream changed");
	apex_tsig_stream_clear(&in);
	free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static apex_tsig_key_t key;
	static bool ready;
	apex_tsig_keyring_t ring = { &key, 1 };
	apex_tsig_result_t res;
	char err[128];

	if (!ready) {
		if (apex_tsig_key_init(&key, "xfr-key", "hmac-sha256",
				       "AwoRGB8mLTQ7QklQV15lbHN6gYiPlp2kq7K5wMfO1dzj6vE=", err,
				       sizeof(err)) != APEX_OK)
			abort();
		ready = true;
	}
	if (size > APEX_MAX_MESSAGE)
		return 0;
	uint8_t *msg = malloc(size ? size : 1);
	if (msg == NULL)
		abort();
	memcpy(msg, data, size);
	size_t n = size;
	int rc = apex_tsig_verify(msg, &n, &ring, NULL, FUZZ_TSIG_NOW, &res);
	if (rc == APEX_ENOENT) {
		if (n != size || memcmp(msg, data, size) != 0)
			tsig_oracle("a message without TSIG changed");
	} else if (rc != APEX_OK || !known_error(res.error)) {
		tsig_oracle("an unknown outcome");
	} else if (res.error != APEX_TSIG_FORMERR) {
		if (n >= size || apex_read_u16(msg + APEX_HDR_ARCOUNT) + 1 !=
					 apex_read_u16(data + APEX_HDR_ARCOUNT))
			tsig_oracle("the TSIG record not taken off");
	}
	free(msg);

	/* round trip: an unsigned, well-formed message signed and checked */
	if (rc == APEX_ENOENT && size >= APEX_HEADER_SIZE) {
		size_t cap = size + 200;
		uint8_t *buf = malloc(cap);
		if (buf == NULL)
			abort();
		memcpy(buf, data, size);
		n = size;
		if (apex_tsig_sign(buf, &n, cap, &key, NULL, FUZZ_TSIG_NOW, NULL) == APEX_OK &&
		    apex_read_u16(data + APEX_HDR_ARCOUNT) < UINT16_MAX) {
			if (apex_tsig_verify(buf, &n, &ring, NULL, FUZZ_TSIG_NOW, &res) !=
				    APEX_OK ||
			    res.error != APEX_TSIG_NOERROR || n != size ||
			    memcmp(buf, data, size) != 0)
				tsig_oracle("a message apex signed does not check");
		}
		free(buf);
	}
	stream_second(&key, data, size);
	return 0;
}
