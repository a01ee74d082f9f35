/* SPDX-License-Identifier: BSD-3-Clause */
/* apexd: the apex authoritative DNS server daemon. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: PACKAGE_VERSION, _GNU_SOURCE */
#endif

#include <errno.h>
#include <net/if.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control/commands.h"
#include "config/daemon_config.h"
#include "control/control.h"
#include "control/endpoints.h"
#include "control/metrics_server.h"
#include "observe/dnstap.h"
#include "observe/logging.h"
#include "process/daemonize.h"
#include "process/options.h"
#include "process/pid_file.h"
#include "process/privs.h"
#include "process/signals.h"
#include "zones/load_progress.h"
#include "zones/reload.h"
#include "zones/sighup.h"
#include "transfers/journals.h"
#include "transfers/notifier.h"
#include "observe/sd_notify.h"
#include "transfers/secondary.h"
#include "tsig/signed_answer.h"
#include "transfers/xfr_out.h"
#include "serve/server.h"
#include "util/error.h"
#include "util/log.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* What main() sets up, released in reverse order by finish(). */
typedef struct apexd {
	apexd_options_t opt;
	apex_config_t cfg;
	apex_server_t server;
	apex_reloader_t reloader;
	apex_secondary_t secondary;
	apex_xfr_out_t xfr_out;
	apex_notifier_t notifier;
	apex_journals_t journals;
	apex_xfr_serve_journal_t journal_reader; /* of journals, for xfr_out */
	/* the keys and transfer lists in force: cfg's, then a reconfig's */
	apex_settings_holder_t settings;
	apex_settings_cache_t *tsig_caches; /* each worker's, for signed answers */
	apex_control_t *control;
	apex_metrics_server_t *metrics; /* NULL without a metrics: key */
	apex_dnstap_t *dnstap;          /* NULL without dnstap-enable: yes */
	sigset_t signals;
	apex_privs_t privs;
	unsigned workers;
	size_t loaded, awaiting; /* zones served, secondaries without a copy yet */
	bool config_ready, server_ready, reloader_ready, settings_ready, secondary_ready,
		xfr_out_ready, notifier_ready, journals_ready, pid_written;
} apexd_t;

/* The outcome of a start-up step. */
typedef enum step {
	STEP_OK,       /* go on */
	STEP_FAILED,   /* stop: exit with failure */
	STEP_FINISHED, /* stop: the work is done (apexd -t) */
} step_t;

/* Signals, the configuration, the user to run as and the log. */
static step_t configure(apexd_t *d)
{
	char err[512];

	apexd_signals_block(&d->signals);
	/* opt.listens and opt.zones stay until exit: reconfig reads -z again */
	d->config_ready = true;
	if (apexd_options_build_config(&d->opt, &d->cfg) < 0)
		return STEP_FAILED;
	d->workers = d->cfg.workers > 0 ? d->cfg.workers : apex_config_cpu_count();
	if (apex_privs_resolve(&d->cfg, &d->privs, err, sizeof(err)) < 0) {
		apex_error("%s", err);
		return STEP_FAILED;
	}
	if (!d->opt.check_only && apexd_logging_start(&d->cfg, d->opt.verbose, &d->privs) < 0)
		return STEP_FAILED;
	apexd_options_locate_config(&d->opt, d->cfg.chroot_dir);
	return STEP_OK;
}

/* A new version is served (reload or transfer), on the publishing thread:
 * the change goes to the zone's journal, and its secondaries are told. */
static void zone_published(void *arg, const apex_zone_t *old, const apex_zone_t *version)
{
	apexd_t *d = arg;

	apex_journals_record(&d->journals, old, version, NULL, 0);
	apex_notifier_changed(&d->notifier, version->origin);
}

/* A transfer is served: as zone_published(), the journal taking the change
 * sets of an IXFR as they came instead of comparing the versions. */
