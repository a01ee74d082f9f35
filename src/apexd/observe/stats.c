/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-worker statistics: snapshots, totals and their text and JSON forms. */
#include "observe/stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/json.h"
#include "dns/name.h"
#include "util/error.h"

static const char *const qtype_names[APEX_STATS_QTYPES] = {
	"A",    "NS",    "CNAME", "SOA",   "PTR",  "MX",     "TXT",   "AAAA",
	"SRV",  "NAPTR", "DS",    "RRSIG", "NSEC", "DNSKEY", "NSEC3", "NSEC3PARAM",
	"TLSA", "SVCB",  "HTTPS", "IXFR",  "AXFR", "ANY",    "CAA",   "other",
};

static const char *const rcode_names[APEX_STATS_RCODES] = {
	[0] = "NOERROR",    [1] = "FORMERR",
	[2] = "SERVFAIL",   [3] = "NXDOMAIN",
	[4] = "NOTIMP",     [5] = "REFUSED",
	[6] = "YXDOMAIN",   [7] = "YXRRSET",
	[8] = "NXRRSET",    [9] = "NOTAUTH",
	[10] = "NOTZONE",   [16] = "BADVERS",
	[23] = "BADCOOKIE", [APEX_STATS_RCODES - 1] = "other",
};

static const char *const fill_names[APEX_STATS_FILL_BUCKETS] = {
	"1", "2-7", "8-31", "32-63", "64",
};

static const char *const stall_names[APEX_STATS_STALL_BUCKETS] = {
	"under_1ms", "1ms_10ms", "10ms_100ms", "100ms_1s", "1s_or_more",
};

static const char *const tls_failure_names[APEX_STATS_TLS_FAILURES] = {
	[APEX_STATS_TLS_PROTOCOL] = "protocol",
	[APEX_STATS_TLS_CERTIFICATE] = "certificate",
	[APEX_STATS_TLS_TIMEOUT] = "timeout",
};

const char *apex_stats_qtype_name(unsigned index)
{
	return index < APEX_STATS_QTYPES ? qtype_names[index] : "other";
}

const char *apex_stats_rcode_name(unsigned rcode, char *buf, size_t buf_size)
{
	if (rcode >= APEX_STATS_RCODES)
		rcode = APEX_STATS_RCODES - 1;
	if (rcode_names[rcode] != NULL)
		return rcode_names[rcode];
	snprintf(buf, buf_size, "RCODE%u", rcode);
	return buf;
}

const char *apex_stats_fill_name(unsigned index)
{
	return index < APEX_STATS_FILL_BUCKETS ? fill_names[index] : "?";
}

const char *apex_stats_tls_failure_name(unsigned index)
{
	return index < APEX_STATS_TLS_FAILURES ? tls_failure_names[index] : "?";
}

void apex_stats_snapshot(const apex_worker_stats_t *s, apex_stats_totals_t *out)
{
#define GET(field) out->field = atomic_load_explicit(&s->field, memory_order_relaxed)
	GET(udp_queries);
	GET(tcp_queries);
	GET(truncated);
	GET(dropped);
	GET(tcp_connections);
	GET(tcp_rejected);
	GET(tcp_timeouts);
	GET(tcp_rejected_per_client);
	GET(tcp_io_timeouts);
	GET(rrl_dropped);
	GET(rrl_slipped);
	GET(cookie_client);
	GET(cookie_valid);
	GET(cookie_invalid);
	GET(udp_batches);
	GET(zone_pickups);
	GET(lock_wait_ns);
	GET(kernel_drops);
	GET(stall_max_ns);
	for (unsigned i = 0; i < APEX_STATS_STALL_BUCKETS; i++)
		GET(stalls[i]);
	for (unsigned i = 0; i < APEX_STATS_RCODES; i++)
		GET(rcode[i]);
	for (unsigned i = 0; i < APEX_STATS_QTYPES; i++)
		GET(qtype[i]);
	for (unsigned i = 0; i < APEX_STATS_FILL_BUCKETS; i++)
		GET(batch_fill[i]);
	for (unsigned t = 0; t < APEX_STATS_TRANSPORTS; t++) {
		for (unsigned f = 0; f < APEX_STATS_FAMILIES; f++) {
			GET(received[t][f]);
			GET(sent[t][f]);
		}
		for (unsigned i = 0; i < APEX_STATS_REQUEST_SIZES; i++)
			GET(request_size[t][i]);
		for (unsigned i = 0; i < APEX_STATS_RESPONSE_SIZES; i++)
			GET(response_size[t][i]);
		GET(request_bytes[t]);
		GET(response_bytes[t]);
	}
	GET(edns);
	GET(dnssec_ok);
	GET(dnstap_frames);
	GET(dnstap_dropped);
	GET(xdp_received);
	GET(xdp_sent);
	GET(xdp_invalid);
	GET(xdp_no_frame);
	GET(tls_queries);
	GET(tls_handshakes);
	GET(tls_resumed);
	for (unsigned i = 0; i < APEX_STATS_TLS_FAILURES; i++)
		GET(tls_failed[i]);
	for (unsigned i = 0; i < 2; i++) {
		GET(proxy_malformed[i]);
		GET(proxy_not_allowed[i]);
	}
	out->xdp_passed = out->xdp_kernel_drops = 0; /* the collector reads them (xdp.h) */
	for (unsigned i = 0; i < APEX_STATS_ZONES; i++)
		GET(zone_queries[i]);
#undef GET
}

