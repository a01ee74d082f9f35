/* SPDX-License-Identifier: BSD-3-Clause */
/* apexd: the apex authoritative DNS server daemon. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: PACKAGE_VERSION, _GNU_SOURCE */
#endif

#include <errno.h>
#include <net/if.h>
#include <fcntl.h>
#include <getopt.h>
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
#include "control/metrics_server.h"
#include "zone/load.h"
#include "observe/dnstap.h"
#include "process/privs.h"
#include "zones/reload.h"
#include "process/run_dir.h"
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

#ifndef APEX_CONTROL_SOCKET_DEFAULT
#define APEX_CONTROL_SOCKET_DEFAULT "/run/apexd.sock"
#endif

#define EXIT_USAGE 2

static void usage(FILE *out)
{
	fprintf(out,
		"usage: apexd [-c FILE] [-n THREADS] [-f] [-l ADDR[@PORT]]... [-z ORIGIN=FILE]...\n"
		"             [-P PIDFILE] [-s SOCKET] [-u USER[:GROUP]] [-t] [-v] [-h] [-V]\n"
		"\n"
		"Serve DNS zones authoritatively over UDP and TCP.\n"
		"\n"
		"  -c FILE          read the configuration from FILE (see apex.conf(5))\n"
		"  -n THREADS       number of worker threads (default: the config's workers,\n"
		"                   else one per CPU)\n"
		"  -f               stay in the foreground (default: detach as a daemon)\n"
		"  -l ADDR[@PORT]   listen on this IPv4 or IPv6 address (port 53 by default);\n"
		"                   repeatable; replaces the config file's listen addresses\n"
		"  -z ORIGIN=FILE   serve the zone ORIGIN from the master file FILE; repeatable;\n"
		"                   added to the config file's zones\n"
		"  -P PIDFILE       write the process id to PIDFILE\n"
		"  -s SOCKET        control socket for apexctl (default: the config's\n"
		"                   control-socket, else " APEX_CONTROL_SOCKET_DEFAULT ");\n"
		"                   'none' disables it\n"
		"  -u USER[:GROUP]  after binding the sockets, run as USER (and GROUP) with\n"
		"                   no capability (overrides the config's user: and group:)\n"
		"  -t               check the configuration and load the zones, then exit\n"
		"  -v               verbose: log debug messages too\n"
		"  -h               show this help and exit\n"
		"  -V               show the version and exit\n"
		"\n"
		"Example: apexd -f -n 2 -l 127.0.0.1@5353 -z .=zones/root.zone\n"
		"Signals: SIGTERM and SIGINT stop apexd; SIGHUP reloads every zone file;\n"
		"SIGUSR1 opens the log file again (logrotate).\n"
		"Control it with apexctl(8): status, reload, zone-status, stats, reconfig, "
		"stop.\n");
}

typedef struct options {
	const char *config_file;
	unsigned workers; /* 0: not given */
	bool foreground;
	bool check_only;
	bool verbose;
	const char *pid_file;
	const char *control_socket;
	const char *user;
	char *config_abs; /* config_file made absolute (reconfig after a chdir/chroot) */
	/* -l and -z in command-line order, applied after the config file */
	const char **listens;
	size_t listen_count;
	const char **zones;
	size_t zone_count;
} options_t;

static int push_arg(const char ***list, size_t *count, const char *arg)
{
	const char **grown = realloc(*list, (*count + 1) * sizeof(*grown));

	if (grown == NULL)
		return APEX_ENOMEM;
	grown[(*count)++] = arg;
	*list = grown;
	return APEX_OK;
}

