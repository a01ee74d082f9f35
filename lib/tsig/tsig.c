/* SPDX-License-Identifier: BSD-3-Clause */
/* TSIG signing and checking (see tsig.h). */
#include "tsig/tsig.h"

#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "dns/wire.h"
#include "util/error.h"

#define TYPE_TSIG 250
#define CLASS_ANY 255

static const struct {
	const char *conf;    /* as NSD and Knot DNS write it */
	const uint8_t *wire; /* the algorithm's name in the RR */
	const char *digest;  /* OpenSSL's name */
	size_t mac_size;
} algs[] = {
	[APEX_TSIG_HMAC_MD5] = { "hmac-md5",
				 (const uint8_t *)"\010hmac-md5\007sig-alg\003reg\003int", "MD5",
				 16 },
	[APEX_TSIG_HMAC_SHA1] = { "hmac-sha1", (const uint8_t *)"\011hmac-sha1", "SHA1", 20 },
	[APEX_TSIG_HMAC_SHA224] = { "hmac-sha224", (const uint8_t *)"\013hmac-sha224", "SHA224",
				    28 },
	[APEX_TSIG_HMAC_SHA256] = { "hmac-sha256", (const uint8_t *)"\013hmac-sha256", "SHA256",
				    32 },
	[APEX_TSIG_HMAC_SHA384] = { "hmac-sha384", (const uint8_t *)"\013hmac-sha384", "SHA384",
				    48 },
	[APEX_TSIG_HMAC_SHA512] = { "hmac-sha512", (const uint8_t *)"\013hmac-sha512", "SHA512",
				    64 },
};
#define ALG_COUNT (sizeof(algs) / sizeof(algs[0]))

/* ------------------------------------------------------------ keys */

int apex_tsig_key_init(apex_tsig_key_t *key, const char *name, const char *alg,
		       const char *secret_base64, char *err, size_t err_size)
{
	size_t i, len = strlen(secret_base64);

	memset(key, 0, sizeof(*key));
	if (apex_name_from_str(name, key->name) <= 0) {
		snprintf(err, err_size, "key name '%s' is not a domain name", name);
		return APEX_EINVAL;
	}
	apex_name_lower(key->name);
	for (i = 0; i < ALG_COUNT; i++) {
		size_t n = strlen(algs[i].conf);
		if (strncmp(alg, algs[i].conf, n) == 0 &&
		    (alg[n] == '\0' || strcmp(alg + n, ".") == 0))
			break;
	}
	if (i == ALG_COUNT) {
		snprintf(err, err_size,
			 "unknown TSIG algorithm '%s' (hmac-md5, hmac-sha1, "
			 "hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512)",
			 alg);
		return APEX_EINVAL;
	}
	key->alg = (apex_tsig_alg_t)i;
	/* base64: 4 characters for 3 bytes, '=' padding to a multiple of 4 */
	if (len == 0 || len % 4 != 0 || len / 4 * 3 > sizeof(key->secret)) {
		snprintf(err, err_size, "the secret is not base64 of at most %d bytes",
			 APEX_TSIG_SECRET_MAX);
		return APEX_EINVAL;
	}
	int n = EVP_DecodeBlock(key->secret, (const unsigned char *)secret_base64, (int)len);
	if (n < 0) {
		snprintf(err, err_size, "the secret is not base64");
		return APEX_EINVAL;
	}
	size_t pad = (secret_base64[len - 1] == '=') + (secret_base64[len - 2] == '=');
	key->secret_size = (size_t)n - pad;
	return APEX_OK;
}

const apex_tsig_key_t *apex_tsig_keyring_find(const apex_tsig_keyring_t *ring, const uint8_t *name,
					      const uint8_t *alg_name)
{
	for (size_t i = 0; i < ring->count; i++) {
		const apex_tsig_key_t *k = &ring->keys[i];
		if (apex_name_equal(k->name, name) && apex_name_equal(algs[k->alg].wire, alg_name))
			return k;
	}
	return NULL;
}

/* ------------------------------------------------------------ the MAC */

/* One piece of what a MAC covers. */
typedef struct part {
	const uint8_t *data;
	size_t size;
} part_t;

