/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ASCII lowercase of a byte by a table (ascii.c): 'A' to 'Z' become 'a'
 * to 'z', every other byte stays.  DNS names compare ASCII
 * case-insensitively (RFC 4343); the lookups, hashes and compression of
 * the query path fold every byte of a name, and one load per byte costs
 * less than the comparison and branch it replaces (instructions counted
 * by tests/perf/guard.py).
 */
#ifndef APEX_DNS_ASCII_H
#define APEX_DNS_ASCII_H

#include <stdint.h>

extern const uint8_t apex_ascii_lower_table[256];

static inline uint8_t apex_ascii_lower(uint8_t c)
{
	return apex_ascii_lower_table[c];
}

#endif
