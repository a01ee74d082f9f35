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
#include <stdio.h>

#include "process/memory.h"
#include "process/memory_estimate.h"
#include "query/precompute.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/version_compact.h"
#include "zones/reload.h"
#include "zone/page_discard.h"

#define MIB(x) ((double)(x) / 1048576.0)

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
		rc = apex_version_compact(served, source, out, err, err_size);
	if (rc == APEX_OK && (rc = apex_precompute(*out)) < 0) {
		snprintf(err, err_size, "precomputing answers: %s", apex_strerror(rc));
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

int apex_compact_served(const apex_compact_zone_t *z)
{
	apex_zone_t *served = apex_server_served_version(z->server, z->origin), *compact;
	uint64_t start = apex_monotonic_ms();
	size_t held;
	char err[512];
	int rc;

	if (served == NULL || !apex_version_wants_compact(served)) {
		apex_zone_unref(served);
		return 0;
	}
	held = apex_zone_chain_memory(served);
	rc = build(z, served, &compact, err, sizeof(err));
	if (rc == APEX_OK && (rc = publish(z, served, compact)) < 0) {
		snprintf(err, sizeof(err), "not published: %s",
			 rc == -ESTALE ? "replaced meanwhile" : apex_strerror(rc));
		apex_zone_unref(compact);
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
