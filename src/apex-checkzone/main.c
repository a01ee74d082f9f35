/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apex-checkzone: load a zone file exactly as apexd does (the same
 * loader, build, precomputation and ZONEMD check) and report what
 * apexd would say, then what a signed zone's DNSSEC records say of
 * themselves (zone/check_dnssec.h).
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: PACKAGE_VERSION, _GNU_SOURCE */
#endif

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dns/name.h"
#include "query/precompute.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/check_dnssec.h"
#include "zone/load.h"
#include "zones/zonemd_check.h" /* src/apexd: what apexd checks before serving */

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

enum {
	EXIT_CLEAN = 0,    /* would be served, nothing to report */
	EXIT_REFUSED = 1,  /* would not be served */
	EXIT_FINDINGS = 2, /* would be served, with warnings */
	EXIT_USAGE = 64,
};

static void usage(FILE *out)
{
	fprintf(out, "usage: apex-checkzone [-q] [-t TIME] [--no-zonemd] ORIGIN FILE\n"
		     "\n"
		     "Load the zone file as apexd would and report what is wrong with it.\n"
		     "\n"
		     "  -t, --time TIME   check signatures at TIME (YYYYMMDDHHMMSS in UTC, or\n"
		     "                    seconds since 1970) instead of now\n"
		     "      --no-zonemd   do not verify the ZONEMD record (zonemd-verify: no)\n"
		     "  -q, --quiet       print problems only\n"
		     "  -V, --version     print the version\n"
		     "\n"
		     "Exit status: 0 served, nothing to report; 1 apexd would not serve it;\n"
		     "2 served, with warnings.\n");
}

/* TIME as YYYYMMDDHHMMSS (UTC) or seconds since the epoch; false if neither. */
static bool parse_time(const char *text, uint32_t *out)
{
	struct tm tm;
	char *end;

	memset(&tm, 0, sizeof(tm));
	if (strlen(text) == 14 && strptime(text, "%Y%m%d%H%M%S", &tm) != NULL &&
	    strptime(text, "%Y%m%d%H%M%S", &tm)[0] == '\0') {
		*out = (uint32_t)timegm(&tm);
		return true;
	}
	unsigned long long v = strtoull(text, &end, 10);
	if (*text == '\0' || *end != '\0' || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* A DNSSEC finding: a warning line like apexd's. */
static void report(void *arg, const char *finding)
{
	apex_warning("zone %s: %s", (const char *)arg, finding);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "time", required_argument, NULL, 't' }, { "no-zonemd", no_argument, NULL, 'Z' },
		{ "quiet", no_argument, NULL, 'q' },      { "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },       { NULL, 0, NULL, 0 },
	};
	uint32_t now = (uint32_t)time(NULL);
	bool zonemd = true, quiet = false;
	uint8_t origin[APEX_NAME_MAX];
	char err[1024], name[APEX_NAME_MAX * 4 + 1];
	apex_zone_t *zone = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "t:qVh", options, NULL)) != -1) {
		switch (c) {
		case 't':
			if (!parse_time(optarg, &now)) {
				fprintf(stderr, "apex-checkzone: bad time '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'Z': zonemd = false; break;
		case 'q': quiet = true; break;
		case 'V': printf("apex-checkzone %s\n", PACKAGE_VERSION); return EXIT_CLEAN;
		case 'h': usage(stdout); return EXIT_CLEAN;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (apex_name_from_str(argv[optind], origin) < 0) {
		fprintf(stderr, "apex-checkzone: bad origin '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	apex_name_to_str(origin, name, sizeof(name));
	apex_log_set_program("apex-checkzone");
	apex_log_set_level(quiet ? APEX_LOG_WARNING : APEX_LOG_INFO);

	err[0] = '\0';
	int rc = apex_zone_load(argv[optind + 1], origin, &zone, err, sizeof(err));
	if (rc == APEX_OK)
		rc = apex_precompute(zone);
	if (rc == APEX_OK)
		rc = apexd_zonemd_check(name, zone, zonemd, err, sizeof(err));
	if (rc != APEX_OK) {
		apex_error("zone %s: %s (apexd would not serve it)", name,
			   err[0] != '\0' ? err : apex_strerror(rc));
		apex_zone_unref(zone);
		return EXIT_REFUSED;
	}
	size_t dnssec = apex_zone_check_dnssec(zone, now, report, name);
	/* the loader's warnings (missing glue, TTLs, ...) and the DNSSEC findings */
	unsigned long warnings = apex_log_count(APEX_LOG_WARNING);
	if (!quiet || warnings > 0)
		printf("zone %s: serial %u, %zu records: apexd would serve it; %lu warning(s), "
		       "%zu DNSSEC finding(s)\n",
		       name, zone->serial, zone->record_count, warnings, dnssec);
	apex_zone_unref(zone);
	return warnings > 0 ? EXIT_FINDINGS : EXIT_CLEAN;
}
