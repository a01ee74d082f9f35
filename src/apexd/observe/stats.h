/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-worker statistics: what `apexctl stats` reports and apexd logs at
 * shutdown.
 *
 * Each worker has its own block of counters, cache-line aligned and
 * written only by that worker (relaxed atomic stores: plain moves on
 * x86, and no data race for the thread that reads them).  Readers take a
 * snapshot of each worker and add them up; totals may be a few queries
 * apart from the sum of a later snapshot, never torn per counter.
 */
#ifndef APEXD_STATS_H
#define APEXD_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctl/buf.h"
#include "ctl/request.h"
#include "zone/zoneset.h"

/* rcode buckets: 0..23 (BADCOOKIE) one each, the last for all others. */
#define APEX_STATS_RCODES 25
/* qtype buckets: the common types one each (apex_stats_qtype_index()), the last for all others. */
#define APEX_STATS_QTYPES 24
/* recvmmsg batch fill buckets: 1, 2-7, 8-31, 32-63, 64 (full) datagrams. */
#define APEX_STATS_FILL_BUCKETS 5
/* Stall buckets (the time before a full batch): < 1 ms, < 10 ms, < 100 ms,
 * < 1 s, longer. */
#define APEX_STATS_STALL_BUCKETS 5

/* RSSAC002's message size histograms (RSSAC002v3 section 2.4): 16-byte
 * buckets, requests from "0-15" to "288-" (288 bytes or more), responses
 * from "0-15" to "4096-". */
#define APEX_STATS_REQUEST_SIZES 19
#define APEX_STATS_RESPONSE_SIZES 257
/* Queries counted per zone: by the zone's stats_slot (zone/zoneset.h);
 * the last bucket holds every zone whose slot is beyond the others. */
#define APEX_STATS_ZONES 1024
/* By transport (apex_transport_t) and by address family (0 IPv4, 1 IPv6). */
#define APEX_STATS_TRANSPORTS 2
#define APEX_STATS_FAMILIES 2
/* TLS handshakes failed, by reason (apex_stats_tls_failure_t). */
#define APEX_STATS_TLS_FAILURES 3

typedef enum apex_stats_tls_failure {
	APEX_STATS_TLS_PROTOCOL = 0,    /* not TLS, an alert, no common version or ALPN */
	APEX_STATS_TLS_CERTIFICATE = 1, /* the client certificate did not verify */
	APEX_STATS_TLS_TIMEOUT = 2,     /* not done within tcp-io-timeout */
} apex_stats_tls_failure_t;

