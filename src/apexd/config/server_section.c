/* SPDX-License-Identifier: BSD-3-Clause */
/* The server: section of the config file (apex.conf(5)): its keys and their parsers. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "config/reader.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "config/daemon_config_internal.h"
#include "util/error.h"
#include "util/hex.h"

/* The keys whose value is more than a number, a string or yes/no. */

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
		if (size > APEX_CONFIG_NSID_MAX)
			return PFAIL(p, "nsid: longer than %d bytes", APEX_CONFIG_NSID_MAX);
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
		if (size > APEX_CONFIG_NSID_MAX)
			return PFAIL(p, "nsid: longer than %d bytes", APEX_CONFIG_NSID_MAX);
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
	if (apex_config_parse_address(value, "metrics address", APEX_CONFIG_DEFAULT_METRICS_PORT,
				      &item, reason, sizeof(reason)) < 0)
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
	if ((rc = apex_config_parse_uint(p, key, value, 0, 19, &v)) < 0)
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
	return apex_config_replace_string(p, &p->cfg->chroot_dir, value);
}

/* An interface name as the kernel takes it (IFNAMSIZ, no '/' or blank). */
static int key_xdp_interface(parser_t *p, const char *key, const char *value)
{
	size_t size = strlen(value);

	(void)key;
	if (size == 0 || size >= 16 || strcspn(value, "/ \t:") != size || strcmp(value, ".") == 0 ||
	    strcmp(value, "..") == 0)
		return PFAIL(p, "xdp-interface: '%s' is not an interface name", value);
	return apex_config_replace_string(p, &p->cfg->xdp_interface, value);
}

/* proxy-protocol-port: a port whose listeners require a PROXY v2 header
 * (NSD's key); repeatable. */
static int key_proxy_protocol_port(parser_t *p, const char *key, const char *value)
{
	apex_config_t *cfg = p->cfg;
	unsigned long port = 0;
	int rc = apex_config_parse_uint(p, key, value, 1, 65535, &port);
	uint16_t *grown;

	if (rc < 0)
		return rc;
	grown = realloc(cfg->proxy_ports, (cfg->proxy_port_count + 1) * sizeof(*grown));
	if (grown == NULL)
		return PFAIL(p, "out of memory");
	cfg->proxy_ports = grown;
	cfg->proxy_ports[cfg->proxy_port_count++] = (uint16_t)port;
	return APEX_OK;
}

/* allow-proxy: an address or prefix that may send PROXY v2 headers (NSD
 * 4.15's key); repeatable. */
static int key_allow_proxy(parser_t *p, const char *key, const char *value)
{
	apex_config_t *cfg = p->cfg;
	apex_prefix_t prefix, *grown;

	if (apex_prefix_parse(value, &prefix, NULL) < 0)
		return PFAIL(p, "%s: expected ADDR or ADDR/LEN (IPv4 or IPv6), not '%s'", key,
			     value);
	grown = realloc(cfg->allow_proxy, (cfg->allow_proxy_count + 1) * sizeof(*grown));
	if (grown == NULL)
		return PFAIL(p, "out of memory");
	cfg->allow_proxy = grown;
	cfg->allow_proxy[cfg->allow_proxy_count++] = prefix;
	return APEX_OK;
}

/* verifier: the command and its arguments (NSD's verify: clause's key). */
static int key_verifier(parser_t *p, const char *key, const char *value)
{
	if (value[0] == '\0')
		return PFAIL(p, "%s: a command is expected", key);
	return apex_config_replace_string(p, &p->cfg->verifier, value);
}

static int key_pid_file(parser_t *p, const char *key, const char *value)
{
	char *abs = apex_config_absolute_path(value, p->base_dir);

	(void)key;
	if (abs == NULL)
		return PFAIL(p, "out of memory");
	free(p->cfg->pid_file);
	p->cfg->pid_file = abs;
	return APEX_OK;
}

/* zone-list-file (NSD's zonelistfile): where apexctl zone-add keeps the
 * zones it adds, a path from the config file's directory. */
static int key_zone_list_file(parser_t *p, const char *key, const char *value)
{
	char *abs = apex_config_absolute_path(value, p->base_dir);

	(void)key;
	if (abs == NULL)
		return PFAIL(p, "out of memory");
	free(p->cfg->zone_list_file);
	p->cfg->zone_list_file = abs;
	return APEX_OK;
}

/* A TLS file (tls-service-key, tls-service-pem, tls-cert-bundle): a path
 * from the config file's directory, read before the privilege drop. */
static int tls_path(parser_t *p, char **slot, const char *value)
{
	char *abs = value[0] != '\0' ? apex_config_absolute_path(value, p->base_dir) : NULL;

	if (value[0] != '\0' && abs == NULL)
		return PFAIL(p, "out of memory");
	free(*slot);
	*slot = abs; /* "" turns it off, as in NSD */
	return APEX_OK;
}

static int key_tls_service_key(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return tls_path(p, &p->cfg->tls.service_key, value);
}

static int key_tls_service_pem(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return tls_path(p, &p->cfg->tls.service_pem, value);
}

static int key_tls_cert_bundle(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return tls_path(p, &p->cfg->tls.cert_bundle, value);
}

