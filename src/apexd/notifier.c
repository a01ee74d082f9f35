/* SPDX-License-Identifier: BSD-3-Clause */
/* NOTIFY out from a thread of its own (notifier.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "notifier.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/error.h"
#include "util/log.h"
#include "xfr/notify_out.h"

#define NOTIFY_TRIES 3
#define NOTIFY_FIRST_WAIT_MS 1000

static bool has_targets(const apex_config_t *cfg)
{
	for (size_t i = 0; i < cfg->zone_count; i++) {
		if (cfg->zones[i].notify_count > 0)
			return true;
	}
	return false;
}

int apex_notifier_init(apex_notifier_t *n, apex_server_t *server, const apex_config_t *cfg)
{
	memset(n, 0, sizeof(*n));
	n->server = server;
	n->config = cfg;
	n->stop_fd = -1;
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->wake, NULL);
	if (cfg->zone_count == 0)
		return APEX_OK;
	n->pending = calloc(cfg->zone_count, sizeof(*n->pending));
	n->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n->pending == NULL || n->stop_fd < 0)
		return APEX_ENOMEM;
	return APEX_OK;
}

void apex_notifier_free(apex_notifier_t *n)
{
	free(n->pending);
	if (n->stop_fd >= 0)
		close(n->stop_fd);
	pthread_cond_destroy(&n->wake);
	pthread_mutex_destroy(&n->lock);
	memset(n, 0, sizeof(*n));
}

int apex_notifier_notify_now(apex_notifier_t *n, const uint8_t *origin)
{
	for (size_t i = 0; i < n->config->zone_count; i++) {
		if (n->config->zones[i].notify_count > 0 &&
		    apex_name_equal(n->config->zones[i].origin, origin) && n->thread_started) {
			apex_notifier_changed(n, origin);
			return APEX_OK;
		}
	}
	return APEX_ENOENT;
}

void apex_notifier_changed(apex_notifier_t *n, const uint8_t *origin)
{
	if (!n->thread_started)
		return;
	for (size_t i = 0; i < n->config->zone_count; i++) {
		if (n->config->zones[i].notify_count > 0 &&
		    apex_name_equal(n->config->zones[i].origin, origin)) {
			pthread_mutex_lock(&n->lock);
			atomic_store(&n->pending[i], true);
			pthread_cond_signal(&n->wake);
			pthread_mutex_unlock(&n->lock);
		}
	}
}

/* Notify every target of zone i of the serial served now. */
static void notify_zone(apex_notifier_t *n, size_t i)
{
	const apex_zone_config_t *zc = &n->config->zones[i];
	apex_zone_t *version = apex_server_served_version(n->server, zc->origin);
	char err[300];

	if (version == NULL)
		return;
	uint32_t serial = version->serial;
	apex_zone_unref(version);
	for (size_t j = 0; j < zc->notify_count; j++) {
		const apex_acl_entry_t *e = &zc->notify[j];
		apex_notify_target_t t = { .key = e->key, .text = e->text };

		t.addr_len = apex_acl_sockaddr(e, &t.addr);
		int rc = apex_notify_send(&t, zc->origin, serial, NOTIFY_TRIES,
					  NOTIFY_FIRST_WAIT_MS, n->stop_fd, err, sizeof(err));
		if (rc == APEX_OK) {
			atomic_fetch_add(&n->sent, 1);
			apex_info("zone %s: NOTIFY of serial %u to %s answered", zc->name, serial,
				  e->text);
		} else if (rc != -ECANCELED) {
			atomic_fetch_add(&n->failed, 1);
			apex_warning("zone %s: NOTIFY of serial %u: %s", zc->name, serial, err);
		}
	}
}

static void *notifier_main(void *arg)
{
	apex_notifier_t *n = arg;

	pthread_setname_np(pthread_self(), "apexd-notify");
	pthread_mutex_lock(&n->lock);
	while (!n->stopping) {
		bool found = false;

		for (size_t i = 0; i < n->config->zone_count && !n->stopping; i++) {
			if (!atomic_exchange(&n->pending[i], false))
				continue;
			found = true;
			pthread_mutex_unlock(&n->lock);
			notify_zone(n, i);
			pthread_mutex_lock(&n->lock);
		}
		if (!found && !n->stopping)
			pthread_cond_wait(&n->wake, &n->lock);
	}
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

int apex_notifier_start(apex_notifier_t *n)
{
	if (!has_targets(n->config))
		return APEX_OK;
	int err = pthread_create(&n->thread, NULL, notifier_main, n);
	if (err != 0) {
		apex_error("cannot start the notify thread: %s", strerror(err));
		return -err;
	}
	n->thread_started = true;
	return APEX_OK;
}

void apex_notifier_stop(apex_notifier_t *n)
{
	uint64_t one = 1;

	if (!n->thread_started)
		return;
	pthread_mutex_lock(&n->lock);
	n->stopping = true;
	pthread_cond_signal(&n->wake);
	pthread_mutex_unlock(&n->lock);
	if (write(n->stop_fd, &one, sizeof(one)) < 0)
		apex_warning("notify thread: stop eventfd: %s", strerror(errno));
	pthread_join(n->thread, NULL);
	n->thread_started = false;
}
