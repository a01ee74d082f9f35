/* SPDX-License-Identifier: BSD-3-Clause */
/* Hexadecimal digits, for zone data (DS digests, salts) and configuration (secrets, NSID). */
#ifndef APEX_UTIL_HEX_H
#define APEX_UTIL_HEX_H

/* The value of one hex digit (either case), or -1. */
static inline int apex_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
