/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helpers: build query messages by hand and inspect responses
 * decoded by ldns (an independent decoder, so compression and layout
 * errors in apex's writer show up as decode failures or wrong data).
 */
#ifndef APEX_TESTS_DNSMSG_H
#define APEX_TESTS_DNSMSG_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <ldns/ldns.h>

#include "dns/name.h"
#include "dns/wire.h"

typedef struct dnsmsg_opts {
	bool edns;
	bool dnssec_ok;
	uint16_t payload; /* 0 = 1232 */
	uint8_t version;
	bool nsid;
	uint16_t flags;  /* header flags (RD, CD, opcode...) */
	uint16_t qclass; /* 0 = IN */
} dnsmsg_opts_t;

/* Build a query for name/type into buf (at least 512 bytes); returns its size. */
static inline size_t dnsmsg_query(uint8_t *buf, const char *name, uint16_t type,
				  const dnsmsg_opts_t *o)
{
	memset(buf, 0, APEX_HEADER_SIZE);
	apex_write_u16(buf + APEX_HDR_ID, 0x1234);
	apex_write_u16(buf + APEX_HDR_FLAGS, o ? o->flags : 0);
	apex_write_u16(buf + APEX_HDR_QDCOUNT, 1);
	size_t pos = APEX_HEADER_SIZE;
	int size = apex_name_from_str(name, buf + pos);
	if (size < 0)
		return 0;
	pos += (size_t)size;
	apex_write_u16(buf + pos, type);
	apex_write_u16(buf + pos + 2, o && o->qclass ? o->qclass : 1);
	pos += 4;
	if (o && o->edns) {
		buf[pos] = 0;
		apex_write_u16(buf + pos + 1, 41);
		apex_write_u16(buf + pos + 3, o->payload ? o->payload : 1232);
		buf[pos + 5] = 0;
		buf[pos + 6] = o->version;
		apex_write_u16(buf + pos + 7, o->dnssec_ok ? 0x8000 : 0);
		apex_write_u16(buf + pos + 9, o->nsid ? 4 : 0);
		pos += 11;
		if (o->nsid) {
			apex_write_u16(buf + pos, 3);
			apex_write_u16(buf + pos + 2, 0);
			pos += 4;
		}
		apex_write_u16(buf + APEX_HDR_ARCOUNT, 1);
	}
	return pos;
}

static inline ldns_rr_list *dnsmsg_section(ldns_pkt *pkt, int section)
{
	switch (section) {
	case 1: return ldns_pkt_answer(pkt);
	case 2: return ldns_pkt_authority(pkt);
	default: return ldns_pkt_additional(pkt);
	}
}

/* Records of type in a section (1 answer, 2 authority, 3 additional); owner NULL = any. */
static inline int dnsmsg_count(ldns_pkt *pkt, int section, const char *owner, ldns_rr_type type)
{
	ldns_rr_list *list = dnsmsg_section(pkt, section);
	ldns_rdf *want = owner ? ldns_dname_new_frm_str(owner) : NULL;
	int n = 0;
	for (size_t i = 0; i < ldns_rr_list_rr_count(list); i++) {
		ldns_rr *rr = ldns_rr_list_rr(list, i);
		if (ldns_rr_get_type(rr) != type)
			continue;
		if (want && ldns_dname_compare(ldns_rr_owner(rr), want) != 0)
			continue;
		n++;
	}
	if (want)
		ldns_rdf_deep_free(want);
	return n;
}

/* RRSIGs in a section covering type (owner NULL = any). */
static inline int dnsmsg_count_rrsig(ldns_pkt *pkt, int section, const char *owner,
				     ldns_rr_type covered)
{
	ldns_rr_list *list = dnsmsg_section(pkt, section);
	ldns_rdf *want = owner ? ldns_dname_new_frm_str(owner) : NULL;
	int n = 0;
	for (size_t i = 0; i < ldns_rr_list_rr_count(list); i++) {
		ldns_rr *rr = ldns_rr_list_rr(list, i);
		if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_RRSIG)
			continue;
		if (ldns_rdf2rr_type(ldns_rr_rrsig_typecovered(rr)) != covered)
			continue;
		if (want && ldns_dname_compare(ldns_rr_owner(rr), want) != 0)
			continue;
		n++;
	}
	if (want)
		ldns_rdf_deep_free(want);
	return n;
}

/* The first record of type in a section, or NULL. */
static inline ldns_rr *dnsmsg_first(ldns_pkt *pkt, int section, ldns_rr_type type)
{
	ldns_rr_list *list = dnsmsg_section(pkt, section);
	for (size_t i = 0; i < ldns_rr_list_rr_count(list); i++) {
		if (ldns_rr_get_type(ldns_rr_list_rr(list, i)) == type)
			return ldns_rr_list_rr(list, i);
	}
	return NULL;
}

/* True if rdf (a dname) equals the presentation name str. */
static inline bool dnsmsg_dname_is(const ldns_rdf *rdf, const char *str)
{
	ldns_rdf *want = ldns_dname_new_frm_str(str);
	bool eq = want && ldns_dname_compare(rdf, want) == 0;
	if (want)
		ldns_rdf_deep_free(want);
	return eq;
}

/*
 * How the NSEC3 records in the authority section relate to name:
 * 2 if one matches its hash, 1 if one covers it, 0 if neither.
 */
static inline int dnsmsg_nsec3_proves(ldns_pkt *pkt, const char *name)
{
	ldns_rr_list *list = ldns_pkt_authority(pkt);
	ldns_rdf *dname = ldns_dname_new_frm_str(name);
	int best = 0;
	for (size_t i = 0; i < ldns_rr_list_rr_count(list); i++) {
		ldns_rr *rr = ldns_rr_list_rr(list, i);
		if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_NSEC3)
			continue;
		ldns_rdf *hashed = ldns_nsec3_hash_name_frm_nsec3(rr, dname);
		ldns_rdf *zone = ldns_dname_left_chop(ldns_rr_owner(rr));
		(void)ldns_dname_cat(hashed, zone);
		if (ldns_dname_compare(hashed, ldns_rr_owner(rr)) == 0)
			best = 2;
		else if (best < 1 && ldns_nsec_covers_name(rr, hashed))
			best = 1;
		ldns_rdf_deep_free(zone);
		ldns_rdf_deep_free(hashed);
	}
	ldns_rdf_deep_free(dname);
	return best;
}

/* True if an NSEC in the authority section covers (strictly) name. */
static inline bool dnsmsg_nsec_covers(ldns_pkt *pkt, const char *name)
{
	ldns_rr_list *list = ldns_pkt_authority(pkt);
	ldns_rdf *dname = ldns_dname_new_frm_str(name);
	bool covered = false;
	for (size_t i = 0; i < ldns_rr_list_rr_count(list); i++) {
		ldns_rr *rr = ldns_rr_list_rr(list, i);
		if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_NSEC && ldns_nsec_covers_name(rr, dname) &&
		    ldns_dname_compare(ldns_rr_owner(rr), dname) != 0)
			covered = true;
	}
	ldns_rdf_deep_free(dname);
	return covered;
}

#endif