typedef struct apex_worker_stats {
	atomic_uint_least64_t udp_queries;
	atomic_uint_least64_t tcp_queries;
	atomic_uint_least64_t rcode[APEX_STATS_RCODES]; /* responses by rcode */
	atomic_uint_least64_t qtype[APEX_STATS_QTYPES]; /* responses by query type */
	atomic_uint_least64_t truncated;                /* responses with TC */
	atomic_uint_least64_t dropped;                  /* queries not answered */
	atomic_uint_least64_t tcp_connections;          /* accepted and served */
	atomic_uint_least64_t tcp_rejected;             /* closed at once: tcp-max-connections */
	atomic_uint_least64_t tcp_timeouts;             /* closed by tcp-idle-timeout */
	/* closed at once: tcp-max-connections-per-client */
	atomic_uint_least64_t tcp_rejected_per_client;
	/* closed by tcp-io-timeout (message half received or sent) */
	atomic_uint_least64_t tcp_io_timeouts;
	atomic_uint_least64_t rrl_dropped;    /* UDP responses not sent: rate limited */
	atomic_uint_least64_t rrl_slipped;    /* rate-limited responses sent as TC replies */
	atomic_uint_least64_t cookie_client;  /* queries with a client cookie only */
	atomic_uint_least64_t cookie_valid;   /* queries with a valid server cookie */
	atomic_uint_least64_t cookie_invalid; /* queries with a server cookie that failed */
	atomic_uint_least64_t udp_batches;    /* recvmmsg calls that returned datagrams */
	atomic_uint_least64_t batch_fill[APEX_STATS_FILL_BUCKETS];
	atomic_uint_least64_t zone_pickups; /* new zonesets picked up */
	atomic_uint_least64_t lock_wait_ns; /* time spent in those pick-ups (the rwlock) */
	/* datagrams the kernel dropped for this worker's sockets, its
	 * receive queue full (SO_RXQ_OVFL) */
	atomic_uint_least64_t kernel_drops;
	/* how long the worker did not read a socket that had queries
	 * waiting: the time before each full batch, and the longest */
	atomic_uint_least64_t stalls[APEX_STATS_STALL_BUCKETS];
	atomic_uint_least64_t stall_max_ns;
	/* RSSAC002: the messages given to the engine and the responses
	 * sent, by transport and family, and their sizes */
	atomic_uint_least64_t received[APEX_STATS_TRANSPORTS][APEX_STATS_FAMILIES];
	atomic_uint_least64_t sent[APEX_STATS_TRANSPORTS][APEX_STATS_FAMILIES];
	atomic_uint_least64_t request_size[APEX_STATS_TRANSPORTS][APEX_STATS_REQUEST_SIZES];
	atomic_uint_least64_t response_size[APEX_STATS_TRANSPORTS][APEX_STATS_RESPONSE_SIZES];
	atomic_uint_least64_t request_bytes[APEX_STATS_TRANSPORTS];
	atomic_uint_least64_t response_bytes[APEX_STATS_TRANSPORTS];
	atomic_uint_least64_t edns;      /* answered queries with an OPT record */
	atomic_uint_least64_t dnssec_ok; /* ... with the DO bit */
	atomic_uint_least64_t zone_queries[APEX_STATS_ZONES]; /* answered, by zone slot */
	atomic_uint_least64_t dnstap_frames;  /* dnstap frames handed to the writer */
	atomic_uint_least64_t dnstap_dropped; /* ... not: its ring was full */
	/* AF_XDP (xdp.h): frames taken from the receive ring, answers put
	 * on the transmit ring, frames dropped as malformed, answers
	 * dropped with no free frame or no room in the transmit ring */
	atomic_uint_least64_t xdp_received;
	atomic_uint_least64_t xdp_sent;
	atomic_uint_least64_t xdp_invalid;
	atomic_uint_least64_t xdp_no_frame;
	/* TLS (the tls-port and the tls-auth-port): queries received over
	 * TLS (also counted in tcp_queries), handshakes done and of those
	 * resumed from a ticket, handshakes failed by reason (a protocol
	 * error, garbage, or an ALPN other than dot; a client certificate
	 * that does not verify; not finished within tcp-io-timeout) */
	atomic_uint_least64_t tls_queries;
	atomic_uint_least64_t tls_handshakes;
	atomic_uint_least64_t tls_resumed;
	atomic_uint_least64_t tls_failed[APEX_STATS_TLS_FAILURES];
	/* PROXY v2 (proxy-protocol-port): datagrams dropped and connections
	 * closed, by transport (APEX_STATS_PROXY_UDP, _TCP), for a header
	 * missing or malformed, or a sender allow-proxy does not list */
	atomic_uint_least64_t proxy_malformed[2];
	atomic_uint_least64_t proxy_not_allowed[2];
} apex_worker_stats_t;

#define APEX_STATS_PROXY_UDP 0
#define APEX_STATS_PROXY_TCP 1

