/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The version served built compact after a chain of derived versions
 * (compact.h), for the transfer thread and the reload thread alike.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "zones/compact.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "process/memory.h"
#include "process/memory_estimate.h"
#include "query/precompute.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/version_compact.h"
#include "xfr/version_part.h"
#include "zones/reload.h"
#include "zone/derive.h"
#include "zone/page_discard.h"

#define MIB(x) ((double)(x) / 1048576.0)

/* A zone from this much memory is made compact part by part
 * (xfr/version_part.h) when the version served was derived by a large
 * change, at least 1/APEX_COMPACT_LARGE_SHARE of the zone (a reload of an
 * edited file, a large IXFR): a whole build beside it would come on top
 * of that change's own peak.  In this many parts: the peak is a part
 * beside it.  A chain of small IXFRs is still built whole, which lets go
 * of all it holds: the parts leave a residue (below) of about 5% of the
 * zone, which would keep the resident size of a secondary fed by small
 * IXFRs that much above a fresh load's. */
#define APEX_COMPACT_PARTS_FROM ((size_t)64 << 20)
#define APEX_COMPACT_PARTS 16
#define APEX_COMPACT_LARGE_SHARE 16
/* What parts leave that a whole build would not (the residue,
 * zone->compact_held) is left out of the rule that asks for the next
 * compaction; once it passes 1/8 of the whole build, that compaction is
 * whole, and lets go of it. */
#define APEX_COMPACT_RESIDUE_SHARE 8
/* The parts borrow the whole build's RDATA (xfr/version_part.h): the
 * RDATA of it no version reads any more stays, between the RDATA still
 * read.  Once more than 1/2 of what the whole build's RRsets read is
 * unread, the compaction is whole, and lets go of it. */
#define APEX_COMPACT_RDATA_SHARE 2

/* The bytes of the whole build's RDATA that zone no longer reads. */
static size_t rdata_unread(const apex_zone_t *zone)
{
	size_t rdata = apex_zone_chain_root(zone)->rdata_bytes;
	size_t borrowed = apex_version_rdata_borrowed(zone);

	return rdata > borrowed ? rdata - borrowed : 0;
}

/* A test hook: APEX_TEST_COMPACT_PARTS_FROM=BYTES makes every compaction
 * of a zone of that many bytes and more one in parts (apexd(8)).  Read
 * once, with the warning that says it is set, by the first compaction. */
static pthread_once_t parts_from_once = PTHREAD_ONCE_INIT;
static bool parts_from_set;
static size_t parts_from_bytes;

static void parts_from_read(void)
{
	const char *value = getenv("APEX_TEST_COMPACT_PARTS_FROM");

	if (value == NULL || value[0] == '\0')
		return;
	parts_from_set = true;
	parts_from_bytes = (size_t)strtoull(value, NULL, 10);
	apex_warning("APEX_TEST_COMPACT_PARTS_FROM=%s: a test hook; a compaction of a zone of "
		     "that many bytes and more is made in parts",
		     value);
}

/* Whether served is made compact part by part. */
static bool by_parts(const apex_zone_t *served)
{
	size_t whole =
		served->memory > served->chain_memory ? served->memory - served->chain_memory : 0;
	size_t residue = atomic_load_explicit(&served->compact_held, memory_order_relaxed);
	/* the memory of the change that made served (its own arena) */
	size_t change = apex_arena_footprint(served->arena);

	if (residue * APEX_COMPACT_RESIDUE_SHARE > whole)
		return false;
	pthread_once(&parts_from_once, parts_from_read);
	if (parts_from_set)
		return apex_zone_memory(served) >= parts_from_bytes;
	/* the walk of rdata_unread() last: a large zone and a large change */
	return apex_zone_memory(served) >= APEX_COMPACT_PARTS_FROM &&
	       change * APEX_COMPACT_LARGE_SHARE >= whole &&
	       rdata_unread(served) * APEX_COMPACT_RDATA_SHARE <=
		       apex_zone_chain_root(served)->rdata_bytes;
}

/* The residue of the parts just published (by_parts()): what the chain
 * of now holds beyond its whole build, its kept pages apart (counted
 * apart by the rule), less the whole build's arrays its copies replaced
 * and that were given back (its name index and hash table when names
 * came or went: page_discard.h), which the whole build the rule compares
 * with counts still.  The whole build's RDATA no version reads any more
 * has a rule of its own (APEX_COMPACT_RDATA_SHARE). */