void apex_stats_add(apex_stats_totals_t *t, const apex_stats_totals_t *one)
{
	t->udp_queries += one->udp_queries;
	t->tcp_queries += one->tcp_queries;
	t->truncated += one->truncated;
	t->dropped += one->dropped;
	t->tcp_connections += one->tcp_connections;
	t->tcp_rejected += one->tcp_rejected;
	t->tcp_timeouts += one->tcp_timeouts;
	t->tcp_rejected_per_client += one->tcp_rejected_per_client;
	t->tcp_io_timeouts += one->tcp_io_timeouts;
	t->rrl_dropped += one->rrl_dropped;
	t->rrl_slipped += one->rrl_slipped;
	t->cookie_client += one->cookie_client;
	t->cookie_valid += one->cookie_valid;
	t->cookie_invalid += one->cookie_invalid;
	t->udp_batches += one->udp_batches;
	t->zone_pickups += one->zone_pickups;
	t->lock_wait_ns += one->lock_wait_ns;
	t->kernel_drops += one->kernel_drops;
	t->xdp_received += one->xdp_received;
	t->xdp_sent += one->xdp_sent;
	t->xdp_invalid += one->xdp_invalid;
	t->xdp_no_frame += one->xdp_no_frame;
	t->xdp_passed += one->xdp_passed;
	t->xdp_kernel_drops += one->xdp_kernel_drops;
	t->tls_queries += one->tls_queries;
	t->tls_handshakes += one->tls_handshakes;
	t->tls_resumed += one->tls_resumed;
	for (unsigned i = 0; i < APEX_STATS_TLS_FAILURES; i++)
		t->tls_failed[i] += one->tls_failed[i];
	for (unsigned i = 0; i < 2; i++) {
		t->proxy_malformed[i] += one->proxy_malformed[i];
		t->proxy_not_allowed[i] += one->proxy_not_allowed[i];
	}
	for (unsigned i = 0; i < APEX_STATS_STALL_BUCKETS; i++)
		t->stalls[i] += one->stalls[i];
	if (one->stall_max_ns > t->stall_max_ns)
		t->stall_max_ns = one->stall_max_ns;
	for (unsigned i = 0; i < APEX_STATS_RCODES; i++)
		t->rcode[i] += one->rcode[i];
	for (unsigned i = 0; i < APEX_STATS_QTYPES; i++)
		t->qtype[i] += one->qtype[i];
	for (unsigned i = 0; i < APEX_STATS_FILL_BUCKETS; i++)
		t->batch_fill[i] += one->batch_fill[i];
	for (unsigned x = 0; x < APEX_STATS_TRANSPORTS; x++) {
		for (unsigned f = 0; f < APEX_STATS_FAMILIES; f++) {
			t->received[x][f] += one->received[x][f];
			t->sent[x][f] += one->sent[x][f];
		}
		for (unsigned i = 0; i < APEX_STATS_REQUEST_SIZES; i++)
			t->request_size[x][i] += one->request_size[x][i];
		for (unsigned i = 0; i < APEX_STATS_RESPONSE_SIZES; i++)
			t->response_size[x][i] += one->response_size[x][i];
		t->request_bytes[x] += one->request_bytes[x];
		t->response_bytes[x] += one->response_bytes[x];
	}
	t->edns += one->edns;
	t->dnssec_ok += one->dnssec_ok;
	t->dnstap_frames += one->dnstap_frames;
	t->dnstap_dropped += one->dnstap_dropped;
	for (unsigned i = 0; i < APEX_STATS_ZONES; i++)
		t->zone_queries[i] += one->zone_queries[i];
}

