/* SPDX-License-Identifier: BSD-3-Clause */
/* The DNSSEC records of a signed version checked against each other. */
#include "zone/check_dnssec.h"

#include <ldns/ldns.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dns/serial.h"
#include "dns/wire.h"

/* The kinds of finding: each reported for its first SHOWN cases, then counted. */
typedef enum {
	EXPIRED,
	NOT_YET_VALID,
	UNSIGNED,
	NSEC_BREAK,
	NSEC3_BREAK,
	NO_NSEC3,
	KINDS,
} kind_t;

#define SHOWN 10

static const char *const kind_text[KINDS] = {
	"RRSIGs expired",           "RRSIGs not yet valid",      "RRsets without RRSIG",
	"breaks of the NSEC chain", "breaks of the NSEC3 chain", "names without NSEC3",
};

typedef struct checker {
	const apex_zone_t *zone;
	uint32_t now;
	apex_check_report_t report;
	void *arg;
	size_t findings[KINDS];
} checker_t;

static void finding(checker_t *c, kind_t kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void finding(checker_t *c, kind_t kind, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	if (c->findings[kind]++ >= SHOWN)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	c->report(c->arg, text);
}

static const char *type_name(uint16_t type, char *buf, size_t size)
{
	const ldns_rr_descriptor *d = ldns_rr_descript(type);

	if (d != NULL && d->_name != NULL)
		return d->_name;
	snprintf(buf, size, "TYPE%u", type);
	return buf;
}

/* An RRSIG time as the zone file writes it (YYYYMMDDHHMMSS). */
static const char *sig_time(uint32_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, size, "%Y%m%d%H%M%S", &tm);
	return buf;
}

/* Each RRSIG of sigs (over type at owner): valid at c->now? */
static void check_validity(checker_t *c, const apex_node_t *owner, const apex_rrset_t *sigs)
{
	char name[APEX_NAME_MAX * 4 + 1], tbuf[16], t1[20], t2[20];
	const uint8_t *p = sigs->rdata;

	for (uint16_t i = 0; i < sigs->count; i++) {
		uint16_t len = apex_read_u16(p);
		const uint8_t *rd = p + 2;
		p += 2 + len;
		if (len < 18)
			continue;
		uint16_t covered = apex_read_u16(rd);
		uint32_t expiration = apex_read_u32(rd + 8), inception = apex_read_u32(rd + 12);
		uint16_t tag = apex_read_u16(rd + 16);
		if (apex_serial_newer(c->now, expiration))
			finding(c, EXPIRED, "%s %s: RRSIG (key tag %u) expired at %s",
				apex_name_to_str(owner->name, name, sizeof(name)),
				type_name(covered, tbuf, sizeof(tbuf)), tag,
				sig_time(expiration, t1, sizeof(t1)));
		else if (apex_serial_newer(inception, c->now))
			finding(c, NOT_YET_VALID,
				"%s %s: RRSIG (key tag %u) not valid before %s (checked at %s)",
				apex_name_to_str(owner->name, name, sizeof(name)),
				type_name(covered, tbuf, sizeof(tbuf)), tag,
				sig_time(inception, t1, sizeof(t1)),
				sig_time(c->now, t2, sizeof(t2)));
	}
}

/* Every RRset of node: signed where it must be, its signatures valid. */
static void check_node_signatures(checker_t *c, const apex_node_t *node)
{
	char name[APEX_NAME_MAX * 4 + 1], tbuf[16];
	bool cut = (node->flags & APEX_NODE_DELEGATION) != 0;

	if (node->flags & APEX_NODE_OCCLUDED)
		return; /* glue and occluded data are not signed */
	for (uint16_t i = 0; i < node->rrset_count; i++) {
		const apex_rrset_t *rs = &apex_node_rrsets(c->zone, node)[i];
		/* at a zone cut only DS and NSEC are the zone's (RFC 4035 2.2) */
		bool needs = !cut || rs->type == APEX_TYPE_DS || rs->type == APEX_TYPE_NSEC;
		if (rs->rrsig != NULL)
			check_validity(c, node, rs->rrsig);
		else if (needs)
			finding(c, UNSIGNED, "%s %s: no RRSIG",
				apex_name_to_str(node->name, name, sizeof(name)),
				type_name(rs->type, tbuf, sizeof(tbuf)));
	}
}

/* The first name of an NSEC's RDATA: its next owner. */
static const uint8_t *nsec_next(const apex_rrset_t *nsec)
{
	return nsec != NULL && nsec->count > 0 && nsec->rdata_size > 3 ? nsec->rdata + 2 : NULL;
}

