/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control commands that report (commands.h): status, zone-status
 * (with a secondary zone's transfers) and stats, and the counters of the
 * threads beside the workers.  The commands that change things, and the
 * dispatch, are in commands.c.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: PACKAGE_VERSION, _GNU_SOURCE */
#endif
#include "control/commands.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "control/commands_internal.h"
#include "ctl/json.h"
#include "ctl/reply.h"
#include "observe/dnstap.h"
#include "process/memory.h"
#include "process/memory_limit.h"
#include "transfers/notifier.h"
#include "transfers/secondary.h"
#include "transfers/xfr_out.h"
#include "util/error.h"
#include "zone/page_discard.h"
#include "zones/verify_check.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static const char *const state_names[] = {
	[APEX_ZONE_LOADING] = "loading",
	[APEX_ZONE_LOADED] = "loaded",
	[APEX_ZONE_FAILED] = "failed",
};

static void format_time(const struct timespec *ts, char *buf, size_t size)
{
	struct tm tm;

	gmtime_r(&ts->tv_sec, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---------------------------------------------------------------- status */

typedef struct zone_counts {
	size_t configured, served, loaded, failed, loading;
	const apex_zoneset_t *set;
} zone_counts_t;

static void count_zone(const apex_managed_zone_t *z, void *arg)
{
	zone_counts_t *c = arg;

	c->configured++;
	c->served += apex_zoneset_get(c->set, z->origin) != NULL;
	c->loaded += z->state == APEX_ZONE_LOADED;
	c->failed += z->state == APEX_ZONE_FAILED;
	c->loading += z->state == APEX_ZONE_LOADING;
}

int apex_command_status(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
			apex_ctl_buf_t *out)
{
	apex_zoneset_t *set = apex_zonetable_acquire(&ctx->server->zonetable, NULL);
	zone_counts_t c = { .set = set };
	char started[64];
	double uptime = apex_server_uptime(ctx->server);
	size_t rss = apex_memory_rss();
	char limit[APEXD_CGROUP_PATH_MAX];
	int rc = apex_reloader_foreach(ctx->reloader, NULL, count_zone, &c);

	apex_zoneset_release(set);
	if (rc < 0)
		return apex_command_reply_error(out, "status: %s", apex_strerror(rc));
	format_time(&ctx->server->started_wall, started, sizeof(started));
	apexd_memory_limit_describe(ctx->memory_limit, limit, sizeof(limit));
	apex_ctl_reply_status(out, true, NULL);
	if (req->format == APEX_CTL_FORMAT_JSON) {
		apex_ctl_buf_printf(out,
				    "{\"version\":\"%s\",\"pid\":%ld,\"started\":\"%s\","
				    "\"uptime\":%.3f,\"workers\":%u,\"zones\":{\"configured\":%zu,"
				    "\"served\":%zu,\"loaded\":%zu,\"failed\":%zu,\"loading\":%zu},"
				    "\"rss_bytes\":%zu,\"memory_limit_bytes\":%" PRIu64 ","
				    "\"udp_receive_buffer\":%zu,"
				    "\"udp_send_buffer\":%zu,\"control_socket\":",
				    PACKAGE_VERSION, (long)getpid(), started, uptime,
				    ctx->server->worker_count, c.configured, c.served, c.loaded,
				    c.failed, c.loading, rss,
				    apexd_memory_limit_bytes(ctx->memory_limit, NULL),
				    ctx->server->udp_receive_buffer, ctx->server->udp_send_buffer);
		apex_ctl_json_string(out, ctx->control_path);
		apex_ctl_buf_puts(out, "}\n");
	} else {
		apex_ctl_buf_printf(
			out,
			"version: apexd %s\npid: %ld\nstarted: %s\nuptime: %.0f s\n"
			"workers: %u\nzones: %zu configured, %zu served, %zu failed, "
			"%zu loading\nrss: %.1f MiB\nmemory limit: %s\n"
			"udp buffers: receive %zu, send %zu bytes (as the kernel counts them)\n"
			"control socket: %s\n",
			PACKAGE_VERSION, (long)getpid(), started, uptime, ctx->server->worker_count,
			c.configured, c.served, c.failed, c.loading,
			(double)rss / (1024.0 * 1024.0), limit, ctx->server->udp_receive_buffer,
			ctx->server->udp_send_buffer, ctx->control_path);
	}
	return APEX_COMMAND_DONE;
}

/* ---------------------------------------------------------------- zone-status */

typedef struct zone_report {
	apex_ctl_buf_t *out;
	apex_ctl_format_t format;
	const apex_zoneset_t *set;
	apex_secondary_t *secondary; /* NULL: none */
	size_t written;
} zone_report_t;

/* A secondary zone's state (zone-status): its primaries, checks, transfers. */
static void report_secondary(const zone_report_t *r, const apex_managed_zone_t *z)
{
	apex_secondary_status_t st;
	char primaries[1024], checked[64] = "never", transferred[64] = "never";
	apex_ctl_buf_t *out = r->out;

	if (r->secondary == NULL ||
	    !apex_secondary_report(r->secondary, z->origin, &st, primaries, sizeof(primaries)))
		return;
	if (st.last_check.tv_sec != 0)
		format_time(&st.last_check, checked, sizeof(checked));
	if (st.last_transfer.tv_sec != 0)
		format_time(&st.last_transfer, transferred, sizeof(transferred));
	if (r->format == APEX_CTL_FORMAT_JSON) {
		apex_ctl_buf_puts(out, ",\"secondary\":{\"primaries\":");
		apex_ctl_json_string(out, primaries);
		apex_ctl_buf_printf(out,
				    ",\"last_check\":\"%s\",\"last_transfer\":\"%s\","
				    "\"next_check_seconds\":%.1f,\"expire_seconds\":%.1f,"
				    "\"expired\":%s,\"transfers\":%" PRIu64 ",\"failures\":%" PRIu64
				    ",\"notifies_accepted\":%" PRIu64
				    ",\"notifies_refused\":%" PRIu64 ",\"notifies_ahead\":%" PRIu64
				    ",\"notifies_ahead_given_up\":%" PRIu64 ",\"last_result\":",
				    checked, transferred, (double)st.next_check_ms / 1000.0,
				    (double)st.expire_in_ms / 1000.0, st.expired ? "true" : "false",
				    st.transfers, st.failures, st.notifies_accepted,
				    st.notifies_refused, st.notifies_ahead,
				    st.notifies_ahead_given_up);
		apex_ctl_json_string(out, st.last_result);
		apex_ctl_buf_puts(out, "}");
		return;
	}
	apex_ctl_buf_printf(out,
			    "  primaries: %s\n  last check: %s\n  last transfer: %s\n"
			    "  last result: %s\n  next check in: %.1f s\n",
			    primaries, checked, transferred,
			    st.last_result[0] != '\0' ? st.last_result : "none yet",
			    (double)st.next_check_ms / 1000.0);
	if (st.expired)
		apex_ctl_buf_puts(out, "  expired: not served until a transfer succeeds\n");
	else if (st.expire_in_ms > 0)
		apex_ctl_buf_printf(out, "  expires in: %.0f s without a successful check\n",
				    (double)st.expire_in_ms / 1000.0);
	apex_ctl_buf_printf(out,
			    "  transfers: %" PRIu64 " (failed: %" PRIu64
			    "); NOTIFY accepted: %" PRIu64 ", refused: %" PRIu64 "\n",
			    st.transfers, st.failures, st.notifies_accepted, st.notifies_refused);
	if (st.notifies_ahead > 0)
		apex_ctl_buf_printf(out,
				    "  NOTIFY ahead of the primaries: %" PRIu64
				    " (given up after the rechecks: %" PRIu64 ")\n",
				    st.notifies_ahead, st.notifies_ahead_given_up);
}

/* A verified zone's verifier and its last verdict (zone-status). */
static void report_verifier(const zone_report_t *r, const apex_managed_zone_t *z)
{
	apexd_verify_report_t v;
	char at[64] = "";
	apex_ctl_buf_t *out = r->out;
	const char *result;

	if (!apexd_verify_report(z->origin, &v))
		return;
	result = v.not_run ? "not run" : apex_verify_outcome_name(v.outcome);
	if (v.ran)
		format_time(&v.at, at, sizeof(at));
	if (r->format == APEX_CTL_FORMAT_JSON) {
		apex_ctl_buf_puts(out, ",\"verifier\":{\"command\":");
		apex_ctl_json_string(out, v.verifier);
		apex_ctl_buf_printf(out, ",\"running\":%s,\"last\":", v.running ? "true" : "false");
		if (!v.ran) {
			apex_ctl_buf_puts(out, "null}");
			return;
		}
		apex_ctl_buf_printf(out,
				    "{\"result\":\"%s\",\"serial\":%" PRIu32
				    ",\"at\":\"%s\",\"seconds\":%.3f,\"queries\":%" PRIu64
				    ",\"detail\":",
				    result, v.serial, at, v.seconds, v.queries);
		apex_ctl_json_string(out, v.detail);
		apex_ctl_buf_puts(out, "}}");
		return;
	}
	apex_ctl_buf_printf(out, "  verifier: %s%s\n", v.verifier, v.running ? " (running)" : "");
	if (v.ran)
		apex_ctl_buf_printf(out,
				    "  last verification: %s (%s) for serial %" PRIu32
				    " at %s, in %.3f s, %" PRIu64 " queries\n",
				    result, v.detail, v.serial, at, v.seconds, v.queries);
	else
		apex_ctl_buf_puts(out, "  last verification: none yet\n");
}

static void report_zone(const apex_managed_zone_t *z, void *arg)
{
	zone_report_t *r = arg;
	apex_ctl_buf_t *out = r->out;
	const apex_zone_t *v = apex_zoneset_get(r->set, z->origin);
	char loaded_at[64] = "", failed_at[64] = "";

	if (v != NULL)
		format_time(&v->loaded_at, loaded_at, sizeof(loaded_at));
	if (z->state == APEX_ZONE_FAILED)
		format_time(&z->failed_at, failed_at, sizeof(failed_at));
	if (r->format == APEX_CTL_FORMAT_JSON) {
		apex_ctl_buf_puts(out, r->written > 0 ? ",{\"name\":" : "{\"name\":");
		apex_ctl_json_string(out, z->name);
		apex_ctl_buf_printf(out, ",\"state\":\"%s\",\"file\":", state_names[z->state]);
		apex_ctl_json_string(out, z->file);
		apex_ctl_buf_printf(out, ",\"served\":%s", v != NULL ? "true" : "false");
		if (v != NULL)
			apex_ctl_buf_printf(
				out,
				",\"serial\":%" PRIu32 ",\"loaded_at\":\"%s\","
				"\"load_seconds\":%.3f,\"records\":%zu,\"memory_bytes\":%zu",
				v->serial, loaded_at, v->load_seconds, v->record_count,
				apex_zone_memory(v));
		apex_ctl_buf_printf(out, ",\"loads\":%" PRIu64 ",\"failures\":%" PRIu64, z->loads,
				    z->failures);
		if (z->state == APEX_ZONE_FAILED) {
			apex_ctl_buf_printf(out, ",\"failed_at\":\"%s\",\"error\":", failed_at);
			apex_ctl_json_string(out, z->error);
		}
		report_secondary(r, z);
		report_verifier(r, z);
		apex_ctl_buf_puts(out, "}");
	} else {
		apex_ctl_buf_printf(out, "%s: %s\n  file: %s\n", z->name, state_names[z->state],
				    z->file);
		if (v != NULL)
			apex_ctl_buf_printf(out,
					    "  serial: %" PRIu32 "\n  loaded at: %s (in %.3f s)\n"
					    "  records: %zu\n  memory: %.1f MiB\n",
					    v->serial, loaded_at, v->load_seconds, v->record_count,
					    (double)apex_zone_memory(v) / (1024.0 * 1024.0));
		else
			apex_ctl_buf_puts(out, "  not served\n");
		if (z->state == APEX_ZONE_FAILED)
			apex_ctl_buf_printf(out, "  error: %s (at %s)\n", z->error, failed_at);
		report_secondary(r, z);
		report_verifier(r, z);
	}
	r->written++;
}

int apex_command_zone_status(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
			     apex_ctl_buf_t *out)
{
	apex_ctl_buf_t body;
	apex_zoneset_t *set;
	zone_report_t r = { .format = req->format, .secondary = ctx->secondary };
	int rc = APEX_OK;

	/* every named zone must exist before anything is written */
	for (size_t i = 0; i < req->argc; i++) {
		uint8_t origin[APEX_NAME_MAX];

		if (!apex_command_parse_zone(req->argv[i], origin, out))
			return APEX_COMMAND_DONE;
	}
	apex_ctl_buf_init(&body, APEX_CTL_REPLY_MAX - APEX_CTL_MESSAGE_MAX - 16);
	r.out = &body;
	set = apex_zonetable_acquire(&ctx->server->zonetable, NULL);
	r.set = set;
	if (req->format == APEX_CTL_FORMAT_JSON)
		apex_ctl_buf_puts(&body, "{\"zones\":[");
	if (req->argc == 0)
		rc = apex_reloader_foreach(ctx->reloader, NULL, report_zone, &r);
	for (size_t i = 0; i < req->argc && rc == APEX_OK; i++) {
		uint8_t origin[APEX_NAME_MAX];

		apex_name_from_str(req->argv[i], origin);
		rc = apex_reloader_foreach(ctx->reloader, origin, report_zone, &r);
		if (rc == APEX_ENOENT) {
			apex_command_reply_error(out, "zone %s is not configured", req->argv[i]);
			goto done;
		}
	}
	if (req->format == APEX_CTL_FORMAT_JSON)
		apex_ctl_buf_puts(&body, "]}\n");
	if (rc < 0 || body.failed) {
		apex_command_reply_error(out, "zone-status: %s",
					 rc < 0 ? apex_strerror(rc) : "reply too large");
		goto done;
	}
	apex_ctl_reply_status(out, true, NULL);
	apex_ctl_buf_append(out, body.data, body.size);
done:
	apex_zoneset_release(set);
	apex_ctl_buf_free(&body);
	return APEX_COMMAND_DONE;
}

/* ---------------------------------------------------------------- stats */

void apex_command_thread_stats(const apex_command_context_t *ctx, apex_thread_stats_t *out)
{
	apex_thread_stats_t xfr = { 0 };

	if (ctx->secondary != NULL) {
		apex_secondary_totals_t in;

		apex_secondary_totals(ctx->secondary, &in);
		xfr.in_ok = in.transfers;
		xfr.in_failed = in.failures;
		xfr.notify_in_accepted = in.notifies_accepted;
		xfr.notify_in_refused = in.notifies_refused;
		xfr.notify_in_dropped = in.notifies_dropped;
		xfr.notify_in_ahead = in.notifies_ahead;
		xfr.notify_in_ahead_given_up = in.notifies_ahead_given_up;
	}
	if (ctx->xfr_out != NULL) {
		xfr.out_ok = atomic_load(&ctx->xfr_out->served);
		xfr.out_refused = atomic_load(&ctx->xfr_out->refused);
		xfr.out_failed = atomic_load(&ctx->xfr_out->failed);
		/* whole first: a transfer counts its IXFR before its whole
		 * answer, so that the IXFRs read are never fewer */
		xfr.out_ixfr_whole = atomic_load(&ctx->xfr_out->ixfr_whole);
		xfr.out_ixfr = atomic_load(&ctx->xfr_out->ixfr);
	}
	if (ctx->notifier != NULL) {
		xfr.notify_out_ok = atomic_load(&ctx->notifier->sent);
		xfr.notify_out_failed = atomic_load(&ctx->notifier->failed);
	}
	if (ctx->dnstap != NULL) {
		xfr.dnstap = true;
		apex_dnstap_totals(ctx->dnstap, &xfr.dnstap_written, &xfr.dnstap_lost);
	}
	if (apexd_memory_limit_on(ctx->memory_limit)) {
		xfr.memory_limit = true;
		xfr.memory_limit_bytes = apexd_memory_limit_bytes(ctx->memory_limit, NULL);
		xfr.memory_refused_reloads =
			apexd_memory_limit_refused(ctx->memory_limit, APEXD_MEMORY_RELOAD);
		xfr.memory_refused_transfers =
			apexd_memory_limit_refused(ctx->memory_limit, APEXD_MEMORY_TRANSFER);
	}
	*out = xfr;
}

int apex_command_stats(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
		       apex_ctl_buf_t *out)
{
	unsigned n = ctx->server->worker_count;
	apex_stats_totals_t *per = calloc(n + 1, sizeof(*per));
	apex_stats_zone_names_t zones;
	apex_thread_stats_t xfr;

	if (per == NULL || apex_stats_zone_names(&ctx->server->zonetable, &zones) != APEX_OK) {
		free(per);
		return apex_command_reply_error(out, "stats: out of memory");
	}
	apex_server_stats(ctx->server, per, &per[n]);
	apex_command_thread_stats(ctx, &xfr);
	apex_ctl_reply_status(out, true, NULL);
	apex_stats_render(out, req->format, &xfr, &zones, per, n, &per[n]);
	apex_stats_zone_names_free(&zones);
	free(per);
	return APEX_COMMAND_DONE;
}
