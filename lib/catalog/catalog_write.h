/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A catalog zone produced (RFC 9432, schema version 2): the zone file of a
 * catalog that lists given member zones, each with its group property if
 * it has one.  What apexd writes for a `catalog: producer` zone
 * (src/apexd/catalog/producer.h); a consumer reads it with
 * catalog_read.h.
 */
#ifndef APEX_CATALOG_CATALOG_WRITE_H
#define APEX_CATALOG_CATALOG_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* One member of a catalog to produce. */
typedef struct apex_catalog_entry {
	const uint8_t *zone; /* wire format */
	const char *group;   /* its group property; NULL: none */
} apex_catalog_entry_t;

/* The length of a member node label: 16 hex digits. */
#define APEX_CATALOG_ID_SIZE 16

/*
 * The member node label of zone: the first 8 bytes of the SHA-1 of its
 * lower-cased wire name, in hex, NUL-terminated in id.  The same zone
 * gets the same label in every catalog and every run, so a consumer never
 * sees a member renumbered (a reset, RFC 9432 section 5.4) that was not.
 */
void apex_catalog_member_id(const uint8_t *zone, char id[APEX_CATALOG_ID_SIZE + 1]);

/*
 * The catalog listing entries (count, any order; groups without
 * white space, quotes or backslashes, as the caller checked): all but its
 * SOA record, in a fixed order (the members by name), into *body
 * (malloc'ed, NUL-terminated, owned by the caller) with its length in
 * *size.  Its records are written with their TTL (0) and class, relative
 * to an $ORIGIN line the caller writes before the SOA
 * (APEX_CATALOG_SOA_FORMAT).  Returns APEX_OK or APEX_ENOMEM.
 */
int apex_catalog_body(const apex_catalog_entry_t *entries, size_t count, char **body, size_t *size);

/* The SOA line of a produced catalog, for printf with its serial: the
 * recommended NS "invalid." (RFC 9432 section 4.1), TTL 0 throughout. */
#define APEX_CATALOG_SOA_FORMAT "@ 0 IN SOA invalid. invalid. %u 3600 600 2419200 0\n"
#define APEX_CATALOG_SOA_PREFIX "@ 0 IN SOA invalid. invalid. "

#endif