/* Returns 0 to go on, or an exit status + 1 (so that exit 0 is possible). */
static int parse_options(int argc, char **argv, options_t *opt)
{
	int c;

	memset(opt, 0, sizeof(*opt));
	opterr = 0;
	while ((c = getopt(argc, argv, ":c:n:fl:z:P:s:u:tvhV")) != -1) {
		switch (c) {
		case 'c': opt->config_file = optarg; break;
		case 'n': {
			char *end;
			unsigned long n;

			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' || *end != '\0' || errno != 0 ||
			    n == 0 || n > APEX_CONFIG_WORKERS_MAX) {
				fprintf(stderr,
					"apexd: -n: expected a number from 1 to %d, not '%s'\n",
					APEX_CONFIG_WORKERS_MAX, optarg);
				return EXIT_USAGE + 1;
			}
			opt->workers = (unsigned)n;
			break;
		}
		case 'f': opt->foreground = true; break;
		case 'l':
			if (push_arg(&opt->listens, &opt->listen_count, optarg) < 0)
				return EXIT_FAILURE + 1;
			break;
		case 'z':
			if (push_arg(&opt->zones, &opt->zone_count, optarg) < 0)
				return EXIT_FAILURE + 1;
			break;
		case 'P': opt->pid_file = optarg; break;
		case 's': opt->control_socket = optarg; break;
		case 'u': opt->user = optarg; break;
		case 't': opt->check_only = true; break;
		case 'v': opt->verbose = true; break;
		case 'h': usage(stdout); return EXIT_SUCCESS + 1;
		case 'V': printf("apexd %s\n", PACKAGE_VERSION); return EXIT_SUCCESS + 1;
		case ':':
			fprintf(stderr, "apexd: option -%c needs a value\n", optopt);
			usage(stderr);
			return EXIT_USAGE + 1;
		default:
			fprintf(stderr, "apexd: unknown option -%c\n", optopt);
			usage(stderr);
			return EXIT_USAGE + 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "apexd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE + 1;
	}
	if (opt->config_file == NULL && opt->zone_count == 0 && opt->listen_count == 0) {
		fprintf(stderr, "apexd: give a config file (-c FILE) or listen addresses and zones "
				"(-l, -z)\n");
		usage(stderr);
		return EXIT_USAGE + 1;
	}
	return 0;
}

/* The config file, then the command line over it. */
static int build_config(const options_t *opt, apex_config_t *cfg)
{
	char err[512];
	int rc;

	apex_config_init(cfg);
	if (opt->config_file != NULL) {
		rc = apex_config_load(cfg, opt->config_file, err, sizeof(err));
		if (rc < 0) {
			apex_error("%s", err);
			return rc;
		}
	}
	if (opt->listen_count > 0)
		apex_config_clear_listens(cfg);
	for (size_t i = 0; i < opt->listen_count; i++) {
		if ((rc = apex_config_add_listen(cfg, opt->listens[i], err, sizeof(err))) < 0) {
			apex_error("-l: %s", err);
			return rc;
		}
	}
	for (size_t i = 0; i < opt->zone_count; i++) {
		if ((rc = apex_config_add_zone_arg(cfg, opt->zones[i], err, sizeof(err))) < 0) {
			apex_error("-z: %s", err);
			return rc;
		}
	}
	if (opt->workers > 0)
		cfg->workers = opt->workers;
	if (opt->pid_file != NULL && (rc = apex_config_set_pid_file(cfg, opt->pid_file)) < 0) {
		apex_error("-P: out of memory");
		return rc;
	}
	if (opt->control_socket != NULL &&
	    (rc = apex_config_set_control_socket(cfg, opt->control_socket)) < 0) {
		apex_error("-s: out of memory");
		return rc;
	}
	if (opt->user != NULL && (rc = apex_config_set_user(cfg, opt->user)) < 0) {
		apex_error("-u: expected USER[:GROUP], not '%s'", opt->user);
		return rc;
	}
	if ((rc = apex_config_finish(cfg, err, sizeof(err))) < 0 ||
	    (!opt->check_only && (rc = apex_config_require_listen(cfg, err, sizeof(err))) < 0)) {
		apex_error("%s", err);
		return rc;
	}
	return APEX_OK;
}

/*
 * reconfig: the config file read again and the command line's -z zones
 * added, as at start-up.  The zones are applied (the reloader compares
 * them), and the keys and the zones' transfer lists (settings.h); other
 * settings need a restart.
 */
static int reread_config(void *arg, apex_config_t *cfg, char *err, size_t err_size)
{
	const options_t *opt = arg;
	int rc;

	apex_config_init(cfg);
	if (opt->config_file == NULL) {
		snprintf(err, err_size, "apexd was started without a config file (-c)");
		return APEX_EINVAL;
	}
	if ((rc = apex_config_load(cfg,
				   opt->config_abs != NULL ? opt->config_abs : opt->config_file,
				   err, err_size)) < 0)
		return rc;
	for (size_t i = 0; i < opt->zone_count; i++) {
		if ((rc = apex_config_add_zone_arg(cfg, opt->zones[i], err, err_size)) < 0)
			return rc;
	}
	/* in a chroot, paths written as seen from outside it */
	for (size_t i = 0; cfg->chroot_dir != NULL && i < cfg->zone_count; i++) {
		char *file = cfg->zones[i].file;
		const char *inside = apex_privs_chroot_path(cfg->chroot_dir, file);

		if (inside != file)
			memmove(file, inside, strlen(inside) + 1);
	}
	return APEX_OK;
}

