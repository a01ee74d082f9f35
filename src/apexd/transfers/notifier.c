/* SPDX-License-Identifier: BSD-3-Clause */
/* NOTIFY out from a thread of its own (notifier.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/notifier.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dns/name_refs.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/notify_out.h"

#define NOTIFY_TRIES 3
#define NOTIFY_FIRST_WAIT_MS 1000

/* The zone config of origin in cfg when it has notify targets, or NULL. */
static const apex_zone_config_t *zone_with_targets(const apex_config_t *cfg, const uint8_t *origin)
{
	for (size_t i = 0; i < cfg->zone_count; i++) {
		if (cfg->zones[i].notify_count > 0 && apex_name_equal(cfg->zones[i].origin, origin))
			return &cfg->zones[i];
	}
	return NULL;
}

/*
 * zone_with_targets() on the notifier thread: through n->targets, built
 * again for the settings of a new generation (the long way when out of
 * memory).
 */
static const apex_zone_config_t *indexed_zone_with_targets(apex_notifier_t *n,
							   const apex_settings_t *settings,
							   const uint8_t *origin)
{
	const apex_config_t *cfg = settings->cfg;

	if (n->targets_generation != settings->generation) {
		size_t count = 0;

		free(n->targets);
		n->targets = malloc((cfg->zone_count + 1) * sizeof(*n->targets));
		n->targets_generation = n->targets != NULL ? settings->generation : 0;
		for (size_t i = 0; n->targets != NULL && i < cfg->zone_count; i++)
			if (cfg->zones[i].notify_count > 0)
				n->targets[count++] = (apex_name_ref_t){ cfg->zones[i].origin, i };
		if (n->targets != NULL)
			apex_name_refs_sort(n->targets, count);
		n->targets_count = count;
	}
	if (n->targets == NULL)
		return zone_with_targets(cfg, origin);
	const apex_name_ref_t *found = apex_name_refs_find(n->targets, n->targets_count, origin);
	return found != NULL ? &cfg->zones[found->index] : NULL;
}

int apex_notifier_init(apex_notifier_t *n, apex_server_t *server, apex_settings_holder_t *settings)
{
	memset(n, 0, sizeof(*n));
	n->server = server;
	n->settings = settings;
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->wake, NULL);
	n->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return n->stop_fd < 0 ? apex_errno() : APEX_OK;
}

void apex_notifier_free(apex_notifier_t *n)
{
	free(n->pending);
	free(n->targets);
	if (n->stop_fd >= 0)
		close(n->stop_fd);
	pthread_cond_destroy(&n->wake);
	pthread_mutex_destroy(&n->lock);
	memset(n, 0, sizeof(*n));
}

/* Queue origin (once) and wake the thread; false when out of memory. */
static bool queue(apex_notifier_t *n, const uint8_t *origin)
{
	bool ok = true;

	pthread_mutex_lock(&n->lock);
	size_t i = 0;
	while (i < n->pending_count && !apex_name_equal(n->pending[i], origin))
		i++;
	if (i == n->pending_count) {
		if (n->pending_count == n->pending_capacity) {
			size_t capacity = n->pending_capacity ? 2 * n->pending_capacity : 8;
			void *grown = realloc(n->pending, capacity * sizeof(*n->pending));

			ok = grown != NULL;
			if (ok) {
				n->pending = grown;
				n->pending_capacity = capacity;
			}
		}
		if (ok)
			memcpy(n->pending[n->pending_count++], origin, apex_name_size(origin));
	}
	pthread_cond_signal(&n->wake);
	pthread_mutex_unlock(&n->lock);
	return ok;
}

int apex_notifier_notify_now(apex_notifier_t *n, const uint8_t *origin)
{
	apex_settings_t *settings = apex_settings_get(n->settings);
	bool has = zone_with_targets(settings->cfg, origin) != NULL;

	apex_settings_put(settings);
	if (!has || !n->thread_started)
		return APEX_ENOENT;
	return queue(n, origin) ? APEX_OK : APEX_ENOMEM;
}

void apex_notifier_changed(apex_notifier_t *n, const uint8_t *origin)
{
	if (n->thread_started && !queue(n, origin))
		apex_error("NOTIFY of a new serial not queued: out of memory");
}

/* Notify every target origin has in the settings in force of the serial
 * served now. */
static void notify_zone(apex_notifier_t *n, const uint8_t *origin)
{
	apex_settings_t *settings = apex_settings_get(n->settings);
	const apex_zone_config_t *zc = indexed_zone_with_targets(n, settings, origin);
	apex_zone_t *version = zc != NULL ? apex_server_served_version(n->server, origin) : NULL;
	char err[300];

	if (version == NULL) {
		apex_settings_put(settings);
		return;
	}
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
	apex_settings_put(settings);
}

static void *notifier_main(void *arg)
{
	apex_notifier_t *n = arg;
	uint8_t origin[APEX_NAME_MAX];

	pthread_setname_np(pthread_self(), "apexd-notify");
	pthread_mutex_lock(&n->lock);
	while (!n->stopping) {
		if (n->pending_count == 0) {
			pthread_cond_wait(&n->wake, &n->lock);
			continue;
		}
		/* first come, first sent; a change queued meanwhile is sent again */
		memcpy(origin, n->pending[0], apex_name_size(n->pending[0]));
		memmove(n->pending[0], n->pending[1], (n->pending_count - 1) * sizeof(*n->pending));
		n->pending_count--;
		pthread_mutex_unlock(&n->lock);
		notify_zone(n, origin);
		pthread_mutex_lock(&n->lock);
	}
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

int apex_notifier_start(apex_notifier_t *n)
{
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
