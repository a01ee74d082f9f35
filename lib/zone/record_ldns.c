/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The zone file parser's fallback: every record the fast path does not
 * take (other types, RFC 3597 "\\#" forms) is parsed by ldns
 * (zone_file_reader.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "dns/rrtype.h"
#include "util/error.h"
#include "zone/rdata_text.h"
#include "zone/record_numbers.h"
#include "zone/zone_file_reader.h"

static const char *ldns_reason(ldns_status status)
{
	switch (status) {
	case LDNS_STATUS_SYNTAX_RDATA_ERR: return "bad rdata";
	case LDNS_STATUS_SYNTAX_TYPE_ERR: return "unknown type";
	case LDNS_STATUS_SYNTAX_CLASS_ERR: return "unknown class";
	case LDNS_STATUS_SYNTAX_TTL_ERR: return "bad TTL";
	case LDNS_STATUS_DOMAINNAME_OVERFLOW: return "domain name too long";
	case LDNS_STATUS_LABEL_OVERFLOW: return "label too long";
	case LDNS_STATUS_SYNTAX_DNAME_ERR: return "bad domain name";
	case LDNS_STATUS_SYNTAX_MISSING_VALUE_ERR: return "missing rdata";
	default: return ldns_get_errorstr_by_id(status);
	}
}

/*
 * True if an rdf that starts with its own length byte says the truth.
 * ldns's text parser can return one that does not: an NSEC3 next hashed
 * owner of "=9" comes back as a length of 1 with no hash byte, which no
 * resolver could decode once served.
 */
static bool rdf_length_consistent(const ldns_rdf *rdf)
{
	switch (ldns_rdf_get_type(rdf)) {
	case LDNS_RDF_TYPE_NSEC3_SALT:
	case LDNS_RDF_TYPE_NSEC3_NEXT_OWNER:
	case LDNS_RDF_TYPE_B32_EXT:
	case LDNS_RDF_TYPE_STR:
		return ldns_rdf_size(rdf) >= 1 &&
		       (size_t)ldns_rdf_data(rdf)[0] == ldns_rdf_size(rdf) - 1;
	default: return true;
	}
}

int apex_record_store_ldns(apex_reader_t *r, int line, const ldns_rr *rr)
{
	if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN)
		return apex_reader_fail(r, line, "class %u is not IN",
					(unsigned)ldns_rr_get_class(rr));
	uint16_t type = (uint16_t)ldns_rr_get_type(rr);
	/* 0, OPT and the meta and question types (RFC 6895 section 3.1). */
	if (type == 0 || type == APEX_TYPE_OPT || (type >= 128 && type <= 255))
		return apex_reader_fail(r, line, "type %u may not appear in a zone", type);
	if (ldns_rr_ttl(rr) > INT32_MAX)
		return apex_reader_fail(r, line, "TTL %u out of range (RFC 2181 section 8)",
					ldns_rr_ttl(rr));

	/* From wire form ldns takes RDATA with fewer fields than the type
	 * has (an NS with no name at all); nothing that reads it could. */
	const ldns_rr_descriptor *desc = ldns_rr_descript(type);
	if (desc != NULL && ldns_rr_rd_count(rr) < ldns_rr_descriptor_minimum(desc))
		return apex_reader_fail(r, line, "type %u: missing rdata", type);
	/* And from "CAA 5534 \# 4 0a000001" a CAA of four fields, the
	 * generic form's length read as a second flags byte: RDATA whose
	 * tag length says 10 bytes where 3 follow. */
	if (desc != NULL && ldns_rr_descriptor_maximum(desc) > 0 &&
	    ldns_rr_rd_count(rr) > ldns_rr_descriptor_maximum(desc))
		return apex_reader_fail(r, line, "type %u: more rdata fields than the type has",
					type);

	const ldns_rdf *owner_rdf = ldns_rr_owner(rr);
	const uint8_t *owner = ldns_rdf_data(owner_rdf);
	size_t owner_size = ldns_rdf_size(owner_rdf);
	if (owner_size == 0 || owner_size > APEX_NAME_MAX || owner[owner_size - 1] != 0)
		return apex_reader_fail(r, line, "bad owner name");

	/* RDATA in wire form: the rdfs one after the other, uncompressed. */
	size_t rdlength = 0;
	bool lower = false;
	bool canonical_names = apex_type_has_canonical_names(type);
	for (size_t i = 0; i < ldns_rr_rd_count(rr); i++) {
		const ldns_rdf *rdf = ldns_rr_rdf(rr, i);
		if (!rdf_length_consistent(rdf))
			return apex_reader_fail(r, line, "bad rdata: field %zu is not valid",
						i + 1);
		rdlength += ldns_rdf_size(rdf);
		if (canonical_names && ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME &&
		    apex_has_upper(ldns_rdf_data(rdf), ldns_rdf_size(rdf)))
			lower = true;
	}
	if (rdlength > 65535)
		return apex_reader_fail(r, line, "rdata longer than 65535 bytes");
	uint8_t *rdata = r->sink->rdata;
	uint8_t *canonical = lower ? malloc(rdlength ? rdlength : 1) : rdata;
	if (canonical == NULL)
		return APEX_ENOMEM;
	size_t pos = 0;
	for (size_t i = 0; i < ldns_rr_rd_count(rr); i++) {
		const ldns_rdf *rdf = ldns_rr_rdf(rr, i);
		size_t size = ldns_rdf_size(rdf);
		if (size == 0)
			continue; /* an empty field (CAA's value ""): ldns gives no data */
		memcpy(rdata + pos, ldns_rdf_data(rdf), size);
		if (lower) {
			memcpy(canonical + pos, ldns_rdf_data(rdf), size);
			/* A wire name: lowercasing every byte of the labels is
			 * safe because length bytes are < 64 ('A' is 65). */
			if (ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME)
				apex_name_lower(canonical + pos);
		}
		pos += size;
	}
	int rc = apex_record_store(r, line, owner, type, ldns_rr_ttl(rr), rdata, rdlength,
				   canonical);
	if (lower)
		free(canonical);
	return rc;
}

