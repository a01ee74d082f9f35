/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Master-file text to wire RDATA for the common types (see rdata_text.h).
 *
 * Every function here is strict: it accepts only the plain, valid
 * presentation form of a field and returns APEX_EINVAL for anything
 * else, so that the loader hands the record to ldns, which decides.
 */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <string.h>
#include <strings.h>

#include <ldns/ldns.h>

#include "dns/name.h"
#include "dns/nsec3hash.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "util/hex.h"
#include "zone/rdata_text.h"

/* Bytes of RDATA written so far and the input being read. */
typedef struct field_reader {
	const char *p; /* next character of the text */
	uint8_t *out;  /* RDATA buffer (APEX_RDATA_MAX bytes) */
	size_t len;    /* bytes written */
} field_reader_t;

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Next blank-separated field: *tok and *tok_len; false at the end or
 * for a quoted field (quotes are not a plain form of these types). */
static bool next_field(field_reader_t *r, const char **tok, size_t *tok_len)
{
	const char *p = r->p;
	while (is_blank(*p))
		p++;
	if (*p == '\0' || *p == '"')
		return false;
	const char *start = p;
	while (*p != '\0' && !is_blank(*p))
		p++;
	*tok = start;
	*tok_len = (size_t)(p - start);
	r->p = p;
	return true;
}

static bool at_end(const field_reader_t *r)
{
	const char *p = r->p;
	while (is_blank(*p))
		p++;
	return *p == '\0';
}

static bool put(field_reader_t *r, const void *data, size_t size)
{
	if (r->len + size > APEX_RDATA_MAX)
		return false;
	memcpy(r->out + r->len, data, size);
	r->len += size;
	return true;
}

