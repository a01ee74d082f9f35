/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DNS cookies (RFC 7873) with the interoperable server cookies of
 * RFC 9018:
 *
 *   server cookie = Version (1) | Reserved (3 zero bytes) | Timestamp (4,
 *                   Unix seconds) | Hash (8)
 *   Hash = SipHash-2-4(secret, Client Cookie | Version | Reserved |
 *                      Timestamp | Client IP address)
 *
 * Servers sharing the 16-byte secret (an anycast group) accept each
 * other's cookies.  A server cookie is valid when its hash matches, it is
 * at most one hour old and at most five minutes in the future (RFC 9018
 * section 4.3).  apex returns a fresh server cookie in every response to
 * a query with a cookie; it does not require cookies.
 */
#ifndef APEX_QUERY_COOKIE_H
#define APEX_QUERY_COOKIE_H

#include <stddef.h>
#include <stdint.h>

#define APEX_COOKIE_SECRET_SIZE 16
#define APEX_COOKIE_CLIENT_SIZE 8
#define APEX_COOKIE_SERVER_SIZE 16 /* the RFC 9018 server cookie */
#define APEX_COOKIE_MAX_AGE 3600   /* seconds a server cookie stays valid */
#define APEX_COOKIE_MAX_SKEW 300   /* seconds a timestamp may be ahead */

/* What the cookie option of a query carried (apex_answer_info_t.cookie). */
typedef enum {
	APEX_COOKIE_NONE = 0,    /* no cookie option, or cookies off */
	APEX_COOKIE_CLIENT_ONLY, /* a client cookie alone */
	APEX_COOKIE_VALID,       /* a server cookie we issued, still valid */
	APEX_COOKIE_INVALID,     /* a server cookie that failed verification */
} apex_cookie_status_t;

/*
 * The server cookie (APEX_COOKIE_SERVER_SIZE bytes) for this client
 * cookie and client address (addr: 4 or 16 bytes) at time now.
 */
void apex_cookie_make(const uint8_t secret[APEX_COOKIE_SECRET_SIZE],
		      const uint8_t client[APEX_COOKIE_CLIENT_SIZE], const uint8_t *addr,
		      size_t addr_size, uint32_t now, uint8_t out[APEX_COOKIE_SERVER_SIZE]);

/*
 * Whether server[0..server_size) is a valid server cookie for this
 * client cookie and address at time now: APEX_COOKIE_VALID or
 * APEX_COOKIE_INVALID.
 */
apex_cookie_status_t apex_cookie_verify(const uint8_t secret[APEX_COOKIE_SECRET_SIZE],
					const uint8_t client[APEX_COOKIE_CLIENT_SIZE],
					const uint8_t *server, size_t server_size,
					const uint8_t *addr, size_t addr_size, uint32_t now);

#endif
