/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ZONEMD check (lib/zonemd) of a version built by a load, a reload or
 * a transfer, before it is published: the one place that says what each
 * outcome means for serving it.
 */
#ifndef APEXD_ZONEMD_CHECK_H
#define APEXD_ZONEMD_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "zone/zone.h"

/*
 * Check version of zone name when verify is set (zonemd-verify): logs
 * what was found (a digest verified, or a ZONEMD that cannot be checked)
 * and returns APEX_OK when the version may be served; APEX_ELOAD with the
 * reason in err (a mismatch, with both digests) when it must not be, or
 * APEX_ENOMEM.
 */
int apexd_zonemd_check(const char *name, const apex_zone_t *version, bool verify, char *err,
		       size_t err_size);

#endif
