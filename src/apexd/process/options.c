/* SPDX-License-Identifier: BSD-3-Clause */
/* apexd's command line and the configuration built from it (options.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: PACKAGE_VERSION, _GNU_SOURCE */
#endif
#include "process/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/request.h"
#include "process/privs.h"
#include "util/error.h"
#include "util/log.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
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
int apexd_options_parse(int argc, char **argv, apexd_options_t *opt)
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
int apexd_options_build_config(const apexd_options_t *opt, apex_config_t *cfg)
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

/* path, in place, as seen inside the chroot (if any; NULL ignored). */
static void rebase(const char *chroot_dir, char *path)
{
	const char *inside;

	if (chroot_dir == NULL || path == NULL)
		return;
	inside = apex_privs_chroot_path(chroot_dir, path);
	if (inside != path)
		memmove(path, inside, strlen(inside) + 1);
}

/*
 * reconfig: the config file read again and the command line's -z zones
 * added, as at start-up.  The zones are applied (the reloader compares
 * them), and the keys and the zones' transfer lists (settings.h); other
 * settings need a restart.
 */
int apexd_options_reread_config(void *arg, apex_config_t *cfg, char *err, size_t err_size)
{
	const apexd_options_t *opt = arg;
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
	/* in a chroot, paths written as seen from outside it: the zones' and
	 * the TLS files read again (renewed certificates) */
	for (size_t i = 0; i < cfg->zone_count; i++)
		rebase(cfg->chroot_dir, cfg->zones[i].file);
	for (size_t i = 0; i < cfg->pattern_count; i++)
		rebase(cfg->chroot_dir, cfg->patterns[i].file);
	rebase(cfg->chroot_dir, cfg->zone_list_file);
	rebase(cfg->chroot_dir, cfg->tls.service_key);
	rebase(cfg->chroot_dir, cfg->tls.service_pem);
	rebase(cfg->chroot_dir, cfg->tls.cert_bundle);
	for (size_t i = 0; i < cfg->tls.auth_count; i++) {
		rebase(cfg->chroot_dir, cfg->tls.auths[i].client_cert);
		rebase(cfg->chroot_dir, cfg->tls.auths[i].client_key);
	}
	return APEX_OK;
}

void apexd_options_locate_config(apexd_options_t *opt, const char *chroot_dir)
{
	if (opt->config_file == NULL)
		return;
	opt->config_abs = realpath(opt->config_file, NULL);
	if (opt->config_abs != NULL && chroot_dir != NULL) {
		const char *inside = apex_privs_chroot_path(chroot_dir, opt->config_abs);

		memmove(opt->config_abs, inside, strlen(inside) + 1);
	}
}

void apexd_options_free(apexd_options_t *opt)
{
	free(opt->listens);
	free(opt->zones);
	free(opt->config_abs);
}
