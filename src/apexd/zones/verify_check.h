/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Each zone's verifier (lib/verify): the settings in force, what every
 * version built by a load, a reload, a transfer or a journal replay goes
 * through before it is published, and what the last verification of each
 * zone found, for zone-status and the metrics.
 *
 * One table for the process, guarded by a mutex held only to read or
 * change it, never while a verifier runs: the loading threads (start-up),
 * the reload threads and the threads of the refresh pool each wait for
 * their own verifier, at most verifier-count of them at once.  A worker never waits
 * on it.
 */
#ifndef APEXD_VERIFY_CHECK_H
#define APEXD_VERIFY_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config/daemon_config.h"
#include "verify/verifier.h"
#include "zone/zone.h"

/* Put the verification settings of cfg in force (each zone's own keys,
 * else the server's), for the versions offered from now on; the results
 * of zones kept stay.  APEX_OK or APEX_ENOMEM (the old ones stay). */
int apexd_verify_configure(const apex_config_t *cfg);

/* How many verifiers may run side by side: verifier-count when a zone
 * has a verifier, else 1. */
unsigned apexd_verify_parallel(void);

/* Let the settings and results go (at exit, once no thread loads). */
void apexd_verify_free(void);

/*
 * Offer version, the next of zone origin (name: for the logs), to the
 * zone's verifier and wait for its verdict: APEX_OK when it may be served
 * (it passed, or the zone has no verifier); else APEX_ELOAD, with the
 * reason in err (the exit status or timeout, and the end of what the
 * verifier said, which is logged whole).
 */
int apexd_verify_check(const char *name, const uint8_t *origin, apex_zone_t *version, char *err,
		       size_t err_size);

/* The last verification of a zone (zone-status). */
typedef struct apexd_verify_report {
	char verifier[256]; /* the command, empty when the zone is not verified */
	bool ran;           /* one ran since the start */
	bool running;       /* one runs now */
	apex_verify_outcome_t outcome;
	bool not_run;    /* the verifier could not be started: detail says why */
	uint32_t serial; /* of the version it judged */
	struct timespec at;
	double seconds;
	uint64_t queries;
	char detail[256]; /* the exit status or why it did not run */
} apexd_verify_report_t;

/* origin's report into *out; false when the zone is not verified. */
bool apexd_verify_report(const uint8_t *origin, apexd_verify_report_t *out);

/* Verifications since the start, by outcome (the metrics). */
typedef struct apexd_verify_totals {
	uint64_t passed, failed, timed_out, not_run;
	unsigned running;
} apexd_verify_totals_t;

void apexd_verify_totals(apexd_verify_totals_t *t);

#endif