/* A new HMAC computation with key (the caller frees it), or NULL. */
static EVP_MAC_CTX *hmac_open(const apex_tsig_key_t *key)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL; /* holds its own reference */
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						 (char *)algs[key->alg].digest, 0),
		OSSL_PARAM_construct_end(),
	};

	EVP_MAC_free(mac);
	if (ctx != NULL && EVP_MAC_init(ctx, key->secret, key->secret_size, params) != 1) {
		EVP_MAC_CTX_free(ctx);
		ctx = NULL;
	}
	return ctx;
}

static bool hmac_update(EVP_MAC_CTX *ctx, const part_t *parts, size_t count)
{
	bool ok = true;

	for (size_t i = 0; ok && i < count; i++)
		ok = parts[i].size == 0 || EVP_MAC_update(ctx, parts[i].data, parts[i].size) == 1;
	return ok;
}

/* The MAC over parts, continuing started (then freed) when it is not
 * NULL, else from the start. */
static int hmac(const apex_tsig_key_t *key, EVP_MAC_CTX *started, const part_t *parts, size_t count,
		apex_tsig_mac_t *out)
{
	EVP_MAC_CTX *ctx = started != NULL ? started : hmac_open(key);
	bool ok = ctx != NULL && hmac_update(ctx, parts, count) &&
		  EVP_MAC_final(ctx, out->bytes, &out->size, sizeof(out->bytes)) == 1;

	EVP_MAC_CTX_free(ctx);
	return ok ? APEX_OK : APEX_ENOMEM;
}

/* The prior MAC as a MAC covers it: its size, then its bytes. */
static size_t prior_parts(const apex_tsig_mac_t *prior, uint8_t size_buf[2], part_t *parts)
{
	apex_write_u16(size_buf, (uint16_t)prior->size);
	parts[0] = (part_t){ size_buf, 2 };
	parts[1] = (part_t){ prior->bytes, prior->size };
	return 2;
}

/* The TSIG variables a MAC covers (RFC 8945 section 4.3.3): all of them,
 * or for the later messages of a stream the timers only.  Returns their
 * size in buf (room for 2 names and 16 bytes). */
static size_t variables(uint8_t *buf, const uint8_t *key_name, const uint8_t *alg_name,
			uint64_t time_signed, uint16_t fudge, uint16_t error, uint16_t other_size,
			bool timers_only)
{
	size_t n = 0;
	if (!timers_only) {
		n = apex_name_size(key_name);
		memcpy(buf, key_name, n);
		apex_name_lower(buf);
		apex_write_u16(buf + n, CLASS_ANY);
		apex_write_u32(buf + n + 2, 0); /* TTL */
		n += 6;
		size_t a = apex_name_size(alg_name);
		memcpy(buf + n, alg_name, a);
		apex_name_lower(buf + n);
		n += a;
	}
	apex_write_u16(buf + n, (uint16_t)(time_signed >> 32));
	apex_write_u32(buf + n + 2, (uint32_t)time_signed);
	apex_write_u16(buf + n + 6, fudge);
	n += 8;
	if (!timers_only) {
		apex_write_u16(buf + n, error);
		apex_write_u16(buf + n + 2, other_size); /* the data follows (message_mac()) */
		n += 4;
	}
	return n;
}

/* The MAC of message msg[0..size) (its ID and ARCOUNT as they were when it
 * was signed) with the prior MAC, if any, in front, and the TSIG variables
 * with their other data after it.  started: a computation that already
 * covers the prior MAC and the unsigned messages of a stream since it
 * (consumed), or NULL. */
static int message_mac(const apex_tsig_key_t *key, EVP_MAC_CTX *started,
		       const apex_tsig_mac_t *prior, const uint8_t *header, const uint8_t *msg,
		       size_t size, const uint8_t *vars, size_t vars_size, const uint8_t *other,
		       size_t other_size, apex_tsig_mac_t *out)
{
	uint8_t prior_size[2];
	part_t parts[6];
	size_t n = 0;

	if (prior != NULL && started == NULL)
		n = prior_parts(prior, prior_size, parts);
	parts[n++] = (part_t){ header, APEX_HEADER_SIZE };
	parts[n++] = (part_t){ msg + APEX_HEADER_SIZE, size - APEX_HEADER_SIZE };
	parts[n++] = (part_t){ vars, vars_size };
	parts[n++] = (part_t){ other, other_size };
	return hmac(key, started, parts, n, out);
}

/* ------------------------------------------------------------ signing */

