/* SPDX-License-Identifier: BSD-3-Clause */
/* Every record of a served version (version_records.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/version_records.h"

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"

static int rrset_records(const uint8_t *owner, const apex_rrset_t *rs, apex_rr_fn fn, void *ctx)
{
	const uint8_t *p = rs->rdata;
	int rc = APEX_OK;

	for (uint16_t i = 0; i < rs->count && rc == APEX_OK; i++) {
		apex_rr_t rr = { owner, rs->type, APEX_CLASS_IN, rs->ttl, apex_read_u16(p), p + 2 };

		p += 2 + rr.rdlength;
		rc = fn(ctx, &rr);
	}
	return rc;
}

int apex_node_records(const apex_zone_t *zone, const apex_node_t *n, apex_rr_fn fn, void *ctx)
{
	int rc = APEX_OK;

	for (uint16_t i = 0; i < n->rrset_count && rc == APEX_OK; i++) {
		const apex_rrset_t *rs = &apex_node_rrsets(zone, n)[i];

		if (!(rs->type == APEX_TYPE_SOA && n == zone->apex))
			rc = rrset_records(n->name, rs, fn, ctx);
		if (rc == APEX_OK && rs->rrsig != NULL)
			rc = rrset_records(n->name, rs->rrsig, fn, ctx);
	}
	size_t strays;
	const apex_stray_rrsig_t *stray = apex_zone_stray_rrsigs(zone, n, &strays);
	for (size_t i = 0; i < strays && rc == APEX_OK; i++)
		rc = rrset_records(n->name, stray[i].sigs, fn, ctx);
	return rc;
}

int apex_version_records(const apex_zone_t *zone, apex_rr_fn fn, void *ctx)
{
	size_t i = 0, k = 0;
	int rc = APEX_OK;

	/* the two lists, each in canonical order, merged */
	while (rc == APEX_OK && (i < zone->node_count || k < zone->nsec3_owner_count)) {
		const apex_node_t *name = i < zone->node_count ? apex_zone_node_at(zone, i) : NULL;
		const apex_node_t *nsec3 =
			k < zone->nsec3_owner_count ? apex_zone_nsec3_owner_at(zone, k) : NULL;

		if (nsec3 == NULL ||
		    (name != NULL && apex_key_compare(apex_node_key(name), name->key_size,
						      apex_node_key(nsec3), nsec3->key_size) < 0)) {
			rc = apex_node_records(zone, name, fn, ctx);
			i++;
		} else {
			rc = apex_node_records(zone, nsec3, fn, ctx);
			k++;
		}
	}
	return rc;
}
