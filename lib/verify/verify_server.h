/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The listener a verifier queries: one version of one zone, not yet
 * published, answered on loopback addresses (127.0.0.1 and ::1) at a port
 * the kernel picks, over UDP and TCP (AXFR included), by a thread of its
 * own while the verifier runs.  The public listeners never see the
 * version: it lives in a zone table of its own.
 *
 * A TCP connection is served to its end before the next is accepted (a
 * verifier is one local client); a stalled one is closed after
 * APEX_VERIFY_SERVER_IDLE_MS.
 */
#ifndef APEX_VERIFY_VERIFY_SERVER_H
#define APEX_VERIFY_VERIFY_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "query/answer.h"
#include "zone/zone.h"
#include "zone/zoneset.h"

#define APEX_VERIFY_SERVER_IDLE_MS 2000
#define APEX_VERIFY_ADDRESS_TEXT 48

/* One address the version is served on. */
typedef struct apex_verify_address {
	int family;                          /* AF_INET or AF_INET6 */
	char text[APEX_VERIFY_ADDRESS_TEXT]; /* "127.0.0.1", "::1" */
	uint16_t port;                       /* the same for UDP and TCP */
	int udp, tcp;                        /* sockets; -1 when closed */
} apex_verify_address_t;

typedef struct apex_verify_server {
	apex_zonetable_t table; /* the version alone */
	apex_zone_t *version;   /* a reference, for AXFR */
	apex_answer_config_t answer_config;
	apex_verify_address_t addrs[2]; /* IPv6 first when it could be bound */
	int addr_count;
	int stop_fd; /* an eventfd: readable once the server is to stop */
	pthread_t thread;
	bool running;
	uint8_t *query, *answer; /* a message each (65535 bytes); owned */
	atomic_ullong queries;   /* answered (an AXFR counts once) */
} apex_verify_server_t;

/*
 * Bind the listeners for version (a reference is taken) and start
 * serving it.  APEX_OK, or the failure with the reason in err (nothing is
 * left open: s needs no apex_verify_server_stop()).  Loopback addresses
 * that cannot be bound (no IPv6) are left out; none at all is a failure.
 */
int apex_verify_server_start(apex_verify_server_t *s, apex_zone_t *version, char *err,
			     size_t err_size);

/* Stop serving, close the sockets and let go of the version. */
void apex_verify_server_stop(apex_verify_server_t *s);

#endif
