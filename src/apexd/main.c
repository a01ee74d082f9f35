/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apexd: the apex authoritative DNS server daemon.  Its life, in order:
 *
 * 1. parse the command line (process/options.c);
 * 2. configure: block the signals (process/signals.c), build the
 *    configuration from the file and the options, resolve the user to
 *    run as, start logging (observe/logging.c);
 * 3. load the zones (zones/), then set up the transfers and the hooks
 *    between the threads (wiring.c); apexd -t reports and stops here;
 * 4. open what needs root: the sockets, then detach (process/), XDP, the
 *    pid file, dnstap's rings, the control socket and the metrics port
 *    (control/endpoints.c, before the reload thread, which notifies the
 *    control socket), the journals (before the chroot); then drop the
 *    privileges, before any thread exists, and replay each journal that
 *    is ahead of its zone's loaded version (transfers/journal_replay.c);
 * 5. start the threads: dnstap's writer, the workers, the control socket
 *    and the metrics endpoint, notify, the reload thread, the secondary
 *    zones; tell systemd READY=1;
 * 6. serve until SIGTERM or SIGINT (SIGHUP reloads the zones,
 *    zones/sighup.c), then stop the threads in order;
 * 7. release everything in reverse order (finish()).
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: PACKAGE_VERSION, _GNU_SOURCE */
#endif

#include <net/if.h>
#include <stdlib.h>
#include <unistd.h>

#include "catalog/producer.h"
#include "control/endpoints.h"
#include "daemon.h"
#include "observe/logging.h"
#include "observe/sd_notify.h"
#include "process/crash_point.h"
#include "process/hold_point.h"
#include "process/daemonize.h"
#include "process/memory.h"
#include "process/pid_file.h"
#include "process/signals.h"
#include "util/error.h"
#include "util/log.h"
#include "wiring.h"
#include "zones/load_progress.h"
#include "zones/verify_check.h"
#include "zones/sighup.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

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
	d->memory_limit_ready = true;
	if (apexd_memory_limit_init(&d->memory_limit, &d->cfg, "", err, sizeof(err)) < 0) {
		apex_error("%s", err);
		return STEP_FAILED;
	}
	if (apexd_memory_limit_on(&d->memory_limit)) {
		apexd_memory_limit_describe(&d->memory_limit, err, sizeof(err));
		apex_info("memory-limit: %s", err);
	}
	apexd_crash_point_init();
	apexd_hold_point_init();
	apexd_options_locate_config(&d->opt, d->cfg.chroot_dir);
	return STEP_OK;
}

/* Whether what was loaded is enough to start; apexd -t reports here. */
static step_t check_loaded(apexd_t *d, int *status)
{
	const apex_config_t *cfg = &d->cfg;

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
	if (!d->opt.check_only)
		return STEP_OK;
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

/* The server and its zones, the transfers and the hooks (apexd -t ends here). */
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
	d->reloader.memory_limit = &d->memory_limit;
	if (apexd_verify_configure(cfg) < 0) {
		apex_error("out of memory");
		return STEP_FAILED;
	}
	/* the catalogs apexd produces, written before they are loaded (by
	 * apexd -t too: it checks what apexd would serve) */
	if (apexd_catalogs_produce(cfg, NULL, NULL) < 0) {
		apex_error("catalogs: out of memory");
		return STEP_FAILED;
	}
	apex_info("apexd %s: loading %zu zone(s)", PACKAGE_VERSION, cfg->zone_count);
	apexd_load_progress_start(cfg->zone_count);
	if (apex_reloader_load_initial(&d->reloader, &d->loaded, &d->awaiting) < 0) {
		apex_error("zone loading: out of memory");
		return STEP_FAILED;
	}
	if (apexd_wire(d) < 0)
		return STEP_FAILED;
	/* certificates are read while privileged, and checked by apexd -t */
	if (apex_server_open_tls(&d->server) < 0)
		return STEP_FAILED;
	return check_loaded(d, status);
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
	apex_memory_keep_statm(); /* the process that serves, before any chroot */
	apex_server_open_xdp(&d->server);
	if (cfg->pid_file != NULL) {
		if (apexd_pid_file_write(cfg->pid_file, &d->privs) < 0)
			return STEP_FAILED;
		d->pid_written = true;
	}
	if (apexd_open_dnstap(d) < 0)
		return STEP_FAILED;
	/* control before the reload thread: the reloader notifies it */
	apex_command_context_t threads = apexd_command_context(d);
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
	apexd_rebase(d);
	if (d->privs.drop)
		apex_info("running as user %s (uid %lu, gid %lu) without capabilities",
			  d->privs.name, (unsigned long)d->privs.uid, (unsigned long)d->privs.gid);
	/* as the run user, with the paths inside the chroot: a copy written
	 * again belongs to whoever writes the next one */
	apexd_replay_journals(d);
	return STEP_OK;
}

/* The worker threads, the control thread and the reload thread. */
static step_t start_threads(apexd_t *d)
{
	if (apexd_run_dnstap(d) < 0 || apex_server_start(&d->server) < 0) {
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
	if (apex_secondary_start(&d->secondary) < 0 ||
	    (d->catalogs != NULL && apexd_catalogs_start(d->catalogs) < 0)) {
		apex_secondary_stop(&d->secondary);
		apex_reloader_stop(&d->reloader);
		apex_notifier_stop(&d->notifier);
		apexd_endpoints_close(d->control, d->metrics);
		apex_server_stop(&d->server);
		return STEP_FAILED;
	}
	for (size_t i = 0; i < d->cfg.listen_count; i++) {
		static const char *const how[] = {
			[APEX_LISTEN_PLAIN] = "udp, tcp",
			[APEX_LISTEN_TLS] = "tls",
			[APEX_LISTEN_TLS_AUTH] = "tls with client certificates",
		};
		apex_info("listening on %s (%s)", d->cfg.listens[i].text,
			  how[d->cfg.listens[i].transport]);
	}
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
	/* first: it puts configurations in force through the threads below
	 * (freed by finish(): the control thread may still call it) */
	apexd_catalogs_stop(d->catalogs);
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

/* Everything released, in reverse order of its setup. */
static void finish(apexd_t *d, int status)
{
	apex_dnstap_stop(d->dnstap);      /* not started, or a start that failed */
	apexd_catalogs_free(d->catalogs); /* after the control thread: it calls it */
	d->catalogs = NULL;
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
	apexd_verify_free();
	if (d->server_ready)
		apex_server_destroy(&d->server);
	/* as seen from inside the chroot, if any */
	if (d->pid_written)
		apexd_pid_file_remove(d->cfg.pid_file, d->cfg.chroot_dir);
	if (status == EXIT_SUCCESS && !d->opt.check_only)
		apex_info("apexd stopped");
	if (d->memory_limit_ready)
		apexd_memory_limit_free(&d->memory_limit);
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