/* What a TSIG record carries besides its owner and algorithm. */
typedef struct record_fields {
	uint64_t time_signed;
	uint16_t error;
	const uint8_t *mac;
	size_t mac_size;
	const uint8_t *other;
	uint16_t other_size;
} record_fields_t;

/* Append the TSIG record to msg[0..*size) (room checked by the caller). */
static void append_record(uint8_t *msg, size_t *size, const uint8_t *key_name, const uint8_t *alg,
			  const record_fields_t *f)
{
	size_t key_size = apex_name_size(key_name), alg_size = apex_name_size(alg);
	uint8_t *p = msg + *size;

	memcpy(p, key_name, key_size);
	p += key_size;
	apex_write_u16(p, TYPE_TSIG);
	apex_write_u16(p + 2, CLASS_ANY);
	apex_write_u32(p + 4, 0);
	apex_write_u16(p + 8, (uint16_t)(alg_size + 16 + f->mac_size + f->other_size));
	p += 10;
	memcpy(p, alg, alg_size);
	p += alg_size;
	apex_write_u16(p, (uint16_t)(f->time_signed >> 32));
	apex_write_u32(p + 2, (uint32_t)f->time_signed);
	apex_write_u16(p + 6, APEX_TSIG_FUDGE);
	apex_write_u16(p + 8, (uint16_t)f->mac_size);
	if (f->mac_size > 0)
		memcpy(p + 10, f->mac, f->mac_size);
	p += 10 + f->mac_size;
	apex_write_u16(p, apex_read_u16(msg + APEX_HDR_ID)); /* original ID */
	apex_write_u16(p + 2, f->error);
	apex_write_u16(p + 4, f->other_size);
	if (f->other_size > 0)
		memcpy(p + 6, f->other, f->other_size);
	*size += key_size + 10 + alg_size + 16 + f->mac_size + f->other_size;
	apex_write_u16(msg + APEX_HDR_ARCOUNT,
		       (uint16_t)(apex_read_u16(msg + APEX_HDR_ARCOUNT) + 1));
}

/* Sign with key: f's time, error and other data; its MAC is computed here. */
static int sign_fields(uint8_t *msg, size_t *size, size_t capacity, const apex_tsig_key_t *key,
		       const apex_tsig_mac_t *prior, record_fields_t *f, bool timers_only,
		       apex_tsig_mac_t *mac_out)
{
	const uint8_t *alg = algs[key->alg].wire;
	size_t mac_size = algs[key->alg].mac_size;
	size_t rr_size = apex_name_size(key->name) + 10 + apex_name_size(alg) + 16 + mac_size +
			 f->other_size;
	uint8_t vars[2 * APEX_NAME_MAX + 16];
	apex_tsig_mac_t mac;

	if (*size < APEX_HEADER_SIZE || capacity < *size || capacity - *size < rr_size ||
	    apex_read_u16(msg + APEX_HDR_ARCOUNT) == UINT16_MAX)
		return APEX_ESPACE;
	size_t vars_size = variables(vars, key->name, alg, f->time_signed, APEX_TSIG_FUDGE,
				     f->error, f->other_size, timers_only);
	int rc = message_mac(key, NULL, prior, msg, msg, *size, vars, vars_size, f->other,
			     timers_only ? 0 : f->other_size, &mac);
	if (rc < 0)
		return rc;
	f->mac = mac.bytes;
	f->mac_size = mac_size;
	append_record(msg, size, key->name, alg, f);
	if (mac_out != NULL)
		*mac_out = mac;
	return APEX_OK;
}

static int sign(uint8_t *msg, size_t *size, size_t capacity, const apex_tsig_key_t *key,
		const apex_tsig_mac_t *prior, uint64_t time_signed, bool timers_only,
		apex_tsig_mac_t *mac_out)
{
	record_fields_t f = { .time_signed = time_signed, .error = APEX_TSIG_NOERROR };

	return sign_fields(msg, size, capacity, key, prior, &f, timers_only, mac_out);
}

