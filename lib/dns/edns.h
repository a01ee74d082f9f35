/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EDNS (RFC 6891) in messages that are not the query engine's (which
 * writes its own OPT records, query/writer.h): whether a request carries
 * an OPT record, and an OPT record with an Extended DNS Error (RFC 8914)
 * added to an answer built by hand (a transfer or NOTIFY refused).
 */
#ifndef APEX_DNS_EDNS_H
#define APEX_DNS_EDNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* EDNS option codes apex looks at or sends. */
#define APEX_EDNS_NSID 3
#define APEX_EDNS_COOKIE 10
#define APEX_EDNS_EDE 15         /* Extended DNS Error, RFC 8914 */
#define APEX_EDNS_ZONEVERSION 19 /* RFC 9660 */

/* Extended DNS Error codes (RFC 8914 section 4) apex sends. */
#define APEX_EDE_NOT_READY 14
#define APEX_EDE_PROHIBITED 18
#define APEX_EDE_NOT_AUTHORITATIVE 20
#define APEX_EDE_NOT_SUPPORTED 21

/* The UDP payload size apex advertises by default (edns-payload). */
#define APEX_EDNS_PAYLOAD 1232

/* True if the message m[0..n) has an OPT record in its additional
 * section; false if not, or if it cannot be read that far. */
bool apex_message_has_opt(const uint8_t *m, size_t n);

/*
 * Append an OPT record (payload APEX_EDNS_PAYLOAD, version 0) holding
 * the Extended DNS Error code to the message m[0..n), whose additional
 * section must be its last and whose count is raised by one.  Returns
 * the new size, or n unchanged when capacity is too small.
 */
size_t apex_message_add_ede(uint8_t *m, size_t n, size_t capacity, uint16_t code);

#endif