/* Write the pid file, in a directory made ready for privs' user, and
 * give it to that user, as NSD does. */
static int write_pid_file(const char *path, const apex_privs_t *privs)
{
	char buf[32], err[512];
	int len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	int rc = apexd_run_dir_prepare(path, "pid file", privs, err, sizeof(err));

	if (rc < 0) {
		apex_error("%s", err);
		return rc;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, (size_t)len) != len ||
	    (privs->drop && fchown(fd, privs->uid, privs->gid) < 0)) {
		int failure = apex_errno();
		apex_error("pid file %s: %s", path, apex_strerror(failure));
		if (fd >= 0)
			close(fd);
		return failure;
	}
	if (close(fd) < 0) {
		int failure = apex_errno();
		apex_error("pid file %s: %s", path, apex_strerror(failure));
		return failure;
	}
	return APEX_OK;
}

/*
 * Detach from the terminal: fork (the parent exits 0), new session,
 * working directory "/", stdin and stdout to /dev/null.  stderr is kept:
 * apexd logs there, so point it at a file or a log collector.  Called
 * before any thread exists.  All paths in the config are absolute by now.
 */
static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0) {
		int failure = apex_errno();
		apex_error("fork: %s", apex_strerror(failure));
		return failure;
	}
	if (pid > 0)
		_exit(EXIT_SUCCESS);
	if (setsid() < 0) {
		int failure = apex_errno();
		apex_error("setsid: %s", apex_strerror(failure));
		return failure;
	}
	if (chdir("/") < 0) {
		int failure = apex_errno();
		apex_error("chdir /: %s", apex_strerror(failure));
		return failure;
	}
	fd = open("/dev/null", O_RDWR);
	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		int failure = apex_errno();
		apex_error("/dev/null: %s", apex_strerror(failure));
		return failure;
	}
	if (fd > STDERR_FILENO)
		close(fd);
	return APEX_OK;
}

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

/*
 * Wait for signals on this (main) thread until SIGTERM or SIGINT.  A
 * SIGHUP reload is queued for the reload thread, like `apexctl reload`;
 * systemd hears RELOADING=1 then, and READY=1 once its loads are done
 * (checked every 100 ms meanwhile, signals still taken).
 */
