/* SPDX-License-Identifier: BSD-3-Clause */
/* A primary's side of a zone transfer (xfr_serve.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/xfr_serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dns/edns.h"
#include "dns/rrtype.h"
#include "dns/serial.h"
#include "dns/wire.h"
#include "util/error.h"
#include "xfr/axfr_out.h"
#include "xfr/ixfr_out.h"

#define MESSAGE_MAX 65535
/* Room kept in each message for its TSIG record: two names and the rest. */
#define TSIG_ROOM (2 * APEX_NAME_MAX + 128)

/* The size the messages of a transfer are filled to.  The response writer
 * compresses against the first APEX_COMPRESS_MAX names of a message, so
 * smaller messages compress better: the 1M-record nu. zone takes 65.3 MB in
 * 64 KiB messages, 59.8 MB in 16 KiB ones (NSD 54.1 MB, Knot DNS 56.6 MB,
 * both with messages of about 16 KiB; contrib/bench/axfr_out.py). */
#define STREAM_MESSAGE_SIZE 16384

#define RCODE_FORMERR 1
#define RCODE_REFUSED 5
#define RCODE_NOTAUTH 9

uint16_t apex_xfr_request_type(const uint8_t *msg, size_t size)
{
	size_t pos = 12;

	if (size < 12 + 5 || (msg[2] & 0xf8) != 0 || apex_read_u16(msg + 4) != 1)
		return 0;
	/* skip the question's name (uncompressed in a question) */
	while (pos < size && msg[pos] != 0) {
		if ((msg[pos] & 0xc0) != 0)
			return 0;
		pos += 1 + msg[pos];
	}
	if (pos + 5 > size)
		return 0;
	return apex_read_u16(msg + pos + 1);
}

/* What a request asks. */
typedef struct request {
	uint16_t id;
	uint8_t qname[APEX_NAME_MAX]; /* as asked */
	uint16_t qtype;
	uint32_t serial; /* IXFR: the secondary's */
	bool question;   /* the question parsed */
	bool edns;       /* an OPT record came: a refusal carries an Extended DNS Error */
	bool expire;     /* with an EDNS EXPIRE option (RFC 7314): the first message has one */
	uint16_t ede;    /* that error (RFC 8914), 0: none */
} request_t;

/* Parse the question (and an IXFR's SOA) of m[0..n); false if malformed. */
static bool parse_request(const uint8_t *m, size_t n, request_t *r)
{
	uint8_t name[APEX_NAME_MAX];
	size_t pos = 12;

	if (n < 12 || (m[2] & 0xf8) != 0 || apex_read_u16(m + 4) != 1 ||
	    apex_name_unpack(m, n, &pos, r->qname) < 0 || pos + 4 > n)
		return false;
	r->qtype = apex_read_u16(m + pos);
	r->question = true;
	if (apex_read_u16(m + pos + 2) != APEX_CLASS_IN)
		return false;
	pos += 4;
	if (r->qtype != APEX_TYPE_IXFR)
		return r->qtype == APEX_TYPE_AXFR;
	/* IXFR: the SOA in the authority section, after any answers */
	if (apex_read_u16(m + 6) != 0 || apex_read_u16(m + 8) < 1 ||
	    apex_name_unpack(m, n, &pos, name) < 0 || pos + 10 > n ||
	    apex_read_u16(m + pos) != APEX_TYPE_SOA)
		return false;
	pos += 10;
	if (apex_name_unpack(m, n, &pos, name) < 0 || apex_name_unpack(m, n, &pos, name) < 0 ||
	    pos + 4 > n)
		return false;
	r->serial = apex_read_u32(m + pos);
	return true;
}

/* An answer without records: the header, the question when it parsed. */
static size_t refusal(uint8_t *out, const request_t *r, uint8_t opcode_byte, uint8_t rcode)
{
	size_t n = 12;

	memset(out, 0, 12);
	apex_write_u16(out, r->id);
	out[2] = 0x80 | (opcode_byte & 0x78);
	out[3] = rcode;
	if (r->question) {
		size_t name_size = apex_name_size(r->qname);

		apex_write_u16(out + 4, 1);
		memcpy(out + n, r->qname, name_size);
		n += name_size;
		apex_write_u16(out + n, r->qtype);
		apex_write_u16(out + n + 2, APEX_CLASS_IN);
		n += 4;
	}
	return n;
}

/* The source of the messages of one answer. */
typedef struct source {
	bool incremental; /* ixfr_out, else axfr_out */
	apex_axfr_out_t axfr;
	apex_ixfr_out_t ixfr;
} source_t;

