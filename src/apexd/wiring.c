/* SPDX-License-Identifier: BSD-3-Clause */
/* The hooks between apexd's threads (wiring.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "wiring.h"

#include <stdlib.h>
#include <time.h>

#include "observe/logging.h"
#include "process/hold_point.h"
#include "transfers/journal_replay.h"
#include "tsig/signed_answer.h"
#include "util/error.h"
#include "util/log.h"

/* A new version is served (reload or transfer), on the publishing thread:
 * the change goes to the zone's journal (the change set a reload derived
 * the version from, or the difference of the two versions), and its secondaries are told.  A
 * zone's first version (one a reconfig added) has its journal replayed
 * over it instead when the journal is ahead of it. */
static void zone_published(void *arg, const apex_zone_t *old, const apex_zone_t *version,
			   const apex_changes_t *sets, size_t count)
{
	apexd_t *d = arg;

	apexd_hold_point("journal-recording"); /* a test's: an IXFR in between */
	if (old != NULL || !apex_journal_replay_zone(&d->journals, &d->server, &d->reloader,
						     version->origin, false))
		apex_journals_record(&d->journals, old, version, sets, count);
	apex_notifier_changed(&d->notifier, version->origin);
	if (d->catalogs != NULL)
		apexd_catalogs_wake(d->catalogs);
}

/* A transfer is served: as zone_published(), the journal taking the change
 * sets of an IXFR as they came instead of comparing the versions. */
static void transfer_published(void *arg, const apex_zone_t *old, const apex_zone_t *version,
			       const apex_changes_t *sets, size_t count)
{
	apexd_t *d = arg;

	apex_journals_record(&d->journals, old, version, sets, count);
	apex_notifier_changed(&d->notifier, version->origin);
	if (d->catalogs != NULL)
		apexd_catalogs_wake(d->catalogs);
}

/* The transfer thread's question (secondary.h): does the zone's journal
 * hold the sets from serial on, with bytes more appended? */
static bool transfer_journal_chains(void *arg, const uint8_t *origin, uint32_t serial,
				    uint64_t bytes)
{
	apexd_t *d = arg;

	return apex_journals_chains(&d->journals, origin, serial, bytes);
}

/* After a reconfig, on the control thread: journals for the zones that
 * got provide-xfr (journals.h). */
static void reconfigured(void *arg, const apex_config_t *cfg)
{
	apexd_t *d = arg;

	if (apex_journals_update(&d->journals, cfg) < 0)
		apex_error("reconfig: journals: out of memory");
}

/* A worker's tsig_answer hook (worker.h), with the keys in force: ctx is
 * the worker's own settings cache (no lock unless a reconfig came). */
static size_t signed_answer(void *ctx, const uint8_t *query, size_t query_size, uint8_t *out,
			    size_t size, size_t out_capacity)
{
	const apex_config_t *cfg = apex_settings_cached(ctx);
	apex_tsig_keyring_t ring = { cfg->keys, cfg->key_count };

	return apex_tsig_signed_answer(query, query_size, &ring, (uint64_t)time(NULL), out, size,
				       out_capacity);
}

int apexd_wire(apexd_t *d)
{
	const apex_config_t *cfg = &d->cfg;
	int rc;

	d->settings_ready = true;
	if ((rc = apex_settings_holder_init(&d->settings, cfg)) < 0) {
		apex_error("out of memory");
		return rc;
	}
	d->secondary_ready = true;
	if ((rc = apex_secondary_init(&d->secondary, &d->server, &d->settings)) < 0) {
		apex_error("secondary zones: out of memory");
		return rc;
	}
	d->notifier_ready = true;
	if ((rc = apex_notifier_init(&d->notifier, &d->server, &d->settings)) < 0) {
		apex_error("notify: out of memory");
		return rc;
	}
	d->journal_reader = apex_journals_reader_template;
	d->journal_reader.ctx = &d->journals;
	d->reloader.published = zone_published;
	d->reloader.published_arg = d;
	d->secondary.published = transfer_published;
	d->secondary.journal_chains = transfer_journal_chains;
	d->secondary.reloader = &d->reloader;
	d->secondary.memory_limit = &d->memory_limit;
	d->secondary.published_arg = d;
	d->xfr_out_ready = true;
	if ((rc = apex_xfr_out_init(&d->xfr_out, &d->server, &d->settings, cfg->xfr_out_max)) < 0) {
		apex_error("outgoing transfers: cannot start");
		return rc;
	}
	/* the hooks are set even without keys or secondary zones: a reconfig
	 * may bring them */
	d->tsig_caches = calloc(d->server.worker_count, sizeof(*d->tsig_caches));
	if (d->tsig_caches == NULL) {
		apex_error("out of memory");
		return APEX_ENOMEM;
	}
	for (unsigned w = 0; w < d->server.worker_count; w++) {
		d->tsig_caches[w].holder = &d->settings;
		d->server.workers[w].worker.tsig_answer = signed_answer;
		d->server.workers[w].worker.tsig_ctx = &d->tsig_caches[w];
	}
	d->xfr_out.journal = &d->journal_reader;
	d->server.tcp.xfr_take = apex_xfr_out_take;
	d->server.tcp.xfr_ctx = &d->xfr_out;
	for (unsigned w = 0; w < d->server.worker_count; w++) {
		d->server.workers[w].worker.notify = apex_secondary_notify;
		d->server.workers[w].worker.notify_ctx = &d->secondary;
	}
	/* catalogs (catalog/consumer.h): their members are put in force the
	 * way reconfig does, which needs the config file */
	if (d->opt.config_file != NULL) {
		apex_command_context_t ctx = apexd_command_context(d);

		if ((d->catalogs = apexd_catalogs_new(&ctx, cfg)) == NULL) {
			apex_error("catalogs: out of memory");
			return APEX_ENOMEM;
		}
	}
	return APEX_OK;
}

