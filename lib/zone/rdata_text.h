/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Master-file text to wire format for the record types that make up
 * large zones, without ldns.
 *
 * Why by hand: loading a 1M-record TLD zone through ldns's text parser
 * (ldns_rr_new_frm_str) allocates and frees several objects per record
 * and spends most of the load there.  These functions write uncompressed
 * wire RDATA straight into the caller's buffer and allocate nothing.
 *
 * They are an accelerator, not a second parser with its own rules: any
 * text they do not recognise as a valid, plain form (an RFC 3597 "\#"
 * form, a quoted field, an algorithm mnemonic, a number out of range,
 * bad base64 ...) makes them return APEX_EINVAL, and the loader then
 * gives the record to ldns exactly as before, so what is accepted and
 * the error messages stay ldns's.  For text both accept, the wire
 * format is identical (tests/unit/test_rdata_text.c compares them
 * record by record over the zones in zones/).
 *
 * Two types are the exception: the RDATA of IPSECKEY and AMTRELAY is
 * parsed here only.  ldns 1.8.3's parsers of them leak memory on a line
 * with too many fields and refuse a public key split by blanks, and ldns
 * does not know the mnemonic AMTRELAY; record_ldns.c gives ldns such a
 * line in the RFC 3597 generic form.
 */
#ifndef APEX_ZONE_RDATA_TEXT_H
#define APEX_ZONE_RDATA_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RDATA of the largest record (rdlength is 16 bits). */
#define APEX_RDATA_MAX 65535

/* True if apex_rdata_from_text() may handle type. */
bool apex_rdata_text_supported(uint16_t type);

/* A decimal number of at most max (digits only, no sign; leading zeros
 * allowed) into *value: true, or false with *value unchanged. */
bool apex_rdata_parse_uint(const char *tok, size_t len, uint32_t max, uint32_t *value);

/*
 * The RR type of a mnemonic ("NS", "rrsig", "TYPE65534") of len bytes.
 * Returns the type, or -1 if the text is not a type.
 */
int apex_rrtype_from_text(const char *text, size_t len);

/*
 * A domain name in presentation format (text[0..len), "@" is origin;
 * a name not ending in an unescaped dot is relative to origin) into
 * wire format in out (APEX_NAME_MAX bytes).  Letter case is kept.
 * Returns the wire size, or APEX_EINVAL if the text is not a plain
 * valid name.
 */
int apex_name_from_text(const char *text, size_t len, const uint8_t *origin, uint8_t *out);

/*
 * The RDATA of a record of type written as text (the fields after the
 * type, NUL-terminated; blanks are spaces or tabs, comments and
 * parentheses already removed) into out (APEX_RDATA_MAX bytes).
 * Relative names are completed with origin.  Returns the RDATA length,
 * or APEX_EINVAL: the loader must parse the record with ldns.
 */
int apex_rdata_from_text(uint16_t type, const char *text, const uint8_t *origin, uint8_t *out);

#endif
