/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apexd's configuration: the file parser (every key, quoting, comments,
 * paths relative to the file), the command-line additions, and the
 * "FILE:LINE: reason" errors.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "config/daemon_config.h"
#include "dns/name.h"
#include "util/error.h"
#include "util/log.h"

static char dir[512];

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/apex-config-test-XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write text to DIR/name and return the path (static buffer). */
static const char *write_file(const char *name, const char *text)
{
	static char path[600];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
	return path;
}

static void test_full_file(void **state)
{
	apex_config_t cfg;
	char err[512] = "", expect[700];
	const char *path =
		write_file("full.conf", "# a comment\n"
					"server:\n"
					"    listen: 127.0.0.1@5353   # trailing comment\n"
					"    listen: ::1@5353\n"
					"    listen: 192.0.2.1\n"
					"\n"
					"    workers: 4\n"
					"    identity: \"ns1.example\"\n"
					"    version: \"apex \\\"0.1\\\" # not a comment\"\n"
					"    nsid: hex:6E7331\n"
					"    edns-payload: 1400\n"
					"    tcp-max-connections: 50\n"
					"    tcp-idle-timeout: 3\n"
					"    pid-file: run/apexd.pid\n"
					"zone:\n"
					"    name: \".\"\n"
					"    file: \"zones/root.zone\"\n"
					"zone:\n"
					"\tname: fj\n"
					"\tfile: /abs/fj.zone\n");

	(void)state;
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_OK);

	assert_int_equal(cfg.listen_count, 3);
	assert_string_equal(cfg.listens[0].text, "127.0.0.1@5353");
	assert_int_equal(cfg.listens[0].addr.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&cfg.listens[0].addr)->sin_port), 5353);
	assert_string_equal(cfg.listens[1].text, "::1@5353");
	assert_int_equal(cfg.listens[1].addr.ss_family, AF_INET6);
	assert_int_equal(cfg.listens[1].addr_len, sizeof(struct sockaddr_in6));
	assert_string_equal(cfg.listens[2].text, "192.0.2.1@53"); /* default port */

	assert_int_equal(cfg.workers, 4);
	assert_string_equal(cfg.identity, "ns1.example");
	assert_string_equal(cfg.version, "apex \"0.1\" # not a comment");
	assert_int_equal(cfg.nsid_size, 3);
	assert_memory_equal(cfg.nsid, "ns1", 3);
	assert_int_equal(cfg.edns_payload, 1400);
	assert_int_equal(cfg.tcp_max_connections, 50);
	assert_int_equal(cfg.tcp_idle_timeout, 3);
	snprintf(expect, sizeof(expect), "%s/run/apexd.pid", dir);
	assert_string_equal(cfg.pid_file, expect);

	assert_int_equal(cfg.zone_count, 2);
	assert_string_equal(cfg.zones[0].name, ".");
	assert_int_equal(cfg.zones[0].origin[0], 0);
	/* relative to the directory of the config file */
	snprintf(expect, sizeof(expect), "%s/zones/root.zone", dir);
	assert_string_equal(cfg.zones[0].file, expect);
	assert_string_equal(cfg.zones[1].name, "fj.");
	assert_memory_equal(cfg.zones[1].origin,
			    "\x02"
			    "fj\x00",
			    4);
	assert_string_equal(cfg.zones[1].file, "/abs/fj.zone");
	apex_config_free(&cfg);
}

static void test_defaults(void **state)
{
	apex_config_t cfg;
	char err[512];

	(void)state;
	apex_config_init(&cfg);
	assert_int_equal(apex_config_add_listen(&cfg, "127.0.0.1@53", err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_OK);
	assert_int_equal(cfg.workers, 0); /* one per CPU, decided by main */
	assert_int_equal(cfg.edns_payload, 1232);
	assert_int_equal(cfg.tcp_max_connections, 1000);
	assert_int_equal(cfg.tcp_idle_timeout, 10);
	assert_null(cfg.identity);
	assert_null(cfg.version);
	assert_null(cfg.nsid); /* NSID off without identity */
	assert_null(cfg.pid_file);
	assert_int_equal(cfg.receive_buffer_size, 8u << 20);
	assert_int_equal(cfg.send_buffer_size, 4u << 20);
	apex_config_free(&cfg);
	assert_true(apex_config_cpu_count() >= 1);
}

static void test_nsid_from_identity(void **state)
{
	apex_config_t cfg;
	char err[512];
	const char *path;

	(void)state;
	path = write_file("id.conf", "server:\n listen: 127.0.0.1\n identity: ns7.example\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_OK);
	assert_int_equal(cfg.nsid_size, strlen("ns7.example"));
	assert_memory_equal(cfg.nsid, "ns7.example", cfg.nsid_size);
	apex_config_free(&cfg);

	path = write_file("off.conf",
			  "server:\n listen: 127.0.0.1\n identity: ns7.example\n nsid: \"\"\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_OK);
	assert_string_equal(cfg.identity, "ns7.example");
	assert_null(cfg.nsid);
	apex_config_free(&cfg);
}

/* The reload thread's priority of a server section holding text (after listen:). */
static void load_reload_priority(const char *text, bool *idle, unsigned *nice)
{
	apex_config_t cfg;
	char err[512], conf[256];
	const char *path;

	snprintf(conf, sizeof(conf), "server:\n listen: 127.0.0.1\n%s", text);
	path = write_file("prio.conf", conf);
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_OK);
	*idle = cfg.reload_idle;
	*nice = cfg.reload_nice;
	apex_config_free(&cfg);
}

static void test_reload_priority(void **state)
{
	bool idle;
	unsigned nice;

	(void)state;
	load_reload_priority("", &idle, &nice);
	assert_true(idle); /* the default: SCHED_IDLE */
	load_reload_priority(" reload-priority: 7\n", &idle, &nice);
	assert_false(idle);
	assert_int_equal(nice, 7);
	load_reload_priority(" reload-priority: 0\n", &idle, &nice);
	assert_false(idle);
	assert_int_equal(nice, 0);
	load_reload_priority(" reload-priority: 19\n reload-priority: idle\n", &idle, &nice);
	assert_true(idle); /* the last one counts */
	/* the older spelling of reload-priority: N */
	load_reload_priority(" reload-nice: 12\n", &idle, &nice);
	assert_false(idle);
	assert_int_equal(nice, 12);
}

static void expect_error(const char *text, int line, const char *reason);

/* memory-limit: TEXT into *bytes and *percent (the file loads). */
static void load_memory_limit(const char *value, uint64_t *bytes, unsigned *percent)
{
	apex_config_t cfg;
	char err[512], conf[256];
	const char *path;

	snprintf(conf, sizeof(conf), "server:\n listen: 127.0.0.1\n memory-limit: %s\n", value);
	path = write_file("mem.conf", conf);
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	*bytes = cfg.memory_limit;
	*percent = cfg.memory_limit_percent;
	apex_config_free(&cfg);
}

static void test_memory_limit(void **state)
{
	static const struct {
		const char *text;
		uint64_t bytes;
		unsigned percent;
	} good[] = {
		{ "1048576", 1ULL << 20, 0 },
		{ "1M", 1ULL << 20, 0 },
		{ "1536K", 1536ULL << 10, 0 },
		{ "2G", 2ULL << 30, 0 },
		{ "3g", 3ULL << 30, 0 },
		{ "512m", 512ULL << 20, 0 },
		{ "80%", 0, 80 },
		{ "1%", 0, 1 },
		{ "100%", 0, 100 },
		{ "none", 0, 0 },
		{ "1048576G", 1ULL << 50, 0 },
	};
	apex_config_t cfg;
	uint64_t bytes;
	unsigned percent;

	(void)state;
	apex_config_init(&cfg); /* the default: no limit */
	assert_int_equal(cfg.memory_limit, 0);
	assert_int_equal(cfg.memory_limit_percent, 0);
	apex_config_free(&cfg);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		load_memory_limit(good[i].text, &bytes, &percent);
		assert_true(bytes == good[i].bytes);
		assert_int_equal(percent, good[i].percent);
	}
	/* the last one counts, whichever kind */
	load_memory_limit("2G\n memory-limit: 95%", &bytes, &percent);
	assert_true(bytes == 0 && percent == 95);
	load_memory_limit("95%\n memory-limit: 2G", &bytes, &percent);
	assert_true(bytes == 2ULL << 30 && percent == 0);
}

static void test_memory_limit_errors(void **state)
{
	static const char *const bad[] = { "",     "-1M",      "1.5G",
					   "80 %", "2T",       "1MB",
					   "M",    "0x100000", "99999999999999999999999" };
	char text[128], reason[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "server:\n  memory-limit: \"%s\"\n", bad[i]);
		snprintf(reason, sizeof(reason),
			 "memory-limit: expected bytes (with K, M or G), a percentage (80%%) or "
			 "none, not '%s'",
			 bad[i]);
		expect_error(text, 2, reason);
	}
	expect_error("server:\n  memory-limit: 0%\n", 2,
		     "memory-limit: a percentage from 1% to 100%, not '0%'");
	expect_error("server:\n  memory-limit: 101%\n", 2,
		     "memory-limit: a percentage from 1% to 100%, not '101%'");
	expect_error("server:\n  memory-limit: 1023K\n", 2,
		     "memory-limit: from 1M to 1048576G, not '1023K'");
	expect_error("server:\n  memory-limit: 0\n", 2,
		     "memory-limit: from 1M to 1048576G, not '0'");
	expect_error("server:\n  memory-limit: 1048577G\n", 2,
		     "memory-limit: from 1M to 1048576G, not '1048577G'");
}

