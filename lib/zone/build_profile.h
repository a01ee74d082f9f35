/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a build's time goes, step by step: each step of apex_zone_build()
 * adds the time since the last mark to its total, and the load logs the
 * totals at debug level (apexd -v), which is how doc/performance.md's
 * profile of the build at 3M to 20M records was taken.  Two clock reads
 * a step: nothing next to a step's work.
 */
#ifndef APEX_ZONE_BUILD_PROFILE_H
#define APEX_ZONE_BUILD_PROFILE_H

#include <stdio.h>
#include <time.h>

typedef enum {
	APEX_BUILD_SORT,        /* owners by key, records by owner, type, RDATA; duplicates out */
	APEX_BUILD_CHECK,       /* per owner: SOA, CNAME, DNAME rules; NSEC3-only owners */
	APEX_BUILD_LAYOUT,      /* the node list: owners and empty non-terminals */
	APEX_BUILD_FILL,        /* nodes and their RRsets, RDATA copied */
	APEX_BUILD_INDEX,       /* the name index published */
	APEX_BUILD_HASHES,      /* each node's name hash */
	APEX_BUILD_NODE_TABLE,  /* the hash table of the nodes */
	APEX_BUILD_RDATA_LINKS, /* SOA; additional data and the nodes RDATA names point at */
	APEX_BUILD_DNSSEC,      /* NSEC or NSEC3 links */
	APEX_BUILD_STEPS
} apex_build_step_t;

typedef struct apex_build_profile {
	struct timespec mark;
	double seconds[APEX_BUILD_STEPS];
} apex_build_profile_t;

static inline void apex_build_profile_start(apex_build_profile_t *p)
{
	for (int i = 0; i < APEX_BUILD_STEPS; i++)
		p->seconds[i] = 0;
	clock_gettime(CLOCK_MONOTONIC, &p->mark);
}

/* The time since the last mark goes to step; the mark moves to now. */
static inline void apex_build_profile_step(apex_build_profile_t *p, apex_build_step_t step)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	p->seconds[step] += (double)(now.tv_sec - p->mark.tv_sec) +
			    (double)(now.tv_nsec - p->mark.tv_nsec) / 1e9;
	p->mark = now;
}

/* "sort 1.234 check 0.100 ..." into buf. */
static inline void apex_build_profile_text(const apex_build_profile_t *p, char *buf, size_t size)
{
	static const char *const names[APEX_BUILD_STEPS] = {
		"sort",   "check",      "layout",      "fill",   "index",
		"hashes", "node-table", "rdata-links", "dnssec",
	};
	size_t at = 0;
	buf[0] = '\0';
	for (int i = 0; i < APEX_BUILD_STEPS && at < size; i++) {
		int n = snprintf(buf + at, size - at, "%s%s %.3f", i > 0 ? " " : "", names[i],
				 p->seconds[i]);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}

#endif