const char *apex_stats_size_name(unsigned index, unsigned count, char *buf, size_t buf_size)
{
	if (index + 1 < count)
		snprintf(buf, buf_size, "%u-%u", index * 16, index * 16 + 15);
	else
		snprintf(buf, buf_size, "%u-", index * 16);
	return buf;
}

int apex_stats_zone_names(apex_zonetable_t *table, apex_stats_zone_names_t *out)
{
	uint32_t count = apex_zonetable_slot_count(table);

	out->count = count < APEX_STATS_ZONES ? count : APEX_STATS_ZONES;
	out->names = calloc(out->count > 0 ? out->count : 1, sizeof(*out->names));
	if (out->names == NULL)
		return APEX_ENOMEM;
	for (uint32_t slot = 0; slot < out->count; slot++) {
		uint8_t origin[APEX_NAME_MAX];
		char text[APEX_NAME_MAX * 4 + 1];

		if (slot == APEX_STATS_ZONES - 1 && count > APEX_STATS_ZONES)
			snprintf(text, sizeof(text), "(other zones)");
		else if (!apex_zonetable_slot_origin(table, slot, origin))
			continue;
		else
			apex_name_to_str(origin, text, sizeof(text));
		if ((out->names[slot] = strdup(text)) == NULL) {
			apex_stats_zone_names_free(out);
			return APEX_ENOMEM;
		}
	}
	return APEX_OK;
}

void apex_stats_zone_names_free(apex_stats_zone_names_t *names)
{
	for (unsigned i = 0; i < names->count; i++)
		free(names->names[i]);
	free(names->names);
	names->names = NULL;
	names->count = 0;
}

static uint64_t udp_datagrams(const apex_stats_totals_t *t)
{
	return t->udp_queries;
}