int apex_tsig_error_record(uint8_t *msg, size_t *size, size_t capacity,
			   const apex_tsig_result_t *req, uint64_t now)
{
	uint8_t server_time[6];
	record_fields_t f = { .time_signed = now, .error = (uint16_t)req->error };

	if (req->error == APEX_TSIG_BADTIME && req->key != NULL) {
		/* signed, with the request's time and the server's in other data */
		apex_write_u16(server_time, (uint16_t)(now >> 32));
		apex_write_u32(server_time + 2, (uint32_t)now);
		f.time_signed = req->time_signed;
		f.other = server_time;
		f.other_size = sizeof(server_time);
		return sign_fields(msg, size, capacity, req->key, &req->mac, &f, false, NULL);
	}
	/* BADKEY, BADSIG, BADTRUNC: unsigned, an empty MAC */
	size_t rr_size = apex_name_size(req->key_name) + 10 + apex_name_size(req->alg_name) + 16;
	if (*size < APEX_HEADER_SIZE || capacity < *size || capacity - *size < rr_size ||
	    apex_read_u16(msg + APEX_HDR_ARCOUNT) == UINT16_MAX)
		return APEX_ESPACE;
	append_record(msg, size, req->key_name, req->alg_name, &f);
	return APEX_OK;
}

int apex_tsig_sign(uint8_t *msg, size_t *size, size_t capacity, const apex_tsig_key_t *key,
		   const apex_tsig_mac_t *prior, uint64_t time_signed, apex_tsig_mac_t *mac)
{
	return sign(msg, size, capacity, key, prior, time_signed, false, mac);
}

/* ------------------------------------------------------------ checking */

/* Where the TSIG record of a message is, and its fields. */
typedef struct tsig_rr {
	size_t start;                 /* offset of the record */
	uint8_t owner[APEX_NAME_MAX]; /* the key's name */
	uint8_t alg[APEX_NAME_MAX];
	uint64_t time_signed;
	uint16_t fudge, mac_size, original_id, error;
	const uint8_t *mac;
	const uint8_t *other;
	uint16_t other_size;
} tsig_rr_t;

/* An uncompressed name at rdata[*pos..end) into out; false if there is none. */
static bool rdata_name(const uint8_t *p, size_t end, size_t *pos, uint8_t *out)
{
	size_t start = *pos, n = 0;
	while (*pos < end) {
		uint8_t len = p[*pos];
		if (len > 63 || n + 1u + len > APEX_NAME_MAX || *pos + 1u + len > end)
			return false;
		n += 1u + len;
		*pos += 1u + len;
		if (len == 0) {
			memcpy(out, p + start, n);
			return true;
		}
	}
	return false;
}

/* The TSIG record's RDATA at msg[pos..pos+rdlength). */
static bool parse_rdata(const uint8_t *msg, size_t pos, size_t end, tsig_rr_t *t)
{
	if (!rdata_name(msg, end, &pos, t->alg) || end - pos < 10)
		return false;
	t->time_signed = (uint64_t)apex_read_u16(msg + pos) << 32 | apex_read_u32(msg + pos + 2);
	t->fudge = apex_read_u16(msg + pos + 6);
	t->mac_size = apex_read_u16(msg + pos + 8);
	pos += 10;
	if (end - pos < (size_t)t->mac_size + 6)
		return false;
	t->mac = msg + pos;
	pos += t->mac_size;
	t->original_id = apex_read_u16(msg + pos);
	t->error = apex_read_u16(msg + pos + 2);
	t->other_size = apex_read_u16(msg + pos + 4);
	t->other = msg + pos + 6;
	return end - pos - 6 == t->other_size;
}

/* A name at msg[*pos] read with apex_name_unpack(), refused if one of its
 * compression pointers points into the header: signing changes ARCOUNT,
 * which would change what such a name reads as (no name is ever there). */
static int body_name(const uint8_t *msg, size_t size, size_t *pos, uint8_t *out)
{
	size_t at = *pos;
	for (int hops = 0; hops < 64 && at < size;) {
		uint8_t len = msg[at];
		if ((len & 0xC0) == 0xC0) {
			if (at + 1 >= size)
				return APEX_EMALFORMED;
			size_t target = (size_t)(len & 0x3F) << 8 | msg[at + 1];
			if (target < APEX_HEADER_SIZE)
				return APEX_EMALFORMED;
			at = target;
			hops++;
		} else if (len == 0) {
			break;
		} else {
			at += 1u + len;
		}
	}
	return apex_name_unpack(msg, size, pos, out);
}

/* Walk the message to its last record: APEX_ENOENT when it is not a
 * TSIG record (or there is none), APEX_EMALFORMED when the message is cut
 * short or has bytes after its records, a TSIG record comes earlier, or
 * the TSIG record is malformed. */
