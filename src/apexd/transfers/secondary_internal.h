/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parts of the secondary zones (secondary.h) shared by the files that
 * make them: secondary.c (the transfer thread, its schedule and the entry
 * points of the other threads), secondary_zones.c (the set of zones and
 * the settings they come from) and secondary_transfer.c (one transfer
 * received and published).  Internal to these files.
 */
#ifndef APEXD_SECONDARY_INTERNAL_H
#define APEXD_SECONDARY_INTERNAL_H

#include <stddef.h>

#include "config/daemon_config.h"
#include "xfr/acl.h"
#include "xfr/xfr_client.h"
#include "zone/zone.h"

struct apex_secondary;      /* transfers/secondary.h */
struct apex_secondary_zone; /* transfers/secondary.h */

/* Before the first version: retry after 1 s, doubling up to 5 minutes. */
#define FIRST_RETRY_MS 1000
#define MAX_FIRST_RETRY_MS 300000

/* ---------------------------------------------------------------- secondary_zones.c */

/* The secondary zones of cfg, fresh (to be checked at once), into *out
 * (owned; NULL when none).  Returns 0 or APEX_ENOMEM. */
int apex_secondary_make_zones(const apex_config_t *cfg, struct apex_secondary_zone **out,
			      size_t *out_count);

void apex_secondary_free_zones(struct apex_secondary_zone *zones, size_t count);

/* The reloader's ids of zones (0 without a reloader). */
void apex_secondary_bind_zones(struct apex_secondary *s, struct apex_secondary_zone *zones,
			       size_t count);

/* On the transfer thread, between two exchanges: take the secondary zones
 * of the settings in force when they changed (secondary.h). */
void apex_secondary_apply_settings(struct apex_secondary *s);

/* The zone of s with this origin, or NULL; under zones_lock, or on the
 * transfer thread. */
struct apex_secondary_zone *apex_secondary_find_zone(struct apex_secondary *s,
						     const uint8_t *origin);

/* ---------------------------------------------------------------- secondary_transfer.c */

/* The primary e as the transfer client takes it. */
void apex_secondary_primary_of(const struct apex_secondary *s, const apex_acl_entry_t *e,
			       apex_xfr_primary_t *p);

/* The time limits of an exchange with a primary, cancelled by a stop. */
void apex_secondary_timeouts_of(const struct apex_secondary *s, apex_xfr_timeouts_t *t);

/*
 * Transfer z from e and publish it: by IXFR from current when there is
 * one and e allows it, falling back to AXFR when the primary refuses IXFR
 * or its change sets do not apply to what is served.  *held: the caller's
 * reference to the version served when its check began (or NULL), dropped
 * once the new version is published.  Returns APEX_OK (also when up to
 * date), or an apex code with the reason in err.
 */
int apex_secondary_transfer_any(struct apex_secondary *s, struct apex_secondary_zone *z,
				const apex_acl_entry_t *e, apex_zone_t *current, apex_zone_t **held,
				char *err, size_t err_size);

/* After a check that found z current: when the last write of z's copy
 * failed (a full disk), write the copy whole again from the version
 * served, so that it does not wait for the next change (copies.h). */
void apex_secondary_copy_again(struct apex_secondary *s, struct apex_secondary_zone *z);

#endif
