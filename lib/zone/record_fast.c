/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fast path of the zone file parser: "[owner] [TTL] [IN] TYPE RDATA"
 * for the types that make up large zones (rdata_text.c), without ldns
 * (zone_file_reader.h).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ldns/ldns.h>

#include "dns/rrtype.h"
#include "util/error.h"
#include "zone/rdata_text.h"
#include "zone/zone_file_reader.h"

/* Where the one embedded name of a fast-path type starts in its RDATA
 * (the canonical form lowercases it), or -1 for none. */
static int fast_name_offset(uint16_t type)
{
	switch (type) {
	/* clang-format off: the case labels of one group share a line */
	case APEX_TYPE_NS:
	case APEX_TYPE_CNAME:
	case APEX_TYPE_DNAME:
	case APEX_TYPE_PTR: return 0;
	case APEX_TYPE_MX: return 2;
	case APEX_TYPE_SRV: return 6;
	case APEX_TYPE_RRSIG: return 18;
	default:
		return -1;
		/* clang-format on */
	}
}

int apex_record_parse_fast(apex_reader_t *r, int line)
{
	const char *p = r->rec;
	uint8_t owner[APEX_NAME_MAX];
	const char *tok;
	size_t len;

	if (*p == ' ' || *p == '\t') {
		if (!r->have_prev)
			return APEX_EINVAL;
		memcpy(owner, r->prev, apex_name_size(r->prev));
	} else {
		tok = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		if (apex_name_from_text(tok, (size_t)(p - tok), r->origin, owner) <= 0)
			return APEX_EINVAL;
	}
	uint32_t ttl = r->sink->default_ttl;
	int type = -1;
	bool have_ttl = false, have_class = false;
	while (type < 0) {
		while (*p == ' ' || *p == '\t')
			p++;
		tok = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		len = (size_t)(p - tok);
		if (len == 0)
			return APEX_EINVAL;
		if (tok[0] >= '0' && tok[0] <= '9') {
			/* TTL, only before the class (ldns's order) */
			if (have_ttl || have_class || len > 15)
				return APEX_EINVAL;
			char buf[16];
			const char *end;
			memcpy(buf, tok, len);
			buf[len] = '\0';
			ttl = ldns_str2period(buf, &end);
			if (*end != '\0' || ttl > INT32_MAX)
				return APEX_EINVAL;
			have_ttl = true;
		} else if (len == 2 && strncasecmp(tok, "IN", 2) == 0) {
			if (have_class)
				return APEX_EINVAL;
			have_class = true;
		} else {
			type = apex_rrtype_from_text(tok, len);
			if (type < 0 || !apex_rdata_text_supported((uint16_t)type))
				return APEX_EINVAL;
		}
	}
	uint8_t *rdata = r->sink->rdata;
	int rdlength = apex_rdata_from_text((uint16_t)type, p, r->origin, rdata);
	if (rdlength < 0)
		return APEX_EINVAL;
	/* The canonical form lowercases the one embedded name (the RRSIG's
	 * signer, the target of NS, MX, ...); a copy only when it differs. */
	const uint8_t *canonical = rdata;
	int at = fast_name_offset((uint16_t)type);
	if (at >= 0 && at < rdlength) {
		size_t name_size = apex_name_size(rdata + at);
		if (apex_has_upper(rdata + at, name_size)) {
			memcpy(r->sink->canonical, rdata, (size_t)rdlength);
			apex_name_lower(r->sink->canonical + at);
			canonical = r->sink->canonical;
		}
	}
	return apex_record_store(r, line, owner, (uint16_t)type, ttl, rdata, (size_t)rdlength,
				 canonical);
}
