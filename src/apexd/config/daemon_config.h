/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apexd configuration: the config file (doc/apex.conf.5) and the
 * command-line additions (-l, -z, -n).
 *
 * An apex_config_t owns every string and array it points to; free it
 * with apex_config_free().  It is filled once at start-up and read-only
 * while the workers run.
 */
#ifndef APEXD_DAEMON_CONFIG_H
#define APEXD_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dns/edns.h"
#include "dns/name.h"
#include "rrl/rrl.h"
#include "tsig/tsig.h"
#include "xfr/acl.h"

#define APEX_CONFIG_DEFAULT_PORT 53
#define APEX_CONFIG_DEFAULT_EDNS_PAYLOAD APEX_EDNS_PAYLOAD
#define APEX_CONFIG_DEFAULT_TCP_MAX_CONNECTIONS 1000
#define APEX_CONFIG_DEFAULT_TCP_IDLE_TIMEOUT 10
#define APEX_CONFIG_WORKERS_MAX 1024
#define APEX_CONFIG_DEFAULT_TCP_MAX_PER_CLIENT 100
/* UDP socket buffers (receive-buffer-size, send-buffer-size): a small
 * query takes about 830 bytes of a receive buffer (the kernel counts its
 * bookkeeping too) and the kernel doubles the size asked for, so 8 MiB
 * hold about 20,000 queries: a 100 ms stall at 200,000 queries/s, above a
 * worker's peak. */
#define APEX_CONFIG_DEFAULT_RECEIVE_BUFFER (8u << 20)
#define APEX_CONFIG_DEFAULT_SEND_BUFFER (4u << 20)
#define APEX_CONFIG_DEFAULT_TCP_IO_TIMEOUT 5
#define APEX_CONFIG_DEFAULT_RELOAD_NICE 10
#define APEX_CONFIG_DEFAULT_RRL_SLIP 2
#define APEX_CONFIG_DEFAULT_RRL_IPV4_PREFIX 24
#define APEX_CONFIG_DEFAULT_RRL_IPV6_PREFIX 56
#define APEX_CONFIG_DEFAULT_RRL_TABLE_SIZE 65536
#define APEX_CONFIG_DEFAULT_XFR_TIMEOUT 3600
#define APEX_CONFIG_DEFAULT_XFR_IDLE_TIMEOUT 30
#define APEX_CONFIG_DEFAULT_COPY_FLUSH_INTERVAL 60
#define APEX_CONFIG_DEFAULT_XFR_OUT_MAX 10
#define APEX_CONFIG_DEFAULT_XFR_IN_MAX 10
#define APEX_CONFIG_DEFAULT_JOURNAL_SIZE (64u << 20)
#define APEX_CONFIG_DEFAULT_METRICS_PORT 9100 /* NSD's metrics-port */
#define APEX_CONFIG_DEFAULT_TLS_PORT 853      /* NSD's tls-port (RFC 7858) */

/* What a listen address serves, from its port (apex_config_finish()). */
typedef enum apex_listen_transport {
	APEX_LISTEN_PLAIN,    /* UDP and TCP */
	APEX_LISTEN_TLS,      /* the tls-port: DNS over TLS, TCP only */
	APEX_LISTEN_TLS_AUTH, /* the tls-auth-port: TLS with a client certificate, TCP only */
} apex_listen_transport_t;

/* One address to listen on (UDP and TCP). */
typedef struct apex_listen {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char text[64]; /* "ADDR@PORT", for logs */
	apex_listen_transport_t transport;
	/* Its port is a proxy-protocol-port: every datagram and connection
	 * begins with a PROXY v2 header (lib/proxy/proxy_v2.h). */
	bool proxy;
} apex_listen_t;