static void wait_for_signals(apex_reloader_t *reloader, const sigset_t *set)
{
	apex_reload_ticket_t *tickets = NULL;
	size_t pending = 0;
	const struct timespec tick = { 0, 100 * 1000 * 1000 };

	for (;;) {
		int sig = pending > 0 ? sigtimedwait(set, NULL, &tick) : sigwaitinfo(set, NULL);

		if (sig < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (pending > 0 &&
			    (pending = reload_pending(reloader, &tickets, pending)) == 0)
				apexd_sd_notify("READY=1\nSTATUS=serving %zu zone(s), reloaded",
						apex_reloader_count(reloader));
			continue;
		}
		if (sig < 0) {
			apex_error("sigwait: %s", strerror(errno));
			break;
		}
		if (sig == SIGUSR1) {
			char err[600];

			if (apex_log_reopen(err, sizeof(err)) < 0)
				apex_error("SIGUSR1: %s; logging on to the file open before", err);
			else
				apex_info("SIGUSR1 received: log file opened again");
			continue;
		}
		if (sig == SIGHUP) {
			struct timespec now;

			apex_info("SIGHUP received: reloading every zone");
			free(tickets);
			tickets = NULL;
			pending = 0;
			clock_gettime(CLOCK_MONOTONIC, &now);
			apexd_sd_notify("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
					(unsigned long long)now.tv_sec * 1000000ULL +
						(unsigned long long)now.tv_nsec / 1000ULL);
			if (apex_reloader_request(reloader, NULL, &tickets, &pending) < 0)
				apex_error("SIGHUP: reload not queued: out of memory");
			if (pending == 0)
				apexd_sd_notify("READY=1");
			continue;
		}
		apex_info("%s received: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		break;
	}
	free(tickets);
}

/*
 * The control socket: the configured path, or the default (where a
 * failure is only a warning: apexd then runs without one), or none.
 * Created (and owned by the user apexd will run as) but not yet served.
 * Returns APEX_OK with *ctl NULL when there is none.
 */
static int start_control(const apex_config_t *cfg, const apex_command_context_t *threads,
			 options_t *opt, const apex_privs_t *privs, apex_control_t **ctl)
{
	const char *path =
		cfg->control_socket != NULL ? cfg->control_socket : APEX_CONTROL_SOCKET_DEFAULT;
	apex_command_context_t ctx = *threads;
	ctx.reread_config = opt->config_file != NULL ? reread_config : NULL;
	ctx.reread_arg = opt;
	char err[512];
	int rc;

	*ctl = NULL;
	if (strcmp(path, "none") == 0)
		return APEX_OK;
	/* only created here; its thread starts after the privilege drop (the
	 * directory's check first: binding in a missing one fails with a
	 * misleading "permission denied") */
	rc = apexd_run_dir_prepare(path, "control socket", privs, err, sizeof(err));
	if (rc == APEX_OK)
		rc = apex_control_open(ctl, path, &ctx, privs->drop ? privs->uid : (uid_t)-1,
				       privs->drop ? privs->gid : (gid_t)-1, err, sizeof(err));
	if (rc < 0) {
		if (cfg->control_socket != NULL) {
			apex_error("%s", err);
			return rc;
		}
		apex_warning("%s: running without a control socket (set one with -s)", err);
		return APEX_OK;
	}
	apex_info("control socket %s", path);
	return APEX_OK;
}

/* A large zone's load says how far it is, in the log and to systemd
 * (which then waits ten more minutes): a load of millions of records
 * takes minutes, and a silent one looks hung. */
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

/* What main() sets up, released in reverse order by finish(). */
typedef struct apexd {
	options_t opt;
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

/*
 * log-target, log-facility and log-level (-v overrides the level).  A log
 * file is opened as apexd starts (as root, say) and given to the user it
 * will run as, so that SIGUSR1 can open it again after logrotate moved it.
 */
static int start_logging(const apex_config_t *cfg, const options_t *opt, const apex_privs_t *privs)
{
	char err[600];

	apex_log_set_level(opt->verbose ? APEX_LOG_DEBUG : (apex_log_level_t)cfg->log_level);
	if (cfg->log_syslog)
		apex_log_to_syslog(cfg->log_facility);
	if (cfg->log_file == NULL)
		return APEX_OK;
	int rc = apex_log_to_file(cfg->log_file, err, sizeof(err));
	if (rc < 0) {
		apex_error("%s", err);
		return rc;
	}
	if (privs->drop && chown(cfg->log_file, privs->uid, privs->gid) < 0)
		apex_warning("log file %s: cannot give it to user %s: %s (SIGUSR1 may then "
			     "fail to open it again)",
			     cfg->log_file, privs->name, strerror(errno));
	return APEX_OK;
}

/* Signals, the configuration, the user to run as and the log. */
static step_t configure(apexd_t *d)
{
	char err[512];

	/* Signals are taken synchronously by the main thread (sigwait); every
	 * thread created from here on inherits the mask. */
	sigemptyset(&d->signals);
	sigaddset(&d->signals, SIGTERM);
	sigaddset(&d->signals, SIGINT);
	sigaddset(&d->signals, SIGHUP);
	sigaddset(&d->signals, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &d->signals, NULL);
	signal(SIGPIPE, SIG_IGN); /* a peer that closed its TCP end yields EPIPE, not death */

	/* opt.listens and opt.zones stay until exit: reconfig reads -z again */
	d->config_ready = true;
	if (build_config(&d->opt, &d->cfg) < 0)
		return STEP_FAILED;
	d->workers = d->cfg.workers > 0 ? d->cfg.workers : apex_config_cpu_count();
	if (apex_privs_resolve(&d->cfg, &d->privs, err, sizeof(err)) < 0) {
		apex_error("%s", err);
		return STEP_FAILED;
	}
	if (!d->opt.check_only && start_logging(&d->cfg, &d->opt, &d->privs) < 0)
		return STEP_FAILED;
	if (d->opt.config_file != NULL) {
		d->opt.config_abs = realpath(d->opt.config_file, NULL);
		if (d->opt.config_abs != NULL && d->cfg.chroot_dir != NULL) {
			const char *inside =
				apex_privs_chroot_path(d->cfg.chroot_dir, d->opt.config_abs);

			memmove(d->opt.config_abs, inside, strlen(inside) + 1);
		}
	}
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
	apex_load_set_progress(load_progress);
	/* systemd waits for READY=1 at most TimeoutStartSec: a large zone's
	 * load asks for more (once, 10 minutes from now) */
	apexd_sd_notify("STATUS=loading %zu zone(s)\nEXTEND_TIMEOUT_USEC=600000000",
			cfg->zone_count);
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
	if (!d->opt.foreground && daemonize() < 0)
		return STEP_FAILED;
	apex_server_open_xdp(&d->server);
	if (cfg->pid_file != NULL) {
		if (write_pid_file(cfg->pid_file, &d->privs) < 0)
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
	};
	if (start_control(cfg, &threads, &d->opt, &d->privs, &d->control) < 0)
		return STEP_FAILED;
	/* the metrics endpoint's port is bound here too, served after the drop */
	if (cfg->metrics_set &&
	    apex_metrics_server_open(&d->metrics, &cfg->metrics, &threads, err, sizeof(err)) < 0) {
		apex_error("%s", err);
		apex_control_stop(d->control);
		return STEP_FAILED;
	}
	/* the journals are files beside the zones: opened before the chroot */
	d->journals_ready = true;
	if (apex_journals_init(&d->journals, cfg) < 0) {
		apex_error("journals: out of memory");
		apex_metrics_server_stop(d->metrics);
		apex_control_stop(d->control);
		return STEP_FAILED;
	}
	if (apex_privs_drop(&d->privs, cfg->chroot_dir, err, sizeof(err)) < 0) {
		apex_error("dropping privileges: %s", err);
		apex_metrics_server_stop(d->metrics);
		apex_control_stop(d->control);
		return STEP_FAILED;
	}
	if (cfg->chroot_dir != NULL) {
		apex_reloader_rebase(&d->reloader, apex_privs_chroot_path, cfg->chroot_dir);
		apex_secondary_rebase(&d->secondary, apex_privs_chroot_path, cfg->chroot_dir);
		apex_journals_rebase(&d->journals, apex_privs_chroot_path, cfg->chroot_dir);
		apex_info("chroot %s", cfg->chroot_dir);
		apex_log_rebase(apex_privs_chroot_path, cfg->chroot_dir);
		if (cfg->log_file != NULL &&
		    apex_privs_chroot_path(cfg->chroot_dir, cfg->log_file) == cfg->log_file)
			apex_warning(
				"log file %s: outside the chroot, SIGUSR1 cannot open it again",
				cfg->log_file);
	}
	if (d->privs.drop)
		apex_info("running as user %s (uid %lu, gid %lu) without capabilities",
			  d->privs.name, (unsigned long)d->privs.uid, (unsigned long)d->privs.gid);
	return STEP_OK;
}

/* The worker threads, the control thread and the reload thread. */
static step_t start_threads(apexd_t *d)
{
	char err[256];

	if (run_dnstap(d) < 0 || apex_server_start(&d->server) < 0) {
		apex_server_stop(&d->server);
		apex_metrics_server_stop(d->metrics);
		apex_control_stop(d->control);
		return STEP_FAILED;
	}
	if ((d->control != NULL && apex_control_run(d->control, err, sizeof(err)) < 0) ||
	    (d->metrics != NULL && apex_metrics_server_run(d->metrics, err, sizeof(err)) < 0)) {
		apex_error("%s", err);
		apex_metrics_server_stop(d->metrics);
		apex_control_stop(d->control);
		apex_server_stop(&d->server);
		return STEP_FAILED;
	}
	if (d->metrics != NULL)
		apex_info("metrics on %s", apex_metrics_server_url(d->metrics));
	d->reloader.notify = d->control != NULL ? apex_control_notify : NULL;
	d->reloader.notify_arg = d->control;
	if (apex_notifier_start(&d->notifier) < 0 || apex_reloader_start(&d->reloader) < 0) {
		apex_notifier_stop(&d->notifier);
		apex_metrics_server_stop(d->metrics);
		apex_control_stop(d->control);
		apex_server_stop(&d->server);
		return STEP_FAILED;
	}
	if (apex_secondary_start(&d->secondary) < 0) {
		apex_reloader_stop(&d->reloader);
		apex_notifier_stop(&d->notifier);
		apex_metrics_server_stop(d->metrics);
		apex_control_stop(d->control);
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
	wait_for_signals(&d->reloader, &d->signals);
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
	if (d->pid_written &&
	    unlink(apex_privs_chroot_path(d->cfg.chroot_dir, d->cfg.pid_file)) < 0)
		apex_warning("pid file %s: %s", d->cfg.pid_file, strerror(errno));
	if (status == EXIT_SUCCESS && !d->opt.check_only)
		apex_info("apexd stopped");
	if (d->config_ready)
		apex_config_free(&d->cfg);
	apexd_sd_notify_close();
	free(d->opt.listens);
	free(d->opt.zones);
	free(d->opt.config_abs);
}

int main(int argc, char **argv)
{
	static apexd_t d; /* large (the server); one per process */
	int status = EXIT_FAILURE;

	int rc = parse_options(argc, argv, &d.opt);
	if (rc != 0) {
		free(d.opt.listens);
		free(d.opt.zones);
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
