/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How long a compaction takes to give way (xfr/version_compact.h): the
 * wait of a NOTIFY that comes while a secondary builds its version served
 * compact (doc/performance.md section 15).
 *
 *   contrib/bench/compact_give_way ZONEFILE ORIGIN [TIMES]
 *
 * Loads the zone, builds it compact once without giving way (its time
 * T), then TIMES (default 12) times more, each told to give way from a
 * moment spread evenly over T on: printed, for each, that moment, the
 * wait from it until the compaction returned, and where it gave way;
 * then the longest wait against T, which was the wait before the
 * compaction gave way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dns/name.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/version_compact.h"
#include "zone/load.h"
#include "zone/zone.h"

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Yes from the moment at on: a NOTIFY that came then. */
static bool from(void *ctx)
{
	return seconds() >= *(const double *)ctx;
}

int main(int argc, char **argv)
{
	uint8_t origin[APEX_NAME_MAX];
	apex_zone_t *zone = NULL, *compact = NULL;
	char err[512];
	int times = argc > 3 ? atoi(argv[3]) : 12;

	if (argc < 3 || times < 1 || apex_name_from_str(argv[2], origin) <= 0) {
		fprintf(stderr, "usage: %s ZONEFILE ORIGIN [TIMES]\n", argv[0]);
		return 2;
	}
	apex_log_set_level(APEX_LOG_ERROR);
	double t0 = seconds();
	if (apex_zone_load(argv[1], origin, &zone, err, sizeof(err)) != APEX_OK) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("zone %s: %zu records loaded in %.2f s\n", argv[2], zone->record_count,
	       seconds() - t0);
	t0 = seconds();
	if (apex_version_compact(zone, "compact", &compact, err, sizeof(err)) != APEX_OK) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	double whole = seconds() - t0, longest = 0;
	apex_zone_unref(compact);
	printf("built compact, never giving way: %.3f s\n", whole);
	for (int i = 0; i < times; i++) {
		double start = seconds(), at = start + whole * (i + 0.5) / times;
		int rc = apex_version_compact_or_give_way(zone, "compact", from, &at, &compact, err,
							  sizeof(err));
		double wait = seconds() - at;

		if (rc == APEX_OK) { /* done before it was told */
			apex_zone_unref(compact);
			printf("told at %.3f s: done first (%.3f s)\n", at - start,
			       wait + at - start);
			continue;
		}
		if (rc != APEX_ECANCELED) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		if (wait > longest)
			longest = wait;
		printf("told at %.3f s: gave way %.1f ms later (%s)\n", at - start, wait * 1e3,
		       err);
	}
	printf("longest wait %.1f ms, against %.0f ms for the whole compaction\n", longest * 1e3,
	       whole * 1e3);
	apex_zone_unref(zone);
	return 0;
}
