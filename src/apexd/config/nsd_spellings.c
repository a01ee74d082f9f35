/* SPDX-License-Identifier: BSD-3-Clause */
/* NSD's spellings of apex's keys, one row a key (apex.conf(5), NSD's spellings). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "config/nsd_spellings.h"

#include <stddef.h>
#include <string.h>

static const struct {
	const char *section; /* as the file writes it, before the ':' */
	const char *nsd;     /* NSD's key */
	const char *apex;    /* the key of that section it means */
} spellings[] = {
	{ "server", "ip-address", "listen" },
	{ "server", "server-count", "workers" },
	{ "server", "username", "user" },
	{ "server", "pidfile", "pid-file" },
	{ "server", "zonesdir", "zones-directory" },
	{ "server", "logfile", "log-target" },
	{ "server", "tcp-timeout", "tcp-idle-timeout" },
	{ "server", "rrl-ratelimit", "rrl-responses-per-second" },
	{ "server", "rrl-size", "rrl-table-size" },
	{ "server", "answer-cookie", "cookies" },
	{ "server", "xfrd-tcp-max", "xfr-in-max" },
	{ "server", "zonelistfile", "zone-list-file" },
	{ "zone", "zonefile", "file" },
	{ "zone", "zonemd-check", "zonemd-verify" },
	{ "pattern", "zonefile", "file" },
	{ "pattern", "zonemd-check", "zonemd-verify" },
};

const char *apex_config_nsd_spelling(const char *section, const char *key)
{
	for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++)
		if (strcmp(section, spellings[i].section) == 0 &&
		    strcmp(key, spellings[i].nsd) == 0)
			return spellings[i].apex;
	return NULL;
}
