/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory-limit on the reload thread (reload_internal.h): before a zone's
 * file is loaded, its estimated peak (process/memory_estimate.h) claimed
 * on the limit (process/memory_limit.h).
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "zones/reload.h"

#include <stdio.h>
#include <sys/stat.h>

#include "process/memory_estimate.h"
#include "process/memory_limit.h"
#include "zones/reload_internal.h"
#include "util/error.h"
#include "zone/page_discard.h"

#define MIB(x) ((double)(x) / (1024.0 * 1024.0))

int apex_reloader_memory_claim(apex_reloader_t *r, const char *file, const uint8_t *origin,
			       uint64_t loaded_size, uint64_t *file_size,
			       apexd_memory_claim_t *claim, char *err, size_t err_size)
{
	struct stat st;
	char what[APEX_RELOAD_ERROR_MAX / 2];
	uint64_t estimate, size, lines;
	apex_zone_t *old;

	*file_size = 0;
	if (stat(file, &st) != 0)
		return APEX_OK; /* the load says why */
	*file_size = size = (uint64_t)st.st_size;
	if (!r->live || !apexd_memory_limit_on(r->memory_limit))
		return APEX_OK; /* the loads at start are not checked */
	old = apex_server_served_version(r->server, origin);
	if (old != NULL && loaded_size > 0) {
		/* the version served, scaled to the file's size now */
		estimate = apexd_estimate_like(apex_zone_memory(old), old->record_count,
					       (double)size / (double)loaded_size);
		snprintf(what, sizeof(what),
			 "reloading %.120s (%.1f MiB; the version served: %.1f MiB, %zu records, "
			 "from %.1f MiB of file)",
			 file, MIB(size), MIB(apex_zone_memory(old)), old->record_count,
			 MIB(loaded_size));
	} else if (apexd_estimate_file_lines(file, size, &lines) == APEX_OK) {
		estimate = apexd_estimate_records(lines, size);
		snprintf(what, sizeof(what), "loading %.120s (%.1f MiB, about %llu lines)", file,
			 MIB(size), (unsigned long long)lines);
	} else {
		apex_zone_unref(old);
		return APEX_OK; /* unreadable: the load says why */
	}
	apex_zone_unref(old);
	return apexd_memory_limit_claim(r->memory_limit, APEXD_MEMORY_RELOAD, claim, estimate, what,
					err, err_size);
}
