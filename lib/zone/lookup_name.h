/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A name prepared once for all the lookups one query makes: its lookup
 * key (dns/name.h) and, for the name and each of its ancestors, the
 * length of the ancestor's key (a prefix of the key) and its name hash
 * (dns/name_hash.h).  With these the zone table and a zone's
 * name index find the name or its closest existing ancestor by one hash
 * probe per candidate instead of a binary search each.
 */
#ifndef APEX_ZONE_LOOKUP_NAME_H
#define APEX_ZONE_LOOKUP_NAME_H

#include <stddef.h>
#include <stdint.h>

#include "dns/name.h"

typedef struct apex_lookup_name {
	size_t size; /* bytes of key */
	int labels;  /* labels of the name (root not counted) */
	/* For i = 0 .. labels, the ancestor with i labels (i == labels: the
	 * name itself): its key is key[0 .. ends[i]), its hash hashes[i]. */
	uint16_t ends[APEX_LABELS_MAX + 1];
	uint32_t hashes[APEX_LABELS_MAX + 1];
	uint8_t key[APEX_KEY_MAX];
} apex_lookup_name_t;

/* Fill ln from a valid uncompressed wire name (one pass over it). */
void apex_lookup_name_init(apex_lookup_name_t *ln, const uint8_t *name);

#endif
