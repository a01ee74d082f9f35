/* SPDX-License-Identifier: BSD-3-Clause */
/* A version fed to a verifier as a zone file (verify_feed.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "verify/verify_feed.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "xfr/zone_copy.h"

static void *feed_main(void *arg)
{
	apex_verify_feed_t *f = arg;
	apex_zone_copy_t copy;
	FILE *fp = fdopen(f->fd, "w");
	sigset_t pipe_signal;
	int rc;

	/* a verifier that stops reading makes writes fail with EPIPE, and
	 * raises no SIGPIPE, whatever the process does with it */
	sigemptyset(&pipe_signal);
	sigaddset(&pipe_signal, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_signal, NULL);
	pthread_setname_np(pthread_self(), "apexd-vfeed");
	if (fp == NULL) {
		f->result = apex_errno();
		close(f->fd);
		return NULL;
	}
	rc = apex_zone_copy_stream(&copy, fp); /* the copy closes fp */
	if (rc == APEX_OK)
		rc = apex_zone_copy_version(&copy, f->version);
	int closed = apex_zone_copy_close_stream(&copy);
	f->result = rc < 0 ? rc : closed;
	return NULL;
}

int apex_verify_feed_start(apex_verify_feed_t *f, apex_zone_t *version, int fd)
{
	int rc;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->version = version;
	apex_zone_ref(version);
	rc = pthread_create(&f->thread, NULL, feed_main, f);
	if (rc != 0) {
		close(fd);
		apex_zone_unref(version);
		f->version = NULL;
		return -rc;
	}
	f->running = true;
	return APEX_OK;
}

int apex_verify_feed_join(apex_verify_feed_t *f)
{
	if (!f->running)
		return f->result;
	pthread_join(f->thread, NULL);
	f->running = false;
	apex_zone_unref(f->version);
	f->version = NULL;
	return f->result;
}
