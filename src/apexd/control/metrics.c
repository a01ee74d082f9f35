/* SPDX-License-Identifier: BSD-3-Clause */
/* apexd's metrics in the Prometheus text format. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: PACKAGE_VERSION */
#endif
#include "control/metrics.h"

#include <stdio.h>
#include <stdlib.h>

#include "dns/name.h"
#include "metrics/exposition.h"
#include "observe/stats.h"
#include "util/error.h"
#include "zone/page_discard.h"
#include "zones/verify_check.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static const char *const transport_label[APEX_STATS_TRANSPORTS] = { "udp", "tcp" };
static const char *const family_label[APEX_STATS_FAMILIES] = { "ipv4", "ipv6" };

/* A counter family with one sample per transport and family. */
static void by_transport_family(apex_ctl_buf_t *out, const char *name, const char *help,
				const uint64_t (*values)[APEX_STATS_FAMILIES])
{
	apex_metrics_family(out, name, "counter", help);
	for (unsigned x = 0; x < APEX_STATS_TRANSPORTS; x++) {
		for (unsigned f = 0; f < APEX_STATS_FAMILIES; f++) {
			apex_metrics_sample_t s;

			apex_metrics_sample_start(&s, out, name);
			apex_metrics_label(&s, "transport", transport_label[x]);
			apex_metrics_label(&s, "family", family_label[f]);
			apex_metrics_sample_end(&s, values[x][f]);
		}
	}
}

/* A histogram of message sizes by transport: RSSAC002's 16-byte buckets
 * as cumulative le buckets ("0-15" is le="15"), the last one +Inf. */
static void size_histogram(apex_ctl_buf_t *out, const char *name, const char *help,
			   const uint64_t *buckets, unsigned count, unsigned stride,
			   const uint64_t *bytes)
{
	char metric[96], le[16];

	apex_metrics_family(out, name, "histogram", help);
	for (unsigned x = 0; x < APEX_STATS_TRANSPORTS; x++) {
		const uint64_t *b = buckets + (size_t)x * stride;
		uint64_t cumulative = 0;
		apex_metrics_sample_t s;

		snprintf(metric, sizeof(metric), "%s_bucket", name);
		for (unsigned i = 0; i < count; i++) {
			cumulative += b[i];
			if (i + 1 < count)
				snprintf(le, sizeof(le), "%u", i * 16 + 15);
			else
				snprintf(le, sizeof(le), "+Inf");
			apex_metrics_sample_start(&s, out, metric);
			apex_metrics_label(&s, "transport", transport_label[x]);
			apex_metrics_label(&s, "le", le);
			apex_metrics_sample_end(&s, cumulative);
		}
		snprintf(metric, sizeof(metric), "%s_sum", name);
		apex_metrics_sample(out, metric, "transport", transport_label[x], bytes[x]);
		snprintf(metric, sizeof(metric), "%s_count", name);
		apex_metrics_sample(out, metric, "transport", transport_label[x], cumulative);
	}
}

/* The traffic: RSSAC002's volume, sizes and rcodes, and the rest of the query counters. */
static void render_traffic(apex_ctl_buf_t *out, const apex_stats_totals_t *t)
{
	char name[16];

	by_transport_family(out, "apex_queries_total",
			    "DNS messages received by the workers (RSSAC002 traffic-volume).",
			    t->received);
	by_transport_family(out, "apex_responses_total",
			    "DNS responses sent by the workers (RSSAC002 traffic-volume).",
			    t->sent);
	size_histogram(out, "apex_request_size_bytes",
		       "Sizes of the DNS messages received (RSSAC002 traffic-sizes).",
		       &t->request_size[0][0], APEX_STATS_REQUEST_SIZES, APEX_STATS_REQUEST_SIZES,
		       t->request_bytes);
	size_histogram(out, "apex_response_size_bytes",
		       "Sizes of the DNS responses sent (RSSAC002 traffic-sizes).",
		       &t->response_size[0][0], APEX_STATS_RESPONSE_SIZES,
		       APEX_STATS_RESPONSE_SIZES, t->response_bytes);
	apex_metrics_family(out, "apex_responses_by_rcode_total", "counter",
			    "Responses by rcode, before rate limiting (RSSAC002 rcode-volume).");
	for (unsigned r = 0; r < APEX_STATS_RCODES; r++) {
		if (t->rcode[r] != 0 || r == 0)
			apex_metrics_sample(out, "apex_responses_by_rcode_total", "rcode",
					    apex_stats_rcode_name(r, name, sizeof(name)),
					    t->rcode[r]);
	}
	apex_metrics_family(out, "apex_responses_by_qtype_total", "counter",
			    "Responses by the type of the query.");
	for (unsigned q = 0; q < APEX_STATS_QTYPES; q++) {
		if (t->qtype[q] != 0 || q == 0)
			apex_metrics_sample(out, "apex_responses_by_qtype_total", "qtype",
					    apex_stats_qtype_name(q), t->qtype[q]);
	}
	apex_metrics_family(out, "apex_edns_queries_total", "counter",
			    "Answered queries with an EDNS OPT record.");
	apex_metrics_sample(out, "apex_edns_queries_total", NULL, NULL, t->edns);
	apex_metrics_family(out, "apex_dnssec_ok_queries_total", "counter",
			    "Answered queries with the DO bit.");
	apex_metrics_sample(out, "apex_dnssec_ok_queries_total", NULL, NULL, t->dnssec_ok);
	apex_metrics_family(out, "apex_truncated_responses_total", "counter",
			    "Responses with the TC bit, rate-limiting slips included.");
	apex_metrics_sample(out, "apex_truncated_responses_total", NULL, NULL,
			    t->truncated + t->rrl_slipped);
	apex_metrics_family(out, "apex_dropped_queries_total", "counter",
			    "Messages not answered: malformed beyond a reply, or responses.");
	apex_metrics_sample(out, "apex_dropped_queries_total", NULL, NULL, t->dropped);
}