static int find_tsig(const uint8_t *msg, size_t size, tsig_rr_t *t)
{
	if (size < APEX_HEADER_SIZE)
		return APEX_EMALFORMED;
	unsigned qd = apex_read_u16(msg + APEX_HDR_QDCOUNT);
	unsigned records = apex_read_u16(msg + APEX_HDR_ANCOUNT) +
			   apex_read_u16(msg + APEX_HDR_NSCOUNT) +
			   apex_read_u16(msg + APEX_HDR_ARCOUNT);
	size_t pos = APEX_HEADER_SIZE;
	uint8_t name[APEX_NAME_MAX];

	for (unsigned i = 0; i < qd; i++) {
		if (body_name(msg, size, &pos, name) < 0 || size - pos < 4)
			return APEX_EMALFORMED;
		pos += 4;
	}
	for (unsigned i = 0; i < records; i++) {
		size_t start = pos;
		if (body_name(msg, size, &pos, name) < 0 || size - pos < 10)
			return APEX_EMALFORMED;
		uint16_t type = apex_read_u16(msg + pos);
		size_t rdlength = apex_read_u16(msg + pos + 8);
		pos += 10;
		if (size - pos < rdlength)
			return APEX_EMALFORMED;
		if (type == TYPE_TSIG) {
			/* only as the last record (RFC 8945 section 5.1) */
			if (i + 1 != records || apex_read_u16(msg + APEX_HDR_ARCOUNT) == 0)
				return APEX_EMALFORMED;
			t->start = start;
			memcpy(t->owner, name, apex_name_size(name));
			if (!parse_rdata(msg, pos, pos + rdlength, t))
				return APEX_EMALFORMED;
			return pos + rdlength == size ? APEX_OK : APEX_EMALFORMED;
		}
		pos += rdlength;
	}
	/* bytes after the last record: not a message to trust */
	return pos == size ? APEX_ENOENT : APEX_EMALFORMED;
}

/* Take the TSIG record off the message. */
static void strip(uint8_t *msg, size_t *size, const tsig_rr_t *t)
{
	*size = t->start;
	apex_write_u16(msg + APEX_HDR_ARCOUNT,
		       (uint16_t)(apex_read_u16(msg + APEX_HDR_ARCOUNT) - 1));
}

/* Check the TSIG record msg ends with (see apex_tsig_verify()): with key
 * when it is given, else the ring's key it names.  started: as for
 * message_mac(), consumed unless the message has no TSIG record (then
 * APEX_ENOENT). */
static int check(uint8_t *msg, size_t *size, const apex_tsig_key_t *key,
		 const apex_tsig_keyring_t *ring, const apex_tsig_mac_t *prior, uint64_t now,
		 bool timers_only, EVP_MAC_CTX *started, apex_tsig_result_t *res)
{
	tsig_rr_t t;

	memset(res, 0, sizeof(*res));
	int rc = find_tsig(msg, *size, &t);
	if (rc == APEX_ENOENT)
		return rc;
	if (rc < 0) {
		EVP_MAC_CTX_free(started);
		res->error = APEX_TSIG_FORMERR;
		return APEX_OK;
	}
	res->time_signed = t.time_signed;
	res->fudge = t.fudge;
	res->original_id = t.original_id;
	memcpy(res->key_name, t.owner, apex_name_size(t.owner));
	memcpy(res->alg_name, t.alg, apex_name_size(t.alg));
	if (key != NULL &&
	    !(apex_name_equal(key->name, t.owner) && apex_name_equal(algs[key->alg].wire, t.alg)))
		key = NULL;
	else if (key == NULL && ring != NULL)
		key = apex_tsig_keyring_find(ring, t.owner, t.alg);
	res->key = key;
	strip(msg, size, &t);
	if (key == NULL) {
		EVP_MAC_CTX_free(started);
		res->error = APEX_TSIG_BADKEY;
		return APEX_OK;
	}
	/* RFC 8945 section 5.2.2.1: longer than the hash is malformed; shorter
	 * than the larger of 10 octets and half the hash is refused */
	size_t full = algs[key->alg].mac_size;
	if (t.mac_size > full) {
		EVP_MAC_CTX_free(started);
		res->error = APEX_TSIG_FORMERR;
		return APEX_OK;
	}
	/* the MAC covers the message as signed: its original ID, the TSIG
	 * record not counted */
	uint8_t header[APEX_HEADER_SIZE], vars[2 * APEX_NAME_MAX + 16];
	memcpy(header, msg, APEX_HEADER_SIZE);
	apex_write_u16(header + APEX_HDR_ID, t.original_id);
	size_t vars_size = variables(vars, t.owner, t.alg, t.time_signed, t.fudge, t.error,
				     t.other_size, timers_only);
	apex_tsig_mac_t mac;
	if ((rc = message_mac(key, started, prior, header, msg, *size, vars, vars_size, t.other,
			      timers_only ? 0 : t.other_size, &mac)) < 0)
		return rc;
	if (t.mac_size == 0 || CRYPTO_memcmp(mac.bytes, t.mac, t.mac_size) != 0)
		res->error = APEX_TSIG_BADSIG;
	else if (t.mac_size < (full / 2 > 10 ? full / 2 : 10))
		res->error = APEX_TSIG_BADTRUNC;
	else if ((now > t.time_signed ? now - t.time_signed : t.time_signed - now) > t.fudge)
		res->error = APEX_TSIG_BADTIME;
	else
		res->error = APEX_TSIG_NOERROR;
	memcpy(res->mac.bytes, t.mac, t.mac_size);
	res->mac.size = t.mac_size;
	return APEX_OK;
}

