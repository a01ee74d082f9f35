/* SPDX-License-Identifier: BSD-3-Clause */
/* The canonical form of RDATA (canonical_rdata.h). */
#include "zonemd/canonical_rdata.h"

#include <string.h>

#include "dns/name.h"

/* Lowercase the names that follow one another at out[at..size), count of
 * them; stop at one that does not fit. */
static void lower_names(uint8_t *out, size_t size, size_t at, int count)
{
	for (int i = 0; i < count && at < size; i++) {
		size_t n = apex_name_checked_size(out + at, out + size);

		if (n == 0)
			return;
		apex_name_lower(out + at);
		at += n;
	}
}

/* NAPTR (RFC 3403): order, preference, three character-strings, then the
 * replacement name; where it begins, or size if it does not. */
static size_t naptr_name(const uint8_t *p, size_t size)
{
	size_t at = 4;

	for (int i = 0; i < 3 && at < size; i++)
		at += 1u + p[at];
	return at;
}

/* A6 (RFC 2874): prefix length, the address suffix, then the prefix name
 * if the prefix length is not 0; where it begins, or size. */
static size_t a6_name(const uint8_t *p, size_t size)
{
	if (size == 0 || p[0] == 0 || p[0] > 128)
		return size;
	return 1u + (128u - p[0] + 7u) / 8u;
}

void apex_canonical_rdata(uint16_t type, const uint8_t *rdata, size_t size, uint8_t *out)
{
	memcpy(out, rdata, size);
	switch (type) {
	case 2:  /* NS */
	case 3:  /* MD */
	case 4:  /* MF */
	case 5:  /* CNAME */
	case 7:  /* MB */
	case 8:  /* MG */
	case 9:  /* MR */
	case 12: /* PTR */
	case 30: /* NXT: the next name */
	case 39: /* DNAME */ lower_names(out, size, 0, 1); break;
	case 6:  /* SOA */
	case 14: /* MINFO */
	case 17: /* RP */ lower_names(out, size, 0, 2); break;
	case 15: /* MX */
	case 18: /* AFSDB */
	case 21: /* RT */
	case 36: /* KX */ lower_names(out, size, 2, 1); break;
	case 26: /* PX */ lower_names(out, size, 2, 2); break;
	case 33: /* SRV */ lower_names(out, size, 6, 1); break;
	case 24: /* SIG */
	case 46: /* RRSIG: the signer */ lower_names(out, size, 18, 1); break;
	case 35: /* NAPTR */ lower_names(out, size, naptr_name(rdata, size), 1); break;
	case 38: /* A6 */ lower_names(out, size, a6_name(rdata, size), 1); break;
	default: break;
	}
}
