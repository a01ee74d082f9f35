/* SPDX-License-Identifier: BSD-3-Clause */
/* One record as a zone file line, for the common types (record_text.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/record_text.h"

#include <arpa/inet.h>
#include <ldns/ldns.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dns/nsec3hash.h"
#include "dns/rrtype.h"
#include "dns/wire.h"

/* Where the text goes; pos never passes the end (the sizes are checked
 * by the caller's bound, APEX_RECORD_TEXT_MAX). */
typedef struct out {
	char *buf;
	size_t pos;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
	memcpy(o->buf + o->pos, s, n);
	o->pos += n;
}

static void puts_(out_t *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_uint(out_t *o, unsigned long v)
{
	o->pos += (size_t)sprintf(o->buf + o->pos, "%lu", v);
}

static void put_name(out_t *o, const uint8_t *name)
{
	char text[4 * APEX_NAME_MAX + 2];

	puts_(o, apex_name_to_str(name, text, sizeof(text)));
}

static void put_type(out_t *o, uint16_t type)
{
	const ldns_rr_descriptor *d = ldns_rr_descript(type);

	if (d != NULL && d->_name != NULL && d->_type == type)
		puts_(o, d->_name);
	else
		o->pos += (size_t)sprintf(o->buf + o->pos, "TYPE%u", type);
}

static void put_hex(out_t *o, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		o->buf[o->pos++] = digits[p[i] >> 4];
		o->buf[o->pos++] = digits[p[i] & 15];
	}
}

static void put_base64(out_t *o, const uint8_t *p, size_t n)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		char quad[4] = { alphabet[v >> 18], alphabet[(v >> 12) & 63],
				 alphabet[(v >> 6) & 63], alphabet[v & 63] };
		put(o, quad, 4);
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
		char quad[4] = { alphabet[v >> 18], alphabet[(v >> 12) & 63],
				 i + 1 < n ? alphabet[(v >> 6) & 63] : '=', '=' };
		put(o, quad, 4);
	}
}

/* An RRSIG time: YYYYMMDDHHmmSS (RFC 4034 section 3.2). */
static void put_time(out_t *o, uint32_t t)
{
	time_t v = (time_t)t;
	struct tm tm;

	gmtime_r(&v, &tm);
	o->pos += (size_t)sprintf(o->buf + o->pos, "%04d%02d%02d%02d%02d%02d", tm.tm_year + 1900,
				  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* The type bitmap of NSEC and NSEC3 (RFC 4034 section 4.1.2). */
static bool put_bitmap(out_t *o, const uint8_t *p, const uint8_t *end)
{
	int last_window = -1;

	while (p < end) {
		if (end - p < 2 || p[1] == 0 || p[1] > 32 || end - p < 2 + p[1] ||
		    (int)p[0] <= last_window)
			return false;
		last_window = p[0];
		for (unsigned i = 0; i < (unsigned)p[1] * 8; i++) {
			if (o->pos + 32 > APEX_RECORD_TEXT_MAX)
				return false; /* thousands of types: the caller's */
			if (p[2 + i / 8] & (0x80 >> (i % 8))) {
				puts_(o, " ");
				put_type(o, (uint16_t)(p[0] * 256 + i));
			}
		}
		p += 2 + p[1];
	}
	return true;
}

static bool rdata_name(out_t *o, const uint8_t *p, const uint8_t *end, bool last)
{
	size_t n = apex_name_checked_size(p, end);

	if (n == 0 || (last && p + n != end))
		return false;
	put_name(o, p);
	return true;
}

static bool rrsig(out_t *o, const uint8_t *p, const uint8_t *end)
{
	if (end - p < 18)
		return false;
	size_t signer = apex_name_checked_size(p + 18, end);
	if (signer == 0 || p + 18 + signer >= end)
		return false;
	put_type(o, apex_read_u16(p));
	o->pos += (size_t)sprintf(o->buf + o->pos, " %u %u %u ", p[2], p[3], apex_read_u32(p + 4));
	put_time(o, apex_read_u32(p + 8));
	puts_(o, " ");
	put_time(o, apex_read_u32(p + 12));
	o->pos += (size_t)sprintf(o->buf + o->pos, " %u ", apex_read_u16(p + 16));
	put_name(o, p + 18);
	puts_(o, " ");
	put_base64(o, p + 18 + signer, (size_t)(end - p) - 18 - signer);
	return true;
}

static bool nsec3(out_t *o, const uint8_t *p, const uint8_t *end)
{
	char hash[256 * 8 / 5 + 2];

	if (end - p < 5 || end - p < 5 + p[4] + 1)
		return false;
	const uint8_t *salt = p + 5, *next = salt + p[4];
	if (end - next < 1 + next[0] || next[0] == 0)
		return false;
	o->pos += (size_t)sprintf(o->buf + o->pos, "%u %u %u ", p[0], p[1], apex_read_u16(p + 2));
	if (p[4] == 0)
		puts_(o, "-");
	else
		put_hex(o, salt, p[4]);
	puts_(o, " ");
	put(o, hash, apex_base32hex_encode(next + 1, next[0], hash));
	return put_bitmap(o, next + 1 + next[0], end);
}

static bool rdata(out_t *o, const apex_rr_t *rr)
{
	const uint8_t *p = rr->rdata, *end = p + rr->rdlength;
	char text[INET6_ADDRSTRLEN];

	switch (rr->type) {
	case APEX_TYPE_A:
		if (rr->rdlength != 4)
			return false;
		puts_(o, inet_ntop(AF_INET, p, text, sizeof(text)));
		return true;
	case APEX_TYPE_AAAA:
		if (rr->rdlength != 16)
			return false;
		puts_(o, inet_ntop(AF_INET6, p, text, sizeof(text)));
		return true;
	case APEX_TYPE_NS:
	case APEX_TYPE_CNAME:
	case APEX_TYPE_DNAME:
	case APEX_TYPE_PTR: return rdata_name(o, p, end, true);
	case APEX_TYPE_DS:
		if (rr->rdlength < 5)
			return false;
		o->pos +=
			(size_t)sprintf(o->buf + o->pos, "%u %u %u ", apex_read_u16(p), p[2], p[3]);
		put_hex(o, p + 4, rr->rdlength - 4u);
		return true;
	case APEX_TYPE_RRSIG: return rrsig(o, p, end);
	case APEX_TYPE_NSEC: {
		size_t n = apex_name_checked_size(p, end);
		if (n == 0)
			return false;
		put_name(o, p);
		return put_bitmap(o, p + n, end);
	}
	case APEX_TYPE_NSEC3: return nsec3(o, p, end);
	default: return false;
	}
}

size_t apex_record_text(const apex_rr_t *rr, char *buf)
{
	out_t o = { buf, 0 };

	if (rr->rclass != APEX_CLASS_IN)
		return 0;
	put_name(&o, rr->owner);
	puts_(&o, "\t");
	put_uint(&o, rr->ttl);
	puts_(&o, "\tIN\t");
	put_type(&o, rr->type);
	puts_(&o, "\t");
	if (!rdata(&o, rr))
		return 0;
	puts_(&o, "\n");
	return o.pos;
}
