/* SPDX-License-Identifier: BSD-3-Clause */
/* A record line's number fields against their width (record_numbers.h). */
#include "zone/record_numbers.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ldns/ldns.h>

#include "util/error.h"
#include "zone/rdata_text.h"

/* How a field of the RDATA text is checked. */
typedef enum field_check {
	FIELD_STOP,   /* may hold a blank: the fields after it are not found */
	FIELD_SKIP,   /* one token, not a number */
	FIELD_NUMBER, /* a number only */
	/* a number, or a word ldns reads (a mnemonic such as RSASHA256, a
	 * period with units such as 1h30m): checked when written as digits
	 * or with a sign */
	FIELD_WORD,
} field_check_t;

/* How ldns's field type t is checked, and the largest number it holds. */
static field_check_t check_of(ldns_rdf_type t, uint32_t *max)
{
	switch (t) {
	case LDNS_RDF_TYPE_INT8: *max = UINT8_MAX; return FIELD_NUMBER;
	case LDNS_RDF_TYPE_INT16: *max = UINT16_MAX; return FIELD_NUMBER;
	case LDNS_RDF_TYPE_INT32: *max = UINT32_MAX; return FIELD_NUMBER;
	case LDNS_RDF_TYPE_ALG:
	case LDNS_RDF_TYPE_CERTIFICATE_USAGE:
	case LDNS_RDF_TYPE_SELECTOR:
	case LDNS_RDF_TYPE_MATCHING_TYPE: *max = UINT8_MAX; return FIELD_WORD;
	case LDNS_RDF_TYPE_CERT_ALG: *max = UINT16_MAX; return FIELD_WORD;
	case LDNS_RDF_TYPE_PERIOD: /* the SOA's timers */ *max = UINT32_MAX; return FIELD_WORD;
	case LDNS_RDF_TYPE_DNAME:
	case LDNS_RDF_TYPE_A:
	case LDNS_RDF_TYPE_AAAA:
	case LDNS_RDF_TYPE_TYPE:
	case LDNS_RDF_TYPE_CLASS:
	case LDNS_RDF_TYPE_TIME:
	case LDNS_RDF_TYPE_NSEC3_SALT:
	case LDNS_RDF_TYPE_TAG:
	case LDNS_RDF_TYPE_EUI48:
	case LDNS_RDF_TYPE_EUI64:
	case LDNS_RDF_TYPE_ILNP64: return FIELD_SKIP;
	default: return FIELD_STOP;
	}
}

static bool all_digits(const char *f, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (f[i] < '0' || f[i] > '9')
			return false;
	return true;
}

int apex_record_check_numbers(apex_reader_t *r, int line, int type, const char *rdata)
{
	const ldns_rr_descriptor *d = type >= 0 ? ldns_rr_descript((uint16_t)type) : NULL;
	const char *p = rdata, *f;
	size_t len;

	if (d == NULL || rdata == NULL)
		return APEX_OK;
	for (size_t i = 0; i < ldns_rr_descriptor_maximum(d); i++) {
		uint32_t max = 0, value;
		field_check_t check = check_of(ldns_rr_descriptor_field_type(d, i), &max);

		if (check == FIELD_STOP || (f = apex_record_field(&p, &len)) == NULL)
			return APEX_OK;
		if (i == 0 && len == 2 && f[0] == '\\' && f[1] == '#')
			return APEX_OK; /* RFC 3597: the bytes as they are */
		if (check == FIELD_SKIP)
			continue;
		bool number = f[0] == '-' || f[0] == '+' || all_digits(f, len);
		if ((check == FIELD_NUMBER || number) &&
		    !apex_rdata_parse_uint(f, len, max, &value))
			return apex_reader_fail(
				r, line,
				"%s: %.*s in RDATA field %zu is not a number from 0 "
				"to %lu",
				d->_name != NULL ? d->_name : "RDATA", (int)len, f, i + 1,
				(unsigned long)max);
	}
	return APEX_OK;
}
