/* SPDX-License-Identifier: BSD-3-Clause */
/* apexd configuration: parser of the config file and the command-line additions. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "config/daemon_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/un.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "util/error.h"
#include "util/hex.h"
#include "util/log.h"

#define NSID_MAX 512

void apex_config_init(apex_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->edns_payload = APEX_CONFIG_DEFAULT_EDNS_PAYLOAD;
	cfg->tcp_max_connections = APEX_CONFIG_DEFAULT_TCP_MAX_CONNECTIONS;
	cfg->tcp_idle_timeout = APEX_CONFIG_DEFAULT_TCP_IDLE_TIMEOUT;
	cfg->tcp_max_per_client = APEX_CONFIG_DEFAULT_TCP_MAX_PER_CLIENT;
	cfg->tcp_io_timeout = APEX_CONFIG_DEFAULT_TCP_IO_TIMEOUT;
	cfg->receive_buffer_size = APEX_CONFIG_DEFAULT_RECEIVE_BUFFER;
	cfg->send_buffer_size = APEX_CONFIG_DEFAULT_SEND_BUFFER;
	cfg->reload_idle = true;
	cfg->reload_nice = APEX_CONFIG_DEFAULT_RELOAD_NICE;
	cfg->rrl.slip = APEX_CONFIG_DEFAULT_RRL_SLIP;
	cfg->rrl.ipv4_prefix = APEX_CONFIG_DEFAULT_RRL_IPV4_PREFIX;
	cfg->rrl.ipv6_prefix = APEX_CONFIG_DEFAULT_RRL_IPV6_PREFIX;
	cfg->rrl.table_size = APEX_CONFIG_DEFAULT_RRL_TABLE_SIZE;
	cfg->cookies = true;
	cfg->xfr_timeout = APEX_CONFIG_DEFAULT_XFR_TIMEOUT;
	cfg->xfr_idle_timeout = APEX_CONFIG_DEFAULT_XFR_IDLE_TIMEOUT;
	cfg->xfr_out_max = APEX_CONFIG_DEFAULT_XFR_OUT_MAX;
	cfg->journal_size = APEX_CONFIG_DEFAULT_JOURNAL_SIZE;
	cfg->log_facility = LOG_DAEMON;
	cfg->log_level = APEX_LOG_INFO;
}

void apex_config_free(apex_config_t *cfg)
{
	for (size_t i = 0; i < cfg->zone_count; i++) {
		free(cfg->zones[i].name);
		free(cfg->zones[i].file);
		free(cfg->zones[i].request_xfr);
		free(cfg->zones[i].allow_notify);
		free(cfg->zones[i].provide_xfr);
		free(cfg->zones[i].notify);
	}
	free(cfg->zones);
	free(cfg->keys);
	free(cfg->listens);
	free(cfg->path);
	free(cfg->identity);
	free(cfg->version);
	free(cfg->nsid);
	free(cfg->log_file);
	free(cfg->pid_file);
	free(cfg->control_socket);
	free(cfg->rrl_whitelist);
	free(cfg->user);
	free(cfg->group);
	free(cfg->chroot_dir);
	free(cfg->xdp_interface);
	free(cfg->dnstap.socket_path);
	free(cfg->dnstap.identity);
	free(cfg->dnstap.version);
	memset(cfg, 0, sizeof(*cfg));
}

unsigned apex_config_cpu_count(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/*
 * path made absolute: kept if it starts with '/', else joined to base_dir
 * (or the current directory when base_dir is NULL).  Returns a new string
 * owned by the caller, or NULL on allocation failure or a cwd error.
 */
static char *absolute_path(const char *path, const char *base_dir)
{
	char cwd[PATH_MAX];
	char *out;
	size_t size;

	if (path[0] == '/')
		return strdup(path);
	if (base_dir == NULL) {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return NULL;
		base_dir = cwd;
	}
	size = strlen(base_dir) + 1 + strlen(path) + 1;
	out = malloc(size);
	if (out == NULL)
		return NULL;
	/* base_dir "/" (e.g. inside a chroot) must not give "//file" */
	snprintf(out, size, "%s%s%s", base_dir,
		 base_dir[0] != '\0' && base_dir[strlen(base_dir) - 1] == '/' ? "" : "/", path);
	return out;
}

/* The directory of a file, absolute, as a new string (caller frees). */
static char *directory_of(const char *file)
{
	char *abs = absolute_path(file, NULL);
	char *slash;

	if (abs == NULL)
		return NULL;
	slash = strrchr(abs, '/');
	if (slash == abs)
		slash[1] = '\0'; /* "/apex.conf" -> "/" */
	else
		*slash = '\0';
	return abs;
}

/* "ADDR[@PORT]" (an IPv4 or IPv6 literal; port default_port) into item;
 * what names it in errors ("listen address"). */
static int parse_address(const char *text, const char *what, unsigned long port, apex_listen_t *out,
			 char *err, size_t err_size)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *at = strrchr(text, '@');
	size_t host_len = at != NULL ? (size_t)(at - text) : strlen(text);
	apex_listen_t item;

	if (host_len == 0 || host_len >= sizeof(host))
		return apex_fail(err, err_size, APEX_EINVAL, "bad %s '%s': expected ADDR[@PORT]",
				 what, text);
	memcpy(host, text, host_len);
	host[host_len] = '\0';
	if (at != NULL) {
		char *end;

		errno = 0;
		port = strtoul(at + 1, &end, 10);
		if (at[1] == '\0' || *end != '\0' || errno != 0 || port == 0 || port > 65535)
			return apex_fail(err, err_size, APEX_EINVAL,
					 "bad port in %s '%s': expected 1 to 65535", what, text);
	}

	memset(&item, 0, sizeof(item));
	struct sockaddr_in *sin = (struct sockaddr_in *)&item.addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&item.addr;
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		item.addr_len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		item.addr_len = sizeof(*sin6);
	} else {
		return apex_fail(err, err_size, APEX_EINVAL,
				 "bad %s '%s': '%s' is not an IPv4 or IPv6 address", what, text,
				 host);
	}
	snprintf(item.text, sizeof(item.text), "%s@%lu", host, port);
	*out = item;
	return APEX_OK;
}

