/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A NOTIFY sent (RFC 1996): a zone's new serial announced to one of its
 * secondaries over UDP, signed with TSIG when the target has a key, and
 * retried until the target answers.  Blocks: run it on a thread of its
 * own, never on a worker.
 */
#ifndef APEX_XFR_NOTIFY_OUT_H
#define APEX_XFR_NOTIFY_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tsig/tsig.h"

typedef struct apex_notify_target {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	const apex_tsig_key_t *key; /* NULL: unsigned */
	const char *text;           /* for messages */
} apex_notify_target_t;

/*
 * Send a NOTIFY for zone (wire form) with its SOA serial to target, and
 * wait for the answer: tries times, the first wait first_wait_ms, each
 * later one twice the one before.  cancel_fd (or -1), once readable,
 * abandons it.  APEX_OK once the target answered NOERROR (signed with its
 * key when it has one); otherwise an apex code with the reason in err.
 */
int apex_notify_send(const apex_notify_target_t *target, const uint8_t *zone, uint32_t serial,
		     unsigned tries, unsigned first_wait_ms, int cancel_fd, char *err,
		     size_t err_size);

#endif
