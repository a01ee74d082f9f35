/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a derivation's time goes (derive.h), step by step, as
 * build_profile.h does for a whole build: each step adds the time since
 * the last mark, and the version keeps the totals (zone->derive_ms) for
 * its caller to log.  A small IXFR's derivation is mostly two copies
 * proportional to the zone (the node pages its changed names are on and
 * the name index), which run about twice as slowly in apexd as in a
 * process that just made the version before (cold caches): this tells
 * them apart from the work proportional to the change, where it runs.
 */
#ifndef APEX_ZONE_DERIVE_PROFILE_H
#define APEX_ZONE_DERIVE_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "util/clock.h"

typedef enum {
	APEX_DERIVE_OWNERS, /* the changed owners' RRsets built, their node pages copied */
	APEX_DERIVE_INDEX,  /* the name index merged */
	APEX_DERIVE_NAMES,  /* new names' structure, the table's pages, NSEC and NSEC3 */
	APEX_DERIVE_LINKS,  /* RRSIGs, the SOA, the owners' links and what points at them */
	APEX_DERIVE_STEPS
} apex_derive_step_t;

/* The steps' milliseconds, and the end of the last step timed. */
typedef struct apex_derive_profile {
	uint64_t mark_ns;
	float ms[APEX_DERIVE_STEPS];
} apex_derive_profile_t;

/* The time since the last mark (apex_monotonic_ns()) goes to step; the
 * mark moves to now.  A profile zeroed and given a mark begins. */
static inline void apex_derive_profile_step(apex_derive_profile_t *p, apex_derive_step_t step)
{
	uint64_t now = apex_monotonic_ns();

	p->ms[step] += (float)((double)(now - p->mark_ns) / 1e6);
	p->mark_ns = now;
}

/* "owners and node pages 0.12, name index copied 0.45, ..." (milliseconds)
 * into buf. */
static inline void apex_derive_profile_text(const float ms[APEX_DERIVE_STEPS], char *buf,
					    size_t size)
{
	snprintf(buf, size,
		 "owners and node pages %.2f, name index copied %.2f, new names %.2f, "
		 "links %.2f",
		 (double)ms[APEX_DERIVE_OWNERS], (double)ms[APEX_DERIVE_INDEX],
		 (double)ms[APEX_DERIVE_NAMES], (double)ms[APEX_DERIVE_LINKS]);
}

#endif