static void render_json_one(apex_ctl_buf_t *b, const apex_stats_totals_t *t)
{
	char name[16];
	bool first;

	apex_ctl_buf_printf(b,
			    "{\"queries\":%" PRIu64 ",\"udp\":%" PRIu64 ",\"tcp\":%" PRIu64
			    ",\"truncated\":%" PRIu64 ",\"dropped\":%" PRIu64,
			    t->udp_queries + t->tcp_queries, t->udp_queries, t->tcp_queries,
			    t->truncated, t->dropped);
	apex_ctl_buf_puts(b, ",\"rcode\":{");
	first = true;
	for (unsigned r = 0; r < APEX_STATS_RCODES; r++) {
		if (t->rcode[r] == 0)
			continue;
		apex_ctl_buf_printf(b, "%s\"%s\":%" PRIu64, first ? "" : ",",
				    apex_stats_rcode_name(r, name, sizeof(name)), t->rcode[r]);
		first = false;
	}
	apex_ctl_buf_puts(b, "},\"qtype\":{");
	first = true;
	for (unsigned q = 0; q < APEX_STATS_QTYPES; q++) {
		if (t->qtype[q] == 0)
			continue;
		apex_ctl_buf_printf(b, "%s\"%s\":%" PRIu64, first ? "" : ",",
				    apex_stats_qtype_name(q), t->qtype[q]);
		first = false;
	}
	apex_ctl_buf_printf(b,
			    "},\"tcp_connections\":%" PRIu64 ",\"tcp_rejected\":%" PRIu64
			    ",\"tcp_timeouts\":%" PRIu64 ",\"udp_batches\":%" PRIu64
			    ",\"batch_fill_mean\":%.2f,\"batch_fill\":{",
			    t->tcp_connections, t->tcp_rejected, t->tcp_timeouts, t->udp_batches,
			    t->udp_batches > 0 ? (double)udp_datagrams(t) / (double)t->udp_batches
					       : 0.0);
	for (unsigned i = 0; i < APEX_STATS_FILL_BUCKETS; i++)
		apex_ctl_buf_printf(b, "%s\"%s\":%" PRIu64, i == 0 ? "" : ",", fill_names[i],
				    t->batch_fill[i]);
	apex_ctl_buf_printf(b, "},\"zone_pickups\":%" PRIu64 ",\"lock_wait_ns\":%" PRIu64,
			    t->zone_pickups, t->lock_wait_ns);
	apex_ctl_buf_printf(
		b, ",\"kernel_drops\":%" PRIu64 ",\"stall_max_ns\":%" PRIu64 ",\"stalls\":{",
		t->kernel_drops, t->stall_max_ns);
	for (unsigned i = 0; i < APEX_STATS_STALL_BUCKETS; i++)
		apex_ctl_buf_printf(b, "%s\"%s\":%" PRIu64, i == 0 ? "" : ",", stall_names[i],
				    t->stalls[i]);
	apex_ctl_buf_puts(b, "}");
	apex_ctl_buf_printf(b,
			    ",\"tcp_rejected_per_client\":%" PRIu64 ",\"tcp_io_timeouts\":%" PRIu64
			    ",\"rrl_dropped\":%" PRIu64 ",\"rrl_slipped\":%" PRIu64
			    ",\"cookie_client\":%" PRIu64 ",\"cookie_valid\":%" PRIu64
			    ",\"cookie_invalid\":%" PRIu64 ",\"edns\":%" PRIu64
			    ",\"dnssec_ok\":%" PRIu64 ",\"dnstap_frames\":%" PRIu64
			    ",\"dnstap_dropped\":%" PRIu64,
			    t->tcp_rejected_per_client, t->tcp_io_timeouts, t->rrl_dropped,
			    t->rrl_slipped, t->cookie_client, t->cookie_valid, t->cookie_invalid,
			    t->edns, t->dnssec_ok, t->dnstap_frames, t->dnstap_dropped);
	apex_ctl_buf_printf(b,
			    ",\"proxy_rejected\":{\"udp\":{\"malformed\":%" PRIu64
			    ",\"not_allowed\":%" PRIu64 "},\"tcp\":{\"malformed\":%" PRIu64
			    ",\"not_allowed\":%" PRIu64 "}}",
			    t->proxy_malformed[0], t->proxy_not_allowed[0], t->proxy_malformed[1],
			    t->proxy_not_allowed[1]);
	apex_ctl_buf_printf(b,
			    ",\"xdp\":{\"received\":%" PRIu64 ",\"sent\":%" PRIu64
			    ",\"invalid\":%" PRIu64 ",\"no_frame\":%" PRIu64 ",\"passed\":%" PRIu64
			    ",\"kernel_drops\":%" PRIu64 "}",
			    t->xdp_received, t->xdp_sent, t->xdp_invalid, t->xdp_no_frame,
			    t->xdp_passed, t->xdp_kernel_drops);
	apex_ctl_buf_printf(b,
			    ",\"tls\":{\"queries\":%" PRIu64 ",\"handshakes\":%" PRIu64
			    ",\"resumed\":%" PRIu64 ",\"failed\":{",
			    t->tls_queries, t->tls_handshakes, t->tls_resumed);
	for (unsigned i = 0; i < APEX_STATS_TLS_FAILURES; i++)
		apex_ctl_buf_printf(b, "%s\"%s\":%" PRIu64, i == 0 ? "" : ",", tls_failure_names[i],
				    t->tls_failed[i]);
	apex_ctl_buf_puts(b, "}}}");
}