/* Plain values of a snapshot or a sum. */
typedef struct apex_stats_totals {
	uint64_t udp_queries, tcp_queries;
	uint64_t rcode[APEX_STATS_RCODES];
	uint64_t qtype[APEX_STATS_QTYPES];
	uint64_t truncated, dropped;
	uint64_t tcp_connections, tcp_rejected, tcp_timeouts;
	uint64_t tcp_rejected_per_client, tcp_io_timeouts;
	uint64_t rrl_dropped, rrl_slipped;
	uint64_t cookie_client, cookie_valid, cookie_invalid;
	uint64_t udp_batches;
	uint64_t batch_fill[APEX_STATS_FILL_BUCKETS];
	uint64_t zone_pickups, lock_wait_ns;
	uint64_t kernel_drops;
	uint64_t stalls[APEX_STATS_STALL_BUCKETS];
	uint64_t stall_max_ns; /* in a sum: the longest of all */
	uint64_t received[APEX_STATS_TRANSPORTS][APEX_STATS_FAMILIES];
	uint64_t sent[APEX_STATS_TRANSPORTS][APEX_STATS_FAMILIES];
	uint64_t request_size[APEX_STATS_TRANSPORTS][APEX_STATS_REQUEST_SIZES];
	uint64_t response_size[APEX_STATS_TRANSPORTS][APEX_STATS_RESPONSE_SIZES];
	uint64_t request_bytes[APEX_STATS_TRANSPORTS], response_bytes[APEX_STATS_TRANSPORTS];
	uint64_t edns, dnssec_ok;
	uint64_t zone_queries[APEX_STATS_ZONES];
	uint64_t dnstap_frames, dnstap_dropped;
	uint64_t xdp_received, xdp_sent, xdp_invalid, xdp_no_frame;
	/* read from the kernel by the collector (xdp.h): frames the XDP
	 * program passed to the kernel on the worker's queue, and frames the
	 * kernel dropped for its AF_XDP socket (its rings full or empty) */
	uint64_t xdp_passed, xdp_kernel_drops;
	uint64_t tls_queries, tls_handshakes, tls_resumed;
	uint64_t tls_failed[APEX_STATS_TLS_FAILURES];
	uint64_t proxy_malformed[2], proxy_not_allowed[2];
} apex_stats_totals_t;

/* Add n to a counter written only by the calling worker. */
#define APEX_STAT_ADD(counter, n)                                                           \
	atomic_store_explicit(&(counter),                                                   \
			      atomic_load_explicit(&(counter), memory_order_relaxed) + (n), \
			      memory_order_relaxed)

/* The qtype bucket of a query type (the last bucket: any other type). */
static inline unsigned apex_stats_qtype_index(uint16_t qtype)
{
	switch (qtype) {
	case 1: return 0;    /* A */
	case 2: return 1;    /* NS */
	case 5: return 2;    /* CNAME */
	case 6: return 3;    /* SOA */
	case 12: return 4;   /* PTR */
	case 15: return 5;   /* MX */
	case 16: return 6;   /* TXT */
	case 28: return 7;   /* AAAA */
	case 33: return 8;   /* SRV */
	case 35: return 9;   /* NAPTR */
	case 43: return 10;  /* DS */
	case 46: return 11;  /* RRSIG */
	case 47: return 12;  /* NSEC */
	case 48: return 13;  /* DNSKEY */
	case 50: return 14;  /* NSEC3 */
	case 51: return 15;  /* NSEC3PARAM */
	case 52: return 16;  /* TLSA */
	case 64: return 17;  /* SVCB */
	case 65: return 18;  /* HTTPS */
	case 251: return 19; /* IXFR */
	case 252: return 20; /* AXFR */
	case 255: return 21; /* ANY */
	case 257: return 22; /* CAA */
	default: return APEX_STATS_QTYPES - 1;
	}
}

/* The recvmmsg fill bucket of a batch of n datagrams (n >= 1). */
static inline unsigned apex_stats_fill_index(unsigned n)
{
	return n <= 1 ? 0 : n < 8 ? 1 : n < 32 ? 2 : n < 64 ? 3 : 4;
}

/* The RSSAC002 size bucket of a request or response of size bytes. */
static inline unsigned apex_stats_request_size_index(size_t size)
{
	return size / 16 < APEX_STATS_REQUEST_SIZES ? (unsigned)(size / 16)
						    : APEX_STATS_REQUEST_SIZES - 1;
}

static inline unsigned apex_stats_response_size_index(size_t size)
{
	return size / 16 < APEX_STATS_RESPONSE_SIZES ? (unsigned)(size / 16)
						     : APEX_STATS_RESPONSE_SIZES - 1;
}

/* The per-zone bucket of a zone's stats_slot. */
static inline unsigned apex_stats_zone_index(uint32_t slot)
{
	return slot < APEX_STATS_ZONES - 1 ? slot : APEX_STATS_ZONES - 1;
}

