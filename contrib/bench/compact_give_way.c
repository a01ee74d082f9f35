/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How long a compaction takes to give way (xfr/version_compact.h): the
 * wait of a NOTIFY that comes while a secondary builds its version served
 * compact (doc/performance.md section 15).
 *
 *   contrib/bench/compact_give_way ZONEFILE ORIGIN [TIMES [part|parts]]
 *
 * Loads the zone, builds it compact once without giving way (its time
 * T), then TIMES (default 12) times more, each told to give way from a
 * moment spread evenly over T on: printed, for each, that moment, the
 * wait from it until the compaction returned, and where it gave way;
 * then the longest wait against T, which was the wait before the
 * compaction gave way.  With "part", the same of the first of the 16
 * parts of a compaction in parts (xfr/version_part.h; apexd's
 * APEX_COMPACT_PARTS), which a part waited for whole before it gave way
 * within itself.  With "parts", no giving way: all 16 parts and the last
 * step (xfr/version_part.h) built one from the other, TIMES times, each
 * part's time and their total printed: the work of a compaction in parts
 * without apexd's publication and sweeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dns/name.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/version_compact.h"
#include "xfr/version_part.h"
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

#define PARTS 16

/* The whole compaction, or with part its first part, asking give_way. */
static int build(apex_zone_t *zone, bool part, apex_give_way_fn give_way, void *ctx,
		 apex_zone_t **out, char *err, size_t err_size)
{
	if (part)
		return apex_version_rebuild_part_or_give_way(zone, 0, PARTS, "part", give_way, ctx,
							     out, err, err_size);
	return apex_version_compact_or_give_way(zone, "compact", give_way, ctx, out, err, err_size);
}

/* All the parts of zone and the last step, one from the other, timed;
 * the versions let go of at the end.  0, or 1 with the error printed. */
static int all_parts(apex_zone_t *zone)
{
	apex_zone_t *chain[PARTS + 2] = { zone };
	double total = 0, longest = 0;
	char err[512];
	int rc = APEX_OK;

	apex_zone_ref(zone);
	for (unsigned part = 0; part <= PARTS && rc == APEX_OK; part++) {
		double t0 = seconds();
		rc = part < PARTS
			     ? apex_version_rebuild_part(chain[part], part, PARTS, "part",
							 &chain[part + 1], err, sizeof(err))
			     : apex_version_rebuild_relinked(chain[part], PARTS, "last",
							     &chain[part + 1], err, sizeof(err));
		double took = seconds() - t0;
		total += took;
		longest = took > longest ? took : longest;
	}
	for (unsigned i = 0; i < PARTS + 2; i++)
		apex_zone_unref(chain[i]);
	if (rc != APEX_OK) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("16 parts and the last step: %.3f s, the longest %.3f s\n", total, longest);
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t origin[APEX_NAME_MAX];
	apex_zone_t *zone = NULL, *compact = NULL;
	char err[512];
	int times = argc > 3 ? atoi(argv[3]) : 12;
	bool part = argc > 4 && strcmp(argv[4], "part") == 0;
	bool parts = argc > 4 && strcmp(argv[4], "parts") == 0;
	const char *what = part ? "the first of 16 parts" : "the whole compaction";

	if (argc < 3 || times < 1 || apex_name_from_str(argv[2], origin) <= 0 ||
	    (argc > 4 && !part && !parts)) {
		fprintf(stderr, "usage: %s ZONEFILE ORIGIN [TIMES [part|parts]]\n", argv[0]);
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
	for (int i = 0; parts && i < times; i++)
		if (all_parts(zone) != 0)
			return 1;
	if (parts) {
		apex_zone_unref(zone);
		return 0;
	}
	t0 = seconds();
	if (build(zone, part, NULL, NULL, &compact, err, sizeof(err)) != APEX_OK) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	double whole = seconds() - t0, longest = 0;
	apex_zone_unref(compact);
	printf("%s built, never giving way: %.3f s\n", what, whole);
	for (int i = 0; i < times; i++) {
		double start = seconds(), at = start + whole * (i + 0.5) / times;
		int rc = build(zone, part, from, &at, &compact, err, sizeof(err));
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
	printf("longest wait %.1f ms, against %.0f ms for %s\n", longest * 1e3, whole * 1e3, what);
	apex_zone_unref(zone);
	return 0;
}