/* The hardening keys: TCP limits, RRL, cookies, privileges. */
static void test_hardening_keys(void **state)
{
	apex_config_t cfg;
	char err[512];
	const char *path;

	(void)state;
	/* defaults */
	path = write_file("plain.conf", "server:\n listen: 127.0.0.1\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(cfg.tcp_max_per_client, APEX_CONFIG_DEFAULT_TCP_MAX_PER_CLIENT);
	assert_int_equal(cfg.tcp_io_timeout, APEX_CONFIG_DEFAULT_TCP_IO_TIMEOUT);
	assert_int_equal(cfg.rrl.rate, 0); /* RRL off */
	assert_int_equal(cfg.rrl.slip, APEX_CONFIG_DEFAULT_RRL_SLIP);
	assert_int_equal(cfg.rrl.ipv4_prefix, APEX_CONFIG_DEFAULT_RRL_IPV4_PREFIX);
	assert_int_equal(cfg.rrl.ipv6_prefix, APEX_CONFIG_DEFAULT_RRL_IPV6_PREFIX);
	assert_int_equal(cfg.rrl.table_size, APEX_CONFIG_DEFAULT_RRL_TABLE_SIZE);
	assert_int_equal(cfg.rrl.whitelist_count, 0);
	assert_true(cfg.cookies);
	assert_false(cfg.cookie_secret_set);
	assert_null(cfg.user);
	assert_null(cfg.chroot_dir);
	apex_config_free(&cfg);

	path = write_file("hard.conf", "server:\n"
				       "  listen: 127.0.0.1\n"
				       "  tcp-max-connections-per-client: 7\n"
				       "  tcp-io-timeout: 3\n"
				       "  rrl-responses-per-second: 20\n"
				       "  rrl-slip: 0\n"
				       "  rrl-ipv4-prefix-length: 32\n"
				       "  rrl-ipv6-prefix-length: 64\n"
				       "  rrl-table-size: 1024\n"
				       "  rrl-whitelist: 192.0.2.0/24\n"
				       "  rrl-whitelist: 2001:db8::/32\n"
				       "  rrl-whitelist: 198.51.100.7\n"
				       "  cookies: off\n"
				       "  cookie-secret: 000102030405060708090a0b0c0d0E0F\n"
				       "  user: nobody\n"
				       "  group: nogroup\n"
				       "  chroot: /var/lib/apex\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(cfg.tcp_max_per_client, 7);
	assert_int_equal(cfg.tcp_io_timeout, 3);
	assert_int_equal(cfg.rrl.rate, 20);
	assert_int_equal(cfg.rrl.slip, 0);
	assert_int_equal(cfg.rrl.ipv4_prefix, 32);
	assert_int_equal(cfg.rrl.ipv6_prefix, 64);
	assert_int_equal(cfg.rrl.table_size, 1024);
	assert_int_equal(cfg.rrl.whitelist_count, 3);
	assert_ptr_equal(cfg.rrl.whitelist, cfg.rrl_whitelist);
	assert_int_equal(cfg.rrl.whitelist[0].family, AF_INET);
	assert_int_equal(cfg.rrl.whitelist[0].len, 24);
	assert_int_equal(cfg.rrl.whitelist[0].addr[0], 192);
	assert_int_equal(cfg.rrl.whitelist[0].addr[2], 2);
	assert_int_equal(cfg.rrl.whitelist[1].family, AF_INET6);
	assert_int_equal(cfg.rrl.whitelist[1].len, 32);
	assert_int_equal(cfg.rrl.whitelist[1].addr[1], 0x01);
	assert_int_equal(cfg.rrl.whitelist[1].addr[2], 0x0d);
	assert_int_equal(cfg.rrl.whitelist[2].len, 32); /* a bare address: one host */
	assert_false(cfg.cookies);
	assert_true(cfg.cookie_secret_set);
	for (int i = 0; i < 16; i++)
		assert_int_equal(cfg.cookie_secret[i], i);
	assert_string_equal(cfg.user, "nobody");
	assert_string_equal(cfg.group, "nogroup");
	assert_string_equal(cfg.chroot_dir, "/var/lib/apex");
	apex_config_free(&cfg);
}

/* A bad file fails with exactly "PATH:LINE: reason". */
static void expect_error(const char *text, int line, const char *reason)
{
	apex_config_t cfg;
	char err[900] = "", expect[900];
	const char *path = write_file("bad.conf", text);

	snprintf(expect, sizeof(expect), "%s:%d: %s", path, line, reason);
	apex_config_init(&cfg);
	assert_true(apex_config_load(&cfg, path, err, sizeof(err)) < 0);
	assert_string_equal(err, expect);
	apex_config_free(&cfg);
}

/* Every number key of the server section, at its bounds: the largest
 * value is stored in full (whatever the field's width), one more is
 * refused with the range. */
static void test_number_keys_at_their_bounds(void **state)
{
	static const struct {
		const char *key;
		unsigned long min, max;
	} keys[] = {
		{ "workers", 1, 1024 },
		{ "edns-payload", 512, 65535 },
		{ "tcp-max-connections", 1, 1000000 },
		{ "tcp-idle-timeout", 1, 3600 },
		{ "tcp-max-connections-per-client", 0, 1000000 },
		{ "tcp-io-timeout", 1, 3600 },
		{ "rrl-responses-per-second", 0, 1000000 },
		{ "rrl-slip", 0, 100 },
		{ "rrl-ipv4-prefix-length", 1, 32 },
		{ "rrl-ipv6-prefix-length", 1, 128 },
		{ "rrl-table-size", 16, 1UL << 24 },
		{ "receive-buffer-size", 0, 1UL << 30 },
		{ "send-buffer-size", 0, 1UL << 30 },
		{ "xdp-busy-poll", 0, 1000 },
	};
	char text[200], reason[300], err[900];

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		apex_config_t cfg;

		snprintf(text, sizeof(text), "server:\n  %s: %lu\n", keys[i].key, keys[i].max);
		apex_config_init(&cfg);
		assert_int_equal(
			apex_config_load(&cfg, write_file("max.conf", text), err, sizeof(err)),
			APEX_OK);
		unsigned long got = 0;
		switch (i) {
		case 0: got = cfg.workers; break;
		case 1: got = cfg.edns_payload; break;
		case 2: got = cfg.tcp_max_connections; break;
		case 3: got = cfg.tcp_idle_timeout; break;
		case 4: got = cfg.tcp_max_per_client; break;
		case 5: got = cfg.tcp_io_timeout; break;
		case 6: got = cfg.rrl.rate; break;
		case 7: got = cfg.rrl.slip; break;
		case 8: got = cfg.rrl.ipv4_prefix; break;
		case 9: got = cfg.rrl.ipv6_prefix; break;
		case 10: got = cfg.rrl.table_size; break;
		case 11: got = cfg.receive_buffer_size; break;
		case 12: got = cfg.send_buffer_size; break;
		default: got = cfg.xdp_busy_poll; break;
		}
		assert_int_equal(got, keys[i].max);
		apex_config_free(&cfg);

		snprintf(text, sizeof(text), "server:\n  %s: %lu\n", keys[i].key, keys[i].max + 1);
		snprintf(reason, sizeof(reason), "%s: expected a number from %lu to %lu, not '%lu'",
			 keys[i].key, keys[i].min, keys[i].max, keys[i].max + 1);
		expect_error(text, 2, reason);
	}
}

/* cfg (initialised here) loaded from a file `name` holding text; the load must succeed. */
static void load_ok(apex_config_t *cfg, const char *name, const char *text)
{
	char err[900] = "";

	apex_config_init(cfg);
	if (apex_config_load(cfg, write_file(name, text), err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
}

/* control-socket: a path made absolute against the file's directory, or
 * "none"; cookies: yes/no. */
static void test_control_socket_and_cookies(void **state)
{
	apex_config_t cfg;
	char expect[700];

	(void)state;
	load_ok(&cfg, "ctl.conf", "server:\n  control-socket: run/apexd.sock\n  cookies: no\n");
	snprintf(expect, sizeof(expect), "%s/run/apexd.sock", dir);
	assert_string_equal(cfg.control_socket, expect);
	assert_false(cfg.cookies);
	apex_config_free(&cfg);
	load_ok(&cfg, "ctl.conf", "server:\n  control-socket: none\n  cookies: on\n");
	assert_string_equal(cfg.control_socket, "none");
	assert_true(cfg.cookies);
	apex_config_free(&cfg);
	expect_error("server:\n  cookies: maybe\n", 2, "cookies: expected yes or no, not 'maybe'");
}

/* NSD's spellings of apex's keys mean the same. */
static void test_nsd_spellings(void **state)
{
	apex_config_t cfg;
	char expect[700];

	(void)state;
	load_ok(&cfg, "nsd.conf",
		"server:\n  ip-address: 192.0.2.1@5300\n"
		"  server-count: 3\n  username: nsd\n"
		"  pidfile: /run/x.pid\n  logfile: nsd.log\n"
		"  tcp-timeout: 7\n  rrl-ratelimit: 50\n  rrl-size: 4096\n"
		"  answer-cookie: no\n  zonesdir: nsd-zones\n"
		"zone:\n  name: example.\n  zonefile: example.zone\n"
		"  zonemd-check: no\n");
	assert_int_equal(cfg.listen_count, 1);
	assert_string_equal(cfg.listens[0].text, "192.0.2.1@5300");
	assert_int_equal(cfg.workers, 3);
	assert_string_equal(cfg.user, "nsd");
	assert_string_equal(cfg.pid_file, "/run/x.pid");
	snprintf(expect, sizeof(expect), "%s/nsd.log", dir);
	assert_string_equal(cfg.log_file, expect);
	assert_int_equal(cfg.tcp_idle_timeout, 7);
	assert_int_equal(cfg.rrl.rate, 50);
	assert_int_equal(cfg.rrl.table_size, 4096);
	assert_false(cfg.cookies);
	assert_int_equal(cfg.zone_count, 1);
	snprintf(expect, sizeof(expect), "%s/nsd-zones/example.zone", dir);
	assert_string_equal(cfg.zones[0].file, expect);
	assert_false(cfg.zones[0].zonemd_verify);
	apex_config_free(&cfg);

	/* apex's spelling; an absolute file is kept; the zones before it are
	 * taken from the config file's directory */
	load_ok(&cfg, "zdir.conf",
		"zone:\n  name: a.\n  file: a.zone\n"
		"server:\n  zones-directory: /srv/zones\n"
		"zone:\n  name: b.\n  file: b.zone\n"
		"zone:\n  name: c.\n  file: /c.zone\n");
	snprintf(expect, sizeof(expect), "%s/a.zone", dir);
	assert_string_equal(cfg.zones[0].file, expect);
	assert_string_equal(cfg.zones[1].file, "/srv/zones/b.zone");
	assert_string_equal(cfg.zones[2].file, "/c.zone");
	apex_config_free(&cfg);
	expect_error("server:\n  server-count: 0\n", 2,
		     "server-count: expected a number from 1 to 1024, not '0'");
}

static void test_log_keys(void **state)
{
	apex_config_t cfg;
	char err[900] = "", expect[700];

	(void)state;
	apex_config_init(&cfg);
	assert_null(cfg.log_file);
	assert_false(cfg.log_syslog);
	assert_int_equal(cfg.log_facility, LOG_DAEMON);
	assert_int_equal(cfg.log_level, APEX_LOG_INFO);
	assert_int_equal(
		apex_config_load(&cfg,
				 write_file("log.conf", "server:\n  log-target: log/apexd.log\n"
							"  log-level: debug\n"),
				 err, sizeof(err)),
		APEX_OK);
	snprintf(expect, sizeof(expect), "%s/log/apexd.log", dir);
	assert_string_equal(cfg.log_file, expect);
	assert_int_equal(cfg.log_level, APEX_LOG_DEBUG);
	apex_config_free(&cfg);
	apex_config_init(&cfg);
	assert_int_equal(
		apex_config_load(&cfg,
				 write_file("log.conf", "server:\n  log-target: log/x.log\n"
							"  log-target: syslog\n"
							"  log-facility: local7\n"),
				 err, sizeof(err)),
		APEX_OK);
	assert_null(cfg.log_file); /* the last log-target counts */
	assert_true(cfg.log_syslog);
	assert_int_equal(cfg.log_facility, LOG_LOCAL7);
	apex_config_free(&cfg);
	expect_error("server:\n  log-level: loud\n", 2,
		     "log-level: expected error, warning, info or debug, not 'loud'");
	expect_error("server:\n  log-facility: kern\n", 2,
		     "log-facility: expected daemon, user or local0 to local7, not 'kern'");
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("server:\n  workerz: 3\n", 2, "unknown key 'workerz' in the server section");
	expect_error("\nlisten: 127.0.0.1\n", 2,
		     "'listen' outside of a section (start with 'server:' or 'zone:')");
	expect_error("server:\n  workers: 0\n", 2,
		     "workers: expected a number from 1 to 1024, not '0'");
	expect_error("server:\n  edns-payload: 511\n", 2,
		     "edns-payload: expected a number from 512 to 65535, not '511'");
	expect_error("server:\n  tcp-idle-timeout: 5s\n", 2,
		     "tcp-idle-timeout: expected a number from 1 to 3600, not '5s'");
	expect_error("server:\n  listen: 127.0.0.1@0\n", 2,
		     "bad port in listen address '127.0.0.1@0': expected 1 to 65535");
	expect_error("server:\n  listen: localhost\n", 2,
		     "bad listen address 'localhost': 'localhost' is not an IPv4 or IPv6 address");
	expect_error("server:\n  identity: \"open\n", 2, "unterminated quoted string");
	expect_error("server:\n  workers: 2 3\n", 2,
		     "unexpected text after the value of 'workers'");
	expect_error("server:\n  nsid: hex:abc\n", 2, "nsid: odd number of hex digits");
	expect_error("server:\n  nsid: hex:zz\n", 2, "nsid: 'zz' is not hex");
	expect_error("server:\n  version:\n", 2, "'version' needs a value");
	expect_error("server: yes\n", 1,
		     "'server:' takes no value: put its keys on the lines below");
	/* a zone's errors point at its "zone:" line */
	expect_error("server:\n  listen: ::1\nzone:\n  name: example.\n\n", 3,
		     "zone example. without a file");
	expect_error("zone:\n  file: x.zone\nzone:\n  name: a.\n  file: a.zone\n", 1,
		     "zone without a name");
	expect_error("zone:\n name: a.\n file: a\nzone:\n name: A.\n file: b\n", 4,
		     "zone A. given twice");
	expect_error("zone:\n name: a.\n name: b.\n", 3, "zone: name given twice");
	expect_error("zone:\n name: a.\n listen: 127.0.0.1\n", 3,
		     "unknown key 'listen' in a zone section");
	expect_error("server:\n  reload-priority: 20\n", 2,
		     "reload-priority: expected a number from 0 to 19, not '20'");
	expect_error("server:\n  reload-priority: low\n", 2,
		     "reload-priority: expected idle or a nice value from 0 to 19, not 'low'");
	expect_error("server:\n  reload-nice: idle\n", 2,
		     "reload-nice: expected a nice value from 0 to 19, not 'idle'");
	expect_error("server:\n  reload-priority: -1\n", 2,
		     "reload-priority: expected idle or a nice value from 0 to 19, not '-1'");
	expect_error("server:\n  tcp-io-timeout: 0\n", 2,
		     "tcp-io-timeout: expected a number from 1 to 3600, not '0'");
	expect_error("server:\n  rrl-slip: 101\n", 2,
		     "rrl-slip: expected a number from 0 to 100, not '101'");
	expect_error("server:\n  rrl-ipv4-prefix-length: 33\n", 2,
		     "rrl-ipv4-prefix-length: expected a number from 1 to 32, not '33'");
	expect_error("server:\n  rrl-table-size: 8\n", 2,
		     "rrl-table-size: expected a number from 16 to 16777216, not '8'");
	expect_error("server:\n  rrl-whitelist: 192.0.2.0/33\n", 2,
		     "rrl-whitelist: expected ADDR/LEN (IPv4 or IPv6), not '192.0.2.0/33'");
	expect_error("server:\n  rrl-whitelist: example.com/24\n", 2,
		     "rrl-whitelist: expected ADDR/LEN (IPv4 or IPv6), not 'example.com/24'");
	expect_error("server:\n  rrl-burst: 5\n", 2,
		     "unknown key 'rrl-burst' in the server section");
	expect_error("server:\n  cookie-secret: 0011\n", 2,
		     "cookie-secret: expected 32 hex digits (16 bytes)");
	expect_error("server:\n  cookie-secret: 000102030405060708090a0b0c0d0e0g\n", 2,
		     "cookie-secret: '000102030405060708090a0b0c0d0e0g' is not hex");
	expect_error("server:\n  chroot: var/lib/apex\n", 2,
		     "chroot: expected an absolute path, not 'var/lib/apex'");
}

/* key: sections and the transfer keys of a zone, in NSD's spelling. */
static void test_transfer_keys(void **state)
{
	apex_config_t cfg;
	char err[512] = "";
	const char *path =
		write_file("xfr.conf", "zone:\n"
				       "  name: example.\n"
				       "  file: example.zone\n"
				       "  request-xfr: 192.0.2.1 xfr-key   # the first primary\n"
				       "  request-xfr: AXFR 2001:db8::1@5300 NOKEY\n"
				       "  allow-notify: 192.0.2.0/24 xfr-key\n"
				       "  allow-notify: 0.0.0.0/0 BLOCKED\n"
				       "key:\n"
				       "  name: \"xfr-key\"\n"
				       "  algorithm: hmac-sha256\n"
				       "  secret: \"K2tf3TRjvQkVCmJF3/Z9vA==\"\n"
				       "server:\n"
				       "  xfr-timeout: 600\n"
				       "  xfr-idle-timeout: 5\n"
				       "  copy-flush-interval: 0\n"
				       "  xfr-size-limit: 1000000\n");

	(void)state;
	apex_config_init(&cfg);
	assert_int_equal(cfg.xfr_timeout, APEX_CONFIG_DEFAULT_XFR_TIMEOUT);
	assert_int_equal(cfg.copy_flush_interval, APEX_CONFIG_DEFAULT_COPY_FLUSH_INTERVAL);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(cfg.copy_flush_interval, 0);
	assert_int_equal(cfg.key_count, 1);
	assert_int_equal(cfg.keys[0].alg, APEX_TSIG_HMAC_SHA256);
	assert_int_equal(cfg.keys[0].secret_size, 16);
	assert_int_equal(cfg.zone_count, 1);
	const apex_zone_config_t *z = &cfg.zones[0];
	assert_int_equal(z->request_xfr_count, 2);
	assert_string_equal(z->request_xfr[0].text, "192.0.2.1 xfr-key");
	assert_ptr_equal(z->request_xfr[0].key, &cfg.keys[0]);
	assert_false(z->request_xfr[0].axfr_only);
	assert_int_equal(z->request_xfr[1].prefix.family, AF_INET6);
	assert_int_equal(z->request_xfr[1].port, 5300);
	assert_true(z->request_xfr[1].axfr_only);
	assert_null(z->request_xfr[1].key);
	assert_int_equal(z->allow_notify_count, 2);
	assert_int_equal(z->allow_notify[0].prefix.len, 24);
	assert_true(z->allow_notify[1].blocked);
	assert_int_equal(cfg.xfr_timeout, 600);
	assert_int_equal(cfg.xfr_idle_timeout, 5);
	assert_int_equal(cfg.xfr_size_limit, 1000000);
	apex_config_free(&cfg);

	expect_error("zone:\n name: a.\n file: a\n request-xfr: 192.0.2.1\n", 4,
		     "'192.0.2.1': a key name or NOKEY is needed after the address");
	expect_error("zone:\n name: a.\n file: a\n request-xfr: 192.0.2.1 BLOCKED\n", 4,
		     "'192.0.2.1 BLOCKED': BLOCKED is for access lists");
	expect_error("zone:\n name: a.\n file: a\n request-xfr: 192.0.2.0/24 k\n", 4,
		     "'192.0.2.0/24 k': a peer is one address, without a prefix");
	expect_error("zone:\n name: a.\n file: a\n allow-notify: 192.0.2.0/33 k\n", 4,
		     "'192.0.2.0/33 k': bad prefix length after '/'");
	expect_error("zone:\n name: a.\n file: a\n allow-notify: ns1 k\n", 4,
		     "'ns1 k': not an IPv4 or IPv6 address");
	expect_error("zone:\n name: a.\n file: a\n allow-notify: ::1 k extra\n", 4,
		     "'::1 k extra': unexpected text after the key");
	expect_error("key:\n name: k\n algorithm: hmac-sha256\n", 1,
		     "a key needs a name, an algorithm and a secret");
	expect_error("key:\n name: k\n algorithm: hmac-sha3\n secret: AAAA\n", 1,
		     "key k: unknown TSIG algorithm 'hmac-sha3' (hmac-md5, hmac-sha1, hmac-sha224, "
		     "hmac-sha256, hmac-sha384, hmac-sha512)");
	expect_error("key:\n name: k\n algorithm: hmac-sha1\n secret: AAAA\n"
		     "key:\n name: k.\n algorithm: hmac-sha1\n secret: AAAA\n",
		     5, "key k. given twice");
	expect_error("key:\n colour: blue\n", 2, "unknown key 'colour' in a key section");

	/* a key no key: section defines */
	path = write_file("nokey.conf", "zone:\n name: a.\n file: a\n request-xfr: ::1 nokey\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_EINVAL);
	assert_non_null(strstr(err, "zone a.: request-xfr '::1 nokey': no key named 'nokey'"));
	apex_config_free(&cfg);
}

/* pattern: sections, catalog: consumer, and a member zone made from a
 * pattern (catalog/consumer.h). */
static void test_patterns_and_catalogs(void **state)
{
	apex_config_t cfg;
	char err[512] = "", want[700];
	uint8_t origin[APEX_NAME_MAX];
	const char *path = write_file("catalog.conf", "pattern:\n"
						      "  name: members\n"
						      "  zonefile: \"members/%s.zone\"\n"
						      "  request-xfr: 192.0.2.1 xfr-key\n"
						      "  allow-notify: 192.0.2.1 xfr-key\n"
						      "  zonemd-check: no\n"
						      "pattern:\n"
						      "  name: Other\n"
						      "  verifier: /bin/true\n"
						      "zone:\n"
						      "  name: catalog.invalid\n"
						      "  file: catalog.zone\n"
						      "  catalog: consumer\n"
						      "  catalog-member-pattern: members\n"
						      "  request-xfr: 192.0.2.1 xfr-key\n"
						      "key:\n"
						      "  name: xfr-key\n"
						      "  algorithm: hmac-sha256\n"
						      "  secret: \"K2tf3TRjvQkVCmJF3/Z9vA==\"\n");

	(void)state;
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(cfg.zone_count, 1);
	assert_true(cfg.zones[0].catalog_consumer);
	assert_string_equal(cfg.zones[0].catalog_member_pattern, "members");
	assert_int_equal(cfg.pattern_count, 2);
	const apex_zone_config_t *members = apex_config_pattern(&cfg, "members");
	const apex_zone_config_t *other = apex_config_pattern(&cfg, "Other");
	assert_non_null(members);
	assert_non_null(other);
	assert_null(apex_config_pattern(&cfg, "other")); /* names are case-sensitive */
	snprintf(want, sizeof(want), "%s/members/%%s.zone", dir);
	assert_string_equal(members->file, want);
	snprintf(want, sizeof(want), "%s/%%s.zone", dir); /* the default template */
	assert_string_equal(other->file, want);
	assert_false(members->zonemd_verify);
	assert_true(other->zonemd_verify);
	assert_string_equal(other->verifier, "/bin/true");
	/* the keys a pattern's lists name are resolved like a zone's */
	assert_int_equal(members->request_xfr_count, 1);
	assert_ptr_equal(members->request_xfr[0].key, &cfg.keys[0]);

	/* a member made from a pattern: its lists the pattern's, its file from the template */
	assert_int_equal(apex_name_from_str("Example.COM.", origin), 13);
	apex_name_lower(origin);
	assert_int_equal(apex_config_add_member(&cfg, members, origin, err, sizeof(err)), APEX_OK);
	assert_int_equal(cfg.zone_count, 2);
	const apex_zone_config_t *m = &cfg.zones[1];
	assert_string_equal(m->name, "example.com.");
	snprintf(want, sizeof(want), "%s/members/example.com.zone", dir);
	assert_string_equal(m->file, want);
	assert_true(apex_name_equal(m->origin, origin));
	assert_int_equal(m->request_xfr_count, 1);
	assert_ptr_equal(m->request_xfr, members->request_xfr); /* shared, not freed twice */
	assert_true(m->acls_shared);
	assert_false(members->acls_shared);
	assert_ptr_equal(m->request_xfr[0].key, &cfg.keys[0]);
	assert_int_equal(m->allow_notify_count, 1);
	assert_false(m->zonemd_verify);
	assert_false(m->catalog_consumer);
	assert_null(m->catalog_member_pattern);
	assert_int_equal(apex_config_add_member(&cfg, other, origin, err, sizeof(err)), APEX_OK);
	assert_string_equal(cfg.zones[2].verifier, "/bin/true");
	assert_ptr_not_equal(cfg.zones[2].verifier, other->verifier);
	/* a name whose text holds a '/' makes no file name */
	assert_true(apex_name_from_str("a/b", origin) > 0);
	assert_int_equal(apex_config_add_member(&cfg, members, origin, err, sizeof(err)),
			 APEX_EINVAL);
	assert_string_equal(err, "zone a/b.: a '/' in its name cannot make a file name");
	assert_int_equal(cfg.zone_count, 3);
	apex_config_free(&cfg);

	expect_error("zone:\n name: c.\n file: c\n catalog: consumer\n", 1,
		     "zone c.: catalog: consumer without a catalog-member-pattern");
	expect_error("zone:\n name: c.\n file: c\n catalog-member-pattern: p\n", 1,
		     "zone c.: catalog-member-pattern without catalog: consumer");
	expect_error("zone:\n name: c.\n file: c\n catalog: both\n", 4,
		     "catalog: expected consumer or producer, not 'both'");
	expect_error("zone:\n name: c.\n file: c\n catalog: producer\n catalog: consumer\n", 5,
		     "catalog: a zone is a consumer or a producer, not both");
	expect_error("zone:\n name: c.\n file: c\n catalog: producer\n"
		     " request-xfr: 192.0.2.1 NOKEY\n",
		     1, "zone c.: catalog: producer is written by apexd, not transferred");
	expect_error("zone:\n name: m.\n file: m\n catalog-group: g\n", 1,
		     "zone m.: catalog-group without catalog-producer-zone");
	expect_error("zone:\n name: m.\n file: m\n catalog-group: \"a b\"\n", 4,
		     "catalog-group: 'a b': 1 to 255 characters, no white space, quote or "
		     "backslash");
	expect_error("zone:\n name: m.\n file: m\n catalog-producer-zone: a..b\n", 4,
		     "catalog-producer-zone: bad zone name 'a..b'");
	expect_error("pattern:\n file: x\n", 1, "pattern without a name");
	expect_error("pattern:\n name: p\npattern:\n name: p\n", 3, "pattern p given twice");
	expect_error("pattern:\n name: p\n catalog: consumer\n", 3,
		     "unknown key 'catalog' in a pattern section");
	path = write_file("nopattern.conf", "zone:\n name: c.\n file: c\n catalog: consumer\n"
					    " catalog-member-pattern: absent\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_EINVAL);
	assert_non_null(strstr(err, "zone c.: catalog-member-pattern absent: no such pattern"));
	apex_config_free(&cfg);
	/* a producer's members name it; a name that is not one is an error */
	path = write_file("producer.conf",
			  "zone:\n name: cat.invalid\n file: cat.zone\n"
			  " catalog: producer\n"
			  "zone:\n name: m.\n file: m\n"
			  " catalog-producer-zone: CAT.invalid.\n catalog-group: g1\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_true(cfg.zones[0].catalog_producer);
	assert_false(cfg.zones[0].catalog_consumer);
	assert_string_equal(cfg.zones[1].catalog_producer_zone, "CAT.invalid.");
	assert_string_equal(cfg.zones[1].catalog_group, "g1");
	apex_config_free(&cfg);
	path = write_file("noproducer.conf", "zone:\n name: cat.invalid\n file: cat.zone\n"
					     "zone:\n name: m.\n file: m\n"
					     " catalog-producer-zone: cat.invalid\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_EINVAL);
	assert_non_null(strstr(err, "zone m.: catalog-producer-zone cat.invalid: no zone with "
				    "catalog: producer of that name"));
	apex_config_free(&cfg);
	path = write_file("patternkey.conf", "pattern:\n name: p\n request-xfr: ::1 nokey\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_EINVAL);
	assert_non_null(strstr(err, "request-xfr '::1 nokey': no key named 'nokey'"));
	apex_config_free(&cfg);
}

/* TLS (NSD's keys): the listen addresses' transports from tls-port and
 * tls-auth-port, the tls-auth: clauses and the entries that name them. */
static void test_tls_keys(void **state)
{
	apex_config_t cfg;
	char err[512] = "", expect[700];
	const char *path =
		write_file("tls.conf", "server:\n"
				       "    listen: 127.0.0.1@53\n"
				       "    listen: 127.0.0.1@853\n"
				       "    listen: ::1@8853\n"
				       "    tls-service-key: \"tls/server.key\"\n"
				       "    tls-service-pem: /etc/apex/server.pem\n"
				       "    tls-port: 853\n"
				       "    tls-auth-port: 8853\n"
				       "    tls-auth-xfr-only: yes\n"
				       "    tls-cert-bundle: /etc/apex/ca.pem\n"
				       "tls-auth:\n"
				       "    name: primary\n"
				       "    auth-domain-name: primary.example.\n"
				       "    client-cert: tls/client.pem\n"
				       "    client-key: tls/client.key\n"
				       "    client-key-pw: \"secret words\"\n"
				       "tls-auth:\n"
				       "    name: \"secondaries\"\n"
				       "    auth-domain-name: secondary.example\n"
				       "key:\n"
				       "    name: tsig-key\n"
				       "    algorithm: hmac-sha256\n"
				       "    secret: \"AAAA\"\n"
				       "zone:\n"
				       "    name: example.\n"
				       "    file: example.zone\n"
				       "    request-xfr: 192.0.2.1 tsig-key primary\n"
				       "    request-xfr: 192.0.2.2@5300 tsig-key\n"
				       "    allow-notify: 192.0.2.1 tsig-key\n"
				       "    provide-xfr: 192.0.2.0/24 tsig-key secondaries\n");

	(void)state;
	apex_config_init(&cfg);
	assert_int_equal(cfg.tls.port, 853);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_OK);
	assert_int_equal(cfg.listens[0].transport, APEX_LISTEN_PLAIN);
	assert_int_equal(cfg.listens[1].transport, APEX_LISTEN_TLS);
	assert_int_equal(cfg.listens[2].transport, APEX_LISTEN_TLS_AUTH);
	snprintf(expect, sizeof(expect), "%s/tls/server.key", dir);
	assert_string_equal(cfg.tls.service_key, expect);
	assert_string_equal(cfg.tls.service_pem, "/etc/apex/server.pem");
	assert_string_equal(cfg.tls.cert_bundle, "/etc/apex/ca.pem");
	assert_int_equal(cfg.tls.auth_port, 8853);
	assert_true(cfg.tls.auth_xfr_only);
	assert_int_equal(cfg.tls.auth_count, 2);
	assert_string_equal(cfg.tls.auths[0].auth_domain_name, "primary.example");
	snprintf(expect, sizeof(expect), "%s/tls/client.key", dir);
	assert_string_equal(cfg.tls.auths[0].client_key, expect);
	assert_string_equal(cfg.tls.auths[0].client_key_pw, "secret words");
	assert_null(cfg.tls.auths[1].client_cert);
	assert_ptr_equal(cfg.zones[0].request_xfr[0].tls_auth, &cfg.tls.auths[0]);
	assert_int_equal(cfg.zones[0].request_xfr[0].port, 853);
	assert_null(cfg.zones[0].request_xfr[1].tls_auth);
	assert_ptr_equal(cfg.zones[0].provide_xfr[0].tls_auth, &cfg.tls.auths[1]);
	apex_config_free(&cfg);

	/* without a key and a certificate the tls-port serves plain DNS, as in NSD */
	path = write_file("plain.conf", "server:\n    listen: 127.0.0.1@853\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_OK);
	assert_int_equal(cfg.listens[0].transport, APEX_LISTEN_PLAIN);
	apex_config_free(&cfg);

	/* the tls-auth-port needs the server's certificate and a CA bundle */
	path = write_file("auth.conf", "server:\n    listen: 127.0.0.1@8853\n"
				       "    tls-auth-port: 8853\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_EINVAL);
	assert_string_equal(err, "listen 127.0.0.1@8853 is the tls-auth-port: it needs "
				 "tls-service-key, tls-service-pem and tls-cert-bundle");
	apex_config_free(&cfg);
	path = write_file("half.conf", "server:\n    tls-service-key: a.key\n");
	apex_config_init(&cfg);
	assert_int_equal(apex_config_load(&cfg, path, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_EINVAL);
	assert_string_equal(err, "tls-service-key and tls-service-pem go together: give both");
	apex_config_free(&cfg);
}

static void test_tls_errors(void **state)
{
	char expect[900];
	const char *path;
	apex_config_t cfg;
	char err[900] = "";

	(void)state;
	expect_error("tls-auth:\n    auth-domain-name: a.example\n", 1, "a tls-auth needs a name");
	expect_error("tls-auth:\n    name: a\n", 1, "a tls-auth needs an auth-domain-name");
	expect_error("tls-auth:\n    name: a\n    auth-domain-name: a.example\n"
		     "    client-cert: c.pem\n",
		     1, "client-cert and client-key go together: give both");
	expect_error("tls-auth:\n    name: a\n    auth-domain-name: a.example\n"
		     "tls-auth:\n    name: a\n    auth-domain-name: b.example\n",
		     4, "tls-auth a given twice");
	expect_error("tls-auth:\n    name: a\n    name: b\n", 3, "tls-auth: name given twice");
	expect_error("tls-auth:\n    name: a\n    ca-file: x\n", 3,
		     "unknown key 'ca-file' in a tls-auth section");
	expect_error("zone:\n    name: a.\n    file: a.zone\n    notify: ::1 NOKEY t\n", 4,
		     "'::1 NOKEY t': unexpected text after the key");
	expect_error("server:\n    tls-port: 0\n", 2,
		     "tls-port: expected a number from 1 to 65535, not '0'");
	/* an entry naming a tls-auth no section defines */
	path = write_file("noauth.conf", "zone:\n    name: a.\n    file: a.zone\n"
					 "    provide-xfr: ::1 NOKEY nosuch\n");
	snprintf(expect, sizeof(expect),
		 "%s: zone a.: provide-xfr '::1 NOKEY nosuch': no tls-auth named 'nosuch' "
		 "(define it in a tls-auth: section)",
		 path);
	apex_config_init(&cfg);
	assert_true(apex_config_load(&cfg, path, err, sizeof(err)) < 0);
	assert_string_equal(err, expect);
	apex_config_free(&cfg);
}

static void test_command_line(void **state)
{
	apex_config_t cfg;
	char err[512] = "", cwd[256], expect[512];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	apex_config_init(&cfg);
	assert_int_equal(apex_config_require_listen(&cfg, err, sizeof(err)), APEX_EINVAL);
	assert_non_null(strstr(err, "no listen address"));
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_OK); /* apexd -t */

	assert_int_equal(apex_config_add_listen(&cfg, "::1@5353", err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_config_add_listen(&cfg, "::1@5353", err, sizeof(err)), APEX_EINVAL);
	assert_string_equal(err, "listen address ::1@5353 given twice");
	assert_int_equal(apex_config_add_listen(&cfg, "@53", err, sizeof(err)), APEX_EINVAL);
	assert_int_equal(apex_config_add_listen(&cfg, "1.2.3.4@", err, sizeof(err)), APEX_EINVAL);
	apex_config_clear_listens(&cfg);
	assert_int_equal(cfg.listen_count, 0);
	assert_int_equal(apex_config_add_listen(&cfg, "0.0.0.0@5353", err, sizeof(err)), APEX_OK);

	assert_int_equal(apex_config_add_zone_arg(&cfg, "fj.=zones/fj.zone", err, sizeof(err)),
			 APEX_OK);
	snprintf(expect, sizeof(expect), "%s/zones/fj.zone", cwd);
	assert_string_equal(cfg.zones[0].file, expect); /* -z is relative to the cwd */
	assert_int_equal(apex_config_add_zone_arg(&cfg, ".=/z/root.zone", err, sizeof(err)),
			 APEX_OK);
	assert_string_equal(cfg.zones[1].name, ".");
	assert_int_equal(apex_config_add_zone_arg(&cfg, "FJ=other", err, sizeof(err)), APEX_EINVAL);
	assert_string_equal(err, "zone FJ. given twice");
	assert_int_equal(apex_config_add_zone_arg(&cfg, "foo", err, sizeof(err)), APEX_EINVAL);
	assert_string_equal(err, "bad zone 'foo': expected ORIGIN=FILE");
	assert_int_equal(apex_config_add_zone_arg(&cfg, "=x", err, sizeof(err)), APEX_EINVAL);
	assert_int_equal(apex_config_add_zone_arg(&cfg, "x=", err, sizeof(err)), APEX_EINVAL);
	assert_int_equal(cfg.zone_count, 2);

	assert_int_equal(apex_config_set_pid_file(&cfg, "apexd.pid"), APEX_OK);
	snprintf(expect, sizeof(expect), "%s/apexd.pid", cwd);
	assert_string_equal(cfg.pid_file, expect);
	assert_int_equal(apex_config_finish(&cfg, err, sizeof(err)), APEX_OK);
	apex_config_free(&cfg);
}

/* Zones are found by origin through an index that grows with them: a name
 * given twice is refused however many zones come between, in either case,
 * members appended by a catalog are found too, and every zone is found at
 * its own index. */
static void test_many_zones_indexed(void **state)
{
	apex_config_t cfg;
	apex_zone_config_t pattern;
	char err[512] = "", name[64];
	uint8_t origin[APEX_NAME_MAX];

	(void)state;
	memset(&pattern, 0, sizeof(pattern));
	pattern.name = "p";
	pattern.file = "/z/%s.zone";
	apex_config_init(&cfg);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "zone%d.example.", i);
		assert_int_equal(apex_config_add_zone(&cfg, name, "z", "/", err, sizeof(err)),
				 APEX_OK);
	}
	for (int i = 0; i < 700; i++) {
		snprintf(name, sizeof(name), "member%d.example.", i);
		assert_true(apex_name_from_str(name, origin) > 0);
		assert_int_equal(apex_config_add_member(&cfg, &pattern, origin, err, sizeof(err)),
				 APEX_OK);
	}
	assert_int_equal(cfg.zone_count, 5700);
	for (size_t i = 0; i < cfg.zone_count; i++)
		assert_int_equal(apex_config_find_zone(&cfg, cfg.zones[i].origin), (long)i);
	assert_true(apex_name_from_str("ZONE4321.Example.", origin) > 0);
	assert_int_equal(apex_config_find_zone(&cfg, origin), 4321);
	assert_true(apex_name_from_str("member699.example.", origin) > 0);
	assert_int_equal(apex_config_find_zone(&cfg, origin), 5699);
	assert_true(apex_name_from_str("zone5000.example.", origin) > 0);
	assert_int_equal(apex_config_find_zone(&cfg, origin), -1);

	assert_int_equal(apex_config_add_zone(&cfg, "Zone0.EXAMPLE.", "z", "/", err, sizeof(err)),
			 APEX_EINVAL);
	assert_string_equal(err, "zone Zone0.EXAMPLE. given twice");
	assert_int_equal(apex_config_add_zone(&cfg, "zone4999.example", "z", "/", err, sizeof(err)),
			 APEX_EINVAL);
	assert_int_equal(apex_config_add_zone(&cfg, "member3.example.", "z", "/", err, sizeof(err)),
			 APEX_EINVAL);
	assert_string_equal(err, "zone member3.example. given twice");
	assert_int_equal(cfg.zone_count, 5700);
	assert_int_equal(
		apex_config_add_zone(&cfg, "zone5000.example.", "z", "/", err, sizeof(err)),
		APEX_OK);
	assert_true(apex_name_from_str("zone5000.example.", origin) > 0);
	assert_int_equal(apex_config_find_zone(&cfg, origin), 5700);
	apex_config_free(&cfg);
}

static void test_missing_file(void **state)
{
	apex_config_t cfg;
	char err[512] = "";

	(void)state;
	apex_config_init(&cfg);
	/* the failure of the open, kept as -errno */
	assert_int_equal(apex_config_load(&cfg, "/nonexistent/apex.conf", err, sizeof(err)),
			 APEX_ENOENT);
	assert_string_equal(err, "/nonexistent/apex.conf: No such file or directory");
	apex_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_nsid_from_identity),
		cmocka_unit_test(test_reload_priority),
		cmocka_unit_test(test_memory_limit),
		cmocka_unit_test(test_memory_limit_errors),
		cmocka_unit_test(test_hardening_keys),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_number_keys_at_their_bounds),
		cmocka_unit_test(test_control_socket_and_cookies),
		cmocka_unit_test(test_log_keys),
		cmocka_unit_test(test_nsd_spellings),
		cmocka_unit_test(test_transfer_keys),
		cmocka_unit_test(test_patterns_and_catalogs),
		cmocka_unit_test(test_tls_keys),
		cmocka_unit_test(test_tls_errors),
		cmocka_unit_test(test_command_line),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_many_zones_indexed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