static void render_text_one(apex_ctl_buf_t *b, const char *label, const apex_stats_totals_t *t)
{
	char name[16];

	apex_ctl_buf_printf(b, "%s:\n", label);
	apex_ctl_buf_printf(b, "  queries: %" PRIu64 " (udp %" PRIu64 ", tcp %" PRIu64 ")\n",
			    t->udp_queries + t->tcp_queries, t->udp_queries, t->tcp_queries);
	apex_ctl_buf_puts(b, "  rcode:");
	for (unsigned r = 0; r < APEX_STATS_RCODES; r++) {
		if (t->rcode[r] != 0)
			apex_ctl_buf_printf(b, " %s=%" PRIu64,
					    apex_stats_rcode_name(r, name, sizeof(name)),
					    t->rcode[r]);
	}
	apex_ctl_buf_puts(b, "\n  qtype:");
	for (unsigned q = 0; q < APEX_STATS_QTYPES; q++) {
		if (t->qtype[q] != 0)
			apex_ctl_buf_printf(b, " %s=%" PRIu64, apex_stats_qtype_name(q),
					    t->qtype[q]);
	}
	apex_ctl_buf_printf(b, "\n  truncated: %" PRIu64 "\n  dropped: %" PRIu64 "\n", t->truncated,
			    t->dropped);
	apex_ctl_buf_printf(b, "  edns: %" PRIu64 " (DO bit %" PRIu64 ")\n", t->edns, t->dnssec_ok);
	apex_ctl_buf_printf(b, "  dnstap frames: %" PRIu64 " (dropped, ring full: %" PRIu64 ")\n",
			    t->dnstap_frames, t->dnstap_dropped);
	apex_ctl_buf_printf(
		b, "  tcp connections: %" PRIu64 " (rejected %" PRIu64 ", timed out %" PRIu64 ")\n",
		t->tcp_connections, t->tcp_rejected, t->tcp_timeouts);
	apex_ctl_buf_printf(
		b, "  tcp rejected per client: %" PRIu64 ", tcp i/o timeouts: %" PRIu64 "\n",
		t->tcp_rejected_per_client, t->tcp_io_timeouts);
	apex_ctl_buf_printf(b, "  rrl: dropped %" PRIu64 ", slipped %" PRIu64 "\n", t->rrl_dropped,
			    t->rrl_slipped);
	apex_ctl_buf_printf(
		b, "  cookies: client only %" PRIu64 ", valid %" PRIu64 ", invalid %" PRIu64 "\n",
		t->cookie_client, t->cookie_valid, t->cookie_invalid);
	apex_ctl_buf_printf(
		b, "  recvmmsg batches: %" PRIu64 ", mean fill %.2f, fill", t->udp_batches,
		t->udp_batches > 0 ? (double)udp_datagrams(t) / (double)t->udp_batches : 0.0);
	for (unsigned i = 0; i < APEX_STATS_FILL_BUCKETS; i++)
		apex_ctl_buf_printf(b, " %s=%" PRIu64, fill_names[i], t->batch_fill[i]);
	apex_ctl_buf_printf(b, "\n  lock wait: %.6f s over %" PRIu64 " zone pick-ups\n",
			    (double)t->lock_wait_ns / 1e9, t->zone_pickups);
	apex_ctl_buf_printf(b, "  kernel drops (receive queue full): %" PRIu64 "\n",
			    t->kernel_drops);
	if (t->proxy_malformed[0] + t->proxy_malformed[1] + t->proxy_not_allowed[0] +
		    t->proxy_not_allowed[1] >
	    0)
		apex_ctl_buf_printf(b,
				    "  proxy protocol rejected: udp malformed %" PRIu64
				    ", not allowed %" PRIu64 "; tcp malformed %" PRIu64
				    ", not allowed %" PRIu64 "\n",
				    t->proxy_malformed[0], t->proxy_not_allowed[0],
				    t->proxy_malformed[1], t->proxy_not_allowed[1]);
	if (t->xdp_received + t->xdp_passed + t->xdp_kernel_drops > 0)
		apex_ctl_buf_printf(b,
				    "  xdp: received %" PRIu64 ", sent %" PRIu64
				    ", invalid %" PRIu64 ", no frame %" PRIu64
				    ", passed to the kernel %" PRIu64 ", kernel drops %" PRIu64
				    "\n",
				    t->xdp_received, t->xdp_sent, t->xdp_invalid, t->xdp_no_frame,
				    t->xdp_passed, t->xdp_kernel_drops);
	apex_ctl_buf_printf(b, "  stalls (queries waiting): longest %.3f ms;",
			    (double)t->stall_max_ns / 1e6);
	for (unsigned i = 0; i < APEX_STATS_STALL_BUCKETS; i++)
		apex_ctl_buf_printf(b, " %s=%" PRIu64, stall_names[i], t->stalls[i]);
	apex_ctl_buf_printf(b,
			    "\n  tls: queries %" PRIu64 ", handshakes %" PRIu64 " (resumed %" PRIu64
			    "), failed",
			    t->tls_queries, t->tls_handshakes, t->tls_resumed);
	for (unsigned i = 0; i < APEX_STATS_TLS_FAILURES; i++)
		apex_ctl_buf_printf(b, " %s=%" PRIu64, tls_failure_names[i], t->tls_failed[i]);
	apex_ctl_buf_puts(b, "\n");
}

