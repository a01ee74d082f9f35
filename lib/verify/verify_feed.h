/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A version written as a zone file into a pipe, the verifier's standard
 * input, by a thread of its own: the verifier reads it at its pace (or
 * not at all) while the caller waits for it and serves its queries.  A
 * verifier that exits without reading it all ends the feed (EPIPE).
 */
#ifndef APEX_VERIFY_VERIFY_FEED_H
#define APEX_VERIFY_VERIFY_FEED_H

#include <pthread.h>
#include <stdbool.h>

#include "zone/zone.h"

typedef struct apex_verify_feed {
	apex_zone_t *version; /* a reference, until the feed ends */
	int fd;               /* the pipe's write end, the feed's until it ends */
	pthread_t thread;
	bool running;
	int result; /* APEX_OK once written whole; else why not */
} apex_verify_feed_t;

/* Start writing version (a reference is taken) into fd (taken: closed
 * when the feed ends).  APEX_OK, or the failure (fd is closed). */
int apex_verify_feed_start(apex_verify_feed_t *f, apex_zone_t *version, int fd);

/* Wait for the feed's end (the pipe's reader must have exited or read it
 * all); its result. */
int apex_verify_feed_join(apex_verify_feed_t *f);

#endif