static int source_next(source_t *src, uint8_t *buf, size_t capacity, size_t *size)
{
	return src->incremental ? apex_ixfr_out_next(&src->ixfr, buf, capacity, size)
				: apex_axfr_out_next(&src->axfr, buf, capacity, size);
}

/*
 * Send the messages of src, each signed when key is set.  expire, when
 * not negative: the EDNS EXPIRE value the first message carries in an OPT
 * record of its own (RFC 7314 section 2), before its signature.
 */
static int send_stream(apex_tcp_stream_t *io, source_t *src, const apex_tsig_key_t *key,
		       const apex_tsig_mac_t *request_mac, int64_t expire, uint8_t *buf,
		       apex_xfr_serve_result_t *res)
{
	apex_tsig_stream_t stream;
	size_t size;
	int rc;

	apex_tsig_stream_init(&stream, key, request_mac);
	for (;;) {
		rc = source_next(src, buf, STREAM_MESSAGE_SIZE, &size);
		if (rc < 0) {
			snprintf(io->err, io->err_size, "the zone cannot be sent: %s",
				 apex_strerror(rc));
			return rc;
		}
		if (size == 0)
			return APEX_OK;
		if (expire >= 0 && res->messages == 0) {
			uint8_t value[4];

			apex_write_u32(value, (uint32_t)expire);
			size = apex_message_add_opt(buf, size, MESSAGE_MAX, APEX_EDNS_EXPIRE, value,
						    sizeof(value));
		}
		if (key != NULL && (rc = apex_tsig_stream_sign(&stream, buf, &size, MESSAGE_MAX,
							       (uint64_t)time(NULL))) < 0) {
			snprintf(io->err, io->err_size, "cannot sign: %s", apex_strerror(rc));
			return rc;
		}
		if ((rc = apex_tcp_stream_send_message(io, buf, size)) < 0)
			return rc;
		res->messages++;
		res->bytes += size;
	}
}

/* Choose how to answer an allowed request for version. */
static void choose_source(source_t *src, const request_t *r, const apex_zone_t *version,
			  const apex_xfr_serve_journal_t *journal, void **sets_ctx,
			  apex_xfr_serve_result_t *res)
{
	memset(src, 0, sizeof(*src));
	if (r->qtype == APEX_TYPE_IXFR && !apex_serial_newer(version->serial, r->serial)) {
		src->incremental = true;
		apex_ixfr_out_init(&src->ixfr, version, r->id, r->qname, NULL, NULL, 0);
		res->how = "IXFR up to date";
		return;
	}
	if (r->qtype == APEX_TYPE_IXFR && journal != NULL) {
		const uint8_t *const *sets = NULL;
		const size_t *sizes = NULL;
		size_t count = 0;

		journal->changes(journal->ctx, version->origin, r->serial, version->serial, &sets,
				 &sizes, &count, sets_ctx);
		if (count > 0) {
			src->incremental = true;
			apex_ixfr_out_init(&src->ixfr, version, r->id, r->qname, sets, sizes,
					   count);
			res->how = "IXFR";
			return;
		}
	}
	apex_axfr_out_init(&src->axfr, version, r->id, r->qname);
	src->axfr.qtype = r->qtype;
	res->whole = r->qtype == APEX_TYPE_IXFR;
	res->how = res->whole ? "IXFR as AXFR" : "AXFR";
}

/* Check the request; *version and *key when it is allowed, else the
 * refusal's rcode (res->why says why). */