/* The type of a record line (after its owner, a TTL and a class, as
 * ldns reads them), where its type field starts and where its RDATA
 * starts; -1 if the line has no type there. */
static int line_type(const char *rec, const char **type_field, const char **rdata)
{
	const char *p = rec;
	size_t len;
	const char *tok;
	if (*p != ' ' && *p != '\t' && apex_record_field(&p, &len) == NULL)
		return -1; /* the owner */
	for (int i = 0; i < 3; i++) {
		char buf[32];
		if ((tok = apex_record_field(&p, &len)) == NULL || len >= sizeof(buf))
			return -1;
		memcpy(buf, tok, len);
		buf[len] = '\0';
		if (ldns_get_rr_class_by_name(buf) != 0 || (buf[0] >= '0' && buf[0] <= '9'))
			continue;
		*type_field = tok;
		*rdata = p;
		return apex_rrtype_from_text(tok, len);
	}
	return -1;
}

/*
 * The RDATA of IPSECKEY and AMTRELAY lines is apex's to parse
 * (rdata_text.c): ldns 1.8.3's parsers of these types leak their copies
 * of the fields on a line with too many and refuse a key split by
 * blanks.  ldns is given the line with that RDATA in the RFC 3597
 * generic form, "\# LENGTH HEX", in *generic (the caller frees it).
 * type, type_field and rdata: what line_type() found in the line.
 * Returns APEX_OK with *generic NULL for every other line.
 */
static int generic_rdata_line(apex_reader_t *r, int line, int type, const char *type_field,
			      const char *rdata, char **generic)
{
	*generic = NULL;
	if (type != APEX_TYPE_IPSECKEY && type != APEX_TYPE_AMTRELAY)
		return APEX_OK;
	const char *p = rdata;
	size_t len;
	const char *tok = apex_record_field(&p, &len);
	bool already_generic = tok != NULL && len == 2 && tok[0] == '\\' && tok[1] == '#';
	int rdlength = 0;
	if (!already_generic) {
		rdlength = apex_rdata_from_text((uint16_t)type, rdata, r->origin, r->sink->rdata);
		if (rdlength < 0)
			return apex_reader_fail(r, line, "bad rdata");
	}
	/* The type as TYPEnnn too: ldns 1.8.3 does not know "AMTRELAY". */
	size_t head = (size_t)(type_field - r->rec);
	size_t size = head + 32 + (already_generic ? strlen(rdata) : 2 * (size_t)rdlength);
	char *text = malloc(size);
	if (text == NULL)
		return APEX_ENOMEM;
	memcpy(text, r->rec, head);
	int n = snprintf(text + head, size - head, "TYPE%d ", type);
	char *out = text + head + n;
	if (already_generic) {
		out = stpcpy(out, rdata);
	} else {
		out += snprintf(out, size - (size_t)(out - text), "\\# %d ", rdlength);
		static const char digits[] = "0123456789abcdef";
		for (int i = 0; i < rdlength; i++) {
			*out++ = digits[r->sink->rdata[i] >> 4];
			*out++ = digits[r->sink->rdata[i] & 0xf];
		}
	}
	*out = '\0';
	*generic = text;
	return APEX_OK;
}

/* A field that starts with TYPE and is not TYPEnnn of 16 bits (RFC 3597
 * section 5): TYPE65536, TYPE45x. */
static bool bad_type_number(const char *tok, size_t len)
{
	return len >= 4 && strncasecmp(tok, "TYPE", 4) == 0 && apex_rrtype_from_text(tok, len) < 0;
}

