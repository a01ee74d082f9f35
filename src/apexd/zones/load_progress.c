/* SPDX-License-Identifier: BSD-3-Clause */
/* A large zone's load says how far it is (load_progress.h). */
#include "zones/load_progress.h"

#include "observe/sd_notify.h"
#include "util/log.h"
#include "zone/load.h"

#define PROGRESS_RECORDS 100000

static void load_progress(const char *file, apex_load_phase_t phase, size_t records, double seconds,
			  size_t threads)
{
	if (records < PROGRESS_RECORDS && seconds < 5.0)
		return;
	if (phase == APEX_LOAD_PARSED) {
		apex_info("%s: %zu records parsed in %.1f s (%zu thread(s)); building", file,
			  records, seconds, threads);
		apexd_sd_notify("STATUS=%s: %zu records parsed, building\n"
				"EXTEND_TIMEOUT_USEC=600000000",
				file, records);
	} else {
		apex_info("%s: built in %.1f s (%zu thread(s))", file, seconds, threads);
		apexd_sd_notify("STATUS=%s: built\nEXTEND_TIMEOUT_USEC=600000000", file);
	}
}

void apexd_load_progress_start(size_t zone_count)
{
	apex_load_set_progress(load_progress);
	apexd_sd_notify("STATUS=loading %zu zone(s)\nEXTEND_TIMEOUT_USEC=600000000", zone_count);
}