bool apex_rdata_parse_uint(const char *tok, size_t len, uint32_t max, uint32_t *value)
{
	uint64_t v = 0;

	if (len == 0)
		return false;
	/* v stays at most max (< 2^32) before each step: no overflow, and
	 * leading zeros take no room */
	for (size_t i = 0; i < len; i++) {
		if (tok[i] < '0' || tok[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(tok[i] - '0');
		if (v > max)
			return false;
	}
	*value = (uint32_t)v;
	return true;
}

static bool field_uint(field_reader_t *r, int bytes)
{
	const char *tok;
	size_t len;
	uint32_t v;
	uint32_t max = bytes == 1 ? 0xff : bytes == 2 ? 0xffff : 0xffffffffu;
	if (!next_field(r, &tok, &len) || !apex_rdata_parse_uint(tok, len, max, &v))
		return false;
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	return put(r, b + 4 - bytes, (size_t)bytes);
}

/* ------------------------------------------------------------ names */

int apex_name_from_text(const char *text, size_t len, const uint8_t *origin, uint8_t *out)
{
	if (len == 0)
		return APEX_EINVAL;
	if (len == 1 && text[0] == '@') {
		size_t size = apex_name_size(origin);
		memcpy(out, origin, size);
		return (int)size;
	}
	if (len == 1 && text[0] == '.') {
		out[0] = 0;
		return 1;
	}
	size_t pos = 0; /* where the current label's length byte is */
	size_t label = 0;
	bool absolute = false;
	for (size_t i = 0; i < len; i++) {
		unsigned c = (unsigned char)text[i];
		if (c == '.') {
			if (label == 0)
				return APEX_EINVAL; /* empty label */
			out[pos] = (uint8_t)label;
			pos += 1 + label;
			label = 0;
			if (i + 1 == len)
				absolute = true;
			continue;
		}
		if (c == '\\') {
			if (i + 1 >= len)
				return APEX_EINVAL;
			c = (unsigned char)text[++i];
			if (c >= '0' && c <= '9') {
				if (i + 2 >= len || text[i + 1] < '0' || text[i + 1] > '9' ||
				    text[i + 2] < '0' || text[i + 2] > '9')
					return APEX_EINVAL;
				c = (c - '0') * 100 + (unsigned)(text[i + 1] - '0') * 10 +
				    (unsigned)(text[i + 2] - '0');
				i += 2;
				if (c > 255)
					return APEX_EINVAL;
			}
		} else if (c <= ' ' || c >= 0x7f || c == '"' || c == '(' || c == ')' || c == ';') {
			return APEX_EINVAL; /* leave anything unusual to ldns */
		}
		if (label == APEX_LABEL_MAX || pos + 1 + label + 1 >= APEX_NAME_MAX)
			return APEX_EINVAL;
		out[pos + 1 + label] = (uint8_t)c;
		label++;
	}
	if (!absolute) {
		out[pos] = (uint8_t)label;
		pos += 1 + label;
		size_t origin_size = apex_name_size(origin);
		if (pos + origin_size > APEX_NAME_MAX)
			return APEX_EINVAL;
		memcpy(out + pos, origin, origin_size);
		return (int)(pos + origin_size);
	}
	out[pos] = 0;
	return (int)(pos + 1);
}

static bool field_name(field_reader_t *r, const uint8_t *origin)
{
	const char *tok;
	size_t len;
	uint8_t name[APEX_NAME_MAX];
	if (!next_field(r, &tok, &len))
		return false;
	int size = apex_name_from_text(tok, len, origin, name);
	return size > 0 && put(r, name, (size_t)size);
}

/* ------------------------------------------------------------ types */

/* The mnemonics of large zones, tried before ldns's table. */
static const struct {
	const char *name;
	uint16_t type;
} common_types[] = {
	{ "NS", APEX_TYPE_NS },
	{ "A", APEX_TYPE_A },
	{ "AAAA", APEX_TYPE_AAAA },
	{ "RRSIG", APEX_TYPE_RRSIG },
	{ "DS", APEX_TYPE_DS },
	{ "NSEC", APEX_TYPE_NSEC },
	{ "NSEC3", APEX_TYPE_NSEC3 },
	{ "CNAME", APEX_TYPE_CNAME },
	{ "MX", APEX_TYPE_MX },
	{ "TXT", APEX_TYPE_TXT },
	{ "SOA", APEX_TYPE_SOA },
	{ "DNSKEY", APEX_TYPE_DNSKEY },
	{ "PTR", APEX_TYPE_PTR },
	{ "SRV", APEX_TYPE_SRV },
	{ "DNAME", APEX_TYPE_DNAME },
	{ "NSEC3PARAM", APEX_TYPE_NSEC3PARAM },
	/* not in ldns 1.8.3's table */
	{ "AMTRELAY", APEX_TYPE_AMTRELAY },
};

int apex_rrtype_from_text(const char *text, size_t len)
{
	for (size_t i = 0; i < sizeof(common_types) / sizeof(common_types[0]); i++)
		if (strlen(common_types[i].name) == len &&
		    strncasecmp(common_types[i].name, text, len) == 0)
			return common_types[i].type;
	/* RFC 3597 section 5: TYPE and a decimal number of 16 bits, read
	 * here: ldns reads the number with atoi() and returns any int,
	 * 101000000 for TYPE0101000000, which is no type. */
	if (len > 4 && strncasecmp(text, "TYPE", 4) == 0) {
		unsigned long value = 0;
		for (size_t i = 4; i < len; i++) {
			if (text[i] < '0' || text[i] > '9')
				return -1;
			value = value * 10 + (unsigned long)(text[i] - '0');
			if (value > UINT16_MAX)
				return -1;
		}
		return (int)value;
	}
	char buf[32];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, text, len);
	buf[len] = '\0';
	ldns_rr_type type = ldns_get_rr_type_by_name(buf);
	return type == 0 ? -1 : (int)type; /* a mnemonic: TYPEnnn is read above */
}

bool apex_rdata_text_supported(uint16_t type)
{
	switch (type) {
	/* clang-format off: the case labels of one group share a line */
	case APEX_TYPE_A:
	case APEX_TYPE_AAAA:
	case APEX_TYPE_NS:
	case APEX_TYPE_CNAME:
	case APEX_TYPE_DNAME:
	case APEX_TYPE_PTR:
	case APEX_TYPE_MX:
	case APEX_TYPE_SRV:
	case APEX_TYPE_DS:
	case APEX_TYPE_DNSKEY:
	case APEX_TYPE_RRSIG:
	case APEX_TYPE_NSEC:
	case APEX_TYPE_NSEC3:
	case APEX_TYPE_IPSECKEY:
	case APEX_TYPE_AMTRELAY: return true;
	default:
		return false;
		/* clang-format on */
	}
}

/* The rest of the text: a type bitmap (RFC 4034 section 4.1.2). */
static bool field_type_bitmap(field_reader_t *r)
{
	uint8_t windows[256][32];
	uint8_t window_len[256];
	memset(window_len, 0, sizeof(window_len));
	const char *tok;
	size_t len;
	bool any = false;
	memset(windows[0], 0, sizeof(windows[0]));
	while (next_field(r, &tok, &len)) {
		int type = apex_rrtype_from_text(tok, len);
		if (type <= 0)
			return false;
		unsigned w = (unsigned)type >> 8, bit = (unsigned)type & 0xff;
		unsigned byte = bit >> 3;
		if (window_len[w] == 0)
			memset(windows[w], 0, sizeof(windows[w]));
		if (window_len[w] < byte + 1)
			window_len[w] = (uint8_t)(byte + 1);
		windows[w][byte] |= (uint8_t)(0x80 >> (bit & 7));
		any = true;
	}
	if (!at_end(r))
		return false; /* a quoted field */
	if (!any)
		return true; /* no types (an NSEC3 of an empty non-terminal): no bitmap */
	for (unsigned w = 0; w < 256; w++) {
		if (window_len[w] == 0)
			continue;
		uint8_t head[2] = { (uint8_t)w, window_len[w] };
		if (!put(r, head, 2) || !put(r, windows[w], window_len[w]))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------ encodings */

/* The remaining fields as one hex string (DS digest). */
static bool rest_hex(field_reader_t *r)
{
	const char *tok;
	size_t len;
	int high = -1;
	bool any = false;
	while (next_field(r, &tok, &len)) {
		for (size_t i = 0; i < len; i++) {
			int v = apex_hex_digit(tok[i]);
			if (v < 0)
				return false;
			if (high < 0) {
				high = v;
			} else {
				uint8_t b = (uint8_t)(high << 4 | v);
				if (!put(r, &b, 1))
					return false;
				high = -1;
			}
		}
		any = true;
	}
	return any && high < 0 && at_end(r);
}

/* 1 + the value of each base64 character (RFC 4648 section 4); 0 for
 * every other byte. */
static const uint8_t b64_digits[256] = {
	['A'] = 1,  ['B'] = 2,  ['C'] = 3,  ['D'] = 4,  ['E'] = 5,  ['F'] = 6,  ['G'] = 7,
	['H'] = 8,  ['I'] = 9,  ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14,
	['O'] = 15, ['P'] = 16, ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21,
	['V'] = 22, ['W'] = 23, ['X'] = 24, ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28,
	['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32, ['g'] = 33, ['h'] = 34, ['i'] = 35,
	['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42,
	['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48, ['w'] = 49,
	['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
	['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63,
	['/'] = 64,
};

static int b64_value(char c)
{
	return (int)b64_digits[(uint8_t)c] - 1;
}

/* The remaining fields as one base64 string (RFC 4648 section 4):
 * whole quanta of 4, '=' only as padding at the end, no stray bits. */
static bool rest_base64(field_reader_t *r)
{
	const char *tok;
	size_t len;
	uint32_t acc = 0;
	unsigned n = 0; /* characters in the current quantum */
	unsigned pad = 0;
	bool any = false;
	while (next_field(r, &tok, &len)) {
		for (size_t i = 0; i < len; i++) {
			/* Whole quanta of four digits, the bulk of the text. */
			while (n == 0 && pad == 0 && i + 4 <= len) {
				const uint8_t *q = (const uint8_t *)tok + i;
				uint32_t d0 = b64_digits[q[0]], d1 = b64_digits[q[1]],
					 d2 = b64_digits[q[2]], d3 = b64_digits[q[3]];
				if (d0 == 0 || d1 == 0 || d2 == 0 || d3 == 0)
					break; /* '=' or a bad character: one by one below */
				uint32_t v =
					(d0 - 1) << 18 | (d1 - 1) << 12 | (d2 - 1) << 6 | (d3 - 1);
				uint8_t b[3] = { (uint8_t)(v >> 16), (uint8_t)(v >> 8),
						 (uint8_t)v };
				if (!put(r, b, 3))
					return false;
				i += 4;
			}
			if (i == len)
				break;
			if (tok[i] == '=') {
				if (n < 2 || pad + n >= 4)
					return false;
				pad++;
				continue;
			}
			int v = b64_value(tok[i]);
			if (v < 0 || pad > 0)
				return false;
			acc = acc << 6 | (uint32_t)v;
			if (++n == 4) {
				uint8_t b[3] = { (uint8_t)(acc >> 16), (uint8_t)(acc >> 8),
						 (uint8_t)acc };
				if (!put(r, b, 3))
					return false;
				acc = 0;
				n = 0;
			}
		}
		any = true;
	}
	if (!any || !at_end(r))
		return false;
	if (n == 0)
		return pad == 0;
	if (n + pad != 4)
		return false;
	if (n == 2) {
		uint8_t b = (uint8_t)(acc >> 4);
		return (acc & 0xf) == 0 && put(r, &b, 1);
	}
	uint8_t b[2] = { (uint8_t)(acc >> 10), (uint8_t)(acc >> 2) };
	return (acc & 0x3) == 0 && put(r, b, 2);
}

/* One field in base32hex without padding (RFC 4648 section 7, RFC 5155
 * section 3.3), written with its length byte: no stray bits. */
static bool field_base32hex(field_reader_t *r)
{
	const char *tok;
	size_t len;
	if (!next_field(r, &tok, &len) || len == 0 || len > 408)
		return false;
	uint8_t buf[255];
	int size = apex_base32hex_decode(tok, len, buf, sizeof(buf));
	if (size <= 0)
		return false;
	uint8_t length = (uint8_t)size;
	return put(r, &length, 1) && put(r, buf, (size_t)size);
}

/* NSEC3 salt: "-" (empty) or hex, with its length byte. */
static bool field_salt(field_reader_t *r)
{
	const char *tok;
	size_t len;
	if (!next_field(r, &tok, &len))
		return false;
	if (len == 1 && tok[0] == '-') {
		uint8_t zero = 0;
		return put(r, &zero, 1);
	}
	if (len % 2 != 0 || len / 2 > 255)
		return false;
	uint8_t buf[256];
	buf[0] = (uint8_t)(len / 2);
	for (size_t i = 0; i < len; i += 2) {
		int hi = apex_hex_digit(tok[i]), lo = apex_hex_digit(tok[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		buf[1 + i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return put(r, buf, 1 + len / 2);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* RRSIG expiration and inception (RFC 4034 section 3.2): YYYYMMDDHHmmSS
 * in UTC, taken modulo 2^32, or a plain number of seconds. */
static bool field_time(field_reader_t *r)
{
	const char *tok;
	size_t len;
	uint32_t v;
	if (!next_field(r, &tok, &len))
		return false;
	if (len == 14) {
		unsigned d[14];
		for (size_t i = 0; i < 14; i++) {
			if (tok[i] < '0' || tok[i] > '9')
				return false;
			d[i] = (unsigned)(tok[i] - '0');
		}
		unsigned year = d[0] * 1000 + d[1] * 100 + d[2] * 10 + d[3];
		unsigned mon = d[4] * 10 + d[5], day = d[6] * 10 + d[7];
		unsigned hour = d[8] * 10 + d[9], min = d[10] * 10 + d[11],
			 sec = d[12] * 10 + d[13];
		static const unsigned mdays[12] = {
			31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
		};
		if (year < 1970 || mon < 1 || mon > 12 || day < 1 || day > mdays[mon - 1] ||
		    hour > 23 || min > 59 || sec > 59)
			return false;
		bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
		if (mon == 2 && day == 29 && !leap)
			return false;
		int64_t t = days_from_civil(year, mon, day) * 86400 + hour * 3600 + min * 60 + sec;
		v = (uint32_t)t;
	} else if (!apex_rdata_parse_uint(tok, len, 0xffffffffu, &v)) {
		return false;
	}
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	return put(r, b, 4);
}

static bool field_address(field_reader_t *r, int family)
{
	const char *tok;
	size_t len;
	char buf[64];
	uint8_t addr[16];
	if (!next_field(r, &tok, &len) || len >= sizeof(buf))
		return false;
	memcpy(buf, tok, len);
	buf[len] = '\0';
	if (inet_pton(family, buf, addr) != 1)
		return false;
	return put(r, addr, family == AF_INET ? 4 : 16);
}

/* RRSIG type covered: a mnemonic or TYPEnnn. */
static bool field_type(field_reader_t *r)
{
	const char *tok;
	size_t len;
	if (!next_field(r, &tok, &len))
		return false;
	int type = apex_rrtype_from_text(tok, len);
	if (type <= 0)
		return false;
	uint8_t b[2] = { (uint8_t)(type >> 8), (uint8_t)type };
	return put(r, b, 2);
}

/* The gateway of an IPSECKEY (RFC 4025 section 3.1) or the relay of an
 * AMTRELAY (RFC 8777 section 4.3) of the given type: "." for none, an
 * IPv4 or IPv6 address, or a domain name (never compressed, case kept). */
static bool field_gateway(field_reader_t *r, uint8_t type, const uint8_t *origin)
{
	const char *tok;
	size_t len;
	switch (type) {
	case 0: return next_field(r, &tok, &len) && len == 1 && tok[0] == '.';
	case 1: return field_address(r, AF_INET);
	case 2: return field_address(r, AF_INET6);
	case 3: return field_name(r, origin);
	default: return false; /* reserved */
	}
}

/* IPSECKEY: precedence, gateway type, algorithm, gateway, and a public
 * key in base64 that may be split by blanks or absent (RFC 4025
 * section 3.1).  ldns 1.8.3 refuses a split key and, with more fields
 * than five, leaks its copies of them; this parser is the only one. */
static bool rdata_ipseckey(field_reader_t *r, const uint8_t *origin)
{
	if (!field_uint(r, 1) || !field_uint(r, 1) || !field_uint(r, 1))
		return false;
	uint8_t gateway_type = r->out[1];
	if (!field_gateway(r, gateway_type, origin))
		return false;
	return at_end(r) || rest_base64(r);
}

/* AMTRELAY: precedence, discovery-optional bit, relay type, relay
 * (RFC 8777 section 4.3); wire: precedence, D << 7 | type, relay. */
static bool rdata_amtrelay(field_reader_t *r, const uint8_t *origin)
{
	const char *tok;
	size_t len;
	uint32_t d, type;
	if (!field_uint(r, 1) || !next_field(r, &tok, &len) ||
	    !apex_rdata_parse_uint(tok, len, 1, &d) || !next_field(r, &tok, &len) ||
	    !apex_rdata_parse_uint(tok, len, 0x7f, &type))
		return false;
	uint8_t b = (uint8_t)(d << 7 | type);
	return put(r, &b, 1) && field_gateway(r, (uint8_t)type, origin);
}

/* ------------------------------------------------------------ records */

int apex_rdata_from_text(uint16_t type, const char *text, const uint8_t *origin, uint8_t *out)
{
	field_reader_t r = { .p = text, .out = out, .len = 0 };
	const char *tok;
	size_t len;
	/* RFC 3597 "\#" and anything quoted are ldns's. */
	field_reader_t peek = r;
	if (!next_field(&peek, &tok, &len) || (len == 2 && tok[0] == '\\' && tok[1] == '#'))
		return APEX_EINVAL;

	bool ok;
	switch (type) {
	case APEX_TYPE_A: ok = field_address(&r, AF_INET); break;
	case APEX_TYPE_AAAA: ok = field_address(&r, AF_INET6); break;
	case APEX_TYPE_NS:
	case APEX_TYPE_CNAME:
	case APEX_TYPE_DNAME:
	case APEX_TYPE_PTR: ok = field_name(&r, origin); break;
	case APEX_TYPE_MX: ok = field_uint(&r, 2) && field_name(&r, origin); break;
	case APEX_TYPE_SRV:
		ok = field_uint(&r, 2) && field_uint(&r, 2) && field_uint(&r, 2) &&
		     field_name(&r, origin);
		break;
	case APEX_TYPE_DS:
		/* key tag, algorithm, digest type, digest (RFC 4034 section 5.3) */
		ok = field_uint(&r, 2) && field_uint(&r, 1) && field_uint(&r, 1) && rest_hex(&r);
		break;
	case APEX_TYPE_DNSKEY:
		/* flags, protocol, algorithm, public key (RFC 4034 section 2.2) */
		ok = field_uint(&r, 2) && field_uint(&r, 1) && field_uint(&r, 1) && rest_base64(&r);
		break;
	case APEX_TYPE_RRSIG:
		/* type covered, algorithm, labels, original TTL, expiration,
		 * inception, key tag, signer, signature (RFC 4034 section 3.2) */
		ok = field_type(&r) && field_uint(&r, 1) && field_uint(&r, 1) &&
		     field_uint(&r, 4) && field_time(&r) && field_time(&r) && field_uint(&r, 2) &&
		     field_name(&r, origin) && rest_base64(&r);
		break;
	case APEX_TYPE_NSEC: ok = field_name(&r, origin) && field_type_bitmap(&r); break;
	case APEX_TYPE_NSEC3:
		/* algorithm, flags, iterations, salt, next hashed owner, types
		 * (RFC 5155 section 3.3) */
		ok = field_uint(&r, 1) && field_uint(&r, 1) && field_uint(&r, 2) &&
		     field_salt(&r) && field_base32hex(&r) && field_type_bitmap(&r);
		break;
	case APEX_TYPE_IPSECKEY: ok = rdata_ipseckey(&r, origin); break;
	case APEX_TYPE_AMTRELAY: ok = rdata_amtrelay(&r, origin); break;
	default: return APEX_EINVAL;
	}
	if (!ok || !at_end(&r))
		return APEX_EINVAL;
	return (int)r.len;
}
