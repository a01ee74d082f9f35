/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A secondary zone's version built compact after an IXFR (secondary_internal.h,
 * xfr/version_compact.h): when the chain of derived versions holds more
 * than the rule allows, the version served is built whole again from its
 * own records, on the transfer thread after the IXFR is published and
 * journaled (never on the way to serving it), within memory-limit, and
 * served in its place: same serial, same records, so neither the journal
 * nor the copy hears of it.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include <errno.h>
#include <stdio.h>

#include "process/memory.h"
#include "query/precompute.h"
#include "transfers/secondary.h"
#include "transfers/secondary_internal.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/version_compact.h"
#include "zones/reload.h"

/* Build served's compact form into *out (precomputed), within memory-limit. */
static int build(apex_secondary_t *s, apex_secondary_zone_t *z, const apex_zone_t *served,
		 apex_zone_t **out, char *err, size_t err_size)
{
	apex_transfer_memory_t memory;
	char source[200];
	int rc;

	*out = NULL;
	snprintf(source, sizeof(source), "compact version of %s", z->name);
	apex_transfer_memory_begin(&memory, s->memory_limit, z->name, served);
	rc = apex_transfer_memory_axfr(&memory); /* a whole build beside the version served */
	if (rc < 0)
		snprintf(err, err_size, "%s", memory.err);
	else
		rc = apex_version_compact(served, source, out, err, err_size);
	if (rc == APEX_OK && (rc = apex_precompute(*out)) < 0) {
		snprintf(err, err_size, "precomputing answers: %s", apex_strerror(rc));
		apex_zone_unref(*out);
		*out = NULL;
	}
	apex_transfer_memory_end(&memory);
	return rc;
}

void apex_secondary_compact(apex_secondary_t *s, apex_secondary_zone_t *z)
{
	apex_zone_t *served = apex_server_served_version(s->server, z->origin), *compact;
	uint64_t start = apex_monotonic_ms();
	size_t held;
	char err[512];
	int rc;

	if (served == NULL || !apex_version_wants_compact(served)) {
		apex_zone_unref(served);
		return;
	}
	held = served->chain_memory;
	rc = build(s, z, served, &compact, err, sizeof(err));
	if (rc == APEX_OK) {
		/* only over the version it was made from (a reconfig may have
		 * replaced it meanwhile) */
		rc = s->reloader != NULL ? apex_reloader_publish_over(s->reloader, z->reloader_id,
								      served, compact)
					 : apex_zonetable_publish(&s->server->zonetable, compact);
		if (rc < 0) {
			snprintf(err, sizeof(err), "not published: %s", apex_strerror(rc));
			apex_zone_unref(compact);
		}
	}
	if (rc < 0) {
		apex_info("zone %s: serial %u kept as derived (%.1f MiB held by its chain): %s",
			  z->name, served->serial, (double)held / 1048576.0, err);
		apex_zone_unref(served);
		return;
	}
	apex_info("zone %s: serial %u built compact in %.3f s, %.1f MiB of derived versions let go",
		  z->name, served->serial, (double)(apex_monotonic_ms() - start) / 1000.0,
		  (double)held / 1048576.0);
	apex_server_retire(s->server, served, true);
	apex_memory_purge();
}
