/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory-limit for the transfers of secondary zones (secondary_internal.h):
 * each transfer's estimated peak (process/memory_estimate.h) claimed on
 * the limit (process/memory_limit.h) before it builds, and again as a
 * whole zone arrives.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/secondary.h"

#include <stdio.h>
#include <string.h>

#include "process/memory_estimate.h"
#include "transfers/secondary_internal.h"
#include "util/error.h"

#define MIB(x) ((double)(x) / (1024.0 * 1024.0))
/* An AXFR's estimate is checked again every this many records. */
#define CHECK_EVERY 8192u

void apex_transfer_memory_begin(apex_transfer_memory_t *t, struct apexd_memory_limit *limit,
				const char *zone, const apex_zone_t *served)
{
	memset(t, 0, sizeof(*t));
	t->limit = apexd_memory_limit_on(limit) ? limit : NULL;
	t->zone = zone;
	t->served = served;
	t->next_check = CHECK_EVERY;
}

/* Claim estimate for what (a description); a refusal is kept in t->err. */
static int claim(apex_transfer_memory_t *t, uint64_t estimate, const char *what)
{
	int rc = apexd_memory_limit_claim(t->limit, APEXD_MEMORY_TRANSFER, &t->claim, estimate,
					  what, t->err, sizeof(t->err));

	t->refused = rc == APEX_EMEMLIMIT;
	return rc;
}

int apex_transfer_memory_axfr(apex_transfer_memory_t *t)
{
	char what[160];

	if (t->limit == NULL || t->served == NULL)
		return APEX_OK; /* nothing to go by until records arrive */
	snprintf(what, sizeof(what),
		 "an AXFR of %s as large as the version served (%.1f MiB, %zu records)", t->zone,
		 MIB(t->served->memory), t->served->record_count);
	return claim(t, apexd_estimate_like(t->served->memory, t->served->record_count, 1.0), what);
}

int apex_transfer_memory_progress(apex_transfer_memory_t *t, uint64_t records, uint64_t bytes)
{
	char what[200];
	uint64_t estimate;

	if (t->limit == NULL || records < t->next_check)
		return APEX_OK;
	t->next_check = records + CHECK_EVERY;
	if (t->served != NULL && t->served->record_count > 0) {
		/* like the version served, once it has more records than that one */
		double scale = (double)records / (double)t->served->record_count;

		estimate = apexd_estimate_like(t->served->memory, t->served->record_count,
					       scale > 1.0 ? scale : 1.0);
		snprintf(what, sizeof(what),
			 "an AXFR of %s (%llu records received; the version served: %.1f MiB, "
			 "%zu records)",
			 t->zone, (unsigned long long)records, MIB(t->served->memory),
			 t->served->record_count);
	} else {
		estimate = apexd_estimate_records(records, bytes);
		snprintf(what, sizeof(what),
			 "an AXFR of %s (%llu records, %.1f MiB received so far)", t->zone,
			 (unsigned long long)records, MIB(bytes));
	}
	return claim(t, estimate, what);
}

int apex_transfer_memory_ixfr(apex_transfer_memory_t *t, const apex_changes_t *sets, size_t count)
{
	uint64_t bytes = 0;
	char what[200];

	t->added = t->removed = 0;
	for (size_t i = 0; i < count; i++) {
		bytes += sets[i].size;
		t->added += sets[i].added;
		t->removed += sets[i].removed;
	}
	if (t->limit == NULL || t->served == NULL)
		return APEX_OK;
	snprintf(what, sizeof(what),
		 "an IXFR of %s derived in place (%llu records removed, %llu added, %.1f MiB of "
		 "change sets)",
		 t->zone, (unsigned long long)t->removed, (unsigned long long)t->added, MIB(bytes));
	return claim(t, apexd_estimate_derived(bytes, t->added + t->removed, t->served->node_count),
		     what);
}

int apex_transfer_memory_whole(void *ctx, char *err, size_t err_size)
{
	apex_transfer_memory_t *t = ctx;
	uint64_t records;
	char what[200];
	int rc;

	if (t->limit == NULL || t->served == NULL)
		return APEX_OK;
	records = t->served->record_count + t->added;
	records = records > t->removed ? records - t->removed : 0;
	snprintf(what, sizeof(what),
		 "an IXFR of %s built whole (the version served: %.1f MiB, %zu records; about %llu "
		 "after the change)",
		 t->zone, MIB(t->served->memory), t->served->record_count,
		 (unsigned long long)records);
	double scale = t->served->record_count > 0
			       ? (double)records / (double)t->served->record_count
			       : 1.0;
	rc = claim(t,
		   apexd_estimate_like(t->served->memory, t->served->record_count,
				       scale > 1.0 ? scale : 1.0),
		   what);
	if (rc < 0)
		snprintf(err, err_size, "%s", t->err);
	return rc;
}

void apex_transfer_memory_end(apex_transfer_memory_t *t)
{
	apexd_memory_limit_release(t->limit, &t->claim);
}