static void transfer_published(void *arg, const apex_zone_t *old, const apex_zone_t *version,
			       const apex_changes_t *sets, size_t count)
{
	apexd_t *d = arg;

	apex_journals_record(&d->journals, old, version, sets, count);
	apex_notifier_changed(&d->notifier, version->origin);
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

/* The server and its zones (apexd -t ends here). */
static step_t load_zones(apexd_t *d, int *status)
{
	const apex_config_t *cfg = &d->cfg;

	d->server_ready = true;
	if (apex_server_init(&d->server, cfg, d->workers) < 0) {
		apex_error("out of memory");
		return STEP_FAILED;
	}
	d->reloader_ready = true;
	if (apex_reloader_init(&d->reloader, &d->server, cfg) < 0) {
		apex_error("out of memory");
		return STEP_FAILED;
	}
	apex_info("apexd %s: loading %zu zone(s)", PACKAGE_VERSION, cfg->zone_count);
	apexd_load_progress_start(cfg->zone_count);
	if (apex_reloader_load_initial(&d->reloader, &d->loaded, &d->awaiting) < 0) {
		apex_error("zone loading: out of memory");
		return STEP_FAILED;
	}
	d->settings_ready = true;
	if (apex_settings_holder_init(&d->settings, cfg) < 0) {
		apex_error("out of memory");
		return STEP_FAILED;
	}
	d->secondary_ready = true;
	if (apex_secondary_init(&d->secondary, &d->server, &d->settings) < 0) {
		apex_error("secondary zones: out of memory");
		return STEP_FAILED;
	}
	d->notifier_ready = true;
	if (apex_notifier_init(&d->notifier, &d->server, &d->settings) < 0) {
		apex_error("notify: out of memory");
		return STEP_FAILED;
	}
	d->journal_reader = apex_journals_reader_template;
	d->journal_reader.ctx = &d->journals;
	d->reloader.published = zone_published;
	d->reloader.published_arg = d;
	d->secondary.published = transfer_published;
	d->secondary.reloader = &d->reloader;
	d->secondary.published_arg = d;
	d->xfr_out_ready = true;
	if (apex_xfr_out_init(&d->xfr_out, &d->server, &d->settings, cfg->xfr_out_max) < 0) {
		apex_error("outgoing transfers: cannot start");
		return STEP_FAILED;
	}
	/* the hooks are set even without keys or secondary zones: a reconfig
	 * may bring them */
	d->tsig_caches = calloc(d->server.worker_count, sizeof(*d->tsig_caches));
	if (d->tsig_caches == NULL) {
		apex_error("out of memory");
		return STEP_FAILED;
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
	/* a secondary zone without its copy yet is served after its first transfer */
	if (cfg->zone_count > 0 && d->loaded == 0 && d->secondary.count == 0) {
		apex_error("no zone could be loaded: not starting");
		return STEP_FAILED;
	}
	if (cfg->zone_count == 0)
		apex_warning("no zone configured: every query will be REFUSED");
	if (d->loaded < cfg->zone_count)
		apex_warning("%zu of %zu zone(s) not served (see above)",
			     cfg->zone_count - d->loaded, cfg->zone_count);
	if (d->opt.check_only) {
		/* an interface that comes later (a VLAN, a bond) is not an error:
		 * apexd would serve on its sockets */
		if (cfg->xdp_interface != NULL && if_nametoindex(cfg->xdp_interface) == 0)
			apex_warning("xdp-interface %s: no such interface here: apexd would "
				     "serve on its sockets alone",
				     cfg->xdp_interface);
		/* a secondary zone without its copy yet is not an error */
		apex_info("configuration OK; %zu of %zu zone(s) loaded, %zu awaiting their first "
			  "transfer",
			  d->loaded, cfg->zone_count, d->awaiting);
		*status = d->loaded + d->awaiting == cfg->zone_count ? EXIT_SUCCESS : EXIT_FAILURE;
		return STEP_FINISHED;
	}
	return STEP_OK;
}

/* dnstap's rings, each worker's hook into them (dnstap-enable: yes); the
 * writer thread starts with the others. */
static int open_dnstap(apexd_t *d)
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
static int run_dnstap(apexd_t *d)
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

/* Sockets, the daemon's process, the control socket: all that needs
 * root, then the privilege drop before any thread exists. */
static step_t open_privileged(apexd_t *d)
{
	const apex_config_t *cfg = &d->cfg;
	char err[512];

	/* every TCP connection is a descriptor: make room for the maximum */
	apex_privs_raise_nofile((unsigned long)cfg->tcp_max_connections + 256 +
				2UL * d->workers * cfg->listen_count);
	if (apex_server_open_sockets(&d->server) < 0)
		return STEP_FAILED;
	if (!d->opt.foreground && apexd_daemonize() < 0)
		return STEP_FAILED;
	apex_server_open_xdp(&d->server);
	if (cfg->pid_file != NULL) {
		if (apexd_pid_file_write(cfg->pid_file, &d->privs) < 0)
			return STEP_FAILED;
		d->pid_written = true;
	}
	if (open_dnstap(d) < 0)
		return STEP_FAILED;
	/* control before the reload thread: the reloader notifies it */
	apex_command_context_t threads = {
		.dnstap = d->dnstap,
		.server = &d->server,
		.reloader = &d->reloader,
		.secondary = &d->secondary,
		.notifier = &d->notifier,
		.xfr_out = &d->xfr_out,
		.settings = &d->settings,
		.reconfigured = reconfigured,
		.reconfigured_arg = d,
		.reread_config = d->opt.config_file != NULL ? apexd_options_reread_config : NULL,
		.reread_arg = &d->opt,
	};
	if (apexd_endpoints_open(cfg, &threads, &d->privs, &d->control, &d->metrics) < 0)
		return STEP_FAILED;
	/* the journals are files beside the zones: opened before the chroot */
	d->journals_ready = true;
	if (apex_journals_init(&d->journals, cfg) < 0) {
		apex_error("journals: out of memory");
		apexd_endpoints_close(d->control, d->metrics);
		return STEP_FAILED;
	}
	if (apex_privs_drop(&d->privs, cfg->chroot_dir, err, sizeof(err)) < 0) {
		apex_error("dropping privileges: %s", err);
		apexd_endpoints_close(d->control, d->metrics);
		return STEP_FAILED;
	}
	if (cfg->chroot_dir != NULL) {
		apex_reloader_rebase(&d->reloader, apex_privs_chroot_path, cfg->chroot_dir);
		apex_secondary_rebase(&d->secondary, apex_privs_chroot_path, cfg->chroot_dir);
		apex_journals_rebase(&d->journals, apex_privs_chroot_path, cfg->chroot_dir);
		apex_info("chroot %s", cfg->chroot_dir);
		apexd_logging_rebase(cfg);
	}
	if (d->privs.drop)
		apex_info("running as user %s (uid %lu, gid %lu) without capabilities",
			  d->privs.name, (unsigned long)d->privs.uid, (unsigned long)d->privs.gid);
	return STEP_OK;
}

/* The worker threads, the control thread and the reload thread. */
static step_t start_threads(apexd_t *d)
{
	if (run_dnstap(d) < 0 || apex_server_start(&d->server) < 0) {
		apex_server_stop(&d->server);
		apexd_endpoints_close(d->control, d->metrics);
		return STEP_FAILED;
	}
	if (apexd_endpoints_run(d->control, d->metrics) < 0) {
		apexd_endpoints_close(d->control, d->metrics);
		apex_server_stop(&d->server);
		return STEP_FAILED;
	}
	d->reloader.notify = d->control != NULL ? apex_control_notify : NULL;
	d->reloader.notify_arg = d->control;
	if (apex_notifier_start(&d->notifier) < 0 || apex_reloader_start(&d->reloader) < 0) {
		apex_notifier_stop(&d->notifier);
		apexd_endpoints_close(d->control, d->metrics);
		apex_server_stop(&d->server);
		return STEP_FAILED;
	}
	if (apex_secondary_start(&d->secondary) < 0) {
		apex_reloader_stop(&d->reloader);
		apex_notifier_stop(&d->notifier);
		apexd_endpoints_close(d->control, d->metrics);
		apex_server_stop(&d->server);
		return STEP_FAILED;
	}
	for (size_t i = 0; i < d->cfg.listen_count; i++)
		apex_info("listening on %s (udp, tcp)", d->cfg.listens[i].text);
	apex_info("serving %zu zone(s) with %u worker(s), pid %ld", d->loaded, d->workers,
		  (long)getpid());
	apexd_sd_notify("READY=1\nMAINPID=%ld\nSTATUS=serving %zu zone(s) with %u worker(s)",
			(long)getpid(), d->loaded, d->workers);
	return STEP_OK;
}

/* Serve until SIGTERM or SIGINT, then stop the threads. */
static void serve(apexd_t *d)
{
	apexd_sighup_t sighup = { .reloader = &d->reloader };
	const apexd_signal_handlers_t on = {
		.hangup = apexd_sighup_reload,
		.poll = apexd_sighup_poll,
		.arg = &sighup,
	};

	apexd_signals_wait(&d->signals, &on);
	apexd_sighup_free(&sighup);
	apexd_sd_notify("STOPPING=1\nSTATUS=stopping");
	apex_secondary_stop(&d->secondary);
	apex_xfr_out_stop(&d->xfr_out);
	/* in this order: the reload thread notifies the control thread, and
	 * both wake the workers or read their state */
	apex_reloader_stop(&d->reloader);
	apex_control_stop(d->control);
	apex_metrics_server_stop(d->metrics);
	apex_notifier_stop(&d->notifier);
	apex_server_stop(&d->server);
	/* after the workers: what their rings still hold is written first */
	apex_dnstap_stop(d->dnstap);
	d->dnstap = NULL;
	apex_server_log_stats(&d->server);
}

static void finish(apexd_t *d, int status)
{
	apex_dnstap_stop(d->dnstap); /* not started, or a start that failed */
	if (d->xfr_out_ready)
		apex_xfr_out_free(&d->xfr_out);
	if (d->notifier_ready)
		apex_notifier_free(&d->notifier);
	if (d->journals_ready)
		apex_journals_free(&d->journals);
	if (d->secondary_ready)
		apex_secondary_free(&d->secondary);
	for (unsigned w = 0; d->tsig_caches != NULL && w < d->server.worker_count; w++)
		apex_settings_cache_free(&d->tsig_caches[w]);
	free(d->tsig_caches);
	if (d->settings_ready)
		apex_settings_holder_free(&d->settings);
	if (d->reloader_ready)
		apex_reloader_free(&d->reloader);
	if (d->server_ready)
		apex_server_destroy(&d->server);
	/* as seen from inside the chroot, if any */
	if (d->pid_written)
		apexd_pid_file_remove(d->cfg.pid_file, d->cfg.chroot_dir);
	if (status == EXIT_SUCCESS && !d->opt.check_only)
		apex_info("apexd stopped");
	if (d->config_ready)
		apex_config_free(&d->cfg);
	apexd_sd_notify_close();
	apexd_options_free(&d->opt);
}

int main(int argc, char **argv)
{
	static apexd_t d; /* large (the server); one per process */
	int status = EXIT_FAILURE;

	int rc = apexd_options_parse(argc, argv, &d.opt);
	if (rc != 0) {
		apexd_options_free(&d.opt);
		return rc - 1;
	}
	if (d.opt.verbose)
		apex_log_set_level(APEX_LOG_DEBUG);
	if (!d.opt.check_only)
		apexd_sd_notify_open(); /* before the privilege drop and any chroot */
	step_t step = configure(&d);
	if (step == STEP_OK)
		step = load_zones(&d, &status);
	if (step == STEP_OK)
		step = open_privileged(&d);
	if (step == STEP_OK)
		step = start_threads(&d);
	if (step == STEP_OK) {
		serve(&d);
		status = EXIT_SUCCESS;
	}
	finish(&d, status);
	return status;
}
