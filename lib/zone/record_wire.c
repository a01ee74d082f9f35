/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Records in wire form (a zone transfer's, or a served version's when an
 * IXFR is applied) of the types that make up large zones, checked and
 * stored without ldns (zone_file_reader.h).  The checks are the shape of
 * each type's RDATA, as ldns's description of the type checks it; what
 * they do not take (other types, empty trailing fields) goes to ldns.
 * The canonical form lowercases the embedded names of the types RFC 4034
 * section 6.2 lists, as record_ldns.c does.
 */
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "zone/zone_file_reader.h"

/* TXT: one or more character strings that fill the RDATA exactly. */
static bool strings_fill(const uint8_t *p, size_t size)
{
	size_t pos = 0;

	while (pos < size)
		pos += 1u + p[pos];
	return size > 0 && pos == size;
}

/* NSEC3: hash algorithm, flags, iterations, salt, next hashed owner (not
 * empty), then a type bitmap (not empty here). */
static bool nsec3_shape(const uint8_t *p, size_t size)
{
	if (size < 5 || size < 5u + p[4] + 1u)
		return false;
	size_t at = 5u + p[4];
	size_t hash = p[at];
	return hash > 0 && at + 1 + hash < size;
}

/*
 * Where the names of a type's RDATA are, if its shape is right: the
 * offset of the first (-1: none) and how many follow one another there
 * (SOA: two).  False for a type this file does not take or RDATA of the
 * wrong shape (ldns then reads it and says what is wrong).
 */
static bool shape(uint16_t type, const uint8_t *p, size_t size, int *name_at, int *names)
{
	const uint8_t *end = p + size;
	size_t n;

	*name_at = -1;
	*names = 0;
	switch (type) {
	case APEX_TYPE_A: return size == 4;
	case APEX_TYPE_AAAA: return size == 16;
	case APEX_TYPE_NS:
	case APEX_TYPE_CNAME:
	case APEX_TYPE_DNAME:
	case APEX_TYPE_PTR:
		*name_at = 0;
		*names = 1;
		return size > 0 && apex_name_checked_size(p, end) == size;
	case APEX_TYPE_MX:
		*name_at = 2;
		*names = 1;
		return size > 2 && 2 + apex_name_checked_size(p + 2, end) == size;
	case APEX_TYPE_SRV:
		*name_at = 6;
		*names = 1;
		return size > 6 && 6 + apex_name_checked_size(p + 6, end) == size;
	case APEX_TYPE_SOA: {
		size_t mname = apex_name_checked_size(p, end);
		size_t rname = mname > 0 ? apex_name_checked_size(p + mname, end) : 0;

		*name_at = 0;
		*names = 2;
		return rname > 0 && mname + rname + 20 == size;
	}
	case APEX_TYPE_RRSIG:
		*name_at = 18;
		*names = 1;
		n = size > 18 ? apex_name_checked_size(p + 18, end) : 0;
		return n > 0 && 18 + n < size; /* a signature follows */
	case APEX_TYPE_NSEC:
		/* the next owner is not lowercased (RFC 6840 section 5.1) */
		n = apex_name_checked_size(p, end);
		return n > 0 && n < size;
	case APEX_TYPE_DS: return size > 4;
	case APEX_TYPE_NSEC3: return nsec3_shape(p, size);
	case APEX_TYPE_TXT: return strings_fill(p, size);
	default: return false;
	}
}

int apex_record_store_wire(apex_reader_t *r, int line, const uint8_t *owner, uint16_t type,
			   uint32_t ttl, const uint8_t *rdata, size_t rdlength)
{
	int name_at, names;

	if (apex_name_checked_size(owner, owner + APEX_NAME_MAX) == 0 ||
	    !shape(type, rdata, rdlength, &name_at, &names))
		return APEX_EINVAL; /* ldns reads it, and says what is wrong */
	const uint8_t *canonical = rdata;
	if (name_at >= 0) {
		size_t at = (size_t)name_at, span = 0;

		for (int i = 0; i < names; i++)
			span += apex_name_size(rdata + at + span);
		if (apex_has_upper(rdata + at, span)) {
			uint8_t *lower = r->sink->canonical;

			memcpy(lower, rdata, rdlength);
			for (size_t n = 0; n < span; n += apex_name_size(lower + at + n))
				apex_name_lower(lower + at + n);
			canonical = lower;
		}
	}
	return apex_record_store(r, line, owner, type, ttl, rdata, rdlength, canonical);
}
