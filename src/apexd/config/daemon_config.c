/* SPDX-License-Identifier: BSD-3-Clause */
/* apexd configuration in memory: defaults, the command line's additions and the final checks
 * (the config file is read by reader.c). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "config/daemon_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "config/daemon_config_internal.h"
#include "dns/name.h"
#include "dns/name_hash.h"
#include "util/error.h"
#include "util/hash_slots.h"
#include "util/log.h"

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
	cfg->copy_flush_interval = APEX_CONFIG_DEFAULT_COPY_FLUSH_INTERVAL;
	cfg->xfr_out_max = APEX_CONFIG_DEFAULT_XFR_OUT_MAX;
	cfg->xfr_in_max = APEX_CONFIG_DEFAULT_XFR_IN_MAX;
	cfg->journal_size = APEX_CONFIG_DEFAULT_JOURNAL_SIZE;
	cfg->log_facility = LOG_DAEMON;
	cfg->log_level = APEX_LOG_INFO;
	cfg->tls.port = APEX_CONFIG_DEFAULT_TLS_PORT;
	cfg->verifier_feed_zone = true; /* NSD's default */
	cfg->verifier_count = 1;
}

/* The tls-auth: clauses and the TLS files. */
static void free_tls(apex_config_t *cfg)
{
	for (size_t i = 0; i < cfg->tls.auth_count; i++) {
		apex_tls_auth_t *a = &cfg->tls.auths[i];

		free(a->name);
		free(a->auth_domain_name);
		free(a->client_cert);
		free(a->client_key);
		if (a->client_key_pw != NULL)
			explicit_bzero(a->client_key_pw, strlen(a->client_key_pw));
		free(a->client_key_pw);
	}
	free(cfg->tls.auths);
	free(cfg->tls.service_key);
	free(cfg->tls.service_pem);
	free(cfg->tls.cert_bundle);
}

/* What a zone's or a pattern's entry owns. */
static void free_zone(apex_zone_config_t *z)
{
	free(z->name);
	free(z->file);
	if (!z->acls_shared) {
		free(z->request_xfr);
		free(z->allow_notify);
		free(z->provide_xfr);
		free(z->notify);
	}
	free(z->verifier);
	free(z->catalog_member_pattern);
	free(z->catalog_producer_zone);
	free(z->catalog_group);
}

