/* SPDX-License-Identifier: BSD-3-Clause */
/* A parsed record's checks, then into the sink (zone_file_reader.h). */
#include <string.h>

#include "util/error.h"
#include "zone/load.h"
#include "zone/zone.h"
#include "zone/zone_file_reader.h"

int apex_record_store(apex_reader_t *r, int line, const uint8_t *owner, uint16_t type, uint32_t ttl,
		      const uint8_t *rdata, size_t rdlength, const uint8_t *canonical_in)
{
	const apex_zone_t *zone = r->ld->b->zone;
	char text[APEX_NAME_MAX * 4 + 1];

	if (ttl > INT32_MAX)
		return apex_reader_fail(r, line, "TTL %u out of range (RFC 2181 section 8)", ttl);
	if (!apex_name_is_subdomain(owner, zone->origin))
		return apex_reader_fail(
			r, line, "%s is outside the zone %s",
			apex_name_to_str(owner, text, sizeof(text)),
			apex_name_to_str(zone->origin, text + sizeof(text) / 2, sizeof(text) / 2));
	if (rdlength > 65535)
		return apex_reader_fail(r, line, "rdata longer than 65535 bytes");

	const apex_load_filter_t *f = r->ld->filter;
	int rc = f != NULL ? f->drop(f->ctx, owner, type, ttl, rdata, rdlength) : 0;

	if (rc < 0)
		return rc;
	rc = rc == 1 ? APEX_OK /* dropped */
		     : apex_sink_add_rr(r->sink, owner, type, ttl, rdata, rdlength, canonical_in,
					r->file_index, (uint32_t)line);
	if (rc == APEX_ESPACE)
		return apex_reader_fail(r, line, "too many records");
	if (rc != APEX_OK)
		return rc;
	memcpy(r->prev, owner, apex_name_size(owner));
	r->have_prev = true;
	return APEX_OK;
}

bool apex_type_has_canonical_names(uint16_t type)
{
	switch (type) {
	/* clang-format off: the case labels of one group share a line */
	case 2:
	case 3:
	case 4:
	case 5:
	case 6:
	case 7:
	case 8:
	case 9: /* NS..MR */
	case 12:
	case 14:
	case 15:
	case 17:
	case 18:
	case 21:
	case 24: /* PTR MINFO MX RP AFSDB RT SIG */
	case 26:
	case 30:
	case 33:
	case 35:
	case 36:
	case 38:
	case 39: /* PX NXT SRV NAPTR KX A6 DNAME */
	case 46: /* RRSIG */ return true;
	default:
		return false;
		/* clang-format on */
	}
}

bool apex_has_upper(const uint8_t *p, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (p[i] >= 'A' && p[i] <= 'Z')
			return true;
	return false;
}
