/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the NOTIFY checker (lib/xfr/notify_in.c), which reads
 * NOTIFY requests from any peer before a worker answers them.
 *
 * The input is one DNS message, from 127.0.0.1, for a keyring of one
 * hmac-sha256 key (the key of the seeds in corpus/notify/) and one
 * secondary zone, secret.test., whose allow-notify list is
 * "127.0.0.0/8 xfr-key".  Oracle (a violation aborts):
 * - nothing is read outside the message (an exact-size heap copy), the
 *   answer fits its buffer and is a NOTIFY answer (QR, opcode 4, AA)
 *   with the rcode reported; nothing is answered to what is not a NOTIFY
 *   request;
 * - a request is accepted only when signed with the key, for the zone,
 *   and its answer then carries a TSIG record (ARCOUNT 1).
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/wire.h"
#include "tsig/tsig.h"
#include "util/error.h"
#include "xfr/notify_in.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NOTIFY_NOW 1700000000
#define ANSWER_MAX 65535

static apex_tsig_key_t key;
static apex_acl_entry_t acl;
static uint8_t zone[APEX_NAME_MAX];

static void notify_oracle(const char *why)
{
	fprintf(stderr, "apex fuzz oracle: %s\n", why);
	abort();
}

static const apex_acl_entry_t *zone_acl(void *ctx, const uint8_t *name, size_t *count,
					void **ctx_zone)
{
	(void)ctx;
	*ctx_zone = NULL;
	if (!apex_name_equal(name, zone))
		return NULL;
	*count = 1;
	*ctx_zone = zone;
	return &acl;
}

static void setup(void)
{
	apex_tsig_keyring_t ring = { &key, 1 };
	char err[128];

	if (apex_tsig_key_init(&key, "xfr-key", "hmac-sha256",
			       "AwoRGB8mLTQ7QklQV15lbHN6gYiPlp2kq7K5wMfO1dzj6vE=", err,
			       sizeof(err)) != APEX_OK ||
	    apex_acl_entry_parse(&acl, "127.0.0.0/8 xfr-key", false, err, sizeof(err)) < 0 ||
	    apex_acl_resolve(&acl, &ring, err, sizeof(err)) < 0 ||
	    apex_name_from_str("secret.test.", zone) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	static uint8_t out[ANSWER_MAX];
	apex_tsig_keyring_t ring = { &key, 1 };
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(5353) };
	apex_notify_result_t res;

	if (!ready) {
		setup();
		ready = true;
	}
	if (size > APEX_MAX_MESSAGE)
		return 0;
	uint8_t *msg = malloc(size ? size : 1);
	if (msg == NULL)
		abort();
	memcpy(msg, data, size);
	peer.sin_addr.s_addr = htonl(0x7f000001);
	size_t n = apex_notify_answer(msg, size, (const struct sockaddr *)&peer, &ring, zone_acl,
				      NULL, FUZZ_NOTIFY_NOW, out, sizeof(out), &res);
	bool request = size >= 12 && (data[2] & 0xf8) == 0x20;

	if (n > sizeof(out))
		notify_oracle("the answer overflows its buffer");
	if (!request && n != 0)
		notify_oracle("an answer to what is not a NOTIFY request");
	if (n > 0) {
		if (n < 12 || out[2] != 0xa4 || (out[3] & 0x0f) != res.rcode)
			notify_oracle("not a NOTIFY answer with the rcode reported");
		if (memcmp(out, data, 2) != 0)
			notify_oracle("the answer does not keep the request's ID");
	}
	if (res.accepted) {
		if (res.rcode != 0 || res.ctx_zone != zone)
			notify_oracle("accepted with an error, or for another zone");
		if (apex_read_u16(out + 10) != 1)
			notify_oracle("an accepted signed request's answer is not signed");
	}
	free(msg);
	return 0;
}
