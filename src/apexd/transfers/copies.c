/* SPDX-License-Identifier: BSD-3-Clause */
/* A secondary zone's copy written, and what came of it logged (copies.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/copies.h"

#include "observe/write_failures.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/zone_copy.h"

void apexd_copy_written(const char *name, const char *file, uint32_t serial, int rc,
			const char *err)
{
	if (rc == APEX_OK) {
		if (apexd_write_worked(file))
			apex_info("zone %s: writing the copy %s works again: serial %u written",
				  name, file, serial);
	} else if (apexd_write_failed(file, rc)) {
		apex_warning("zone %s: the copy %s is not written (%s): serial %u is served from "
			     "memory, the file keeps the last copy written whole, and the next "
			     "transfer or refresh writes it again (not logged again until that "
			     "works)",
			     name, file, err, serial);
	} else {
		apex_debug("zone %s: the copy %s is still not written (%s)", name, file, err);
	}
}

int apexd_copy_write_or_give_way(const char *name, const char *file, const apex_zone_t *version,
				 const char *header, apex_give_way_fn give_way, void *ctx)
{
	apex_zone_copy_t copy;
	char err[512];
	int rc;

	/* a failure of any step is kept by the copy and returned by the commit */
	if (apex_zone_copy_begin(&copy, file, header, err, sizeof(err)) == APEX_OK)
		(void)apex_zone_copy_version_or_give_way(&copy, version, give_way, ctx);
	rc = apex_zone_copy_commit(&copy, err, sizeof(err));
	if (rc == APEX_ECANCELED) { /* not a failure of the file */
		apex_debug("zone %s: writing the copy %s at serial %u gave way to a transfer", name,
			   file, version->serial);
		return rc;
	}
	apexd_copy_written(name, file, version->serial, rc, err);
	return rc;
}

int apexd_copy_write(const char *name, const char *file, const apex_zone_t *version,
		     const char *header)
{
	return apexd_copy_write_or_give_way(name, file, version, header, NULL, NULL);
}