static uint8_t admit(uint8_t *buf, size_t *n, const struct sockaddr *peer,
		     const apex_tsig_keyring_t *ring, apex_xfr_serve_zone_fn zone_of, void *ctx,
		     request_t *r, apex_tsig_result_t *t, apex_zone_t **version,
		     apex_xfr_serve_result_t *res, const apex_xfr_serve_conn_t *conn)
{
	const apex_acl_entry_t *acl = NULL;
	size_t acl_count = 0;
	int rc = apex_tsig_verify(buf, n, ring, NULL, (uint64_t)time(NULL), t);
	bool parsed = parse_request(buf, *n, r);

	if (rc == APEX_ENOENT)
		t->key = NULL;
	if (rc == APEX_OK && t->error != APEX_TSIG_NOERROR) {
		res->why = "a TSIG signature that does not verify";
		return t->error == APEX_TSIG_FORMERR ? RCODE_FORMERR : RCODE_NOTAUTH;
	}
	if ((rc < 0 && rc != APEX_ENOENT) || !parsed) {
		res->why = "a malformed request";
		return RCODE_FORMERR;
	}
	memcpy(res->zone, r->qname, apex_name_size(r->qname));
	r->edns = apex_message_has_opt(buf, *n);
	const uint8_t *unused;
	r->expire = apex_message_opt_option(buf, *n, APEX_EDNS_EXPIRE, &unused) >= 0;
	if (!zone_of(ctx, r->qname, version, &acl, &acl_count)) {
		res->why = "not a zone served here";
		r->ede = APEX_EDE_NOT_AUTHORITATIVE;
		return RCODE_NOTAUTH;
	}
	apex_acl_verdict_t verdict = apex_acl_check(acl, acl_count, peer, t->key, conn->tls_peer);

	if (conn->refuse != NULL && verdict != APEX_ACL_BAD_KEY) {
		apex_zone_unref(*version);
		*version = NULL;
		res->why = conn->refuse;
		r->ede = APEX_EDE_PROHIBITED;
		return RCODE_REFUSED;
	}

	if (verdict == APEX_ACL_ALLOW)
		return 0;
	apex_zone_unref(*version);
	*version = NULL;
	if (verdict == APEX_ACL_BAD_KEY) {
		res->why = "not signed with the key provide-xfr names";
		return RCODE_NOTAUTH;
	}
	res->why = verdict == APEX_ACL_NEEDS_TLS
			   ? "not over TLS with the client certificate provide-xfr's tls-auth names"
			   : "an address provide-xfr does not allow";
	r->ede = APEX_EDE_PROHIBITED;
	return RCODE_REFUSED;
}

/* The stream's TLS ended (close_notify after a transfer that went well);
 * rc passed on. */
static int end_stream(apex_tcp_stream_t *io, int rc)
{
	int end = apex_tcp_stream_tls_end(io, rc == APEX_OK);

	return rc < 0 ? rc : end;
}

int apex_xfr_serve(const apex_xfr_serve_conn_t *conn, const struct sockaddr *peer,
		   const char *peer_text, const uint8_t *msg, size_t size,
		   const apex_tsig_keyring_t *ring, apex_xfr_serve_zone_fn zone_of, void *ctx,
		   const apex_xfr_serve_journal_t *journal, const apex_xfr_timeouts_t *t,
		   apex_xfr_serve_result_t *res, char *err, size_t err_size)
{
	apex_tcp_stream_t io;
	apex_tsig_result_t tsig;
	apex_zone_t *version = NULL;
	request_t r;
	source_t src;
	void *sets_ctx = NULL;
	size_t n = size;
	uint8_t *buf;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&r, 0, sizeof(r));
	memset(&tsig, 0, sizeof(tsig));
	if (size < 12 || size > MESSAGE_MAX) {
		apex_tls_session_free(conn->tls);
		snprintf(err, err_size, "%s: a request of %zu bytes", peer_text, size);
		return APEX_EMALFORMED;
	}
	buf = malloc(MESSAGE_MAX);
	if (buf == NULL) {
		apex_tls_session_free(conn->tls);
		snprintf(err, err_size, "out of memory");
		return APEX_ENOMEM;
	}
	apex_tcp_stream_init(&io, conn->fd, t, peer_text, err, err_size);
	io.tls = conn->tls;
	memcpy(buf, msg, size);
	r.id = apex_read_u16(msg);
	res->rcode = admit(buf, &n, peer, ring, zone_of, ctx, &r, &tsig, &version, res, conn);
	res->qtype = r.qtype;
	if (res->rcode != 0) {
		n = refusal(buf, &r, msg[2], res->rcode);
		if (r.edns && r.ede != 0)
			n = apex_message_add_ede(buf, n, MESSAGE_MAX, r.ede);
		/* a TSIG error goes back in a TSIG record (RFC 8945 section 5.3.2) */
		if (res->rcode == RCODE_NOTAUTH && tsig.error != APEX_TSIG_NOERROR &&
		    tsig.error != APEX_TSIG_FORMERR)
			apex_tsig_error_record(buf, &n, MESSAGE_MAX, &tsig, (uint64_t)time(NULL));
		rc = apex_tcp_stream_send_message(&io, buf, n);
		free(buf);
		return end_stream(&io, rc);
	}
	res->serial = version->serial;
	choose_source(&src, &r, version, journal, &sets_ctx, res);
	rc = send_stream(&io, &src, tsig.key, &tsig.mac,
			 r.expire ? (int64_t)apex_zone_expire_left(version, (uint64_t)time(NULL))
				  : -1,
			 buf, res);
	if (sets_ctx != NULL && journal != NULL)
		journal->release(journal->ctx, sets_ctx);
	apex_zone_unref(version);
	free(buf);
	return end_stream(&io, rc);
}
