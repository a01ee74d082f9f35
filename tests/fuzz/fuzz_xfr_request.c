/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: what a primary reads from any peer before a transfer
 * (lib/xfr/xfr_serve.c) and the TSIG check of a signed query's answer
 * (lib/tsig/signed_answer.c).
 *
 * The input is one DNS message.  It goes to apex_xfr_request_type() (the
 * worker's test), to apex_xfr_serve() over one end of a socket pair with a
 * keyring of one hmac-sha256 key (the key of corpus/xfr_request/) and no
 * zone served, and to apex_tsig_signed_answer() with a copy of it as the
 * engine's answer.  Oracle (a violation aborts):
 * - nothing is read outside the message (exact-size heap copies);
 * - apex_xfr_serve() sends exactly one message, a refusal with QR set and
 *   the request's ID, and no record but one in the additional section:
 *   the TSIG record of a TSIG error, or the OPT record of an Extended DNS
 *   Error; it never reports a transfer;
 * - the signed answer never grows past its buffer and, when it shrank to
 *   an error, keeps at most the header and one question.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns/wire.h"
#include "tsig/signed_answer.h"
#include "util/error.h"
#include "xfr/xfr_serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NOW 1700000000
#define ANSWER_MAX 65535

static apex_tsig_key_t key;

static void request_oracle(const char *why)
{
	fprintf(stderr, "apex fuzz oracle: %s\n", why);
	abort();
}

static bool no_zone(void *ctx, const uint8_t *zone, apex_zone_t **version,
		    const apex_acl_entry_t **acl, size_t *acl_count)
{
	(void)ctx;
	(void)zone;
	*version = NULL;
	*acl = NULL;
	*acl_count = 0;
	return false;
}

/* The one message apex_xfr_serve() sent on fds[1], read from fds[0]. */
static void check_sent(int fd, const uint8_t *data, size_t size)
{
	static uint8_t sent[2 + ANSWER_MAX + 1];
	ssize_t n = recv(fd, sent, sizeof(sent), MSG_DONTWAIT);

	if (n < 2 + 12 || (size_t)n != 2 + (size_t)apex_read_u16(sent))
		request_oracle("not exactly one message sent");
	if ((sent[4] & 0x80) == 0 || memcmp(sent + 2, data, 2) != 0)
		request_oracle("not an answer to the request");
	/* no zone data: at most a TSIG error's TSIG record or an EDE's OPT record */
	if (apex_read_u16(sent + 2 + 6) != 0 || apex_read_u16(sent + 2 + 8) != 0 ||
	    apex_read_u16(sent + 2 + 10) > 1)
		request_oracle("records in a refusal");
}

static void serve(const uint8_t *msg, size_t size, const uint8_t *data)
{
	apex_tsig_keyring_t ring = { &key, 1 };
	apex_xfr_timeouts_t t = { 0, 1000, 1000, -1 };
	struct sockaddr_storage peer = { .ss_family = AF_INET };
	apex_xfr_serve_result_t res;
	char err[256];
	int fds[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0)
		abort();
	apex_xfr_serve_conn_t conn = { .fd = fds[1] };
	int rc = apex_xfr_serve(&conn, (const struct sockaddr *)&peer, "fuzz", msg, size, &ring,
				no_zone, NULL, NULL, &t, &res, err, sizeof(err));
	if (size >= 12 && size <= ANSWER_MAX) {
		if (rc != APEX_OK || res.rcode == 0 || res.messages != 0)
			request_oracle("a request with no zone served was not refused");
		check_sent(fds[0], data, size);
	}
	close(fds[0]);
	close(fds[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t answer[ANSWER_MAX];
	apex_tsig_keyring_t ring = { &key, 1 };
	char err[128];

	if (key.secret_size == 0 &&
	    apex_tsig_key_init(&key, "xfr-key", "hmac-sha256",
			       "AwoRGB8mLTQ7QklQV15lbHN6gYiPlp2kq7K5wMfO1dzj6vE=", err,
			       sizeof(err)) != APEX_OK)
		abort();
	if (size > ANSWER_MAX)
		return 0;
	uint8_t *msg = malloc(size ? size : 1);
	if (msg == NULL)
		abort();
	memcpy(msg, data, size);
	(void)apex_xfr_request_type(msg, size);
	serve(msg, size, data);

	memcpy(answer, data, size);
	size_t n =
		apex_tsig_signed_answer(msg, size, &ring, FUZZ_NOW, answer, size, sizeof(answer));
	if (n > sizeof(answer))
		request_oracle("the signed answer overflows its buffer");
	free(msg);
	return 0;
}
