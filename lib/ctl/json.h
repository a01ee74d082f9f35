/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON output helpers for control protocol replies (RFC 8259). */
#ifndef APEX_CTL_JSON_H
#define APEX_CTL_JSON_H

#include "ctl/buf.h"

/*
 * Append str as a JSON string: quoted, with '"', '\\' and every control
 * byte escaped.  Bytes of 0x80 and above (zone file names may hold any)
 * are written as \u00XX of the byte, so the output is always valid
 * ASCII JSON whatever the input.
 */
void apex_ctl_json_string(apex_ctl_buf_t *buf, const char *str);

#endif
