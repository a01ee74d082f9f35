/* SPDX-License-Identifier: BSD-3-Clause */
/* A served version built whole again from its own records (version_compact.h). */
#include "xfr/version_compact.h"

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "xfr/version_records.h"
#include "zone/page_discard.h"
#include "zone/zone_from_wire.h"

bool apex_version_wants_compact(const apex_zone_t *zone)
{
	size_t whole = zone->memory > zone->chain_memory ? zone->memory - zone->chain_memory : 0;
	size_t chain = apex_zone_chain_memory(zone); /* less the pages given back */
	size_t spare = apex_zone_spare_memory(zone); /* bounded apart (page_discard.h) */
	/* what the last compaction in parts left, bounded apart (compact.c) */
	size_t residue = atomic_load_explicit(&zone->compact_held, memory_order_relaxed);

	chain = chain > spare + residue ? chain - spare - residue : 0;

	if (zone->base == NULL)
		return false; /* built whole: nothing held */
	return zone->derived_depth >= APEX_COMPACT_DEPTH ||
	       (chain > APEX_COMPACT_FLOOR && chain * APEX_COMPACT_SHARE > whole);
}

static int add_record(void *ctx, const apex_rr_t *rr)
{
	return apex_zone_from_wire_add(ctx, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
}

int apex_version_compact(const apex_zone_t *zone, const char *source, apex_zone_t **out, char *err,
			 size_t err_size)
{
	const apex_rrset_t *soa = zone->soa;
	apex_zone_from_wire_t *w;
	int rc = apex_zone_from_wire_begin(&w, zone->origin, source, err, err_size);

	*out = NULL;
	if (rc != APEX_OK)
		return rc;
	rc = apex_zone_from_wire_add(w, zone->origin, APEX_TYPE_SOA, soa->ttl, soa->rdata + 2,
				     apex_read_u16(soa->rdata));
	if (rc == APEX_OK)
		rc = apex_version_records(zone, add_record, w);
	if (rc != APEX_OK) {
		apex_zone_from_wire_abort(w);
		return rc;
	}
	rc = apex_zone_from_wire_finish(w, out);
	if (rc == APEX_OK) {
		/* the same version to its readers: when it was loaded or
		 * transferred (zone-status, RSSAC002's load-time), not rebuilt */
		(*out)->loaded_at = zone->loaded_at;
		(*out)->load_seconds = zone->load_seconds;
		(*out)->file_digest = zone->file_digest; /* the same records */
	}
	return rc;
}
