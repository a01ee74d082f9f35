/* SPDX-License-Identifier: BSD-3-Clause */
/* A NOTIFY received, checked and answered (notify_in.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/notify_in.h"

#include <string.h>

#include "dns/edns.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"

#define OPCODE_NOTIFY 4
#define RCODE_FORMERR 1
#define RCODE_REFUSED 5
#define RCODE_NOTAUTH 9

/* The answer: header (QR, NOTIFY, AA, rcode) and the question when there is one. */
static size_t answer(uint8_t *out, const uint8_t *name, uint16_t qtype, uint16_t qclass,
		     uint8_t rcode)
{
	size_t n = 12;

	out[2] = 0x80 | (OPCODE_NOTIFY << 3) | 0x04;
	out[3] = rcode;
	memset(out + 4, 0, 8);
	if (name != NULL) {
		size_t name_size = apex_name_size(name);

		apex_write_u16(out + 4, 1);
		memmove(out + n, name, name_size);
		n += name_size;
		apex_write_u16(out + n, qtype);
		apex_write_u16(out + n + 2, qclass);
		n += 4;
	}
	return n;
}

static size_t refuse(apex_notify_result_t *res, uint8_t rcode, const char *why, uint8_t *out,
		     const uint8_t *name, uint16_t qtype, uint16_t qclass)
{
	res->rcode = rcode;
	res->why = why;
	return answer(out, name, qtype, qclass, rcode);
}

/* REFUSED, with the Extended DNS Error ede (RFC 8914) when the NOTIFY
 * came with EDNS: out has room (out_capacity is its size plus 512). */
static size_t refuse_ede(apex_notify_result_t *res, const char *why, uint16_t ede, bool edns,
			 uint8_t *out, size_t out_capacity, const uint8_t *name, uint16_t qtype,
			 uint16_t qclass)
{
	size_t n = refuse(res, RCODE_REFUSED, why, out, name, qtype, qclass);
	return edns ? apex_message_add_ede(out, n, out_capacity, ede) : n;
}

/* The serial of the SOA record the NOTIFY msg[0..size) carries as the
 * first record of its answer section, owned by the question's name
 * (RFC 1996 3.7: an unsecured hint of the primary's new SOA); pos: just
 * past the question.  False when there is none or it does not parse. */
static bool soa_hint(const uint8_t *msg, size_t size, size_t pos, const uint8_t *qname,
		     uint32_t *serial)
{
	uint8_t owner[APEX_NAME_MAX], skip[APEX_NAME_MAX];
	size_t rdata;

	if (apex_read_u16(msg + 6) == 0 || apex_name_unpack(msg, size, &pos, owner) < 0 ||
	    pos + 10 > size || !apex_name_equal(owner, qname) ||
	    apex_read_u16(msg + pos) != APEX_TYPE_SOA ||
	    apex_read_u16(msg + pos + 2) != APEX_CLASS_IN)
		return false;
	rdata = pos + 10;
	if (rdata + apex_read_u16(msg + pos + 8) > size)
		return false;
	size = rdata + apex_read_u16(msg + pos + 8); /* the names stay within the RDATA */
	pos = rdata;
	if (apex_name_unpack(msg, size, &pos, skip) < 0 ||
	    apex_name_unpack(msg, size, &pos, skip) < 0 || pos + 20 != size)
		return false;
	*serial = apex_read_u32(msg + pos);
	return true;
}

size_t apex_notify_answer(const uint8_t *msg, size_t size, const struct sockaddr *peer,
			  const apex_tsig_keyring_t *ring, apex_notify_zone_acl_fn zone_acl,
			  void *ctx, uint64_t now, uint8_t *out, size_t out_capacity,
			  apex_notify_result_t *res)
{
	apex_tsig_result_t t;
	uint8_t name[APEX_NAME_MAX];
	size_t n = size, pos = 12, acl_count = 0;
	const apex_tsig_key_t *key = NULL;
	uint16_t qtype, qclass;
	void *ctx_zone = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	if (size < 12 || size + 512 > out_capacity || (msg[2] & 0x80) != 0 ||
	    ((msg[2] >> 3) & 0x0f) != OPCODE_NOTIFY)
		return 0;
	/* the question first, so that every answer but FORMERR repeats it */
	if (apex_read_u16(msg + 4) != 1 || apex_name_unpack(msg, size, &pos, name) < 0 ||
	    pos + 4 > size) {
		memcpy(out, msg, 12);
		return refuse(res, RCODE_FORMERR, "not one question", out, NULL, 0, 0);
	}
	qtype = apex_read_u16(msg + pos);
	qclass = apex_read_u16(msg + pos + 2);
	memcpy(out, msg, size);
	rc = apex_tsig_verify(out, &n, ring, NULL, now, &t);
	if (rc == APEX_OK && t.error == APEX_TSIG_FORMERR)
		return refuse(res, RCODE_FORMERR, "a malformed TSIG record", out, name, qtype,
			      qclass);
	if (rc == APEX_OK && t.error != APEX_TSIG_NOERROR) {
		n = refuse(res, RCODE_NOTAUTH, "a TSIG signature that does not verify", out, name,
			   qtype, qclass);
		/* with the TSIG error (RFC 8945 section 5.3.2); without it if it does not fit */
		apex_tsig_error_record(out, &n, out_capacity, &t, now);
		return n;
	}
	if (rc == APEX_OK)
		key = t.key;
	else if (rc != APEX_ENOENT)
		return refuse(res, RCODE_FORMERR, "a malformed message", out, name, qtype, qclass);
	memcpy(res->zone, name, apex_name_size(name));
	bool edns = apex_message_has_opt(out, n);
	if (qclass != APEX_CLASS_IN)
		return refuse_ede(res, "not class IN", APEX_EDE_NOT_SUPPORTED, edns, out,
				  out_capacity, name, qtype, qclass);
	const apex_acl_entry_t *acl = zone_acl(ctx, name, &acl_count, &ctx_zone);
	if (acl == NULL && ctx_zone == NULL)
		return refuse_ede(res, "not a secondary zone here", APEX_EDE_NOT_AUTHORITATIVE,
				  edns, out, out_capacity, name, qtype, qclass);
	switch (apex_acl_check(acl, acl_count, peer, key, NULL)) {
	case APEX_ACL_ALLOW: break;
	case APEX_ACL_BAD_KEY:
		return refuse(res, RCODE_NOTAUTH, "not signed with the key allow-notify names", out,
			      name, qtype, qclass);
	case APEX_ACL_BLOCKED:
	case APEX_ACL_NO_MATCH:
	default:
		return refuse_ede(res, "an address allow-notify does not allow",
				  APEX_EDE_PROHIBITED, edns, out, out_capacity, name, qtype,
				  qclass);
	}
	n = answer(out, name, qtype, qclass, 0);
	if (key != NULL && apex_tsig_sign(out, &n, out_capacity, key, &t.mac, now, NULL) < 0)
		return refuse(res, RCODE_NOTAUTH, "the answer cannot be signed", out, name, qtype,
			      qclass);
	res->accepted = true;
	res->ctx_zone = ctx_zone;
	res->has_serial =
		qtype == APEX_TYPE_SOA && soa_hint(msg, size, pos + 4, name, &res->serial);
	return n;
}
