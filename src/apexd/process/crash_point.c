/* SPDX-License-Identifier: BSD-3-Clause */
/* The crash points of the tests (crash_point.h). */
#include "process/crash_point.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/crash_hook.h"
#include "util/log.h"

/* Set before the threads start, then read only; NULL: no crash point. */
static const char *crash_at;
static char crash_at_text[64];

void apexd_crash_point_init(void)
{
	const char *value = getenv("APEX_TEST_CRASH_AT");

	crash_at = NULL;
	if (value == NULL || value[0] == '\0')
		return;
	snprintf(crash_at_text, sizeof(crash_at_text), "%s", value);
	crash_at = crash_at_text;
	apex_crash_hook = apexd_crash_point; /* the library's points too */
	apex_warning("APEX_TEST_CRASH_AT=%s: a test hook; apexd ends abruptly at that "
		     "point",
		     crash_at);
}

void apexd_crash_point(const char *point)
{
	if (crash_at == NULL || strcmp(crash_at, point) != 0)
		return;
	apex_warning("APEX_TEST_CRASH_AT=%s: ending here (status %d)", point,
		     APEXD_CRASH_POINT_STATUS);
	_exit(APEXD_CRASH_POINT_STATUS);
}
