/* SPDX-License-Identifier: BSD-3-Clause */
/* The ZONEMD check of a version before it is published (zonemd_check.h). */
#include "zones/zonemd_check.h"

#include <stdio.h>

#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "zonemd/zonemd.h"

int apexd_zonemd_check(const char *name, const apex_zone_t *version, bool verify, char *err,
		       size_t err_size)
{
	apex_zonemd_result_t res;
	uint64_t start = apex_monotonic_ms();

	if (!verify)
		return APEX_OK;
	int rc = apex_zonemd_verify(version, &res);
	if (rc < 0) {
		snprintf(err, err_size, "ZONEMD check: %s", apex_strerror(rc));
		return rc;
	}
	switch (res.status) {
	case APEX_ZONEMD_ABSENT: return APEX_OK;
	case APEX_ZONEMD_UNSUPPORTED:
		apex_warning("zone %s serial %u: %s", name, version->serial, res.detail);
		return APEX_OK;
	case APEX_ZONEMD_VERIFIED:
		apex_info("zone %s: %s in %.3f s", name, res.detail,
			  (double)(apex_monotonic_ms() - start) / 1000.0);
		return APEX_OK;
	case APEX_ZONEMD_FAILED: break;
	}
	snprintf(err, err_size, "%s", res.detail);
	return APEX_ELOAD;
}
