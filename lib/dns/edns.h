/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EDNS (RFC 6891) in messages that are not the query engine's (which
 * writes its own OPT records, query/writer.h): whether a message carries
 * an OPT record and what one of its options holds, and an OPT record with
 * one option added to a message built by hand (an Extended DNS Error,
 * RFC 8914, to a transfer or NOTIFY refused; an EDNS EXPIRE, RFC 7314,
 * to a transfer's request and its answer).
 */
#ifndef APEX_DNS_EDNS_H
#define APEX_DNS_EDNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* EDNS option codes apex looks at or sends. */
#define APEX_EDNS_NSID 3
#define APEX_EDNS_EXPIRE 9 /* RFC 7314 */
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
 * The data of the first option `code` of the OPT record of m[0..n): its
 * length, with *data pointing into m; -1 when m has no OPT record, or no
 * such option, or its options cannot be read that far.
 */
int apex_message_opt_option(const uint8_t *m, size_t n, uint16_t code, const uint8_t **data);

/*
 * Append an OPT record (payload APEX_EDNS_PAYLOAD, version 0) holding
 * one option, code with data[0..len), to the message m[0..n), whose
 * additional section must be its last and whose count is raised by one.
 * Returns the new size, or n unchanged when capacity is too small.
 */
size_t apex_message_add_opt(uint8_t *m, size_t n, size_t capacity, uint16_t code,
			    const uint8_t *data, uint16_t len);

/* The same with the Extended DNS Error code as its option. */
size_t apex_message_add_ede(uint8_t *m, size_t n, size_t capacity, uint16_t code);

#endif