/* One zone to serve. */
typedef struct apex_zone_config {
	char *name;                    /* as written, for logs */
	uint8_t origin[APEX_NAME_MAX]; /* wire format */
	char *file;                    /* absolute path */
	/* A secondary zone: its primaries in order of preference (request-xfr),
	 * who may NOTIFY it (allow-notify).  Arrays owned, unless acls_shared. */
	apex_acl_entry_t *request_xfr;
	size_t request_xfr_count;
	apex_acl_entry_t *allow_notify;
	size_t allow_notify_count;
	/* Who may transfer the zone from here (provide-xfr).  Array owned,
	 * unless acls_shared. */
	apex_acl_entry_t *provide_xfr;
	size_t provide_xfr_count;
	/* Whom to NOTIFY of every new serial (notify).  Array owned, unless
	 * acls_shared. */
	apex_acl_entry_t *notify;
	size_t notify_count;
	/* The four access lists are its pattern's, in the same configuration
	 * (a catalog's member): not freed with the zone.  Half a kilobyte an
	 * entry, copied for 10,000 members at each change of a catalog. */
	bool acls_shared;
	/* Check the zone's ZONEMD record (RFC 8976) before serving a version
	 * (zonemd-verify; the default, and for zones given with -z). */
	bool zonemd_verify;
	/* Its verification before a version is served, as its section gives it
	 * (verify-zone, verifier, verifier-feed-zone, verifier-timeout): -1 or
	 * NULL where it does not, the server's defaults then (zones/verify_check.h
	 * applies them).  verifier owned. */
	int verify_zone;
	char *verifier;
	int verifier_feed_zone;
	long verifier_timeout;
	/* catalog: consumer (RFC 9432): the zone is a catalog whose members
	 * become zones of the server (catalog/consumer.h), each with the
	 * pattern its group names or else catalog_member_pattern (owned). */
	bool catalog_consumer;
	char *catalog_member_pattern;
	/* catalog: producer: apexd writes the zone's file itself, a catalog
	 * of the zones that name it in catalog-producer-zone (owned), each
	 * with its catalog-group as its group property (owned; NULL: none;
	 * catalog/producer.h). */
	bool catalog_producer;
	char *catalog_producer_zone;
	char *catalog_group;
} apex_zone_config_t;