/* Name of a qtype bucket ("A", ..., "other"). */
const char *apex_stats_qtype_name(unsigned index);

/* Name of an rcode bucket ("NOERROR", "RCODE7", ..., "other"); buf holds unnamed ones. */
const char *apex_stats_rcode_name(unsigned rcode, char *buf, size_t buf_size);

/* Name of a batch fill bucket ("1", "2-7", ...). */
const char *apex_stats_fill_name(unsigned index);

/* Name of a TLS failure reason (apex_stats_tls_failure_t): "protocol",
 * "certificate", "timeout". */
const char *apex_stats_tls_failure_name(unsigned index);

/* Name of RSSAC002 size bucket index of count ("0-15", ..., "288-"), in buf. */
const char *apex_stats_size_name(unsigned index, unsigned count, char *buf, size_t buf_size);

/* The names of the zones of the per-zone counters: names[slot] is the
 * origin's text ("example.") or NULL; count is at most APEX_STATS_ZONES. */
typedef struct apex_stats_zone_names {
	char **names; /* owned, with each name */
	unsigned count;
} apex_stats_zone_names_t;

/* Fill out from table's statistics slots; free with apex_stats_zone_names_free(). */
int apex_stats_zone_names(apex_zonetable_t *table, apex_stats_zone_names_t *out);
void apex_stats_zone_names_free(apex_stats_zone_names_t *names);

/* Read one worker's counters. */
void apex_stats_snapshot(const apex_worker_stats_t *stats, apex_stats_totals_t *out);

/* total += one */
void apex_stats_add(apex_stats_totals_t *total, const apex_stats_totals_t *one);

/* The counters of the threads beside the workers: zone transfers and
 * NOTIFY, in and out, by result (the transfer, notify and
 * outgoing-transfer threads), dnstap's writer, and the reloads and
 * transfers memory-limit refused. */
typedef struct apex_thread_stats {
	uint64_t in_ok, in_failed;                /* transfers received */
	uint64_t out_ok, out_refused, out_failed; /* transfers sent */
	/* of out_ok, the IXFRs, and of these those answered with the whole zone */
	uint64_t out_ixfr, out_ixfr_whole;
	uint64_t notify_in_accepted, notify_in_refused;
	uint64_t notify_in_dropped; /* unanswered: the secondary zones were being swapped */
	/* accepted, whose serial the primaries did not serve at the check it
	 * asked for; of those, still not after the rechecks (given up) */
	uint64_t notify_in_ahead, notify_in_ahead_given_up;
	uint64_t notify_out_ok, notify_out_failed;
	bool dnstap;                          /* dnstap is on: */
	uint64_t dnstap_written, dnstap_lost; /* frames written, and lost (no collector) */
	bool memory_limit;                    /* memory-limit is on: */
	uint64_t memory_limit_bytes;          /* the limit now */
	uint64_t memory_refused_reloads, memory_refused_transfers; /* builds it refused */
} apex_thread_stats_t;

/* The measurements of RSSAC002 (traffic-volume, traffic-sizes,
 * rcode-volume) under its own names, and t's queries by zone (zones:
 * NULL for none): JSON members of the total, or lines of text
 * (rssac002.c). */
void apex_stats_render_rssac002(apex_ctl_buf_t *b, apex_ctl_format_t format,
				const apex_stats_totals_t *t, const apex_stats_zone_names_t *zones);

/*
 * Render the statistics of count workers (per_worker[0..count)) and
 * their total in format (doc/control-protocol.md describes both), with
 * the RSSAC002 measurements and the queries of each zone in zones.
 */
void apex_stats_render(apex_ctl_buf_t *buf, apex_ctl_format_t format,
		       const apex_thread_stats_t *xfr, const apex_stats_zone_names_t *zones,
		       const apex_stats_totals_t *per_worker, unsigned count,
		       const apex_stats_totals_t *total);

/* The one-line summary apexd logs at shutdown. */
void apex_stats_summary(apex_ctl_buf_t *buf, const apex_stats_totals_t *total);

#endif