void apex_config_free(apex_config_t *cfg)
{
	for (size_t i = 0; i < cfg->zone_count; i++)
		free_zone(&cfg->zones[i]);
	free(cfg->zones);
	free(cfg->origin_slots);
	for (size_t i = 0; i < cfg->pattern_count; i++)
		free_zone(&cfg->patterns[i]);
	free(cfg->patterns);
	free(cfg->keys);
	free(cfg->listens);
	free(cfg->path);
	free(cfg->identity);
	free(cfg->version);
	free(cfg->nsid);
	free(cfg->log_file);
	free(cfg->pid_file);
	free(cfg->zone_list_file);
	free(cfg->control_socket);
	free(cfg->rrl_whitelist);
	free(cfg->proxy_ports);
	free(cfg->allow_proxy);
	free(cfg->user);
	free(cfg->group);
	free(cfg->chroot_dir);
	free(cfg->xdp_interface);
	free(cfg->verifier);
	free(cfg->dnstap.socket_path);
	free(cfg->dnstap.identity);
	free(cfg->dnstap.version);
	free_tls(cfg);
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

char *apex_config_absolute_path(const char *path, const char *base_dir)
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

int apex_config_parse_address(const char *text, const char *what, unsigned long port,
			      apex_listen_t *out, char *err, size_t err_size)
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
	int rc = apex_config_parse_address(text, "listen address", APEX_CONFIG_DEFAULT_PORT, &item,
					   err, err_size);

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

/* cfg->zones made room entries long. */
static int zones_resize(apex_config_t *cfg, size_t room)
{
	apex_zone_config_t *grown = realloc(cfg->zones, room * sizeof(*grown));

	if (grown == NULL)
		return APEX_ENOMEM;
	cfg->zones = grown;
	cfg->zone_room = room;
	return APEX_OK;
}

long apex_config_find_zone(const apex_config_t *cfg, const uint8_t *origin)
{
	uint32_t hash = apex_name_hash(origin), mask = (1u << cfg->origin_bits) - 1;

	if (cfg->origin_slots == NULL)
		return -1;
	for (uint32_t i = apex_hash_slots_first(hash, cfg->origin_bits);; i = (i + 1) & mask) {
		uint64_t slot = cfg->origin_slots[i];

		if (slot == 0)
			return -1;
		if (apex_hash_slots_hash(slot) == hash &&
		    apex_name_equal(cfg->zones[apex_hash_slots_index(slot)].origin, origin))
			return apex_hash_slots_index(slot);
	}
}

/* The zone just appended to cfg->zones (the last) entered in
 * cfg->origin_slots, which are made twice as many when it would be more
 * than half full. */
static int index_last_zone(apex_config_t *cfg)
{
	size_t count = cfg->zone_count;
	const uint8_t *origin = cfg->zones[count - 1].origin;

	if (count >= UINT32_MAX)
		return APEX_ENOMEM;
	if (cfg->origin_slots == NULL || 2 * count > (size_t)1 << cfg->origin_bits) {
		unsigned bits = apex_hash_slots_bits(count < 512 ? 512 : count);
		uint64_t *slots = calloc((size_t)1 << bits, sizeof(*slots));

		if (slots == NULL)
			return APEX_ENOMEM;
		for (size_t i = 0; cfg->origin_slots != NULL && i < (size_t)1 << cfg->origin_bits;
		     i++) {
			uint64_t slot = cfg->origin_slots[i];

			if (slot != 0)
				apex_hash_slots_insert(slots, bits, apex_hash_slots_hash(slot),
						       apex_hash_slots_index(slot));
		}
		free(cfg->origin_slots);
		cfg->origin_slots = slots;
		cfg->origin_bits = bits;
	}
	apex_hash_slots_insert(cfg->origin_slots, cfg->origin_bits, apex_name_hash(origin),
			       (uint32_t)(count - 1));
	return APEX_OK;
}

/* Room in cfg->zones for one more entry: the array doubles. */
static int zones_room(apex_config_t *cfg)
{
	if (cfg->zone_count < cfg->zone_room)
		return APEX_OK;
	return zones_resize(cfg, cfg->zone_room > 0 ? cfg->zone_room * 2 : 16);
}

int apex_config_reserve_zones(apex_config_t *cfg, size_t more)
{
	if (cfg->zone_count + more <= cfg->zone_room)
		return APEX_OK;
	return zones_resize(cfg, cfg->zone_count + more);
}

int apex_config_add_zone(apex_config_t *cfg, const char *name, const char *file,
			 const char *base_dir, char *err, size_t err_size)
{
	char canonical[APEX_NAME_MAX * 4 + 1]; /* every byte may need a \DDD escape */
	apex_zone_config_t item;

	memset(&item, 0, sizeof(item));
	if (name[0] == '\0' || apex_name_from_str(name, item.origin) < 0)
		return apex_fail(err, err_size, APEX_EINVAL, "bad zone name '%s'", name);
	apex_name_to_str(item.origin, canonical, sizeof(canonical));
	if (file[0] == '\0')
		return apex_fail(err, err_size, APEX_EINVAL, "zone %s: empty file name", canonical);
	if (apex_config_find_zone(cfg, item.origin) >= 0)
		return apex_fail(err, err_size, APEX_EINVAL, "zone %s given twice", canonical);
	item.name = strdup(canonical);
	item.file = apex_config_absolute_path(file, base_dir);
	item.zonemd_verify = true;
	item.verify_zone = -1;
	item.verifier_feed_zone = -1;
	item.verifier_timeout = -1;
	if (item.name == NULL || item.file == NULL || zones_room(cfg) < 0) {
		free(item.name);
		free(item.file);
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	}
	cfg->zones[cfg->zone_count++] = item;
	if (index_last_zone(cfg) < 0) {
		free_zone(&cfg->zones[--cfg->zone_count]);
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	}
	return APEX_OK;
}

const apex_zone_config_t *apex_config_pattern(const apex_config_t *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->pattern_count; i++)
		if (strcmp(cfg->patterns[i].name, name) == 0)
			return &cfg->patterns[i];
	return NULL;
}

