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

int apexd_copy_write(const char *name, const char *file, const apex_zone_t *version,
		     const char *header)
{
	apex_zone_copy_t copy;
	char err[512];
	int rc;

	/* a failure of any step is kept by the copy and returned by the commit */
	if (apex_zone_copy_begin(&copy, file, header, err, sizeof(err)) == APEX_OK)
		(void)apex_zone_copy_version(&copy, version);
	rc = apex_zone_copy_commit(&copy, err, sizeof(err));
	apexd_copy_written(name, file, version->serial, rc, err);
	return rc;
}