int apex_config_add_listen(apex_config_t *cfg, const char *text, char *err, size_t err_size)
{
	apex_listen_t item, *grown;
	int rc = parse_address(text, "listen address", APEX_CONFIG_DEFAULT_PORT, &item, err,
			       err_size);

	if (rc < 0)
		return rc;

	for (size_t i = 0; i < cfg->listen_count; i++) {
		if (cfg->listens[i].addr_len == item.addr_len &&
		    memcmp(&cfg->listens[i].addr, &item.addr, item.addr_len) == 0)
			return apex_fail(err, err_size, APEX_EINVAL,
					 "listen address %s given twice", item.text);
	}
	grown = realloc(cfg->listens, (cfg->listen_count + 1) * sizeof(*grown));
	if (grown == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	cfg->listens = grown;
	cfg->listens[cfg->listen_count++] = item;
	return APEX_OK;
}

void apex_config_clear_listens(apex_config_t *cfg)
{
	free(cfg->listens);
	cfg->listens = NULL;
	cfg->listen_count = 0;
}

int apex_config_add_zone(apex_config_t *cfg, const char *name, const char *file,
			 const char *base_dir, char *err, size_t err_size)
{
	char canonical[APEX_NAME_MAX * 4 + 1]; /* every byte may need a \DDD escape */
	apex_zone_config_t item, *grown;

	memset(&item, 0, sizeof(item));
	if (name[0] == '\0' || apex_name_from_str(name, item.origin) < 0)
		return apex_fail(err, err_size, APEX_EINVAL, "bad zone name '%s'", name);
	apex_name_to_str(item.origin, canonical, sizeof(canonical));
	if (file[0] == '\0')
		return apex_fail(err, err_size, APEX_EINVAL, "zone %s: empty file name", canonical);
	for (size_t i = 0; i < cfg->zone_count; i++) {
		if (apex_name_equal(cfg->zones[i].origin, item.origin))
			return apex_fail(err, err_size, APEX_EINVAL, "zone %s given twice",
					 canonical);
	}
	item.name = strdup(canonical);
	item.file = absolute_path(file, base_dir);
	item.zonemd_verify = true;
	grown = realloc(cfg->zones, (cfg->zone_count + 1) * sizeof(*grown));
	if (item.name == NULL || item.file == NULL || grown == NULL) {
		free(item.name);
		free(item.file);
		if (grown != NULL)
			cfg->zones = grown;
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	}
	cfg->zones = grown;
	cfg->zones[cfg->zone_count++] = item;
	return APEX_OK;
}

int apex_config_set_pid_file(apex_config_t *cfg, const char *path)
{
	char *abs = absolute_path(path, NULL);

	if (abs == NULL)
		return APEX_ENOMEM;
	free(cfg->pid_file);
	cfg->pid_file = abs;
	return APEX_OK;
}

int apex_config_set_control_socket(apex_config_t *cfg, const char *path)
{
	char *copy = strcmp(path, "none") == 0 ? strdup(path) : absolute_path(path, NULL);

	if (copy == NULL)
		return APEX_ENOMEM;
	free(cfg->control_socket);
	cfg->control_socket = copy;
	return APEX_OK;
}

int apex_config_set_user(apex_config_t *cfg, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char *user = colon != NULL ? strndup(arg, (size_t)(colon - arg)) : strdup(arg);
	char *group = colon != NULL && colon[1] != '\0' ? strdup(colon + 1) : NULL;

	if (user == NULL || (colon != NULL && colon[1] != '\0' && group == NULL)) {
		free(user);
		free(group);
		return APEX_ENOMEM;
	}
	if (user[0] == '\0') {
		free(user);
		free(group);
		return APEX_EINVAL;
	}
	free(cfg->user);
	cfg->user = user;
	if (group != NULL) {
		free(cfg->group);
		cfg->group = group;
	}
	return APEX_OK;
}

int apex_config_add_zone_arg(apex_config_t *cfg, const char *arg, char *err, size_t err_size)
{
	const char *eq = strchr(arg, '=');
	char *name;
	int rc;

	if (eq == NULL || eq == arg || eq[1] == '\0')
		return apex_fail(err, err_size, APEX_EINVAL, "bad zone '%s': expected ORIGIN=FILE",
				 arg);
	name = strndup(arg, (size_t)(eq - arg));
	if (name == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	rc = apex_config_add_zone(cfg, name, eq + 1, NULL, err, err_size);
	free(name);
	return rc;
}

/* ---------------------------------------------------------------- file parser */

typedef enum { SECTION_NONE, SECTION_SERVER, SECTION_ZONE, SECTION_KEY, SECTION_DNSTAP } section_t;

/* A growing array of access list entries. */
typedef struct acl_list {
	apex_acl_entry_t *entries;
	size_t count;
} acl_list_t;

typedef struct parser {
	apex_config_t *cfg;
	const char *file; /* for messages */
	char *base_dir;   /* directory of the config file */
	char *zones_dir;  /* zones-directory: where relative zone files are; NULL: base_dir */
	unsigned line;
	section_t section;
	/* the zone: section being read */
	unsigned zone_line;
	char *zone_name;
	char *zone_file;
	acl_list_t zone_request_xfr, zone_allow_notify, zone_provide_xfr, zone_notify;
	bool zone_zonemd_off; /* zonemd-verify: no */
	/* the key: section being read */
	unsigned key_line;
	char *key_name, *key_algorithm, *key_secret;
	char *err;
	size_t err_size;
} parser_t;

#define PFAIL(p, ...) parse_fail((p), __VA_ARGS__)

static int parse_fail(parser_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int parse_fail(parser_t *p, const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return apex_fail(p->err, p->err_size, APEX_EINVAL, "%s:%u: %s", p->file, p->line, reason);
}

static int parse_uint(parser_t *p, const char *key, const char *value, unsigned long min,
		      unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno != 0 || v < min || v > max)
		return PFAIL(p, "%s: expected a number from %lu to %lu, not '%s'", key, min, max,
			     value);
	*out = v;
	return APEX_OK;
}

/* nsid: "text" or "hex:0a1b..." (RFC 5001 leaves the payload opaque). */
static int parse_nsid(parser_t *p, const char *value)
{
	apex_config_t *cfg = p->cfg;
	size_t len = strlen(value), size;
	uint8_t *buf;

	if (strncmp(value, "hex:", 4) == 0) {
		const char *hex = value + 4;
		size_t hex_len = len - 4;

		if (hex_len % 2 != 0)
			return PFAIL(p, "nsid: odd number of hex digits");
		size = hex_len / 2;
		if (size > NSID_MAX)
			return PFAIL(p, "nsid: longer than %d bytes", NSID_MAX);
		buf = malloc(size + 1);
		if (buf == NULL)
			return PFAIL(p, "out of memory");
		for (size_t i = 0; i < size; i++) {
			int hi = apex_hex_digit(hex[2 * i]), lo = apex_hex_digit(hex[2 * i + 1]);

			if (hi < 0 || lo < 0) {
				free(buf);
				return PFAIL(p, "nsid: '%s' is not hex", hex);
			}
			buf[i] = (uint8_t)(hi << 4 | lo);
		}
	} else {
		size = len;
		if (size > NSID_MAX)
			return PFAIL(p, "nsid: longer than %d bytes", NSID_MAX);
		buf = malloc(size + 1);
		if (buf == NULL)
			return PFAIL(p, "out of memory");
		memcpy(buf, value, size);
	}
	free(cfg->nsid);
	cfg->nsid = buf;
	cfg->nsid_size = size;
	cfg->nsid_set = true;
	return APEX_OK;
}

static int replace_string(parser_t *p, char **slot, const char *value)
{
	char *copy = strdup(value);

	if (copy == NULL)
		return PFAIL(p, "out of memory");
	free(*slot);
	*slot = copy;
	return APEX_OK;
}

static int parse_bool(parser_t *p, const char *key, const char *value, bool *out)
{
	if (strcmp(value, "yes") == 0 || strcmp(value, "on") == 0) {
		*out = true;
		return APEX_OK;
	}
	if (strcmp(value, "no") == 0 || strcmp(value, "off") == 0) {
		*out = false;
		return APEX_OK;
	}
	return PFAIL(p, "%s: expected yes or no, not '%s'", key, value);
}

/* ---------------------------------------------------------------- keys */

/* The keys whose value is more than a number, a string or yes/no. */

static int key_listen(parser_t *p, const char *key, const char *value)
{
	char reason[256];

	(void)key;
	if (apex_config_add_listen(p->cfg, value, reason, sizeof(reason)) < 0)
		return PFAIL(p, "%s", reason);
	return APEX_OK;
}

static int key_metrics(parser_t *p, const char *key, const char *value)
{
	char reason[256];
	apex_listen_t item;

	(void)key;
	if (parse_address(value, "metrics address", APEX_CONFIG_DEFAULT_METRICS_PORT, &item, reason,
			  sizeof(reason)) < 0)
		return PFAIL(p, "%s", reason);
	p->cfg->metrics = item;
	p->cfg->metrics_set = true;
	return APEX_OK;
}

static int key_nsid(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return parse_nsid(p, value);
}

/* reload-priority: idle | N; reload-nice: N is its older spelling. */
static int key_reload_priority(parser_t *p, const char *key, const char *value)
{
	apex_config_t *cfg = p->cfg;
	bool priority = strcmp(key, "reload-priority") == 0;
	unsigned long v;
	int rc;

	if (priority && strcmp(value, "idle") == 0) {
		cfg->reload_idle = true;
		return APEX_OK;
	}
	if (value[0] < '0' || value[0] > '9')
		return PFAIL(p, "%s: expected %sa nice value from 0 to 19, not '%s'", key,
			     priority ? "idle or " : "", value);
	if ((rc = parse_uint(p, key, value, 0, 19, &v)) < 0)
		return rc;
	cfg->reload_idle = false;
	cfg->reload_nice = (unsigned)v;
	return APEX_OK;
}

static int key_rrl_whitelist(parser_t *p, const char *key, const char *value)
{
	apex_config_t *cfg = p->cfg;
	apex_prefix_t prefix, *grown;

	(void)key;
	if (apex_prefix_parse(value, &prefix, NULL) < 0)
		return PFAIL(p, "rrl-whitelist: expected ADDR/LEN (IPv4 or IPv6), not '%s'", value);
	grown = realloc(cfg->rrl_whitelist, (cfg->rrl_whitelist_count + 1) * sizeof(*grown));
	if (grown == NULL)
		return PFAIL(p, "out of memory");
	cfg->rrl_whitelist = grown;
	cfg->rrl_whitelist[cfg->rrl_whitelist_count++] = prefix;
	cfg->rrl.whitelist = cfg->rrl_whitelist;
	cfg->rrl.whitelist_count = cfg->rrl_whitelist_count;
	return APEX_OK;
}

/* A cookie secret: 32 hex digits into out[16]. */
static int parse_cookie_secret(parser_t *p, const char *key, const char *value, uint8_t *out)
{
	if (strlen(value) != 32)
		return PFAIL(p, "%s: expected 32 hex digits (16 bytes)", key);
	for (size_t i = 0; i < 16; i++) {
		int hi = apex_hex_digit(value[2 * i]), lo = apex_hex_digit(value[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return PFAIL(p, "%s: '%s' is not hex", key, value);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return APEX_OK;
}

static int key_cookie_secret(parser_t *p, const char *key, const char *value)
{
	int rc = parse_cookie_secret(p, key, value, p->cfg->cookie_secret);

	p->cfg->cookie_secret_set = rc == APEX_OK;
	return rc;
}

static int key_cookie_staging_secret(parser_t *p, const char *key, const char *value)
{
	int rc = parse_cookie_secret(p, key, value, p->cfg->cookie_staging_secret);

	p->cfg->cookie_staging_secret_set = rc == APEX_OK;
	return rc;
}

static int key_chroot(parser_t *p, const char *key, const char *value)
{
	(void)key;
	if (value[0] != '/')
		return PFAIL(p, "chroot: expected an absolute path, not '%s'", value);
	return replace_string(p, &p->cfg->chroot_dir, value);
}

/* An interface name as the kernel takes it (IFNAMSIZ, no '/' or blank). */
static int key_xdp_interface(parser_t *p, const char *key, const char *value)
{
	size_t size = strlen(value);

	(void)key;
	if (size == 0 || size >= 16 || strcspn(value, "/ \t:") != size || strcmp(value, ".") == 0 ||
	    strcmp(value, "..") == 0)
		return PFAIL(p, "xdp-interface: '%s' is not an interface name", value);
	return replace_string(p, &p->cfg->xdp_interface, value);
}

static int key_pid_file(parser_t *p, const char *key, const char *value)
{
	char *abs = absolute_path(value, p->base_dir);

	(void)key;
	if (abs == NULL)
		return PFAIL(p, "out of memory");
	free(p->cfg->pid_file);
	p->cfg->pid_file = abs;
	return APEX_OK;
}

static int key_control_socket(parser_t *p, const char *key, const char *value)
{
	char *path = strcmp(value, "none") == 0 ? strdup(value) : absolute_path(value, p->base_dir);

	(void)key;
	if (path == NULL)
		return PFAIL(p, "out of memory");
	free(p->cfg->control_socket);
	p->cfg->control_socket = path;
	return APEX_OK;
}

/* zones-directory (NSD's zonesdir): the zones that follow take a relative
 * file from there; itself relative to this file's directory. */
static int key_zones_directory(parser_t *p, const char *key, const char *value)
{
	char *abs = absolute_path(value, p->base_dir);

	(void)key;
	if (abs == NULL)
		return PFAIL(p, "out of memory");
	free(p->zones_dir);
	p->zones_dir = abs;
	return APEX_OK;
}

/* log-target: stderr (the default), syslog, or a file's path. */
static int key_log_target(parser_t *p, const char *key, const char *value)
{
	apex_config_t *cfg = p->cfg;

	(void)key;
	free(cfg->log_file);
	cfg->log_file = NULL;
	cfg->log_syslog = strcmp(value, "syslog") == 0;
	if (cfg->log_syslog || strcmp(value, "stderr") == 0)
		return APEX_OK;
	if ((cfg->log_file = absolute_path(value, p->base_dir)) == NULL)
		return PFAIL(p, "out of memory");
	return APEX_OK;
}

/* dnstap-socket-path: the collector's Unix socket, relative to this file's directory. */
static int key_dnstap_socket_path(parser_t *p, const char *key, const char *value)
{
	(void)key;
	free(p->cfg->dnstap.socket_path);
	if ((p->cfg->dnstap.socket_path = absolute_path(value, p->base_dir)) == NULL)
		return PFAIL(p, "out of memory");
	if (strlen(p->cfg->dnstap.socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return PFAIL(p, "dnstap-socket-path %s: too long for a Unix socket",
			     p->cfg->dnstap.socket_path);
	return APEX_OK;
}

/* log-facility: the syslog facility, as syslog.conf(5) names it. */
static int key_log_facility(parser_t *p, const char *key, const char *value)
{
	static const struct {
		const char *name;
		int facility;
	} facilities[] = {
		{ "daemon", LOG_DAEMON }, { "user", LOG_USER },     { "local0", LOG_LOCAL0 },
		{ "local1", LOG_LOCAL1 }, { "local2", LOG_LOCAL2 }, { "local3", LOG_LOCAL3 },
		{ "local4", LOG_LOCAL4 }, { "local5", LOG_LOCAL5 }, { "local6", LOG_LOCAL6 },
		{ "local7", LOG_LOCAL7 },
	};

	(void)key;
	for (size_t i = 0; i < sizeof(facilities) / sizeof(facilities[0]); i++)
		if (strcmp(value, facilities[i].name) == 0) {
			p->cfg->log_facility = facilities[i].facility;
			return APEX_OK;
		}
	return PFAIL(p, "log-facility: expected daemon, user or local0 to local7, not '%s'", value);
}

/* log-level: error, warning, info (the default) or debug. */
static int key_log_level(parser_t *p, const char *key, const char *value)
{
	static const char *const levels[] = { "error", "warning", "info", "debug" };

	(void)key;
	for (int i = 0; i < 4; i++)
		if (strcmp(value, levels[i]) == 0) {
			p->cfg->log_level = i;
			return APEX_OK;
		}
	return PFAIL(p, "log-level: expected error, warning, info or debug, not '%s'", value);
}

static int key_zone_name(parser_t *p, const char *key, const char *value)
{
	(void)key;
	if (p->zone_name != NULL)
		return PFAIL(p, "zone: name given twice");
	return replace_string(p, &p->zone_name, value);
}

static int key_zone_file(parser_t *p, const char *key, const char *value)
{
	(void)key;
	if (p->zone_file != NULL)
		return PFAIL(p, "zone: file given twice");
	return replace_string(p, &p->zone_file, value);
}

static int acl_push(parser_t *p, acl_list_t *list, const char *value, bool peer)
{
	char reason[300];
	apex_acl_entry_t *grown = realloc(list->entries, (list->count + 1) * sizeof(*grown));

	if (grown == NULL)
		return PFAIL(p, "out of memory");
	list->entries = grown;
	if (apex_acl_entry_parse(&grown[list->count], value, peer, reason, sizeof(reason)) < 0)
		return PFAIL(p, "%s", reason);
	list->count++;
	return APEX_OK;
}

static int key_request_xfr(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return acl_push(p, &p->zone_request_xfr, value, true);
}

static int key_allow_notify(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return acl_push(p, &p->zone_allow_notify, value, false);
}

static int key_provide_xfr(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return acl_push(p, &p->zone_provide_xfr, value, false);
}

static int key_notify(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return acl_push(p, &p->zone_notify, value, true);
}

/* zonemd-verify: yes (the default) or no. */
static int key_zonemd_verify(parser_t *p, const char *key, const char *value)
{
	bool on;
	int rc = parse_bool(p, key, value, &on);

	p->zone_zonemd_off = !on;
	return rc;
}

/* journal-size: 0 (no journal) or at least 4096 bytes (xfr/journal.h). */
static int key_journal_size(parser_t *p, const char *key, const char *value)
{
	unsigned long v;
	int rc = parse_uint(p, key, value, 0, 1UL << 40, &v);

	if (rc < 0)
		return rc;
	if (v != 0 && v < 4096)
		return PFAIL(p, "journal-size: 0 (no journal) or at least 4096 bytes, not '%s'",
			     value);
	p->cfg->journal_size = v;
	return APEX_OK;
}

/* key: section: name, algorithm, secret (apex_tsig_key_init() checks them at its end). */
static int key_key_name(parser_t *p, const char *key, const char *value)
{
	(void)key;
	if (p->key_name != NULL)
		return PFAIL(p, "key: name given twice");
	return replace_string(p, &p->key_name, value);
}

static int key_key_algorithm(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return replace_string(p, &p->key_algorithm, value);
}

static int key_key_secret(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return replace_string(p, &p->key_secret, value);
}

/* How a key's value is read into its field of apex_config_t. */
typedef enum key_kind {
	KEY_UINT,   /* a number from min to max, into an integer field */
	KEY_STRING, /* a string, into a char * field (owned) */
	KEY_BOOL,   /* yes/on or no/off, into a bool field */
	KEY_CUSTOM, /* its own parser */
} key_kind_t;

typedef struct key_def {
	const char *name;
	key_kind_t kind;
	size_t offset;          /* of the field in apex_config_t */
	size_t size;            /* of the field (KEY_UINT) */
	unsigned long min, max; /* KEY_UINT */
	int (*parse)(parser_t *p, const char *key, const char *value); /* KEY_CUSTOM */
} key_def_t;

#define FIELD(f) offsetof(apex_config_t, f), sizeof(((apex_config_t *)0)->f)
#define UINT_KEY(name, f, lo, hi)                      \
	{                                              \
		name, KEY_UINT, FIELD(f), lo, hi, NULL \
	}
#define STRING_KEY(name, f)                            \
	{                                              \
		name, KEY_STRING, FIELD(f), 0, 0, NULL \
	}
#define BOOL_KEY(name, f)                            \
	{                                            \
		name, KEY_BOOL, FIELD(f), 0, 0, NULL \
	}
#define CUSTOM_KEY(name, fn)                     \
	{                                        \
		name, KEY_CUSTOM, 0, 0, 0, 0, fn \
	}

/* The server: section, one row a key (apex.conf(5)). */
static const key_def_t server_keys[] = {
	CUSTOM_KEY("listen", key_listen),
	CUSTOM_KEY("metrics", key_metrics),
	UINT_KEY("workers", workers, 1, APEX_CONFIG_WORKERS_MAX),
	STRING_KEY("identity", identity),
	STRING_KEY("version", version),
	CUSTOM_KEY("nsid", key_nsid),
	UINT_KEY("edns-payload", edns_payload, 512, 65535),
	UINT_KEY("tcp-max-connections", tcp_max_connections, 1, 1000000),
	UINT_KEY("tcp-idle-timeout", tcp_idle_timeout, 1, 3600),
	UINT_KEY("tcp-max-connections-per-client", tcp_max_per_client, 0, 1000000),
	UINT_KEY("tcp-io-timeout", tcp_io_timeout, 1, 3600),
	UINT_KEY("receive-buffer-size", receive_buffer_size, 0, 1UL << 30),
	UINT_KEY("send-buffer-size", send_buffer_size, 0, 1UL << 30),
	CUSTOM_KEY("xdp-interface", key_xdp_interface),
	CUSTOM_KEY("reload-priority", key_reload_priority),
	CUSTOM_KEY("reload-nice", key_reload_priority),
	UINT_KEY("rrl-responses-per-second", rrl.rate, 0, 1000000),
	UINT_KEY("rrl-slip", rrl.slip, 0, 100),
	UINT_KEY("rrl-ipv4-prefix-length", rrl.ipv4_prefix, 1, 32),
	UINT_KEY("rrl-ipv6-prefix-length", rrl.ipv6_prefix, 1, 128),
	UINT_KEY("rrl-table-size", rrl.table_size, 16, 1UL << 24),
	CUSTOM_KEY("rrl-whitelist", key_rrl_whitelist),
	BOOL_KEY("cookies", cookies),
	CUSTOM_KEY("cookie-secret", key_cookie_secret),
	CUSTOM_KEY("cookie-staging-secret", key_cookie_staging_secret),
	BOOL_KEY("require-server-cookie", require_cookie),
	STRING_KEY("user", user),
	STRING_KEY("group", group),
	CUSTOM_KEY("chroot", key_chroot),
	CUSTOM_KEY("pid-file", key_pid_file),
	CUSTOM_KEY("zones-directory", key_zones_directory),
	CUSTOM_KEY("control-socket", key_control_socket),
	CUSTOM_KEY("log-target", key_log_target),
	CUSTOM_KEY("log-facility", key_log_facility),
	CUSTOM_KEY("log-level", key_log_level),
	UINT_KEY("xfr-timeout", xfr_timeout, 1, 86400),
	UINT_KEY("xfr-idle-timeout", xfr_idle_timeout, 1, 3600),
	UINT_KEY("xfr-size-limit", xfr_size_limit, 0, 1UL << 40),
	UINT_KEY("xfr-out-max", xfr_out_max, 1, 1000),
	CUSTOM_KEY("journal-size", key_journal_size),
	/* NSD's spellings of the same settings (apex.conf(5), NSD SPELLINGS) */
	CUSTOM_KEY("ip-address", key_listen),
	UINT_KEY("server-count", workers, 1, APEX_CONFIG_WORKERS_MAX),
	STRING_KEY("username", user),
	CUSTOM_KEY("pidfile", key_pid_file),
	CUSTOM_KEY("zonesdir", key_zones_directory),
	CUSTOM_KEY("logfile", key_log_target),
	UINT_KEY("tcp-timeout", tcp_idle_timeout, 1, 3600),
	UINT_KEY("rrl-ratelimit", rrl.rate, 0, 1000000),
	UINT_KEY("rrl-size", rrl.table_size, 16, 1UL << 24),
	BOOL_KEY("answer-cookie", cookies),
};

/* A zone: section. */
static const key_def_t zone_keys[] = {
	CUSTOM_KEY("name", key_zone_name),
	CUSTOM_KEY("file", key_zone_file),
	CUSTOM_KEY("request-xfr", key_request_xfr),
	CUSTOM_KEY("allow-notify", key_allow_notify),
	CUSTOM_KEY("provide-xfr", key_provide_xfr),
	CUSTOM_KEY("notify", key_notify),
	CUSTOM_KEY("zonemd-verify", key_zonemd_verify),
	/* NSD's spellings */
	CUSTOM_KEY("zonefile", key_zone_file),
	CUSTOM_KEY("zonemd-check", key_zonemd_verify),
};

/* The dnstap: section (NSD's keys). */
static const key_def_t dnstap_keys[] = {
	BOOL_KEY("dnstap-enable", dnstap.enable),
	CUSTOM_KEY("dnstap-socket-path", key_dnstap_socket_path),
	BOOL_KEY("dnstap-log-auth-query-messages", dnstap.log_queries),
	BOOL_KEY("dnstap-log-auth-response-messages", dnstap.log_responses),
	STRING_KEY("dnstap-identity", dnstap.identity),
	STRING_KEY("dnstap-version", dnstap.version),
};

/* A key: section. */
static const key_def_t key_keys[] = {
	CUSTOM_KEY("name", key_key_name),
	CUSTOM_KEY("algorithm", key_key_algorithm),
	CUSTOM_KEY("secret", key_key_secret),
};

/* Keys whose value is several words (an address and a key name): the rest
 * of the line, up to a comment. */
static bool key_takes_words(const char *key)
{
	return strcmp(key, "request-xfr") == 0 || strcmp(key, "allow-notify") == 0 ||
	       strcmp(key, "provide-xfr") == 0 || strcmp(key, "notify") == 0;
}

/* Store v in an unsigned integer field of `size` bytes. */
static void store_uint(void *field, size_t size, unsigned long v)
{
	switch (size) {
	case sizeof(uint16_t): *(uint16_t *)field = (uint16_t)v; break;
	case sizeof(uint32_t): *(uint32_t *)field = (uint32_t)v; break;
	default: *(uint64_t *)field = (uint64_t)v; break;
	}
}

/* Apply key = value with the definitions of a section. */
static int apply_key(parser_t *p, const key_def_t *keys, size_t count, const char *section,
		     const char *key, const char *value)
{
	for (size_t i = 0; i < count; i++) {
		const key_def_t *k = &keys[i];
		void *field = (char *)p->cfg + k->offset;
		unsigned long v;
		int rc;

		if (strcmp(key, k->name) != 0)
			continue;
		switch (k->kind) {
		case KEY_UINT:
			if ((rc = parse_uint(p, key, value, k->min, k->max, &v)) < 0)
				return rc;
			store_uint(field, k->size, v);
			return APEX_OK;
		case KEY_STRING: return replace_string(p, (char **)field, value);
		case KEY_BOOL: return parse_bool(p, key, value, (bool *)field);
		case KEY_CUSTOM: return k->parse(p, key, value);
		}
	}
	return PFAIL(p, "unknown key '%s' in %s", key, section);
}

/* The end of a zone: section: it needs a name and a file. */
static int zone_end(parser_t *p)
{
	char reason[300];
	unsigned line = p->line;
	int rc = APEX_OK;

	if (p->section != SECTION_ZONE)
		return APEX_OK;
	p->line = p->zone_line; /* errors point at the "zone:" line */
	if (p->zone_name == NULL)
		rc = PFAIL(p, "zone without a name");
	else if (p->zone_file == NULL)
		rc = PFAIL(p, "zone %s without a file", p->zone_name);
	else if (apex_config_add_zone(p->cfg, p->zone_name, p->zone_file,
				      p->zones_dir != NULL ? p->zones_dir : p->base_dir, reason,
				      sizeof(reason)) < 0)
		rc = PFAIL(p, "%s", reason);
	if (rc == APEX_OK) {
		apex_zone_config_t *z = &p->cfg->zones[p->cfg->zone_count - 1];

		z->request_xfr = p->zone_request_xfr.entries;
		z->request_xfr_count = p->zone_request_xfr.count;
		z->allow_notify = p->zone_allow_notify.entries;
		z->allow_notify_count = p->zone_allow_notify.count;
		z->provide_xfr = p->zone_provide_xfr.entries;
		z->provide_xfr_count = p->zone_provide_xfr.count;
		z->notify = p->zone_notify.entries;
		z->notify_count = p->zone_notify.count;
		z->zonemd_verify = !p->zone_zonemd_off;
		memset(&p->zone_notify, 0, sizeof(p->zone_notify));
		memset(&p->zone_request_xfr, 0, sizeof(p->zone_request_xfr));
		memset(&p->zone_allow_notify, 0, sizeof(p->zone_allow_notify));
		memset(&p->zone_provide_xfr, 0, sizeof(p->zone_provide_xfr));
	}
	p->line = line;
	free(p->zone_name);
	free(p->zone_file);
	free(p->zone_request_xfr.entries);
	free(p->zone_allow_notify.entries);
	free(p->zone_provide_xfr.entries);
	free(p->zone_notify.entries);
	memset(&p->zone_notify, 0, sizeof(p->zone_notify));
	memset(&p->zone_request_xfr, 0, sizeof(p->zone_request_xfr));
	memset(&p->zone_allow_notify, 0, sizeof(p->zone_allow_notify));
	memset(&p->zone_provide_xfr, 0, sizeof(p->zone_provide_xfr));
	p->zone_name = p->zone_file = NULL;
	p->zone_zonemd_off = false;
	return rc;
}

/* The end of a key: section: a TSIG key from its name, algorithm and secret. */
static int key_end(parser_t *p)
{
	char reason[300];
	unsigned line = p->line;
	apex_tsig_key_t key, *grown;
	int rc = APEX_OK;

	if (p->section != SECTION_KEY)
		return APEX_OK;
	p->line = p->key_line;
	if (p->key_name == NULL || p->key_algorithm == NULL || p->key_secret == NULL) {
		rc = PFAIL(p, "a key needs a name, an algorithm and a secret");
	} else if (apex_tsig_key_init(&key, p->key_name, p->key_algorithm, p->key_secret, reason,
				      sizeof(reason)) < 0) {
		rc = PFAIL(p, "key %s: %s", p->key_name, reason);
	} else {
		for (size_t i = 0; i < p->cfg->key_count && rc == APEX_OK; i++) {
			if (apex_name_equal(p->cfg->keys[i].name, key.name))
				rc = PFAIL(p, "key %s given twice", p->key_name);
		}
		grown = rc == APEX_OK
				? realloc(p->cfg->keys, (p->cfg->key_count + 1) * sizeof(*grown))
				: NULL;
		if (rc == APEX_OK && grown == NULL)
			rc = PFAIL(p, "out of memory");
		if (rc == APEX_OK) {
			p->cfg->keys = grown;
			p->cfg->keys[p->cfg->key_count++] = key;
		}
	}
	explicit_bzero(&key, sizeof(key));
	p->line = line;
	free(p->key_name);
	free(p->key_algorithm);
	if (p->key_secret != NULL)
		explicit_bzero(p->key_secret, strlen(p->key_secret));
	free(p->key_secret);
	p->key_name = p->key_algorithm = p->key_secret = NULL;
	return rc;
}

/* The end of any section. */
static int section_end(parser_t *p)
{
	int rc = zone_end(p);

	return rc < 0 ? rc : key_end(p);
}

/* Once every key is read: the key each entry names. */
static int resolve_keys(parser_t *p)
{
	apex_tsig_keyring_t ring = { p->cfg->keys, p->cfg->key_count };
	char reason[400];

	for (size_t i = 0; i < p->cfg->zone_count; i++) {
		apex_zone_config_t *z = &p->cfg->zones[i];

		for (size_t j = 0; j < z->request_xfr_count; j++) {
			if (apex_acl_resolve(&z->request_xfr[j], &ring, reason, sizeof(reason)) < 0)
				return apex_fail(p->err, p->err_size, APEX_EINVAL,
						 "%s: zone %s: request-xfr %s", p->file, z->name,
						 reason);
		}
		for (size_t j = 0; j < z->notify_count; j++) {
			if (apex_acl_resolve(&z->notify[j], &ring, reason, sizeof(reason)) < 0)
				return apex_fail(p->err, p->err_size, APEX_EINVAL,
						 "%s: zone %s: notify %s", p->file, z->name,
						 reason);
		}
		for (size_t j = 0; j < z->provide_xfr_count; j++) {
			if (apex_acl_resolve(&z->provide_xfr[j], &ring, reason, sizeof(reason)) < 0)
				return apex_fail(p->err, p->err_size, APEX_EINVAL,
						 "%s: zone %s: provide-xfr %s", p->file, z->name,
						 reason);
		}
		for (size_t j = 0; j < z->allow_notify_count; j++) {
			if (apex_acl_resolve(&z->allow_notify[j], &ring, reason, sizeof(reason)) <
			    0)
				return apex_fail(p->err, p->err_size, APEX_EINVAL,
						 "%s: zone %s: allow-notify %s", p->file, z->name,
						 reason);
		}
	}
	return APEX_OK;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The section a line "name:" starts, or SECTION_NONE. */
static section_t section_of(const char *name)
{
	static const struct {
		const char *name;
		section_t section;
	} sections[] = {
		{ "server", SECTION_SERVER },
		{ "zone", SECTION_ZONE },
		{ "key", SECTION_KEY },
		{ "dnstap", SECTION_DNSTAP },
	};
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (strcmp(name, sections[i].name) == 0)
			return sections[i].section;
	return SECTION_NONE;
}

/* A new section: the one before ends. */
static int section_start(parser_t *p, section_t section)
{
	int rc = section_end(p);

	if (rc < 0)
		return rc;
	p->section = section;
	if (section == SECTION_ZONE)
		p->zone_line = p->line;
	if (section == SECTION_KEY)
		p->key_line = p->line;
	return APEX_OK;
}

/* One line: blank, comment, "section:" or "key: value" (value bare or quoted). */
static int parse_line(parser_t *p, char *s)
{
	char *key, *value = NULL;

	while (is_space(*s))
		s++;
	if (*s == '\0' || *s == '#')
		return APEX_OK;

	key = s;
	while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
	       *s == '-' || *s == '_')
		s++;
	if (s == key || *s != ':')
		return PFAIL(p, "expected 'key: value' or a section ('server:', 'zone:')");
	*s++ = '\0';
	while (is_space(*s))
		s++;

	if (*s == '"') {
		char *w = ++s;

		value = w;
		for (;;) {
			if (*s == '\0' || *s == '\n')
				return PFAIL(p, "unterminated quoted string");
			if (*s == '"')
				break;
			if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
				s++;
			*w++ = *s++;
		}
		s++;
		*w = '\0';
	} else if (*s != '\0' && *s != '#') {
		value = s;
		while (*s != '\0' && *s != '#' && !is_space(*s))
			s++;
		/* several words: up to a comment, trailing spaces dropped */
		while (key_takes_words(key) && is_space(*s)) {
			char *word = s;

			while (is_space(*word))
				word++;
			if (*word == '\0' || *word == '#')
				break;
			s = word;
			while (*s != '\0' && *s != '#' && !is_space(*s))
				s++;
		}
		if (*s == '#')
			return PFAIL(p, "a '#' right after a value: quote the value or put a space "
					"before the comment");
		if (*s != '\0')
			*s++ = '\0';
	}
	while (is_space(*s))
		s++;
	if (*s != '\0' && *s != '#')
		return PFAIL(p, "unexpected text after the value of '%s'", key);

	if (value == NULL) {
		if (section_of(key) != SECTION_NONE)
			return section_start(p, section_of(key));
		return PFAIL(p, "'%s' needs a value", key);
	}
	switch (p->section) {
	case SECTION_SERVER:
		return apply_key(p, server_keys, sizeof(server_keys) / sizeof(server_keys[0]),
				 "the server section", key, value);
	case SECTION_ZONE:
		return apply_key(p, zone_keys, sizeof(zone_keys) / sizeof(zone_keys[0]),
				 "a zone section", key, value);
	case SECTION_KEY:
		return apply_key(p, key_keys, sizeof(key_keys) / sizeof(key_keys[0]),
				 "a key section", key, value);
	case SECTION_DNSTAP:
		return apply_key(p, dnstap_keys, sizeof(dnstap_keys) / sizeof(dnstap_keys[0]),
				 "the dnstap section", key, value);
	case SECTION_NONE:
	default:
		if (section_of(key) != SECTION_NONE)
			return PFAIL(p, "'%s:' takes no value: put its keys on the lines below",
				     key);
		return PFAIL(p, "'%s' outside of a section (start with 'server:' or 'zone:')", key);
	}
}

int apex_config_load(apex_config_t *cfg, const char *path, char *err, size_t err_size)
{
	parser_t p;
	FILE *fp;
	char *line = NULL;
	size_t line_cap = 0;
	int rc = APEX_OK;

	memset(&p, 0, sizeof(p));
	p.cfg = cfg;
	p.file = path;
	p.err = err;
	p.err_size = err_size;

	fp = fopen(path, "r");
	if (fp == NULL)
		return apex_fail(err, err_size, apex_errno(), "%s: %s", path, strerror(errno));
	p.base_dir = directory_of(path);
	free(cfg->path);
	cfg->path = strdup(path);
	if (p.base_dir == NULL || cfg->path == NULL) {
		fclose(fp);
		free(p.base_dir);
		free(p.zones_dir);
		return apex_fail(err, err_size, APEX_ENOMEM, "%s: out of memory", path);
	}

	for (;;) {
		errno = 0;
		ssize_t n = getline(&line, &line_cap, fp);

		if (n < 0) {
			if (ferror(fp))
				rc = apex_fail(err, err_size, apex_errno(), "%s: %s", path,
					       strerror(errno));
			break;
		}
		p.line++;
		if ((size_t)n != strlen(line)) {
			rc = PFAIL(&p, "NUL byte in the line");
			break;
		}
		if ((rc = parse_line(&p, line)) < 0)
			break;
	}
	if (rc == APEX_OK)
		rc = section_end(&p);
	if (rc == APEX_OK)
		rc = resolve_keys(&p);
	if (rc == APEX_OK && cfg->require_cookie && !cfg->cookies)
		rc = apex_fail(err, err_size, APEX_EINVAL,
			       "%s: require-server-cookie: yes needs cookies: yes", path);
	if (rc == APEX_OK && cfg->dnstap.enable && cfg->dnstap.socket_path == NULL)
		rc = apex_fail(err, err_size, APEX_EINVAL,
			       "%s: dnstap-enable: yes needs dnstap-socket-path", path);
	free(p.zone_name);
	free(p.zone_file);
	free(p.zone_request_xfr.entries);
	free(p.zone_allow_notify.entries);
	free(p.zone_provide_xfr.entries);
	free(p.zone_notify.entries);
	free(p.key_name);
	free(p.key_algorithm);
	free(p.key_secret);
	free(line);
	free(p.base_dir);
	free(p.zones_dir);
	fclose(fp);
	return rc;
}

int apex_config_require_listen(const apex_config_t *cfg, char *err, size_t err_size)
{
	if (cfg->listen_count == 0)
		return apex_fail(
			err, err_size, APEX_EINVAL,
			"no listen address: give one with -l ADDR@PORT or 'listen:' in the "
			"config file");
	return APEX_OK;
}

int apex_config_finish(apex_config_t *cfg, char *err, size_t err_size)
{
	/* Without an explicit nsid:, the identity doubles as the NSID. */
	if (!cfg->nsid_set && cfg->identity != NULL) {
		size_t size = strlen(cfg->identity);

		if (size > NSID_MAX)
			size = NSID_MAX;
		cfg->nsid = malloc(size + 1);
		if (cfg->nsid == NULL)
			return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
		memcpy(cfg->nsid, cfg->identity, size);
		cfg->nsid_size = size;
	}
	/* nsid: "" turns NSID off. */
	if (cfg->nsid != NULL && cfg->nsid_size == 0) {
		free(cfg->nsid);
		cfg->nsid = NULL;
	}
	return APEX_OK;
}