/* dnstap's writer: a "dnstap" member in JSON, one line in text. */
static void render_dnstap(apex_ctl_buf_t *buf, apex_ctl_format_t format,
			  const apex_thread_stats_t *x)
{
	if (!x->dnstap)
		return;
	apex_ctl_buf_printf(buf,
			    format == APEX_CTL_FORMAT_JSON
				    ? ",\"dnstap\":{\"written\":%" PRIu64 ",\"lost\":%" PRIu64 "}"
				    : "dnstap: written %" PRIu64 ", lost (no collector) %" PRIu64
				      "\n",
			    x->dnstap_written, x->dnstap_lost);
}

/* memory-limit: a "memory_limit" member in JSON, one line in text. */
static void render_memory(apex_ctl_buf_t *buf, apex_ctl_format_t format,
			  const apex_thread_stats_t *x)
{
	if (!x->memory_limit)
		return;
	apex_ctl_buf_printf(
		buf,
		format == APEX_CTL_FORMAT_JSON
			? ",\"memory_limit\":{\"bytes\":%" PRIu64 ",\"refused_reloads\":%" PRIu64
			  ",\"refused_transfers\":%" PRIu64 "}"
			: "memory limit: %" PRIu64 " bytes; refused: reloads=%" PRIu64
			  " transfers=%" PRIu64 "\n",
		x->memory_limit_bytes, x->memory_refused_reloads, x->memory_refused_transfers);
}

/* The transfer counters: a "transfers" member in JSON, one line in text. */
static void render_xfr(apex_ctl_buf_t *buf, apex_ctl_format_t format, const apex_thread_stats_t *x)
{
	if (format == APEX_CTL_FORMAT_JSON) {
		apex_ctl_buf_printf(
			buf,
			",\"transfers\":{\"in_ok\":%" PRIu64 ",\"in_failed\":%" PRIu64
			",\"out_ok\":%" PRIu64 ",\"out_refused\":%" PRIu64
			",\"out_failed\":%" PRIu64 ",\"out_ixfr\":%" PRIu64
			",\"out_ixfr_whole\":%" PRIu64 ",\"notify_in_accepted\":%" PRIu64
			",\"notify_in_refused\":%" PRIu64 ",\"notify_in_dropped\":%" PRIu64
			",\"notify_in_ahead\":%" PRIu64 ",\"notify_in_ahead_given_up\":%" PRIu64
			",\"notify_out_ok\":%" PRIu64 ",\"notify_out_failed\":%" PRIu64 "}",
			x->in_ok, x->in_failed, x->out_ok, x->out_refused, x->out_failed,
			x->out_ixfr, x->out_ixfr_whole, x->notify_in_accepted, x->notify_in_refused,
			x->notify_in_dropped, x->notify_in_ahead, x->notify_in_ahead_given_up,
			x->notify_out_ok, x->notify_out_failed);
		return;
	}
	apex_ctl_buf_printf(buf,
			    "transfers: in ok=%" PRIu64 " failed=%" PRIu64 "; out ok=%" PRIu64
			    " refused=%" PRIu64 " failed=%" PRIu64 " ixfr=%" PRIu64
			    " ixfr-whole=%" PRIu64 "; notify in accepted=%" PRIu64
			    " refused=%" PRIu64 " dropped=%" PRIu64 " ahead=%" PRIu64
			    " ahead-given-up=%" PRIu64 "; notify out ok=%" PRIu64 " failed=%" PRIu64
			    "\n",
			    x->in_ok, x->in_failed, x->out_ok, x->out_refused, x->out_failed,
			    x->out_ixfr, x->out_ixfr_whole, x->notify_in_accepted,
			    x->notify_in_refused, x->notify_in_dropped, x->notify_in_ahead,
			    x->notify_in_ahead_given_up, x->notify_out_ok, x->notify_out_failed);
}

