/* SPDX-License-Identifier: BSD-3-Clause */
/* What SIGHUP does (sighup.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "zones/sighup.h"

#include <stdlib.h>

#include "observe/sd_notify.h"
#include "util/log.h"

/* The tickets of a SIGHUP reload not finished yet: how many, the rest
 * moved to the front.  The tickets are freed once all are. */
static size_t reload_pending(apex_reloader_t *reloader, apex_reload_ticket_t **tickets,
			     size_t count)
{
	apex_reload_result_t res;
	size_t left = 0;

	for (size_t i = 0; i < count; i++)
		if (!apex_reloader_ticket_done(reloader, &(*tickets)[i], &res))
			(*tickets)[left++] = (*tickets)[i];
	if (left == 0) {
		free(*tickets);
		*tickets = NULL;
	}
	return left;
}

bool apexd_sighup_reload(void *arg)
{
	apexd_sighup_t *s = arg;

	apex_info("SIGHUP received: reloading every zone");
	/* a SIGHUP while the one before is under way: one RELOADING=1 ...
	 * READY=1 for both, which ends with the new one */
	if (s->pending == 0)
		apexd_sd_notify_reload_begin();
	free(s->tickets);
	s->tickets = NULL;
	s->pending = 0;
	if (apex_reloader_request(s->reloader, NULL, &s->tickets, &s->pending) < 0)
		apex_error("SIGHUP: reload not queued: out of memory");
	if (s->pending == 0)
		apexd_sd_notify_reload_end(apex_reloader_count(s->reloader));
	return s->pending > 0;
}

bool apexd_sighup_poll(void *arg)
{
	apexd_sighup_t *s = arg;

	if ((s->pending = reload_pending(s->reloader, &s->tickets, s->pending)) == 0)
		apexd_sd_notify_reload_end(apex_reloader_count(s->reloader));
	return s->pending > 0;
}

void apexd_sighup_free(apexd_sighup_t *s)
{
	free(s->tickets);
	s->tickets = NULL;
	s->pending = 0;
}
