/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The number fields of a record line that ldns parsed, checked against
 * the width of their field.
 *
 * ldns reads an 8-, 16- or 32-bit field with strtol() or strtoul() and
 * keeps what the field holds: CAA flags of 256 become 0, NSEC3PARAM
 * iterations of 70000 become 4464, an SOA serial of 4294967297 becomes
 * 1, an SOA refresh of 4294967296 becomes 0, a NAPTR preference of -1
 * becomes 65535.  The zone would then be
 * served with records that are not the file's.  BIND and Knot DNS
 * refuse such a line ("out of range"); NSD 4.6 keeps the low bits as
 * ldns does.  apex refuses it, naming the file, the line and the field.
 */
#ifndef APEX_ZONE_RECORD_NUMBERS_H
#define APEX_ZONE_RECORD_NUMBERS_H

#include "zone/zone_file_reader.h"

/*
 * The fields of type's RDATA text rdata (a line ldns has read without
 * error), from the first up to the first that may hold a blank (a
 * string, base64, hex, a list): each number field must be decimal digits
 * only and fit its width; a field that also takes a mnemonic (an
 * algorithm, a TLSA usage) or a unit (an SOA timer, "1h") is checked
 * only when it is written as a number.  RDATA in the RFC 3597 generic form is not checked.  Returns
 * APEX_OK, or the reader's failure (apex_reader_fail()) at line.
 */
int apex_record_check_numbers(apex_reader_t *r, int line, int type, const char *rdata);

#endif