/* reconfig's hooks into the catalogs (control/commands.h). */
static void lock_config(void *arg, bool locked)
{
	if (locked)
		apexd_catalogs_lock(arg);
	else
		apexd_catalogs_unlock(arg);
}

static int extend_config(void *arg, apex_config_t *cfg, char *err, size_t err_size)
{
	return apexd_catalogs_extend(arg, cfg, err, err_size);
}

static int zone_add(void *arg, const uint8_t *zone, const char *pattern, char *err, size_t err_size)
{
	return apexd_catalogs_zone_add(arg, zone, pattern, err, err_size);
}

static int zone_remove(void *arg, const uint8_t *zone, char *err, size_t err_size)
{
	return apexd_catalogs_zone_remove(arg, zone, err, err_size);
}

apex_command_context_t apexd_command_context(apexd_t *d)
{
	apex_command_context_t ctx = {
		.dnstap = d->dnstap,
		.server = &d->server,
		.reloader = &d->reloader,
		.secondary = &d->secondary,
		.notifier = &d->notifier,
		.xfr_out = &d->xfr_out,
		.settings = &d->settings,
		.memory_limit = &d->memory_limit,
		.reconfigured = reconfigured,
		.reconfigured_arg = d,
		.reread_config = d->opt.config_file != NULL ? apexd_options_reread_config : NULL,
		.reread_arg = &d->opt,
		.lock_config = d->catalogs != NULL ? lock_config : NULL,
		.extend_config = d->catalogs != NULL ? extend_config : NULL,
		.zone_add = d->catalogs != NULL ? zone_add : NULL,
		.zone_remove = d->catalogs != NULL ? zone_remove : NULL,
		.catalogs_arg = d->catalogs,
	};

	return ctx;
}

/* dnstap's rings, each worker's hook into them (dnstap-enable: yes); the
 * writer thread starts with the others. */
int apexd_open_dnstap(apexd_t *d)
{
	unsigned n = d->server.worker_count;
	apex_worker_stats_t **stats = calloc(n, sizeof(*stats));
	char err[512];
	int rc;

	if (!d->cfg.dnstap.enable) {
		free(stats);
		return APEX_OK;
	}
	if (stats == NULL) {
		apex_error("dnstap: out of memory");
		return APEX_ENOMEM;
	}
	for (unsigned w = 0; w < n; w++)
		stats[w] = &d->server.workers[w].worker.stats;
	rc = apex_dnstap_open(&d->dnstap, &d->cfg, n, stats, err, sizeof(err));
	free(stats);
	if (rc < 0) {
		apex_error("%s", err);
		return rc;
	}
	for (unsigned w = 0; w < n; w++) {
		d->server.workers[w].worker.tap = apex_dnstap_log;
		d->server.workers[w].worker.tap_ctx = apex_dnstap_worker(d->dnstap, w);
	}
	return APEX_OK;
}

/* The dnstap writer thread, with the socket's path as seen in the chroot. */
int apexd_run_dnstap(apexd_t *d)
{
	const apex_config_t *cfg = &d->cfg;
	const char *path = cfg->dnstap.socket_path;
	char err[512];

	if (d->dnstap == NULL)
		return APEX_OK;
	if (cfg->chroot_dir != NULL) {
		path = apex_privs_chroot_path(cfg->chroot_dir, path);
		if (path == cfg->dnstap.socket_path)
			apex_warning("dnstap-socket-path %s: outside the chroot %s", path,
				     cfg->chroot_dir);
	}
	if (apex_dnstap_run(d->dnstap, path, err, sizeof(err)) < 0) {
		apex_error("%s", err);
		return APEX_EINVAL;
	}
	apex_info("dnstap to %s (queries: %s, responses: %s)", path,
		  cfg->dnstap.log_queries ? "yes" : "no", cfg->dnstap.log_responses ? "yes" : "no");
	return APEX_OK;
}

void apexd_replay_journals(apexd_t *d)
{
	for (size_t i = 0; i < d->cfg.zone_count; i++)
		apex_journal_replay_zone(&d->journals, &d->server, &d->reloader,
					 d->cfg.zones[i].origin, true);
}

void apexd_rebase(apexd_t *d)
{
	const apex_config_t *cfg = &d->cfg;

	if (cfg->chroot_dir == NULL)
		return;
	apex_reloader_rebase(&d->reloader, apex_privs_chroot_path, cfg->chroot_dir);
	apex_secondary_rebase(&d->secondary, apex_privs_chroot_path, cfg->chroot_dir);
	apex_journals_rebase(&d->journals, apex_privs_chroot_path, cfg->chroot_dir);
	apex_info("chroot %s", cfg->chroot_dir);
	apexd_logging_rebase(cfg);
}