void apex_stats_render(apex_ctl_buf_t *buf, apex_ctl_format_t format,
		       const apex_thread_stats_t *xfr, const apex_stats_zone_names_t *zones,
		       const apex_stats_totals_t *per_worker, unsigned count,
		       const apex_stats_totals_t *total)
{
	if (format == APEX_CTL_FORMAT_JSON) {
		apex_ctl_buf_puts(buf, "{\"total\":");
		render_json_one(buf, total);
		if (xfr != NULL) {
			render_xfr(buf, format, xfr);
			render_dnstap(buf, format, xfr);
			render_memory(buf, format, xfr);
		}
		apex_stats_render_rssac002(buf, format, total, zones);
		apex_ctl_buf_puts(buf, ",\"workers\":[");
		for (unsigned w = 0; w < count; w++) {
			if (w > 0)
				apex_ctl_buf_puts(buf, ",");
			render_json_one(buf, &per_worker[w]);
		}
		apex_ctl_buf_puts(buf, "]}\n");
		return;
	}
	render_text_one(buf, "total", total);
	if (xfr != NULL) {
		render_xfr(buf, format, xfr);
		render_dnstap(buf, format, xfr);
		render_memory(buf, format, xfr);
	}
	apex_stats_render_rssac002(buf, format, total, zones);
	for (unsigned w = 0; w < count; w++) {
		char label[32];

		snprintf(label, sizeof(label), "worker %u", w);
		render_text_one(buf, label, &per_worker[w]);
	}
}

void apex_stats_summary(apex_ctl_buf_t *b, const apex_stats_totals_t *t)
{
	char name[16];
	bool any = false;

	apex_ctl_buf_printf(b,
			    "queries: udp=%" PRIu64 " tcp=%" PRIu64 "; responses:", t->udp_queries,
			    t->tcp_queries);
	for (unsigned r = 0; r < APEX_STATS_RCODES; r++) {
		if (t->rcode[r] == 0)
			continue;
		apex_ctl_buf_printf(b, " %s=%" PRIu64, apex_stats_rcode_name(r, name, sizeof(name)),
				    t->rcode[r]);
		any = true;
	}
	if (!any)
		apex_ctl_buf_puts(b, " none");
	apex_ctl_buf_printf(b,
			    "; truncated=%" PRIu64 " dropped=%" PRIu64 "; tcp connections=%" PRIu64
			    " rejected=%" PRIu64 " timed-out=%" PRIu64,
			    t->truncated, t->dropped, t->tcp_connections, t->tcp_rejected,
			    t->tcp_timeouts);
	apex_ctl_buf_printf(b,
			    " rejected-per-client=%" PRIu64 " io-timed-out=%" PRIu64
			    "; rrl dropped=%" PRIu64 " slipped=%" PRIu64,
			    t->tcp_rejected_per_client, t->tcp_io_timeouts, t->rrl_dropped,
			    t->rrl_slipped);
	apex_ctl_buf_printf(b, "; tls queries=%" PRIu64 " handshakes=%" PRIu64 " resumed=%" PRIu64,
			    t->tls_queries, t->tls_handshakes, t->tls_resumed);
	for (unsigned i = 0; i < APEX_STATS_TLS_FAILURES; i++)
		apex_ctl_buf_printf(b, " failed-%s=%" PRIu64, tls_failure_names[i],
				    t->tls_failed[i]);
}