typedef struct apex_config {
	char *path; /* the config file, NULL without -c */

	apex_listen_t *listens;
	size_t listen_count;
	apex_zone_config_t *zones;
	size_t zone_count;
	size_t zone_room; /* entries zones has room for */
	/* zones by origin (apex_config_find_zone()): util/hash_slots.h, 1 <<
	 * origin_bits of them, owned; NULL while there is no zone.  A name
	 * served twice is then found with one probe, not a pass over every
	 * zone configured before it. */
	uint64_t *origin_slots;
	unsigned origin_bits;
	/* pattern: sections, the settings a catalog's member zones take: each
	 * entry's name is the pattern's, its file the template of the members'
	 * files, made absolute ("%s" stands for the zone's name). */
	apex_zone_config_t *patterns;
	size_t pattern_count;
	/* TSIG keys (key: sections); the zones' entries point into it, so it
	 * does not move once the file is read. */
	apex_tsig_key_t *keys;
	size_t key_count;
	/* Zone transfers in (secondary zones). */
	unsigned xfr_timeout;      /* seconds for a whole transfer */
	unsigned xfr_idle_timeout; /* seconds without a byte: a stalled stream */
	uint64_t xfr_size_limit;   /* bytes of one transfer; 0: no limit */
	unsigned xfr_out_max;      /* outgoing transfers at once */
	unsigned xfr_in_max;       /* secondary zones refreshed at once */
	uint64_t journal_size;     /* bound of each zone's journal, bytes; 0: none */
	/* seconds a secondary's copy may lag an IXFR its journal holds; 0: written
	 * after each transfer */
	unsigned copy_flush_interval;

	/* Zone verification (NSD's verify: keys, in server:): every zone's
	 * defaults (verify-zones, verifier, verifier-feed-zone,
	 * verifier-timeout) and the verifiers run at once (verifier-count). */
	bool verify_zones;
	char *verifier; /* the command and its arguments; NULL: none; owned */
	bool verifier_feed_zone;
	unsigned verifier_timeout; /* seconds; 0: none */
	unsigned verifier_count;

	unsigned workers; /* 0: one per CPU */
	char *identity;   /* CHAOS id.server/hostname.bind; NULL = off */
	char *version;    /* CHAOS version.bind/version.server; NULL = off */
	uint8_t *nsid;    /* NSID payload; NULL = off */
	size_t nsid_size;
	bool nsid_set; /* nsid: was given (even empty) */
	uint16_t edns_payload;
	unsigned tcp_max_connections;
	unsigned tcp_idle_timeout;   /* seconds */
	unsigned tcp_max_per_client; /* open connections per client address; 0 = no limit */
	unsigned tcp_io_timeout;     /* seconds to finish receiving or sending a message */
	size_t receive_buffer_size;  /* of each UDP socket, bytes; 0: the kernel's default */
	size_t send_buffer_size;     /* of each UDP socket, bytes; 0: the kernel's default */
	/* xdp-interface: UDP to the listen ports on this interface through
	 * AF_XDP (xdp.h); NULL: sockets only */
	char *xdp_interface;
	/* xdp-busy-poll: microseconds of the kernel's preferred busy
	 * polling on each AF_XDP socket; 0 (the default): none */
	unsigned xdp_busy_poll;
	/* memory-limit: a reload, transfer or added zone whose estimated
	 * peak would cross it is refused (process/memory_limit.h): a number
	 * of bytes, or a percentage of the limit of apexd's cgroup; neither
	 * (both 0, the default): no limit. */
	uint64_t memory_limit;         /* bytes */
	unsigned memory_limit_percent; /* 1 to 100 */
	/* reload-priority: idle (SCHED_IDLE, the default) or a nice value */
	bool reload_idle;     /* the reload thread runs under SCHED_IDLE */
	unsigned reload_nice; /* its nice value (0-19) when !reload_idle */
	/* Response rate limiting (rrl/rrl.h); rrl.whitelist points into
	 * rrl_whitelist, owned here. */
	apex_rrl_config_t rrl;
	apex_prefix_t *rrl_whitelist;
	size_t rrl_whitelist_count;
	/* PROXY protocol v2: the ports whose listeners require the header
	 * (proxy-protocol-port), and who may send it (allow-proxy; none:
	 * anyone).  Owned. */
	uint16_t *proxy_ports;
	size_t proxy_port_count;
	apex_prefix_t *allow_proxy;
	size_t allow_proxy_count;
	bool cookies;           /* answer DNS cookies (default on) */
	bool cookie_secret_set; /* cookie-secret: given; else random at start */
	uint8_t cookie_secret[16];
	bool cookie_staging_secret_set; /* cookie-staging-secret: also accepted */
	uint8_t cookie_staging_secret[16];
	bool require_cookie; /* require-server-cookie: BADCOOKIE over UDP */
	/* Privileges: run as user/group after binding (NULL: stay as started),
	 * optionally chrooted. */
	char *user;
	char *group;
	char *chroot_dir;
	char *pid_file; /* absolute path or NULL */
	/* zone-list-file: the zones apexctl zone-add added, with their
	 * patterns (catalog/zone_list.h); absolute path, NULL: zone-add off */
	char *zone_list_file;
	/* Control socket (apexctl): absolute path, "none" (no socket) or
	 * NULL (not given: the built-in default). */
	char *control_socket;
	/* Logging (util/log.h): log_file an absolute path or NULL, log_syslog
	 * (log-target: syslog) with log_facility (LOG_DAEMON by default), or
	 * neither (stderr); log_level an apex_log_level_t (info). */
	char *log_file;
	bool log_syslog;
	int log_facility;
	int log_level;
	/* dnstap (the dnstap: section, NSD's keys): the Unix socket of the
	 * collector, what is logged, and the identity and version sent
	 * (NULL: the host name, and "apexd VERSION"). */
	struct {
		bool enable;
		char *socket_path;
		bool log_queries, log_responses;
		char *identity, *version;
	} dnstap;
	/* TLS (NSD's keys): the server's key and certificate chain (PEM
	 * files, absolute paths; both or neither), the port of DNS over TLS
	 * and the one of transfers over TLS with client certificates (0:
	 * none), transfers only there (tls-auth-xfr-only), the CA bundle that
	 * peers' certificates are checked against (NULL: the system's), and
	 * the tls-auth: clauses the zones' entries name (the entries point
	 * into auths, which does not move once the file is read). */
	struct {
		char *service_key, *service_pem;
		unsigned port, auth_port;
		bool auth_xfr_only;
		char *cert_bundle;
		apex_tls_auth_t *auths;
		size_t auth_count;
	} tls;
	/* The Prometheus endpoint (metrics: ADDR[@PORT]), if metrics_set. */
	apex_listen_t metrics;
	bool metrics_set;
} apex_config_t;