/*
 * A counter sample with at most two labels; a row with help starts its
 * family (HELP and TYPE), the rows after it without help add to it.
 */
typedef struct counter_row {
	const char *name, *help;
	const char *key1, *value1, *key2, *value2;
	uint64_t value;
} counter_row_t;

static void render_rows(apex_ctl_buf_t *out, const counter_row_t *rows, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		const counter_row_t *r = &rows[i];
		apex_metrics_sample_t s;

		if (r->help != NULL)
			apex_metrics_family(out, r->name, "counter", r->help);
		apex_metrics_sample_start(&s, out, r->name);
		if (r->key1 != NULL)
			apex_metrics_label(&s, r->key1, r->value1);
		if (r->key2 != NULL)
			apex_metrics_label(&s, r->key2, r->value2);
		apex_metrics_sample_end(&s, r->value);
	}
}

/* Rate limiting, cookies, TCP and the kernel's drops. */
static void render_limits(apex_ctl_buf_t *out, const apex_stats_totals_t *t)
{
	const char *rrl = "apex_rrl_actions_total", *cookie = "apex_cookie_queries_total";
	const char *tcp = "apex_tcp_connections_total", *timeout = "apex_tcp_timeouts_total";
	const char *xdp = "apex_xdp_frames_total", *proxy = "apex_proxy_rejected_total";
	const counter_row_t rows[] = {
		{ rrl, "UDP responses rate limited (response-rate limiting), by action.", "action",
		  "drop", NULL, NULL, t->rrl_dropped },
		{ rrl, NULL, "action", "slip", NULL, NULL, t->rrl_slipped },
		{ cookie, "Queries with a DNS cookie (RFC 7873), by what it held.", "cookie",
		  "client_only", NULL, NULL, t->cookie_client },
		{ cookie, NULL, "cookie", "valid", NULL, NULL, t->cookie_valid },
		{ cookie, NULL, "cookie", "invalid", NULL, NULL, t->cookie_invalid },
		{ tcp, "TCP connections: served, or closed at once by a limit.", "outcome",
		  "served", NULL, NULL, t->tcp_connections },
		{ tcp, NULL, "outcome", "rejected", NULL, NULL, t->tcp_rejected },
		{ tcp, NULL, "outcome", "rejected_per_client", NULL, NULL,
		  t->tcp_rejected_per_client },
		{ timeout, "TCP connections closed by a timeout.", "timeout", "idle", NULL, NULL,
		  t->tcp_timeouts },
		{ timeout, NULL, "timeout", "io", NULL, NULL, t->tcp_io_timeouts },
		{ "apex_kernel_drops_total",
		  "UDP datagrams the kernel dropped, a worker's receive queue full.", NULL, NULL,
		  NULL, NULL, t->kernel_drops },
		{ xdp,
		  "AF_XDP frames (xdp-interface): received, answers sent, dropped as "
		  "invalid, dropped with no free frame, passed to the kernel by the XDP "
		  "program, dropped by the kernel.",
		  "outcome", "received", NULL, NULL, t->xdp_received },
		{ xdp, NULL, "outcome", "sent", NULL, NULL, t->xdp_sent },
		{ xdp, NULL, "outcome", "invalid", NULL, NULL, t->xdp_invalid },
		{ xdp, NULL, "outcome", "no_frame", NULL, NULL, t->xdp_no_frame },
		{ xdp, NULL, "outcome", "passed", NULL, NULL, t->xdp_passed },
		{ xdp, NULL, "outcome", "kernel_drops", NULL, NULL, t->xdp_kernel_drops },
		{ proxy,
		  "PROXY v2 (proxy-protocol-port): datagrams dropped and connections closed, "
		  "for a header missing or malformed, or a sender allow-proxy does not list.",
		  "transport", "udp", "reason", "malformed", t->proxy_malformed[0] },
		{ proxy, NULL, "transport", "udp", "reason", "not_allowed",
		  t->proxy_not_allowed[0] },
		{ proxy, NULL, "transport", "tcp", "reason", "malformed", t->proxy_malformed[1] },
		{ proxy, NULL, "transport", "tcp", "reason", "not_allowed",
		  t->proxy_not_allowed[1] },
	};
	render_rows(out, rows, sizeof(rows) / sizeof(rows[0]));
}

