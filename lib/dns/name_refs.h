/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Names and where they are, sorted in canonical order to be found by
 * binary search: how two lists of thousands of zones (a configuration's,
 * the reloader's, the transfer thread's) are matched in N log N rather
 * than N^2.  The names are the caller's and must outlive the refs.
 */
#ifndef APEX_DNS_NAME_REFS_H
#define APEX_DNS_NAME_REFS_H

#include <stddef.h>
#include <stdint.h>

typedef struct apex_name_ref {
	const uint8_t *name; /* wire format */
	size_t index;        /* where the caller keeps it */
} apex_name_ref_t;

/* refs sorted by name (canonical order, RFC 4034 section 6.1). */
void apex_name_refs_sort(apex_name_ref_t *refs, size_t count);

/* The ref of name in sorted refs, or NULL. */
const apex_name_ref_t *apex_name_refs_find(const apex_name_ref_t *refs, size_t count,
					   const uint8_t *name);

#endif
