/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A catalog zone (RFC 9432, schema version 2) read from a zone version:
 * its member zones, each with its member node label and its group and
 * coo properties.
 *
 * The version must say it is a catalog of version 2 (a TXT "2" at
 * version.$CATZ, section 3), or nothing of it is read.  Each name one
 * label below zones.$CATZ with a PTR RRset is a member node (section
 * 4.1), whose PTR names the member zone; a member node that cannot be
 * read as one member is skipped, and the caller is told which and why:
 * more than one PTR record, a member zone that is the root, the catalog
 * or below it, a group property that is not one TXT record of one
 * character-string of 1 to 255 octets without whitespace (section 4.4.2),
 * a member zone that an earlier member node (in canonical order) already
 * names.  A coo property (section 4.4.1) of more than one PTR record is
 * ignored, the member kept.  Everything else is ignored: the SOA and NS
 * at the apex, serial and unknown properties, private-extension,
 * properties of a name without a PTR, names deeper than the properties'
 * level, other types at a member node.
 */
#ifndef APEX_CATALOG_CATALOG_READ_H
#define APEX_CATALOG_CATALOG_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/name.h" /* APEX_NAME_MAX */
#include "zone/zone.h"

/* One member zone of a catalog.  Its fields point into the catalog's
 * bytes: some 50 bytes a member, where the longest names would take
 * 800 (a catalog of 10,000 members is read again at each change). */
typedef struct apex_catalog_member {
	/* the member zone's name, wire format, lower-cased */
	const uint8_t *zone;
	/* its member node label <unique-N>: length byte then the label (lower-cased) */
	const uint8_t *id;
	/* its group property (TXT value, case kept), "" when none */
	const char *group;
	/* its coo property: the new owner catalog's name, wire, lower-cased;
	 * NULL when none */
	const uint8_t *coo;
} apex_catalog_member_t;

/* A catalog's members, sorted by zone name in canonical DNS order; owned, free with
 * apex_catalog_free(). */
typedef struct apex_catalog {
	apex_catalog_member_t *members;
	size_t count;
	uint8_t *bytes; /* the names and groups the members point into */
} apex_catalog_t;

/* Told of each member node skipped: owner (presentation text of the member node name) and why. */
typedef void (*apex_catalog_skip_fn)(void *ctx, const char *owner, const char *reason);

/*
 * Reads the catalog that version `zone` holds.  Returns APEX_OK with *out
 * filled (possibly zero members), or APEX_EINVAL with a one-line reason in
 * err when the zone is not a version-2 catalog (RFC 9432 section 3: no TXT
 * "2" at version.$CATZ) -- then *out is empty and the caller keeps the
 * members it had.  APEX_ENOMEM on allocation failure (*out empty too).
 * *out is overwritten, not freed; skip may be NULL; err may be NULL (with
 * err_size 0), and is "" on success.
 */
int apex_catalog_read(const apex_zone_t *zone, apex_catalog_t *out, apex_catalog_skip_fn skip,
		      void *ctx, char *err, size_t err_size);

/* Frees catalog's members and leaves it empty; NULL or an empty catalog is fine. */
void apex_catalog_free(apex_catalog_t *catalog);

/* The member of catalog named zone (wire, any case), or NULL (binary search). */
const apex_catalog_member_t *apex_catalog_find(const apex_catalog_t *catalog, const uint8_t *zone);

#endif