/* DNS over TLS and transfers over TLS (the tls-port and the
 * tls-auth-port): queries, handshakes, and handshakes failed by reason. */
static void render_tls(apex_ctl_buf_t *out, const apex_stats_totals_t *t)
{
	const char *failures = "apex_tls_handshake_failures_total";
	const counter_row_t rows[] = {
		{ "apex_tls_queries_total",
		  "DNS messages received over TLS (counted with transport tcp too).", NULL, NULL,
		  NULL, NULL, t->tls_queries },
		{ "apex_tls_handshakes_total", "TLS handshakes completed, resumed ones included.",
		  NULL, NULL, NULL, NULL, t->tls_handshakes },
		{ "apex_tls_resumed_handshakes_total",
		  "TLS handshakes completed that resumed a session from a ticket.", NULL, NULL,
		  NULL, NULL, t->tls_resumed },
		{ failures,
		  "TLS handshakes failed: not TLS, an alert or no common version or ALPN "
		  "(protocol), a client certificate that did not verify (certificate), not done "
		  "within tcp-io-timeout (timeout).",
		  "reason", apex_stats_tls_failure_name(APEX_STATS_TLS_PROTOCOL), NULL, NULL,
		  t->tls_failed[APEX_STATS_TLS_PROTOCOL] },
		{ failures, NULL, "reason", apex_stats_tls_failure_name(APEX_STATS_TLS_CERTIFICATE),
		  NULL, NULL, t->tls_failed[APEX_STATS_TLS_CERTIFICATE] },
		{ failures, NULL, "reason", apex_stats_tls_failure_name(APEX_STATS_TLS_TIMEOUT),
		  NULL, NULL, t->tls_failed[APEX_STATS_TLS_TIMEOUT] },
	};
	render_rows(out, rows, sizeof(rows) / sizeof(rows[0]));
}

/* dnstap's frames: handed to the writer or dropped by the workers,
 * written or lost by the writer. */
static void render_dnstap(apex_ctl_buf_t *out, const apex_stats_totals_t *t,
			  const apex_thread_stats_t *x)
{
	const char *frames = "apex_dnstap_frames_total";
	const counter_row_t rows[] = {
		{ frames,
		  "dnstap frames: queued by the workers, dropped (ring full), written to the "
		  "collector, lost (no collector).",
		  "outcome", "queued", NULL, NULL, t->dnstap_frames },
		{ frames, NULL, "outcome", "dropped", NULL, NULL, t->dnstap_dropped },
		{ frames, NULL, "outcome", "written", NULL, NULL, x->dnstap_written },
		{ frames, NULL, "outcome", "lost", NULL, NULL, x->dnstap_lost },
	};
	if (x->dnstap)
		render_rows(out, rows, sizeof(rows) / sizeof(rows[0]));
}

/* Each worker's queries, to see how the kernel spreads them. */
static void render_workers(apex_ctl_buf_t *out, const apex_stats_totals_t *per, unsigned n)
{
	char index[16];

	apex_metrics_family(out, "apex_worker_queries_total", "counter",
			    "DNS messages received, by worker thread.");
	for (unsigned w = 0; w < n; w++) {
		snprintf(index, sizeof(index), "%u", w);
		apex_metrics_sample(out, "apex_worker_queries_total", "worker", index,
				    per[w].udp_queries + per[w].tcp_queries);
	}
}

/* What each zone served is: its version's serial and state, its size,
 * and when it was loaded (RSSAC002's load-time is the time from a serial's
 * publication to its load). */
