/* SPDX-License-Identifier: BSD-3-Clause */
/* The dnstap: section of the config file (NSD's keys, apex.conf(5)). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "config/reader.h"

#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "config/daemon_config_internal.h"
#include "util/error.h"

/* dnstap-socket-path: the collector's Unix socket, relative to this file's directory. */
static int key_dnstap_socket_path(parser_t *p, const char *key, const char *value)
{
	(void)key;
	free(p->cfg->dnstap.socket_path);
	if ((p->cfg->dnstap.socket_path = apex_config_absolute_path(value, p->base_dir)) == NULL)
		return PFAIL(p, "out of memory");
	if (strlen(p->cfg->dnstap.socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return PFAIL(p, "dnstap-socket-path %s: too long for a Unix socket",
			     p->cfg->dnstap.socket_path);
	return APEX_OK;
}

/* dnstap-enable needs the collector's socket. */
static int dnstap_finish(parser_t *p)
{
	if (p->cfg->dnstap.enable && p->cfg->dnstap.socket_path == NULL)
		return apex_fail(p->err, p->err_size, APEX_EINVAL,
				 "%s: dnstap-enable: yes needs dnstap-socket-path", p->file);
	return APEX_OK;
}

/* The dnstap: section (NSD's keys). */
static const key_def_t dnstap_keys[] = {
	BOOL_KEY("dnstap-enable", dnstap.enable),
	CUSTOM_KEY("dnstap-socket-path", key_dnstap_socket_path),
	BOOL_KEY("dnstap-log-auth-query-messages", dnstap.log_queries),
	BOOL_KEY("dnstap-log-auth-response-messages", dnstap.log_responses),
	STRING_KEY("dnstap-identity", dnstap.identity),
	STRING_KEY("dnstap-version", dnstap.version),
};

const section_def_t apex_config_dnstap_section = {
	.name = "dnstap",
	.what = "the dnstap section",
	.keys = dnstap_keys,
	.key_count = sizeof(dnstap_keys) / sizeof(dnstap_keys[0]),
	.finish = dnstap_finish,
};
