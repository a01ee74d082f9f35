/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apexd's command line (apexd -h) and the configuration built from it:
 * the config file first, then the options over it.  The options stay
 * for the process's life: a reconfig reads the config file and the -z
 * zones again.
 */
#ifndef APEXD_OPTIONS_H
#define APEXD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "config/daemon_config.h"

typedef struct apexd_options {
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
} apexd_options_t;

/*
 * Parse argv into *opt (-h and -V print and end here; a mistake prints
 * usage on stderr).  Returns 0 to go on, or the exit status + 1 (so that
 * exit 0 is possible); apexd_options_free() is due either way.
 */
int apexd_options_parse(int argc, char **argv, apexd_options_t *opt);

/* The config file, then the command line over it, finished and checked
 * (a listen address is required unless -t); errors are logged. */
int apexd_options_build_config(const apexd_options_t *opt, apex_config_t *cfg);

/* opt->config_abs: the config file's absolute path, as seen inside
 * chroot_dir (NULL: none); left NULL without -c or when unresolved. */
void apexd_options_locate_config(apexd_options_t *opt, const char *chroot_dir);

/*
 * reconfig: the config file read again and the command line's -z zones
 * added, as at start-up (a reread_config hook of control/commands.h, arg
 * the apexd_options_t).  Returns APEX_OK, or a negative apex code with
 * the reason in err.
 */
int apexd_options_reread_config(void *arg, apex_config_t *cfg, char *err, size_t err_size);

/* Free what parsing and locating allocated. */
void apexd_options_free(apexd_options_t *opt);

#endif