int apex_tsig_verify(uint8_t *msg, size_t *size, const apex_tsig_keyring_t *ring,
		     const apex_tsig_mac_t *prior, uint64_t now, apex_tsig_result_t *res)
{
	return check(msg, size, NULL, ring, prior, now, false, NULL, res);
}

/* ------------------------------------------------------------ streams */

void apex_tsig_stream_init(apex_tsig_stream_t *s, const apex_tsig_key_t *key,
			   const apex_tsig_mac_t *request_mac)
{
	memset(s, 0, sizeof(*s));
	s->key = key;
	s->prior = *request_mac;
}

int apex_tsig_stream_sign(apex_tsig_stream_t *s, uint8_t *msg, size_t *size, size_t capacity,
			  uint64_t time_signed)
{
	apex_tsig_mac_t mac;
	int rc = sign(msg, size, capacity, s->key, &s->prior, time_signed, s->messages > 0, &mac);
	if (rc == APEX_OK) {
		s->prior = mac;
		s->messages++;
	}
	return rc;
}

/* An unsigned message of the stream: into the MAC the next signed one
 * carries (RFC 8945 section 5.3.1), whole, as it came. */
static int stream_unsigned(apex_tsig_stream_t *s, const uint8_t *msg, size_t size,
			   apex_tsig_result_t *res)
{
	uint8_t prior_size[2];
	part_t parts[3];
	size_t n = 0;

	memset(res, 0, sizeof(*res));
	if (s->messages == 0 || s->unsigned_run >= APEX_TSIG_UNSIGNED_MAX)
		return APEX_ENOENT;
	if (s->pending == NULL) {
		if ((s->pending = hmac_open(s->key)) == NULL)
			return APEX_ENOMEM;
		n = prior_parts(&s->prior, prior_size, parts);
	}
	parts[n++] = (part_t){ msg, size };
	if (!hmac_update(s->pending, parts, n))
		return APEX_ENOMEM;
	s->unsigned_run++;
	s->messages++;
	res->key = s->key;
	res->error = APEX_TSIG_NOERROR;
	return APEX_OK;
}

int apex_tsig_stream_verify(apex_tsig_stream_t *s, uint8_t *msg, size_t *size, uint64_t now,
			    apex_tsig_result_t *res)
{
	int rc = check(msg, size, s->key, NULL, &s->prior, now, s->messages > 0, s->pending, res);

	if (rc == APEX_ENOENT)
		return stream_unsigned(s, msg, *size, res);
	s->pending = NULL; /* consumed by check() */
	s->unsigned_run = 0;
	if (rc == APEX_OK && res->error == APEX_TSIG_NOERROR) {
		s->prior = res->mac;
		s->messages++;
	}
	return rc;
}

bool apex_tsig_stream_complete(const apex_tsig_stream_t *s)
{
	return s->messages > 0 && s->unsigned_run == 0;
}

void apex_tsig_stream_clear(apex_tsig_stream_t *s)
{
	EVP_MAC_CTX_free(s->pending);
	s->pending = NULL;
}