static uint64_t zone_serial(const apex_zone_t *z)
{
	return z->serial;
}

static uint64_t zone_expired(const apex_zone_t *z)
{
	return atomic_load(&z->expired) ? 1 : 0;
}

static uint64_t zone_records(const apex_zone_t *z)
{
	return z->record_count;
}

static uint64_t zone_memory(const apex_zone_t *z)
{
	return apex_zone_memory(z); /* less the node pages given back */
}

static uint64_t zone_loaded_at(const apex_zone_t *z)
{
	return (uint64_t)z->loaded_at.tv_sec;
}

static const struct {
	const char *name, *help;
	uint64_t (*value)(const apex_zone_t *zone);
} zone_gauges[] = {
	{ "apex_zone_serial", "The SOA serial of each zone served.", zone_serial },
	{ "apex_zone_expired",
	  "1 for a secondary zone past its SOA expire time (answered SERVFAIL).", zone_expired },
	{ "apex_zone_records", "Records of the version served.", zone_records },
	{ "apex_zone_memory_bytes", "Memory of the version served.", zone_memory },
	{ "apex_zone_loaded_timestamp_seconds",
	  "When the version served was loaded or transferred (Unix time).", zone_loaded_at },
};

/* Queries per zone (by statistics slot), and the zone gauges above. */
static int render_zones(apex_ctl_buf_t *out, const apex_command_context_t *ctx,
			const apex_stats_totals_t *t)
{
	apex_stats_zone_names_t names;
	char text[APEX_NAME_MAX * 4 + 1];

	if (apex_stats_zone_names(&ctx->server->zonetable, &names) != APEX_OK)
		return APEX_ENOMEM;
	apex_metrics_family(out, "apex_zone_queries_total", "counter",
			    "Answered queries by the zone they were answered from.");
	for (unsigned z = 0; z < names.count; z++) {
		if (names.names[z] != NULL)
			apex_metrics_sample(out, "apex_zone_queries_total", "zone", names.names[z],
					    t->zone_queries[z]);
	}
	apex_stats_zone_names_free(&names);

	apex_zoneset_t *set = apex_zonetable_acquire(&ctx->server->zonetable, NULL);
	const apex_zone_t **zones = malloc((set->count + 1) * sizeof(*zones));
	if (zones == NULL) {
		apex_zoneset_release(set);
		return APEX_ENOMEM;
	}
	apex_zoneset_list(set, zones);
	for (size_t g = 0; g < sizeof(zone_gauges) / sizeof(zone_gauges[0]); g++) {
		apex_metrics_family(out, zone_gauges[g].name, "gauge", zone_gauges[g].help);
		for (size_t i = 0; i < set->count; i++)
			apex_metrics_sample(out, zone_gauges[g].name, "zone",
					    apex_name_to_str(zones[i]->origin, text, sizeof(text)),
					    zone_gauges[g].value(zones[i]));
	}
	apex_metrics_family(out, "apex_zones_served", "gauge", "Zones served.");
	apex_metrics_sample(out, "apex_zones_served", NULL, NULL, set->count);
	free(zones);
	apex_zoneset_release(set);
	return APEX_OK;
}

/* Transfers and NOTIFY, in and out. */
static void render_transfers(apex_ctl_buf_t *out, const apex_thread_stats_t *x)
{
	const char *xfr = "apex_transfers_total", *notify = "apex_notifies_total";
	const char *dir = "direction", *res = "result";
	const counter_row_t rows[] = {
		{ xfr, "Zone transfers (AXFR and IXFR), by direction and result.", dir, "in", res,
		  "ok", x->in_ok },
		{ xfr, NULL, dir, "in", res, "failed", x->in_failed },
		{ xfr, NULL, dir, "out", res, "ok", x->out_ok },
		{ xfr, NULL, dir, "out", res, "refused", x->out_refused },
		{ xfr, NULL, dir, "out", res, "failed", x->out_failed },
		{ "apex_ixfr_out_total",
		  "IXFR requests answered, by the answer: change sets from the journal (or the "
		  "SOA alone, when up to date), or the whole zone (the journal did not hold the "
		  "secondary's serial).",
		  "answer", "incremental", NULL, NULL, x->out_ixfr - x->out_ixfr_whole },
		{ "apex_ixfr_out_total", NULL, "answer", "whole", NULL, NULL, x->out_ixfr_whole },
		{ notify, "NOTIFY messages, by direction and result.", dir, "in", res, "accepted",
		  x->notify_in_accepted },
		{ notify, NULL, dir, "in", res, "refused", x->notify_in_refused },
		{ notify, NULL, dir, "in", res, "dropped", x->notify_in_dropped },
		{ notify, NULL, dir, "out", res, "ok", x->notify_out_ok },
		{ notify, NULL, dir, "out", res, "failed", x->notify_out_failed },
		{ "apex_notifies_ahead_total",
		  "NOTIFYs accepted whose serial the primaries did not serve yet at the check "
		  "it asked for (the zone is checked again at its SOA retry interval).",
		  NULL, NULL, NULL, NULL, x->notify_in_ahead },
		{ "apex_notifies_ahead_given_up_total",
		  "NOTIFYs whose serial the primaries still did not serve after the rechecks "
		  "(the zone left to its refresh timer).",
		  NULL, NULL, NULL, NULL, x->notify_in_ahead_given_up },
	};
	render_rows(out, rows, sizeof(rows) / sizeof(rows[0]));
}