static int key_control_socket(parser_t *p, const char *key, const char *value)
{
	char *path = strcmp(value, "none") == 0 ? strdup(value)
						: apex_config_absolute_path(value, p->base_dir);

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
	char *abs = apex_config_absolute_path(value, p->base_dir);

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
	if ((cfg->log_file = apex_config_absolute_path(value, p->base_dir)) == NULL)
		return PFAIL(p, "out of memory");
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

/* journal-size: 0 (no journal) or at least 4096 bytes (xfr/journal.h). */
static int key_journal_size(parser_t *p, const char *key, const char *value)
{
	unsigned long v;
	int rc = apex_config_parse_uint(p, key, value, 0, 1UL << 40, &v);

	if (rc < 0)
		return rc;
	if (v != 0 && v < 4096)
		return PFAIL(p, "journal-size: 0 (no journal) or at least 4096 bytes, not '%s'",
			     value);
	p->cfg->journal_size = v;
	return APEX_OK;
}

/*
 * memory-limit: BYTES[K|M|G] (binary multiples, at least 1M), P% (1 to
 * 100) of the limit of apexd's cgroup, or none.  Read at start only.
 */
static int key_memory_limit(parser_t *p, const char *key, const char *value)
{
	static const char units[] = "KMG";
	apex_config_t *cfg = p->cfg;
	char *end;
	unsigned long long v;
	const char *unit;
	unsigned shift = 0;

	cfg->memory_limit = 0;
	cfg->memory_limit_percent = 0;
	if (strcmp(value, "none") == 0)
		return APEX_OK;
	errno = 0;
	v = strtoull(value, &end, 10);
	if (value[0] < '0' || value[0] > '9' || errno != 0)
		goto bad;
	if (strcmp(end, "%") == 0) {
		if (v < 1 || v > 100)
			return PFAIL(p, "%s: a percentage from 1%% to 100%%, not '%s'", key, value);
		cfg->memory_limit_percent = (unsigned)v;
		return APEX_OK;
	}
	if (end[0] != '\0') {
		if (end[1] != '\0' ||
		    (unit = strchr(units, toupper((unsigned char)end[0]))) == NULL)
			goto bad;
		shift = 10 * (unsigned)(unit - units + 1);
	}
	if (v > (1ULL << 50) >> shift || v << shift < (1ULL << 20))
		return PFAIL(p, "%s: from 1M to 1048576G, not '%s'", key, value);
	v <<= shift;
	cfg->memory_limit = v;
	return APEX_OK;
bad:
	return PFAIL(p,
		     "%s: expected bytes (with K, M or G), a percentage (80%%) or none, not '%s'",
		     key, value);
}

/* require-server-cookie needs cookies. */
static int server_finish(parser_t *p)
{
	if (p->cfg->require_cookie && !p->cfg->cookies)
		return apex_fail(p->err, p->err_size, APEX_EINVAL,
				 "%s: require-server-cookie: yes needs cookies: yes", p->file);
	return APEX_OK;
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
	UINT_KEY("xdp-busy-poll", xdp_busy_poll, 0, 1000),
	CUSTOM_KEY("memory-limit", key_memory_limit),
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
	CUSTOM_KEY("zone-list-file", key_zone_list_file),
	CUSTOM_KEY("zones-directory", key_zones_directory),
	CUSTOM_KEY("control-socket", key_control_socket),
	CUSTOM_KEY("log-target", key_log_target),
	CUSTOM_KEY("log-facility", key_log_facility),
	CUSTOM_KEY("log-level", key_log_level),
	UINT_KEY("xfr-timeout", xfr_timeout, 1, 86400),
	UINT_KEY("xfr-idle-timeout", xfr_idle_timeout, 1, 3600),
	UINT_KEY("xfr-size-limit", xfr_size_limit, 0, 1UL << 40),
	UINT_KEY("xfr-out-max", xfr_out_max, 1, 1000),
	UINT_KEY("xfr-in-max", xfr_in_max, 1, 1000),
	CUSTOM_KEY("journal-size", key_journal_size),
	UINT_KEY("copy-flush-interval", copy_flush_interval, 0, 86400),
	CUSTOM_KEY("proxy-protocol-port", key_proxy_protocol_port),
	CUSTOM_KEY("allow-proxy", key_allow_proxy),
	BOOL_KEY("verify-zones", verify_zones),
	WORDS_KEY("verifier", key_verifier),
	UINT_KEY("verifier-count", verifier_count, 1, 1024),
	BOOL_KEY("verifier-feed-zone", verifier_feed_zone),
	UINT_KEY("verifier-timeout", verifier_timeout, 0, 86400),
	CUSTOM_KEY("tls-service-key", key_tls_service_key),
	CUSTOM_KEY("tls-service-pem", key_tls_service_pem),
	UINT_KEY("tls-port", tls.port, 1, 65535),
	UINT_KEY("tls-auth-port", tls.auth_port, 1, 65535),
	BOOL_KEY("tls-auth-xfr-only", tls.auth_xfr_only),
	CUSTOM_KEY("tls-cert-bundle", key_tls_cert_bundle),
};

const section_def_t apex_config_server_section = {
	.name = "server",
	.what = "the server section",
	.keys = server_keys,
	.key_count = sizeof(server_keys) / sizeof(server_keys[0]),
	.finish = server_finish,
};
