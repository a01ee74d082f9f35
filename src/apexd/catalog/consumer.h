/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Catalog zones consumed (RFC 9432, doc/transfers.md): each zone of the
 * configuration marked `catalog: consumer` is read again whenever a new
 * version of it is served (lib/catalog/catalog_read.h), and its member
 * zones become zones of the server with the settings of a pattern: the
 * one their group property names if there is such a pattern, else the
 * catalog's catalog-member-pattern.
 *
 * The work is done on a thread of its own (apexd-catalog), never on a
 * worker: when the members change, the configuration file is read again,
 * the members appended, and the result put in force the way `apexctl
 * reconfig` does (apex_command_apply_config()).  One configuration is put
 * in force at a time: reconfig takes apexd_catalogs_lock() too, and keeps
 * the members (apexd_catalogs_extend()).
 *
 * Which catalog owns a member (RFC 9432 section 5): the one that listed it
 * first; another catalog listing it is a clash, logged and ignored, unless
 * the owner's entry has a coo property naming that catalog (section 4.4.1)
 * or the owner no longer lists it.  A member removed, moved to another
 * catalog or given a new unique id loses its state: it is taken out of
 * the server and its files (the zone's copy, its journal) are deleted;
 * a moved or renumbered one is then added afresh and transferred again.
 *
 * Nothing of this is kept on disk but the catalogs' own copies and the
 * members' files: after a restart the members are found again in the
 * catalogs' versions loaded from their copies, and load from their files.
 */
#ifndef APEXD_CATALOG_CONSUMER_H
#define APEXD_CATALOG_CONSUMER_H

#include <stddef.h>

#include "config/daemon_config.h"

struct apex_command_context;
typedef struct apexd_catalogs apexd_catalogs_t;

/*
 * A new consumer for the catalogs of cfg (the configuration the server
 * started with), putting configurations in force through ctx (copied).
 * Returns NULL when out of memory.
 */
apexd_catalogs_t *apexd_catalogs_new(const struct apex_command_context *ctx,
				     const apex_config_t *cfg);

/* Start the thread; returns APEX_OK or a negative apex code (logged). */
int apexd_catalogs_start(apexd_catalogs_t *c);

/* From any thread but a worker: a zone has a new version, which may be a
 * catalog's.  Cheap: the thread looks once it wakes. */
void apexd_catalogs_wake(apexd_catalogs_t *c);

/* Held by whoever puts a configuration in force (reconfig), so that one
 * configuration is applied at a time.  Unlocking wakes the thread: the
 * configuration may have added or removed catalogs. */
void apexd_catalogs_lock(apexd_catalogs_t *c);
void apexd_catalogs_unlock(apexd_catalogs_t *c);

/*
 * With the lock held: append to cfg, a configuration just read from the
 * file, the member zones in force that it can still take (their catalog
 * and their pattern are in it, and no zone of the file has their name),
 * and take note of its catalogs.  Returns APEX_OK, or APEX_ENOMEM with a
 * reason in err.
 */
int apexd_catalogs_extend(apexd_catalogs_t *c, apex_config_t *cfg, char *err, size_t err_size);

/*
 * apexctl zone-add: zone (wire, lower-cased) served with the settings of
 * the pattern of that name, and kept in the zone-list-file so that it is
 * served after a restart too; put in force by the thread, as a catalog's
 * members are.  Refused (a negative apex code, the reason in err) without
 * a zone-list-file, for a pattern that does not exist, and for a zone of
 * the configuration file, a catalog's member or one added already.
 */
int apexd_catalogs_zone_add(apexd_catalogs_t *c, const uint8_t *zone, const char *pattern,
			    char *err, size_t err_size);

/* apexctl zone-remove: a zone zone-add added no longer served, its files
 * deleted, and out of the zone-list-file.  Refused for any other zone. */
int apexd_catalogs_zone_remove(apexd_catalogs_t *c, const uint8_t *zone, char *err,
			       size_t err_size);

/* Stop the thread (if started): nothing is put in force from then on,
 * but c may still be called (reconfig, zone-add) until it is freed.
 * NULL is allowed. */
void apexd_catalogs_stop(apexd_catalogs_t *c);

/* Stop the thread (if started) and free c, once nobody calls it any more.
 * NULL is allowed. */
void apexd_catalogs_free(apexd_catalogs_t *c);

#endif