static size_t keep_residue(apex_zone_t *now)
{
	size_t chain = apex_zone_chain_memory(now), spare = apex_zone_spare_memory(now);
	size_t arrays = atomic_load_explicit(&apex_zone_chain_root(now)->arrays_discarded,
					     memory_order_relaxed);
	size_t residue = chain > spare + arrays ? chain - spare - arrays : 0;

	atomic_store_explicit(&now->compact_held, residue, memory_order_relaxed);
	return residue;
}

/* memory-limit: a whole build beside the version served, as large as it. */
static int claim(const apex_compact_zone_t *z, const apex_zone_t *served, apexd_memory_claim_t *c,
		 char *err, size_t err_size)
{
	char what[200];

	if (!apexd_memory_limit_on(z->limit))
		return APEX_OK;
	snprintf(what, sizeof(what),
		 "a compact build of %.100s as large as the version served (%.1f MiB, %zu "
		 "records)",
		 z->name, MIB(apex_zone_memory(served)), served->record_count);
	return apexd_memory_limit_claim(
		z->limit, z->kind, c,
		apexd_estimate_like(apex_zone_memory(served), served->record_count, 1.0), what, err,
		err_size);
}

/* Build served's compact form into *out (precomputed), within memory-limit. */
static int build(const apex_compact_zone_t *z, const apex_zone_t *served, apex_zone_t **out,
		 char *err, size_t err_size)
{
	apexd_memory_claim_t c = { 0 };
	char source[200];
	int rc;

	*out = NULL;
	snprintf(source, sizeof(source), "compact version of %s", z->name);
	rc = claim(z, served, &c, err, err_size);
	if (rc == APEX_OK)
		rc = apex_version_compact_or_give_way(served, source, z->give_way, z->give_way_ctx,
						      out, err, err_size);
	if (rc == APEX_OK && z->give_way != NULL && z->give_way(z->give_way_ctx)) {
		snprintf(err, err_size, "gave way once built, before its answers were precomputed");
		rc = APEX_ECANCELED;
	} else if (rc == APEX_OK && (rc = apex_precompute(*out)) < 0) {
		snprintf(err, err_size, "precomputing answers: %s", apex_strerror(rc));
	}
	if (rc < 0 && *out != NULL) {
		apex_zone_unref(*out);
		*out = NULL;
	}
	apexd_memory_limit_release(z->limit, &c);
	return rc;
}

/* Publish compact (the caller's reference, taken on success) only over
 * served, the version it was made from: a reconfig, a transfer or a
 * reload may have replaced it meanwhile. */
static int publish(const apex_compact_zone_t *z, const apex_zone_t *served, apex_zone_t *compact)
{
	/* the same records, the same time left (a secondary's EDNS EXPIRE) */
	atomic_store_explicit(&compact->expire_at,
			      atomic_load_explicit(&served->expire_at, memory_order_relaxed),
			      memory_order_relaxed);
	if (z->reloader != NULL)
		return apex_reloader_publish_over(z->reloader, z->zone_id, served, compact);
	return apex_zonetable_publish(&z->server->zonetable, compact);
}

/* memory-limit: one part of served built again beside it. */
static int claim_part(const apex_compact_zone_t *z, const apex_zone_t *served,
		      apexd_memory_claim_t *c, char *err, size_t err_size)
{
	char what[200];

	if (!apexd_memory_limit_on(z->limit))
		return APEX_OK;
	snprintf(what, sizeof(what), "a part of %.100s built again (1/%u of %.1f MiB)", z->name,
		 APEX_COMPACT_PARTS, MIB(apex_zone_memory(served)));
	return apexd_memory_limit_claim(
		z->limit, z->kind, c,
		apexd_estimate_like(apex_zone_memory(served) / APEX_COMPACT_PARTS,
				    served->record_count / APEX_COMPACT_PARTS, 1.0),
		what, err, err_size);
}

/* Whether parts that give way before served leave room for the next
 * compaction to start over: the NOTIFY's version derived from served, then
 * every part and the last step (zone/derive.h: a chain longer than
 * APEX_DERIVE_DEPTH_MAX is not derived from, its next version built
 * whole, beside it). */
