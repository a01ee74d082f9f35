/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What daemon_config.c lends the config file reader (reader.c and the
 * section files): a path made absolute and an address "ADDR[@PORT]", as
 * the command line takes them too.  Internal to config/; includes nothing
 * of apexd's so that daemon_config.c can include it.
 */
#ifndef APEXD_CONFIG_DAEMON_CONFIG_INTERNAL_H
#define APEXD_CONFIG_DAEMON_CONFIG_INTERNAL_H

#include <stddef.h>

struct apex_listen;

/* The longest NSID payload (nsid:, or the identity standing for it). */
#define APEX_CONFIG_NSID_MAX 512

/*
 * path made absolute: kept if it starts with '/', else joined to base_dir
 * (or the current directory when base_dir is NULL).  Returns a new string
 * owned by the caller, or NULL on allocation failure or a cwd error.
 */
char *apex_config_absolute_path(const char *path, const char *base_dir);

/* "ADDR[@PORT]" (an IPv4 or IPv6 literal; port default_port) into *out;
 * what names it in errors ("listen address"). */
int apex_config_parse_address(const char *text, const char *what, unsigned long port,
			      struct apex_listen *out, char *err, size_t err_size);

#endif
