/* SPDX-License-Identifier: BSD-3-Clause */
/* The control commands and their replies. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: PACKAGE_VERSION, _GNU_SOURCE */
#endif
#include "control/commands.h"
#include "observe/dnstap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl/json.h"
#include "ctl/reply.h"
#include "process/memory.h"
#include "transfers/notifier.h"
#include "transfers/secondary.h"
#include "zones/settings.h"
#include "transfers/xfr_out.h"
#include "util/error.h"
#include "util/log.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static const char *const state_names[] = {
	[APEX_ZONE_LOADING] = "loading",
	[APEX_ZONE_LOADED] = "loaded",
	[APEX_ZONE_FAILED] = "failed",
};

/* A reply that is only an error status line. */
static int reply_error(apex_ctl_buf_t *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int reply_error(apex_ctl_buf_t *out, const char *fmt, ...)
{
	char message[APEX_CTL_MESSAGE_MAX + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	apex_ctl_reply_status(out, false, message);
	return APEX_COMMAND_DONE;
}

static void format_time(const struct timespec *ts, char *buf, size_t size)
{
	struct tm tm;

	gmtime_r(&ts->tv_sec, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The argument as a wire-format name, or an error reply. */
static bool parse_zone_arg(const char *arg, uint8_t *origin, apex_ctl_buf_t *out)
{
	if (apex_name_from_str(arg, origin) < 0) {
		reply_error(out, "'%s' is not a valid zone name", arg);
		return false;
	}
	return true;
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

static int cmd_status(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
		      apex_ctl_buf_t *out)
{
	apex_zoneset_t *set = apex_zonetable_acquire(&ctx->server->zonetable, NULL);
	zone_counts_t c = { .set = set };
	char started[64];
	double uptime = apex_server_uptime(ctx->server);
	size_t rss = apex_memory_rss();
	int rc = apex_reloader_foreach(ctx->reloader, NULL, count_zone, &c);

	apex_zoneset_release(set);
	if (rc < 0)
		return reply_error(out, "status: %s", apex_strerror(rc));
	format_time(&ctx->server->started_wall, started, sizeof(started));
	apex_ctl_reply_status(out, true, NULL);
	if (req->format == APEX_CTL_FORMAT_JSON) {
		apex_ctl_buf_printf(out,
				    "{\"version\":\"%s\",\"pid\":%ld,\"started\":\"%s\","
				    "\"uptime\":%.3f,\"workers\":%u,\"zones\":{\"configured\":%zu,"
				    "\"served\":%zu,\"loaded\":%zu,\"failed\":%zu,\"loading\":%zu},"
				    "\"rss_bytes\":%zu,\"udp_receive_buffer\":%zu,"
				    "\"udp_send_buffer\":%zu,\"control_socket\":",
				    PACKAGE_VERSION, (long)getpid(), started, uptime,
				    ctx->server->worker_count, c.configured, c.served, c.loaded,
				    c.failed, c.loading, rss, ctx->server->udp_receive_buffer,
				    ctx->server->udp_send_buffer);
		apex_ctl_json_string(out, ctx->control_path);
		apex_ctl_buf_puts(out, "}\n");
	} else {
		apex_ctl_buf_printf(
			out,
			"version: apexd %s\npid: %ld\nstarted: %s\nuptime: %.0f s\n"
			"workers: %u\nzones: %zu configured, %zu served, %zu failed, "
			"%zu loading\nrss: %.1f MiB\n"
			"udp buffers: receive %zu, send %zu bytes (as the kernel counts them)\n"
			"control socket: %s\n",
			PACKAGE_VERSION, (long)getpid(), started, uptime, ctx->server->worker_count,
			c.configured, c.served, c.failed, c.loading,
			(double)rss / (1024.0 * 1024.0), ctx->server->udp_receive_buffer,
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
				    ",\"notifies_refused\":%" PRIu64 ",\"last_result\":",
				    checked, transferred, (double)st.next_check_ms / 1000.0,
				    (double)st.expire_in_ms / 1000.0, st.expired ? "true" : "false",
				    st.transfers, st.failures, st.notifies_accepted,
				    st.notifies_refused);
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
				v->serial, loaded_at, v->load_seconds, v->record_count, v->memory);
		apex_ctl_buf_printf(out, ",\"loads\":%" PRIu64 ",\"failures\":%" PRIu64, z->loads,
				    z->failures);
		if (z->state == APEX_ZONE_FAILED) {
			apex_ctl_buf_printf(out, ",\"failed_at\":\"%s\",\"error\":", failed_at);
			apex_ctl_json_string(out, z->error);
		}
		report_secondary(r, z);
		apex_ctl_buf_puts(out, "}");
	} else {
		apex_ctl_buf_printf(out, "%s: %s\n  file: %s\n", z->name, state_names[z->state],
				    z->file);
		if (v != NULL)
			apex_ctl_buf_printf(out,
					    "  serial: %" PRIu32 "\n  loaded at: %s (in %.3f s)\n"
					    "  records: %zu\n  memory: %.1f MiB\n",
					    v->serial, loaded_at, v->load_seconds, v->record_count,
					    (double)v->memory / (1024.0 * 1024.0));
		else
			apex_ctl_buf_puts(out, "  not served\n");
		if (z->state == APEX_ZONE_FAILED)
			apex_ctl_buf_printf(out, "  error: %s (at %s)\n", z->error, failed_at);
		report_secondary(r, z);
	}
	r->written++;
}

static int cmd_zone_status(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
			   apex_ctl_buf_t *out)
{
	apex_ctl_buf_t body;
	apex_zoneset_t *set;
	zone_report_t r = { .format = req->format, .secondary = ctx->secondary };
	int rc = APEX_OK;

	/* every named zone must exist before anything is written */
	for (size_t i = 0; i < req->argc; i++) {
		uint8_t origin[APEX_NAME_MAX];

		if (!parse_zone_arg(req->argv[i], origin, out))
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
			reply_error(out, "zone %s is not configured", req->argv[i]);
			goto done;
		}
	}
	if (req->format == APEX_CTL_FORMAT_JSON)
		apex_ctl_buf_puts(&body, "]}\n");
	if (rc < 0 || body.failed) {
		reply_error(out, "zone-status: %s", rc < 0 ? apex_strerror(rc) : "reply too large");
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

	if (ctx->secondary != NULL)
		apex_secondary_totals(ctx->secondary, &xfr.in_ok, &xfr.in_failed,
				      &xfr.notify_in_accepted, &xfr.notify_in_refused);
	if (ctx->xfr_out != NULL) {
		xfr.out_ok = atomic_load(&ctx->xfr_out->served);
		xfr.out_refused = atomic_load(&ctx->xfr_out->refused);
		xfr.out_failed = atomic_load(&ctx->xfr_out->failed);
	}
	if (ctx->notifier != NULL) {
		xfr.notify_out_ok = atomic_load(&ctx->notifier->sent);
		xfr.notify_out_failed = atomic_load(&ctx->notifier->failed);
	}
	if (ctx->dnstap != NULL) {
		xfr.dnstap = true;
		apex_dnstap_totals(ctx->dnstap, &xfr.dnstap_written, &xfr.dnstap_lost);
	}
	*out = xfr;
}

static int cmd_stats(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
		     apex_ctl_buf_t *out)
{
	unsigned n = ctx->server->worker_count;
	apex_stats_totals_t *per = calloc(n + 1, sizeof(*per));
	apex_stats_zone_names_t zones;
	apex_thread_stats_t xfr;

	if (per == NULL || apex_stats_zone_names(&ctx->server->zonetable, &zones) != APEX_OK) {
		free(per);
		return reply_error(out, "stats: out of memory");
	}
	apex_server_stats(ctx->server, per, &per[n]);
	apex_command_thread_stats(ctx, &xfr);
	apex_ctl_reply_status(out, true, NULL);
	apex_stats_render(out, req->format, &xfr, &zones, per, n, &per[n]);
	apex_stats_zone_names_free(&zones);
	free(per);
	return APEX_COMMAND_DONE;
}

/* ---------------------------------------------------------------- reload and reconfig */

static void no_op(const apex_managed_zone_t *z, void *arg)
{
	(void)z;
	(void)arg;
}

static int cmd_reload(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
		      apex_ctl_buf_t *out, apex_command_pending_t *pending)
{
	uint8_t(*origins)[APEX_NAME_MAX] = NULL;
	int rc;

	if (req->argc == 0) {
		rc = apex_reloader_request(ctx->reloader, NULL, &pending->tickets, &pending->count);
		if (rc < 0)
			return reply_error(out, "reload: %s", apex_strerror(rc));
		if (pending->count == 0) {
			apex_command_pending_free(pending);
			return reply_error(out, "no zone is configured");
		}
		return APEX_COMMAND_PENDING;
	}
	/* check every name first: an unknown one queues nothing */
	origins = calloc(req->argc, sizeof(*origins));
	pending->tickets = calloc(req->argc, sizeof(*pending->tickets));
	if (origins == NULL || pending->tickets == NULL) {
		free(origins);
		apex_command_pending_free(pending);
		return reply_error(out, "reload: out of memory");
	}
	for (size_t i = 0; i < req->argc; i++) {
		bool ok = parse_zone_arg(req->argv[i], origins[i], out);

		if (ok &&
		    apex_reloader_foreach(ctx->reloader, origins[i], no_op, NULL) == APEX_ENOENT) {
			reply_error(out, "zone %s is not configured", req->argv[i]);
			ok = false;
		}
		if (!ok) {
			free(origins);
			apex_command_pending_free(pending);
			return APEX_COMMAND_DONE;
		}
	}
	for (size_t i = 0; i < req->argc; i++) {
		apex_reload_ticket_t *one = NULL;
		size_t count = 0;

		rc = apex_reloader_request(ctx->reloader, origins[i], &one, &count);
		if (rc < 0) {
			/* removed by a reconfig in between, or out of memory; the loads
			 * already queued go on */
			free(origins);
			apex_command_pending_free(pending);
			return reply_error(out, "zone %s: %s", req->argv[i], apex_strerror(rc));
		}
		pending->tickets[pending->count++] = one[0];
		free(one);
	}
	free(origins);
	return APEX_COMMAND_PENDING;
}

static int cmd_reconfig(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
			apex_ctl_buf_t *out, apex_command_pending_t *pending)
{
	apex_config_t cfg;
	char err[APEX_CTL_MESSAGE_MAX];
	int rc;

	if (ctx->reread_config == NULL)
		return reply_error(out, "reconfig: apexd was started without a config file");
	rc = ctx->reread_config(ctx->reread_arg, &cfg, err, sizeof(err));
	if (rc < 0) {
		apex_config_free(&cfg);
		apex_error("reconfig: %s", err);
		return reply_error(out, "%s", err);
	}
	rc = apex_reloader_reconfigure(ctx->reloader, &cfg, &pending->tickets, &pending->count,
				       &pending->added, &pending->removed, &pending->changed);
	/* the journals of zones given provide-xfr, before it is in force */
	if (rc == APEX_OK && ctx->reconfigured != NULL)
		ctx->reconfigured(ctx->reconfigured_arg, &cfg);
	/* the keys and the zones' transfer lists: in force from here on for
	 * what begins (an exchange under way ends with the old ones); cfg is
	 * moved into the new settings */
	if (rc == APEX_OK && ctx->settings != NULL &&
	    (rc = apex_settings_replace(ctx->settings, &cfg)) == APEX_OK && ctx->secondary != NULL)
		apex_secondary_settings_changed(ctx->secondary);
	apex_config_free(&cfg);
	if (rc < 0) {
		apex_command_pending_free(pending);
		return reply_error(out, "reconfig: %s", apex_strerror(rc));
	}
	apex_info("reconfig: %zu zone(s) added, %zu removed, %zu with a new file", pending->added,
		  pending->removed, pending->changed);
	return APEX_COMMAND_PENDING; /* even with no ticket: the reply is built by the poll */
}

/* The reply of a finished reload or reconfig: one entry per ticket. */
static void finish_pending(const apex_command_context_t *ctx, apex_command_pending_t *p,
			   apex_ctl_buf_t *out)
{
	apex_zoneset_t *set = apex_zonetable_acquire(&ctx->server->zonetable, NULL);
	apex_ctl_buf_t body;
	char first_error[APEX_CTL_MESSAGE_MAX] = "";
	size_t failed = 0;
	bool json = p->format == APEX_CTL_FORMAT_JSON;

	apex_ctl_buf_init(&body, APEX_CTL_REPLY_MAX - APEX_CTL_MESSAGE_MAX - 16);
	if (json) {
		apex_ctl_buf_puts(&body, "{");
		if (p->command == APEX_CTL_RECONFIG)
			apex_ctl_buf_printf(&body, "\"added\":%zu,\"removed\":%zu,\"changed\":%zu,",
					    p->added, p->removed, p->changed);
		apex_ctl_buf_puts(&body, "\"zones\":[");
	} else if (p->command == APEX_CTL_RECONFIG) {
		apex_ctl_buf_printf(&body, "zones added: %zu, removed: %zu, new file: %zu\n",
				    p->added, p->removed, p->changed);
	}
	for (size_t i = 0; i < p->count; i++) {
		apex_reload_result_t res;
		uint8_t origin[APEX_NAME_MAX];
		const apex_zone_t *v = NULL;

		apex_reloader_ticket_done(ctx->reloader, &p->tickets[i], &res);
		if (!res.removed && apex_name_from_str(res.name, origin) >= 0)
			v = apex_zoneset_get(set, origin);
		if (!res.ok) {
			if (failed++ == 0)
				snprintf(first_error, sizeof(first_error), "zone %.300s: %.600s",
					 res.removed ? "(removed)" : res.name, res.error);
		}
		if (json) {
			apex_ctl_buf_puts(&body, i > 0 ? ",{\"name\":" : "{\"name\":");
			apex_ctl_json_string(&body, res.name);
			apex_ctl_buf_printf(&body, ",\"ok\":%s", res.ok ? "true" : "false");
			if (res.awaiting_transfer)
				apex_ctl_buf_puts(&body, ",\"awaiting_transfer\":true");
			if (v != NULL)
				apex_ctl_buf_printf(&body, ",\"serial\":%" PRIu32, v->serial);
			if (!res.ok) {
				apex_ctl_buf_puts(&body, ",\"error\":");
				apex_ctl_json_string(&body, res.error);
			}
			apex_ctl_buf_puts(&body, "}");
		} else if (res.ok && res.awaiting_transfer) {
			apex_ctl_buf_printf(&body,
					    "%s: no copy yet: served after the first transfer\n",
					    res.name);
		} else if (res.ok) {
			apex_ctl_buf_printf(&body, "%s: loaded, serial %" PRIu32 "\n", res.name,
					    v != NULL ? v->serial : 0);
		} else if (v != NULL) {
			apex_ctl_buf_printf(&body,
					    "%s: failed: %s; still serving serial %" PRIu32 "\n",
					    res.name, res.error, v->serial);
		} else {
			apex_ctl_buf_printf(&body, "%s: failed: %s; not served\n",
					    res.removed ? "(removed)" : res.name, res.error);
		}
	}
	if (json)
		apex_ctl_buf_puts(&body, "]}\n");
	apex_zoneset_release(set);
	if (failed > 1) {
		size_t len = strlen(first_error);

		snprintf(first_error + len, sizeof(first_error) - len, " (and %zu more failed)",
			 failed - 1);
	}
	if (body.failed)
		apex_ctl_reply_status(out, false, "reply too large");
	else
		apex_ctl_reply_status(out, failed == 0, first_error);
	if (!body.failed)
		apex_ctl_buf_append(out, body.data, body.size);
	apex_ctl_buf_free(&body);
}

bool apex_command_poll(const apex_command_context_t *ctx, apex_command_pending_t *pending,
		       apex_ctl_buf_t *out)
{
	for (size_t i = 0; i < pending->count; i++) {
		apex_reload_result_t res;

		if (!apex_reloader_ticket_done(ctx->reloader, &pending->tickets[i], &res))
			return false;
	}
	finish_pending(ctx, pending, out);
	apex_command_pending_free(pending);
	return true;
}

void apex_command_pending_free(apex_command_pending_t *pending)
{
	free(pending->tickets);
	pending->tickets = NULL;
	pending->count = 0;
}

/* ---------------------------------------------------------------- transfers */

/* refresh, retransfer (a secondary zone) and notify (a zone with notify:). */
static int cmd_transfer(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
			apex_ctl_buf_t *out)
{
	uint8_t origin[APEX_NAME_MAX];
	const char *done;
	int rc;

	if (!parse_zone_arg(req->argv[0], origin, out))
		return APEX_COMMAND_DONE;
	if (req->command == APEX_CTL_NOTIFY) {
		rc = ctx->notifier != NULL ? apex_notifier_notify_now(ctx->notifier, origin)
					   : APEX_ENOENT;
		if (rc == APEX_ENOENT)
			return reply_error(out, "zone %s has no notify: targets", req->argv[0]);
		done = "NOTIFY queued for its targets";
	} else {
		bool full = req->command == APEX_CTL_RETRANSFER;

		rc = ctx->secondary != NULL ? apex_secondary_refresh(ctx->secondary, origin, full)
					    : APEX_ENOENT;
		if (rc == APEX_ENOENT)
			return reply_error(out, "zone %s is not a secondary zone (no request-xfr)",
					   req->argv[0]);
		done = full ? "a full transfer (AXFR) starts now" : "an SOA check starts now";
	}
	if (rc < 0)
		return reply_error(out, "%s: %s", req->argv[0], apex_strerror(rc));
	apex_ctl_reply_status(out, true, NULL);
	if (req->format == APEX_CTL_FORMAT_JSON) {
		apex_ctl_buf_puts(out, "{\"zone\":");
		apex_ctl_json_string(out, req->argv[0]);
		apex_ctl_buf_puts(out, ",\"queued\":true}\n");
	} else {
		apex_ctl_buf_printf(out, "zone %s: %s\n", req->argv[0], done);
	}
	return APEX_COMMAND_DONE;
}

/* ---------------------------------------------------------------- dispatch */

int apex_command_run(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
		     apex_ctl_buf_t *out, apex_command_pending_t *pending, bool *stop)
{
	*stop = false;
	memset(pending, 0, sizeof(*pending));
	pending->command = req->command;
	pending->format = req->format;
	switch (req->command) {
	case APEX_CTL_STATUS: return cmd_status(ctx, req, out);
	case APEX_CTL_RELOAD: return cmd_reload(ctx, req, out, pending);
	case APEX_CTL_ZONE_STATUS: return cmd_zone_status(ctx, req, out);
	case APEX_CTL_STATS: return cmd_stats(ctx, req, out);
	case APEX_CTL_RECONFIG: return cmd_reconfig(ctx, req, out, pending);
	case APEX_CTL_STOP:
		*stop = true;
		apex_ctl_reply_status(out, true, NULL);
		if (req->format == APEX_CTL_FORMAT_JSON)
			apex_ctl_buf_puts(out, "{\"stopping\":true}\n");
		else
			apex_ctl_buf_puts(out, "apexd is stopping\n");
		return APEX_COMMAND_DONE;
	case APEX_CTL_REFRESH:
	case APEX_CTL_RETRANSFER:
	case APEX_CTL_NOTIFY: return cmd_transfer(ctx, req, out);
	case APEX_CTL_COMMAND_COUNT: break;
	}
	return reply_error(out, "unknown command");
}