static bool may_start_over(const apex_zone_t *served)
{
	return served->derived_depth + 1 + APEX_COMPACT_PARTS + 1 < APEX_DERIVE_DEPTH_MAX;
}

/* Part `part` of served built again (xfr/version_part.h; part
 * APEX_COMPACT_PARTS: the owners the parts copied in passing), precomputed,
 * published over served, and served let go of: once the workers have,
 * the chain's memory no version reads any more is given back
 * (apex_server_retire(), zone/chain_sweep.h).  served's reference is
 * the caller's, taken here on success.  A part but the last gives way
 * within itself (APEX_ECANCELED) as in_parts() does between parts. */
static int publish_part(const apex_compact_zone_t *z, apex_zone_t *served, unsigned part, char *err,
			size_t err_size)
{
	apexd_memory_claim_t c = { 0 };
	apex_zone_t *next = NULL;
	char source[200];
	int rc;

	if (part < APEX_COMPACT_PARTS)
		snprintf(source, sizeof(source), "part %u of %u of %s built again", part + 1,
			 APEX_COMPACT_PARTS, z->name);
	else
		snprintf(source, sizeof(source), "owners of %s the parts copied built again",
			 z->name);
	rc = claim_part(z, served, &c, err, err_size);
	if (rc == APEX_OK && part < APEX_COMPACT_PARTS) {
		rc = apex_version_rebuild_part_or_give_way(served, part, APEX_COMPACT_PARTS, source,
							   may_start_over(served) ? z->give_way
										  : NULL,
							   z->give_way_ctx, &next, err, err_size);
		if (rc == APEX_ECANCELED) {
			char where[256];
			snprintf(where, sizeof(where), "%.200s", err);
			snprintf(err, err_size, "part %u of %u %s", part + 1, APEX_COMPACT_PARTS,
				 where);
		}
	} else if (rc == APEX_OK) /* last: what the parts copied in passing */
		rc = apex_version_rebuild_relinked(served, APEX_COMPACT_PARTS, source, &next, err,
						   err_size);
	if (rc == APEX_OK && (rc = apex_precompute(next)) < 0)
		snprintf(err, err_size, "precomputing answers: %s", apex_strerror(rc));
	apexd_memory_limit_release(z->limit, &c);
	if (rc == APEX_OK && (rc = publish(z, served, next)) < 0)
		snprintf(err, err_size, "not published: %s",
			 rc == -ESTALE ? "replaced meanwhile" : apex_strerror(rc));
	if (rc < 0) {
		apex_zone_unref(next);
		return rc;
	}
	apex_server_retire(z->server, served, true);
	return APEX_OK;
}

/*
 * served (the caller's reference) made compact part by part.  Returns 1
 * when every part was published, APEX_ENOTSUP when the first could not be
 * derived (served's reference left to the caller, who builds it whole),
 * APEX_ECANCELED when it gave way (z->give_way, asked while the chain has
 * room to start over: within each part, publish_part(), and after the
 * last part, not within the last step), or another negative code with err
 * set (the parts published stay served: each is a whole version of the
 * zone).  Else served's reference is taken.
 */
static int in_parts(const apex_compact_zone_t *z, apex_zone_t *served, char *err, size_t err_size)
{
	/* the parts, then (part APEX_COMPACT_PARTS) what they copied */
	for (unsigned part = 0;; part++) {
		int rc = publish_part(z, served, part, err, err_size);

		if (rc == APEX_ENOTSUP && part == 0)
			return rc;
		if (rc < 0) {
			if (rc == APEX_ENOTSUP)
				snprintf(err, err_size, "part %u not derived", part + 1);
			apex_zone_unref(served);
			return rc;
		}
		if (part == APEX_COMPACT_PARTS)
			return 1;
		served = apex_server_served_version(z->server, z->origin);
		if (served == NULL) {
			snprintf(err, err_size, "the zone is no longer served");
			return APEX_EINVAL;
		}
		/* the next part asks before its first record; the last step
		 * does not ask */
		apex_give_way_fn after_parts =
			z->give_way_after_parts != NULL ? z->give_way_after_parts : z->give_way;
		if (part + 1 == APEX_COMPACT_PARTS && may_start_over(served) &&
		    z->give_way != NULL && after_parts(z->give_way_ctx)) {
			snprintf(err, err_size, "gave way after part %u of %u", part + 1,
				 APEX_COMPACT_PARTS);
			apex_zone_unref(served);
			return APEX_ECANCELED;
		}
	}
}