/* Defaults: no listen address, no zone, everything optional off. */
void apex_config_init(apex_config_t *cfg);

/* Free everything cfg owns (cfg itself is the caller's). */
void apex_config_free(apex_config_t *cfg);

/*
 * Read the config file at path into cfg.  Relative file names in it are
 * taken relative to the directory of the config file.  On error returns
 * APEX_EINVAL (or -errno of a failed read, APEX_ENOMEM) and err holds
 * "FILE:LINE: reason".
 */
int apex_config_load(apex_config_t *cfg, const char *path, char *err, size_t err_size);

/* Add a listen address "ADDR[@PORT]" (IPv4 or IPv6 literal). */
int apex_config_add_listen(apex_config_t *cfg, const char *text, char *err, size_t err_size);

/* Forget the listen addresses (the command line's -l replaces the file's). */
void apex_config_clear_listens(apex_config_t *cfg);

/*
 * Add a zone.  A relative file is taken relative to base_dir (NULL: the
 * current directory).  A name served twice is an error.
 */
int apex_config_add_zone(apex_config_t *cfg, const char *name, const char *file,
			 const char *base_dir, char *err, size_t err_size);

/* The index in cfg->zones of the zone origin (wire format, compared
 * ASCII case-insensitively), or -1. */
long apex_config_find_zone(const apex_config_t *cfg, const uint8_t *origin);

/* The pattern named name, or NULL. */
const apex_zone_config_t *apex_config_pattern(const apex_config_t *cfg, const char *name);

/* Room made in cfg->zones for more entries at once: a catalog's members
 * are appended without moving the array (and faulting in fresh pages)
 * again and again.  APEX_OK or APEX_ENOMEM. */
int apex_config_reserve_zones(apex_config_t *cfg, size_t more);

/*
 * Add the zone origin (wire format) with the settings of pattern, one of
 * cfg's: its access lists (shared with the pattern, acls_shared) and
 * verification, and its file template with
 * "%s" replaced by the zone's name (without the final dot).  A catalog's
 * member (catalog/consumer.h), whose name the caller has checked against
 * the other zones.  A name whose text holds a '/' is refused: a file
 * name made of it could leave the directory.
 */
int apex_config_add_member(apex_config_t *cfg, const apex_zone_config_t *pattern,
			   const uint8_t *origin, char *err, size_t err_size);

/* Set the pid file (a relative path is taken from the current directory). */
int apex_config_set_pid_file(apex_config_t *cfg, const char *path);

/* Set the control socket path ("none" disables it; relative: from the current directory). */
int apex_config_set_control_socket(apex_config_t *cfg, const char *path);

/* Set the user (and group, "USER[:GROUP]") to run as, from -u. */
int apex_config_set_user(apex_config_t *cfg, const char *arg);

/* Add a zone from the command line's "ORIGIN=FILE". */
int apex_config_add_zone_arg(apex_config_t *cfg, const char *arg, char *err, size_t err_size);

/*
 * Final checks and derived values once the file and the command line
 * are in: NSID defaults to the identity.
 */
int apex_config_finish(apex_config_t *cfg, char *err, size_t err_size);

/* At least one listen address: what serving needs (apexd -t checks a
 * configuration without one).  Returns 0 or APEX_EINVAL with err. */
int apex_config_require_listen(const apex_config_t *cfg, char *err, size_t err_size);

/* Number of CPUs this process may run on (at least 1). */
unsigned apex_config_cpu_count(void);

#endif