/* pattern's file template with each "%s" replaced by name; malloc'ed. */
static char *expand_template(const char *template, const char *name)
{
	size_t count = 0, size;
	char *out, *w;

	for (const char *s = strstr(template, "%s"); s != NULL; s = strstr(s + 2, "%s"))
		count++;
	size = strlen(template) + count * strlen(name) + 1;
	if ((out = malloc(size)) == NULL)
		return NULL;
	w = out;
	for (const char *s = template; *s != '\0';) {
		if (s[0] == '%' && s[1] == 's') {
			w = stpcpy(w, name);
			s += 2;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
	return out;
}

int apex_config_add_member(apex_config_t *cfg, const apex_zone_config_t *pattern,
			   const uint8_t *origin, char *err, size_t err_size)
{
	char text[APEX_NAME_MAX * 4 + 1];
	apex_zone_config_t item = *pattern;
	size_t len;

	apex_name_to_str(origin, text, sizeof(text));
	if (strchr(text, '/') != NULL)
		return apex_fail(err, err_size, APEX_EINVAL,
				 "zone %s: a '/' in its name cannot make a file name", text);
	memcpy(item.origin, origin, apex_name_size(origin));
	item.catalog_consumer = false;
	item.catalog_member_pattern = NULL;
	item.catalog_producer = false;
	item.catalog_producer_zone = NULL;
	item.catalog_group = NULL;
	item.name = strdup(text);
	len = strlen(text);
	if (len > 1 && text[len - 1] == '.')
		text[len - 1] = '\0';
	item.file = expand_template(pattern->file, text);
	item.verifier = pattern->verifier != NULL ? strdup(pattern->verifier) : NULL;
	item.acls_shared = true; /* item's lists are pattern's, both cfg's */
	if (zones_room(cfg) < 0 || item.name == NULL || item.file == NULL ||
	    (pattern->verifier != NULL && item.verifier == NULL)) {
		free_zone(&item);
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	}
	cfg->zones[cfg->zone_count++] = item;
	if (index_last_zone(cfg) < 0) {
		free_zone(&cfg->zones[--cfg->zone_count]);
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	}
	return APEX_OK;
}

int apex_config_set_pid_file(apex_config_t *cfg, const char *path)
{
	char *abs = apex_config_absolute_path(path, NULL);

	if (abs == NULL)
		return APEX_ENOMEM;
	free(cfg->pid_file);
	cfg->pid_file = abs;
	return APEX_OK;
}

int apex_config_set_control_socket(apex_config_t *cfg, const char *path)
{
	char *copy =
		strcmp(path, "none") == 0 ? strdup(path) : apex_config_absolute_path(path, NULL);

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

int apex_config_require_listen(const apex_config_t *cfg, char *err, size_t err_size)
{
	if (cfg->listen_count == 0)
		return apex_fail(
			err, err_size, APEX_EINVAL,
			"no listen address: give one with -l ADDR@PORT or 'listen:' in the "
			"config file");
	return APEX_OK;
}

static uint16_t listen_port(const apex_listen_t *l)
{
	if (l->addr.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&l->addr)->sin6_port);
	return ntohs(((const struct sockaddr_in *)&l->addr)->sin_port);
}

/*
 * Each listen address's transport from its port, as NSD decides it: the
 * tls-auth-port's serve TLS with client certificates, the tls-port's DNS
 * over TLS once the server has a key and a certificate, the others plain
 * DNS.
 */
static int set_transports(apex_config_t *cfg, char *err, size_t err_size)
{
	bool has_cert = cfg->tls.service_key != NULL && cfg->tls.service_pem != NULL;

	if ((cfg->tls.service_key != NULL) != (cfg->tls.service_pem != NULL))
		return apex_fail(err, err_size, APEX_EINVAL,
				 "tls-service-key and tls-service-pem go together: give both");
	for (size_t i = 0; i < cfg->listen_count; i++) {
		apex_listen_t *l = &cfg->listens[i];
		uint16_t port = listen_port(l);

		l->transport = APEX_LISTEN_PLAIN;
		l->proxy = false;
		for (size_t p = 0; p < cfg->proxy_port_count; p++)
			l->proxy |= cfg->proxy_ports[p] == port;
		if (cfg->tls.auth_port != 0 && port == cfg->tls.auth_port) {
			if (!has_cert || cfg->tls.cert_bundle == NULL)
				return apex_fail(err, err_size, APEX_EINVAL,
						 "listen %s is the tls-auth-port: it needs "
						 "tls-service-key, tls-service-pem and "
						 "tls-cert-bundle",
						 l->text);
			l->transport = APEX_LISTEN_TLS_AUTH;
		} else if (has_cert && port == cfg->tls.port) {
			l->transport = APEX_LISTEN_TLS;
		}
		if (l->proxy && l->transport != APEX_LISTEN_PLAIN)
			return apex_fail(err, err_size, APEX_EINVAL,
					 "listen %s: a proxy-protocol-port that is also a TLS "
					 "port is not supported",
					 l->text);
	}
	return APEX_OK;
}

/* A zone to verify needs a verifier, its own or the server's. */
static int check_verifiers(const apex_config_t *cfg, char *err, size_t err_size)
{
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const apex_zone_config_t *z = &cfg->zones[i];
		bool on = z->verify_zone >= 0 ? z->verify_zone == 1 : cfg->verify_zones;

		if (on && z->verifier == NULL && cfg->verifier == NULL)
			return apex_fail(err, err_size, APEX_EINVAL,
					 "%s: zone %s is verified (verify-zone or verify-zones) "
					 "but no verifier is given",
					 cfg->path != NULL ? cfg->path : "config", z->name);
	}
	return APEX_OK;
}

int apex_config_finish(apex_config_t *cfg, char *err, size_t err_size)
{
	int rc = set_transports(cfg, err, err_size);

	if (rc == APEX_OK)
		rc = check_verifiers(cfg, err, err_size);
	if (rc < 0)
		return rc;
	/* Without an explicit nsid:, the identity doubles as the NSID. */
	if (!cfg->nsid_set && cfg->identity != NULL) {
		size_t size = strlen(cfg->identity);

		if (size > APEX_CONFIG_NSID_MAX)
			size = APEX_CONFIG_NSID_MAX;
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
