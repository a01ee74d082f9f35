/* SPDX-License-Identifier: BSD-3-Clause */
/* A served version built whole again from its own records (version_compact.h). */
#include "xfr/version_compact.h"

#include <stdio.h>

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

/* The walk over the version's records, with the question it asks. */
typedef struct compact_walk {
	apex_zone_from_wire_t *w;
	apex_give_way_fn give_way;
	void *ctx;
	size_t records; /* read so far, when it asks */
} compact_walk_t;

static int add_record(void *arg, const apex_rr_t *rr)
{
	compact_walk_t *walk = arg;

	if (walk->give_way != NULL && ++walk->records % APEX_VERSION_COMPACT_GIVE_WAY_EVERY == 0 &&
	    walk->give_way(walk->ctx))
		return APEX_ECANCELED;
	return apex_zone_from_wire_add(walk->w, rr->owner, rr->type, rr->ttl, rr->rdata,
				       rr->rdlength);
}

int apex_version_compact_or_give_way(const apex_zone_t *zone, const char *source,
				     apex_give_way_fn give_way, void *ctx, apex_zone_t **out,
				     char *err, size_t err_size)
{
	const apex_rrset_t *soa = zone->soa;
	compact_walk_t walk = { NULL, give_way, ctx, 0 };
	int rc;

	*out = NULL;
	if (give_way != NULL && give_way(ctx))
		rc = APEX_ECANCELED;
	else
		rc = apex_zone_from_wire_begin(&walk.w, zone->origin, source, err, err_size);
	if (rc != APEX_OK)
		goto walk_failed;
	rc = apex_zone_from_wire_reserve(walk.w, zone->record_count + 1,
					 zone->node_count + zone->nsec3_owner_count + 1);
	if (rc == APEX_OK)
		rc = apex_zone_from_wire_add(walk.w, zone->origin, APEX_TYPE_SOA, soa->ttl,
					     soa->rdata + 2, apex_read_u16(soa->rdata));
	if (rc == APEX_OK)
		rc = apex_version_records(zone, add_record, &walk);
	if (rc != APEX_OK) {
		apex_zone_from_wire_abort(walk.w);
		goto walk_failed;
	}
	apex_zone_from_wire_give_way(walk.w, give_way, ctx);
	rc = apex_zone_from_wire_finish(walk.w, out);
	if (rc == APEX_OK) {
		/* the same version to its readers: when it was loaded or
		 * transferred (zone-status, RSSAC002's load-time), not rebuilt */
		(*out)->loaded_at = zone->loaded_at;
		(*out)->load_seconds = zone->load_seconds;
		(*out)->file_digest = zone->file_digest; /* the same records */
	}
	return rc; /* a build that gave way says so in err */
walk_failed:
	if (rc == APEX_ECANCELED && err_size > 0)
		snprintf(err, err_size, "gave way with %zu of %zu records read", walk.records,
			 zone->record_count);
	return rc;
}

int apex_version_compact(const apex_zone_t *zone, const char *source, apex_zone_t **out, char *err,
			 size_t err_size)
{
	return apex_version_compact_or_give_way(zone, source, NULL, NULL, out, err, err_size);
}