/* prev's NSEC must name node (case aside). */
static void check_nsec_link(checker_t *c, const apex_node_t *prev, const apex_node_t *node)
{
	char name[APEX_NAME_MAX * 4 + 1], want[APEX_NAME_MAX * 4 + 1], got[APEX_NAME_MAX * 4 + 1];
	const uint8_t *next = nsec_next(apex_node_rrset(c->zone, prev, APEX_TYPE_NSEC));

	if (next == NULL || !apex_name_equal(next, node->name))
		finding(c, NSEC_BREAK, "%s NSEC: next name %s, but the next name is %s",
			apex_name_to_str(prev->name, name, sizeof(name)),
			next != NULL ? apex_name_to_str(next, got, sizeof(got)) : "?",
			apex_name_to_str(node->name, want, sizeof(want)));
}

/* RFC 4034 4.1.1: each authoritative name has an NSEC naming the next
 * such name in canonical order, the last one the apex. */
static void check_nsec_chain(checker_t *c)
{
	const apex_zone_t *z = c->zone;
	char name[APEX_NAME_MAX * 4 + 1];
	const apex_node_t *prev = NULL, *first = NULL;

	for (size_t r = 0; r < z->node_count; r++) {
		const apex_node_t *node = apex_zone_node_at(z, r);
		if (node->flags & (APEX_NODE_OCCLUDED | APEX_NODE_EMPTY))
			continue;
		if (apex_node_rrset(c->zone, node, APEX_TYPE_NSEC) == NULL) {
			finding(c, NSEC_BREAK, "%s: no NSEC",
				apex_name_to_str(node->name, name, sizeof(name)));
			continue;
		}
		if (prev != NULL)
			check_nsec_link(c, prev, node);
		else
			first = node;
		prev = node;
	}
	if (prev != NULL)
		check_nsec_link(c, prev, first);
}

/* RFC 5155 7.1: each NSEC3 names the next hash in order, the last the
 * first; every authoritative name but opted-out delegations has one. */
static void check_nsec3_chain(checker_t *c)
{
	const apex_zone_t *z = c->zone;
	char name[APEX_NAME_MAX * 4 + 1];
	bool opt_out = false;

	for (size_t i = 0; i < z->nsec3_count; i++) {
		const apex_node_t *owner = apex_zone_node_of(z, z->nsec3[i].node);
		const apex_rrset_t *rs = apex_node_rrset(c->zone, owner, APEX_TYPE_NSEC3);
		const apex_nsec3_t *next = &z->nsec3[(i + 1) % z->nsec3_count];
		if (rs == NULL || rs->rdata_size < 2 + 5)
			continue;
		const uint8_t *rd = rs->rdata + 2;
		size_t salt = rd[4], at = 5 + salt;
		opt_out |= (rd[1] & 1) != 0;
		if (2 + at + 1 > rs->rdata_size || rd[at] != next->hash_size ||
		    2 + at + 1 + rd[at] > rs->rdata_size ||
		    memcmp(rd + at + 1, next->hash, next->hash_size) != 0)
			finding(c, NSEC3_BREAK,
				"%s NSEC3: the next hashed owner is not the next hash of the chain",
				apex_name_to_str(owner->name, name, sizeof(name)));
	}
	for (size_t r = 0; r < z->node_count; r++) {
		const apex_node_t *node = apex_zone_node_at(z, r);
		if ((node->flags & APEX_NODE_OCCLUDED) || node->nsec3 != APEX_NODE_NONE)
			continue;
		bool insecure_cut = (node->flags & APEX_NODE_DELEGATION) &&
				    apex_node_rrset(z, node, APEX_TYPE_DS) == NULL;
		if (opt_out && (insecure_cut || (node->flags & APEX_NODE_EMPTY)))
			continue; /* opted out (RFC 5155 7.1), or above only such */
		finding(c, NO_NSEC3, "%s: no NSEC3 matches its hash",
			apex_name_to_str(node->name, name, sizeof(name)));
	}
}

size_t apex_zone_check_dnssec(const apex_zone_t *zone, uint32_t now, apex_check_report_t report,
			      void *arg)
{
	checker_t c = { .zone = zone, .now = now, .report = report, .arg = arg };

	if (apex_node_rrset(zone, zone->apex, APEX_TYPE_DNSKEY) == NULL)
		return 0;
	for (size_t r = 0; r < zone->node_count; r++)
		check_node_signatures(&c, apex_zone_node_at(zone, r));
	for (size_t i = 0; i < zone->nsec3_owner_count; i++)
		check_node_signatures(&c, apex_zone_nsec3_owner_at(zone, i));
	if (zone->dnssec == APEX_DNSSEC_NSEC)
		check_nsec_chain(&c);
	else if (zone->dnssec == APEX_DNSSEC_NSEC3 && zone->nsec3_count > 0)
		check_nsec3_chain(&c);
	else
		finding(&c, NSEC_BREAK, "signed (DNSKEY at the apex) but no NSEC or NSEC3 chain");
	size_t total = 0;
	for (int k = 0; k < KINDS; k++) {
		char text[128];

		total += c.findings[k];
		if (c.findings[k] <= SHOWN)
			continue;
		snprintf(text, sizeof(text), "%zu %s in all (the first %d above)", c.findings[k],
			 kind_text[k], SHOWN);
		c.report(c.arg, text);
	}
	return total;
}