/* memory-limit: the limit, and the builds it refused. */
static void render_memory_limit(apex_ctl_buf_t *out, const apex_thread_stats_t *x)
{
	const char *refused = "apex_memory_limit_refusals_total";
	const counter_row_t rows[] = {
		{ refused,
		  "Reloads (and zones added) and transfers refused by memory-limit: their "
		  "estimated peak would have crossed it.",
		  "kind", "reload", NULL, NULL, x->memory_refused_reloads },
		{ refused, NULL, "kind", "transfer", NULL, NULL, x->memory_refused_transfers },
	};

	if (!x->memory_limit)
		return;
	apex_metrics_family(out, "apex_memory_limit_bytes", "gauge",
			    "memory-limit now, in bytes (a percentage taken of the cgroup's).");
	apex_metrics_sample(out, "apex_memory_limit_bytes", NULL, NULL, x->memory_limit_bytes);
	render_rows(out, rows, sizeof(rows) / sizeof(rows[0]));
}

/* Zone verifiers (verifier:): their verdicts, and those running. */
static void render_verifiers(apex_ctl_buf_t *out)
{
	const char *runs = "apex_zone_verifications_total";
	apexd_verify_totals_t t;

	apexd_verify_totals(&t);
	const counter_row_t rows[] = {
		{ runs,
		  "Versions offered to a zone's verifier before being served, by result: "
		  "passed (served), failed and timed_out (not served), not_run (the verifier "
		  "could not be started: not served).",
		  "result", "passed", NULL, NULL, t.passed },
		{ runs, NULL, "result", "failed", NULL, NULL, t.failed },
		{ runs, NULL, "result", "timed_out", NULL, NULL, t.timed_out },
		{ runs, NULL, "result", "not_run", NULL, NULL, t.not_run },
	};
	render_rows(out, rows, sizeof(rows) / sizeof(rows[0]));
	apex_metrics_family(out, "apex_zone_verifiers_running", "gauge",
			    "Zone verifiers running now (at most verifier-count).");
	apex_metrics_sample(out, "apex_zone_verifiers_running", NULL, NULL, t.running);
}

int apex_metrics_render(const apex_command_context_t *ctx, apex_ctl_buf_t *out)
{
	unsigned n = ctx->server->worker_count;
	apex_stats_totals_t *per = calloc(n + 1, sizeof(*per));
	apex_thread_stats_t xfr;
	apex_metrics_sample_t s;

	if (per == NULL)
		return APEX_ENOMEM;
	apex_server_stats(ctx->server, per, &per[n]);
	apex_command_thread_stats(ctx, &xfr);

	apex_metrics_family(out, "apex_build_info", "gauge", "apexd's version (always 1).");
	apex_metrics_sample(out, "apex_build_info", "version", PACKAGE_VERSION, 1);
	apex_metrics_family(out, "apex_uptime_seconds", "gauge", "Seconds since apexd started.");
	apex_metrics_sample_start(&s, out, "apex_uptime_seconds");
	apex_metrics_sample_end_real(&s, apex_server_uptime(ctx->server));
	apex_metrics_family(out, "apex_workers", "gauge", "Worker threads answering queries.");
	apex_metrics_sample(out, "apex_workers", NULL, NULL, n);
	render_traffic(out, &per[n]);
	render_limits(out, &per[n]);
	render_tls(out, &per[n]);
	render_workers(out, per, n);
	int rc = render_zones(out, ctx, &per[n]);
	render_transfers(out, &xfr);
	render_dnstap(out, &per[n], &xfr);
	render_memory_limit(out, &xfr);
	render_verifiers(out);
	free(per);
	return rc == APEX_OK && !out->failed ? APEX_OK : APEX_ENOMEM;
}
