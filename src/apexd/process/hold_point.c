/* SPDX-License-Identifier: BSD-3-Clause */
/* The hold points of the tests (hold_point.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "process/hold_point.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

/* A hold lasts at most this long, so that a test that fails to release
 * it does not leave apexd held. */
#define HOLD_MAX_MS 120000
#define HOLD_POLL_MS 10

/* Set before the threads start, then read only; hold_at NULL: no hold point. */
static const char *hold_at;
static char hold_at_text[64];
static char hold_file[4096];

void apexd_hold_point_init(void)
{
	const char *value = getenv("APEX_TEST_HOLD_AT");
	const char *colon = value != NULL ? strchr(value, ':') : NULL;

	hold_at = NULL;
	if (value == NULL || value[0] == '\0')
		return;
	if (colon == NULL || colon == value || colon[1] == '\0' ||
	    (size_t)(colon - value) >= sizeof(hold_at_text) ||
	    strlen(colon + 1) + sizeof(".held") > sizeof(hold_file)) {
		apex_warning("APEX_TEST_HOLD_AT=%s: not POINT:FILE, ignored", value);
		return;
	}
	snprintf(hold_at_text, sizeof(hold_at_text), "%.*s", (int)(colon - value), value);
	snprintf(hold_file, sizeof(hold_file), "%s", colon + 1);
	hold_at = hold_at_text;
	apex_warning("APEX_TEST_HOLD_AT=%s: a test hook; apexd holds a thread at that point",
		     value);
}

void apexd_hold_point(const char *point)
{
	char held[sizeof(hold_file) + sizeof(".held")];
	int fd;

	if (hold_at == NULL || strcmp(hold_at, point) != 0 || access(hold_file, F_OK) != 0)
		return;
	snprintf(held, sizeof(held), "%s.held", hold_file);
	fd = open(held, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	apex_warning("APEX_TEST_HOLD_AT=%s: holding while %s exists", point, hold_file);
	for (int ms = 0; ms < HOLD_MAX_MS && access(hold_file, F_OK) == 0; ms += HOLD_POLL_MS)
		usleep(HOLD_POLL_MS * 1000);
	unlink(held);
	apex_warning("APEX_TEST_HOLD_AT=%s: released", point);
}