/* served (the caller's reference) made compact in parts (in_parts()),
 * logged: 1, APEX_ENOTSUP (served's reference left to the caller, to
 * build it whole), or another negative code (APEX_ECANCELED: it gave
 * way, *z->parts_gave_way set). */
static int compact_in_parts(const apex_compact_zone_t *z, apex_zone_t *served, uint64_t start)
{
	size_t held = apex_zone_chain_memory(served);
	unsigned depth = served->derived_depth;
	uint32_t serial = served->serial;
	char err[512];
	/* served is let go of as the parts replace it */
	int rc = in_parts(z, served, err, sizeof(err));
	double took = (double)(apex_monotonic_ms() - start) / 1000.0;

	if (rc == 1) {
		apex_zone_t *now = apex_server_served_version(z->server, z->origin);
		size_t left = now != NULL ? keep_residue(now) : 0;
		size_t unread = now != NULL ? rdata_unread(now) : 0;
		apex_info("zone %s: serial %u built again in %u parts in %.3f s, %.1f MiB of "
			  "derived versions let go (a chain of %u), %.1f MiB left, %.1f MiB of "
			  "the whole build's RDATA no version reads",
			  z->name, serial, APEX_COMPACT_PARTS, took, MIB(held), depth, MIB(left),
			  MIB(unread));
		apex_zone_unref(now);
		apex_memory_purge();
	} else if (rc == APEX_ECANCELED) {
		apex_info("zone %s: serial %u not built again in parts yet, after %.3f s: %s",
			  z->name, serial, took, err);
		if (z->parts_gave_way != NULL)
			*z->parts_gave_way = true;
	} else if (rc != APEX_ENOTSUP) {
		apex_info("zone %s: serial %u not built again in parts: %s", z->name, serial, err);
	}
	return rc;
}

int apex_compact_served(const apex_compact_zone_t *z)
{
	apex_zone_t *served = apex_server_served_version(z->server, z->origin), *compact;
	uint64_t start = apex_monotonic_ms();
	size_t held;
	char err[512];
	int rc;
	/* in parts after parts that gave way: the last step wants them all
	 * one after the other (xfr/version_part.h), so they start over */
	bool after_parts = z->parts_gave_way != NULL && *z->parts_gave_way;

	if (z->parts_gave_way != NULL)
		*z->parts_gave_way = false;
	if (served == NULL || !apex_version_wants_compact(served)) {
		apex_zone_unref(served);
		return 0;
	}
	held = apex_zone_chain_memory(served);
	if (after_parts || by_parts(served)) {
		rc = compact_in_parts(z, served, start);
		if (rc != APEX_ENOTSUP)
			return rc;
		/* not derived (an owner the build only warns of): whole */
	}
	rc = build(z, served, &compact, err, sizeof(err));
	if (rc == APEX_OK && (rc = publish(z, served, compact)) < 0) {
		snprintf(err, sizeof(err), "not published: %s",
			 rc == -ESTALE ? "replaced meanwhile" : apex_strerror(rc));
		apex_zone_unref(compact);
	}
	if (rc == APEX_ECANCELED) {
		apex_info("zone %s: serial %u not built compact yet, after %.3f s: %s", z->name,
			  served->serial, (double)(apex_monotonic_ms() - start) / 1000.0, err);
		apex_zone_unref(served);
		return rc;
	}
	if (rc < 0) {
		apex_info("zone %s: serial %u kept as derived (%.1f MiB held by its chain of %u): "
			  "%s",
			  z->name, served->serial, MIB(held), served->derived_depth, err);
		apex_zone_unref(served);
		return rc;
	}
	apex_info("zone %s: serial %u built compact in %.3f s, %.1f MiB of derived versions "
		  "let go (a chain of %u)",
		  z->name, served->serial, (double)(apex_monotonic_ms() - start) / 1000.0,
		  MIB(held), served->derived_depth);
	apex_server_retire(z->server, served, true);
	apex_memory_purge();
	return 1;
}