/*
 * ldns reads the number of a TYPEnnn with atoi() and keeps what its type
 * holds: TYPE65536 is type 0 to it, TYPE0101000000 in an NSEC's list
 * type 9024, TYPE45x type 45.  Such a field, as the record's type, in
 * the type list of an NSEC, NSEC3 or CSYNC, or as an RRSIG's type
 * covered, fails the line here, named.  type, type_field and rdata: what
 * line_type() found in the line.
 */
static int check_type_numbers(apex_reader_t *r, int line, int type, const char *type_field,
			      const char *rdata)
{
	const char *p, *tok;
	size_t len;

	if (type < 0) {
		p = type_field;
		if (p != NULL && (tok = apex_record_field(&p, &len)) != NULL &&
		    bad_type_number(tok, len))
			return apex_reader_fail(r, line, "%.*s: not a type (TYPE0 to TYPE65535)",
						(int)len, tok);
		return APEX_OK;
	}
	if (type != APEX_TYPE_NSEC && type != APEX_TYPE_NSEC3 && type != APEX_TYPE_CSYNC &&
	    type != APEX_TYPE_RRSIG)
		return APEX_OK;
	p = rdata;
	while ((tok = apex_record_field(&p, &len)) != NULL)
		if (bad_type_number(tok, len))
			return apex_reader_fail(r, line, "%.*s: not a type (TYPE0 to TYPE65535)",
						(int)len, tok);
	return APEX_OK;
}

/* p past its blanks. */
static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/*
 * Whether a record line gives its TTL, as ldns_rr_new_frm_str() decides:
 * the field after the owner (no owner when the line starts with a blank)
 * starts with a digit (a class before the TTL is not read); a blank
 * escaped by a backslash is part of the owner.  A line without one takes
 * the $TTL in force (RFC 2308 section 4), which is the loader's to give,
 * not ldns's: ldns takes a default of 0 for "none" and gives such a
 * record 3600, where $TTL 0 means 0.
 */
static bool line_has_ttl(const char *rec)
{
	const char *p = rec;
	char last = '\0';

	for (; *p != '\0' && ((*p != ' ' && *p != '\t') || last == '\\'); p++)
		last = *p == '\\' && last == '\\' ? '\0' : *p;
	p = skip_blanks(p);
	return *p >= '0' && *p <= '9';
}

int apex_record_parse_ldns(apex_reader_t *r, int line)
{
	if (r->origin_rdf == NULL) {
		r->origin_rdf = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME,
						      apex_name_size(r->origin), r->origin);
		if (r->origin_rdf == NULL)
			return APEX_ENOMEM;
	}
	/* ldns rejects blanks after a final quoted string of some
	 * types (CAA, HINFO), and line ends became blanks above. */
	while (r->rec_len > 1 &&
	       (r->rec[r->rec_len - 1] == ' ' || r->rec[r->rec_len - 1] == '\t') &&
	       r->rec[r->rec_len - 2] != '\\')
		r->rec[--r->rec_len] = '\0';
	char *generic;
	const char *type_field = NULL, *rdata = NULL;
	int type = line_type(r->rec, &type_field, &rdata);
	int rc = check_type_numbers(r, line, type, type_field, rdata);
	if (rc != APEX_OK)
		return rc;
	rc = generic_rdata_line(r, line, type, type_field, rdata, &generic);
	if (rc != APEX_OK)
		return rc;
	/* ldns uses prev for a record without an owner (leading blank),
	 * and the origin when there is none yet. */
	ldns_rdf *prev = NULL;
	if (r->have_prev) {
		prev = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, apex_name_size(r->prev), r->prev);
		if (prev == NULL) {
			free(generic);
			return APEX_ENOMEM;
		}
	}
	const char *text = generic != NULL ? generic : r->rec;
	ldns_rr *rr = NULL;
	ldns_status status =
		ldns_rr_new_frm_str(&rr, text, r->sink->default_ttl, r->origin_rdf, &prev);
	if (status != LDNS_STATUS_OK) {
		rc = status == LDNS_STATUS_MEM_ERR
			     ? APEX_ENOMEM
			     : apex_reader_fail(r, line, "%s", ldns_reason(status));
	} else {
		if (!line_has_ttl(text))
			ldns_rr_set_ttl(rr, r->sink->default_ttl);
		rc = apex_record_store_ldns(r, line, rr);
		/* what ldns read, not what it kept of a number too large (the
		 * load fails: the record stored is never served) */
		if (rc == APEX_OK)
			rc = apex_record_check_numbers(r, line, type, rdata);
	}
	ldns_rr_free(rr);
	ldns_rdf_deep_free(prev);
	free(generic);
	return rc;
}
