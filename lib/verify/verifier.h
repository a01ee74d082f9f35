/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zone version offered to an external verifier before it is served, as
 * NSD's verify: (4.6) does: the command runs with the version served to
 * it on loopback (verify_server.h) and, when asked, written on its
 * standard input as a zone file (verify_feed.h); exit status 0 accepts
 * the version, anything else or the timeout rejects it.
 *
 * The environment it gets is NSD's: VERIFY_ZONE (the zone's name),
 * VERIFY_ZONE_ON_STDIN ("yes" or "no"), VERIFY_IP_ADDRESS and VERIFY_PORT
 * (IPv6 when it could be bound, else IPv4), VERIFY_IPV6_ADDRESS and
 * VERIFY_IPV6_PORT, VERIFY_IPV4_ADDRESS and VERIFY_IPV4_PORT, and
 * VERIFY_IP_ADDRESSES ("ADDRESS@PORT" for each, space-separated), beside
 * the server's own.  It runs in a process group of its own, with default
 * signal handling, no descriptor of the server but its standard input,
 * output and error (output and error are read together); whatever is
 * left of that group when the verifier exits is killed.
 */
#ifndef APEX_VERIFY_VERIFIER_H
#define APEX_VERIFY_VERIFIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/zone.h"

typedef struct apex_verifier {
	char *const *argv; /* the command and its arguments, NULL-terminated; argv[0] searched
			      in PATH */
	bool feed_zone;    /* the version on standard input (verifier-feed-zone) */
	unsigned timeout;  /* seconds; 0: none (verifier-timeout) */
} apex_verifier_t;

typedef enum apex_verify_outcome {
	APEX_VERIFY_PASSED,    /* it exited with status 0 */
	APEX_VERIFY_FAILED,    /* another status, or a signal ended it */
	APEX_VERIFY_TIMED_OUT, /* still running after the timeout: killed */
} apex_verify_outcome_t;

#define APEX_VERIFY_OUTPUT_MAX 2048

typedef struct apex_verify_result {
	apex_verify_outcome_t outcome;
	int status;       /* its exit status; -1 when a signal ended it */
	int signal;       /* the signal that ended it, or 0 */
	uint64_t queries; /* queries answered to it */
	uint64_t ms;      /* from its start to its end */
	/* The end of what it wrote (output and error), NUL-terminated;
	 * output_cut when it wrote more than this. */
	char output[APEX_VERIFY_OUTPUT_MAX];
	bool output_cut;
} apex_verify_result_t;

/*
 * Run verifier v on version of zone zone_name (as the operator wrote it),
 * and wait for its verdict (at most its timeout and a few seconds to kill
 * it).  APEX_OK with the verdict in *res; else the verifier could not be
 * run (no loopback address, no such command, out of memory): the reason
 * in err, and the version is to be treated as rejected.
 */
int apex_verify_run(const apex_verifier_t *v, const char *zone_name, apex_zone_t *version,
		    apex_verify_result_t *res, char *err, size_t err_size);

/* "passed", "failed" or "timed out". */
const char *apex_verify_outcome_name(apex_verify_outcome_t outcome);

#endif
