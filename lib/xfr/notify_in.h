/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A NOTIFY received (RFC 1996): checked and answered.
 *
 * The message must be a NOTIFY request with one question, of class IN,
 * for a zone the caller keeps as a secondary (zone_acl() finds the zone's
 * allow-notify list), from an address and with the TSIG key that list
 * allows.  The answer repeats the question with QR and AA set: NOERROR
 * when accepted (signed with the request's key when it was signed),
 * FORMERR for a malformed request, REFUSED for a zone that is not a
 * secondary here or an address the list does not allow, NOTAUTH for a
 * signature that does not verify or a key the list does not name (RFC
 * 8945 section 5.2; the answer is then unsigned).
 *
 * Nothing is allocated but what an HMAC computation takes.
 */
#ifndef APEX_XFR_NOTIFY_IN_H
#define APEX_XFR_NOTIFY_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dns/name.h"
#include "tsig/tsig.h"
#include "xfr/acl.h"

/* The allow-notify list of zone (wire form) and *ctx_zone, or NULL when it
 * is not a secondary zone here. */
typedef const apex_acl_entry_t *(*apex_notify_zone_acl_fn)(void *ctx, const uint8_t *zone,
							   size_t *count, void **ctx_zone);

typedef struct apex_notify_result {
	bool accepted;               /* the zone should be checked now */
	uint8_t rcode;               /* of the answer */
	uint8_t zone[APEX_NAME_MAX]; /* the question's name, when it parsed */
	void *ctx_zone;              /* from zone_acl(), when accepted */
	const char *why;             /* when refused: a reason for logs */
	/* when accepted: the serial of the SOA its answer section carries (an
	 * unsecured hint, RFC 1996 3.7), if it carries one */
	bool has_serial;
	uint32_t serial;
} apex_notify_result_t;

/*
 * Answer the NOTIFY msg[0..size) from peer into out[0..out_capacity)
 * (at least size + the room of a TSIG record; 512 + size will do).
 * Returns the answer's size, 0 when nothing should be sent (not a
 * request, or too short to answer).
 */
size_t apex_notify_answer(const uint8_t *msg, size_t size, const struct sockaddr *peer,
			  const apex_tsig_keyring_t *ring, apex_notify_zone_acl_fn zone_acl,
			  void *ctx, uint64_t now, uint8_t *out, size_t out_capacity,
			  apex_notify_result_t *res);

#endif
