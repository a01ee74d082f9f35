/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control commands that change things (reload, reconfig, refresh,
 * retransfer, notify, stop) and their replies, and the dispatch of every
 * command; those that report are in status_commands.c.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "control/commands.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/commands_internal.h"
#include "ctl/json.h"
#include "ctl/reply.h"
#include "observe/sd_notify.h"
#include "transfers/notifier.h"
#include "transfers/secondary.h"
#include "zones/settings.h"
#include "zones/verify_check.h"
#include "util/error.h"
#include "util/log.h"

int apex_command_reply_error(apex_ctl_buf_t *out, const char *fmt, ...)
{
	char message[APEX_CTL_MESSAGE_MAX + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	apex_ctl_reply_status(out, false, message);
	return APEX_COMMAND_DONE;
}

bool apex_command_parse_zone(const char *arg, uint8_t *origin, apex_ctl_buf_t *out)
{
	if (apex_name_from_str(arg, origin) < 0) {
		apex_command_reply_error(out, "'%s' is not a valid zone name", arg);
		return false;
	}
	return true;
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
			return apex_command_reply_error(out, "reload: %s", apex_strerror(rc));
		if (pending->count == 0) {
			apex_command_pending_free(pending);
			return apex_command_reply_error(out, "no zone is configured");
		}
		return APEX_COMMAND_PENDING;
	}
	/* check every name first: an unknown one queues nothing */
	origins = calloc(req->argc, sizeof(*origins));
	pending->tickets = calloc(req->argc, sizeof(*pending->tickets));
	if (origins == NULL || pending->tickets == NULL) {
		free(origins);
		apex_command_pending_free(pending);
		return apex_command_reply_error(out, "reload: out of memory");
	}
	for (size_t i = 0; i < req->argc; i++) {
		bool ok = apex_command_parse_zone(req->argv[i], origins[i], out);

		if (ok &&
		    apex_reloader_foreach(ctx->reloader, origins[i], no_op, NULL) == APEX_ENOENT) {
			apex_command_reply_error(out, "zone %s is not configured", req->argv[i]);
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
			return apex_command_reply_error(out, "zone %s: %s", req->argv[i],
							apex_strerror(rc));
		}
		pending->tickets[pending->count++] = one[0];
		free(one);
	}
	free(origins);
	return APEX_COMMAND_PENDING;
}

int apex_command_apply_config(const apex_command_context_t *ctx, apex_config_t *cfg,
			      apex_command_pending_t *pending)
{
	int rc;

	/* the journals of zones given provide-xfr, before it is in force and
	 * before the zones added are loaded: a journal ahead of a zone's file
	 * is replayed over its first version (transfers/journal_replay.h) */
	if (ctx->reconfigured != NULL)
		ctx->reconfigured(ctx->reconfigured_arg, cfg);
	/* the verifiers, before the zones added are loaded */
	if (apexd_verify_configure(cfg) < 0)
		return APEX_ENOMEM;
	rc = apex_reloader_reconfigure(ctx->reloader, cfg, &pending->tickets, &pending->count,
				       &pending->added, &pending->removed, &pending->changed);
	/* the keys and the zones' transfer lists: in force from here on for
	 * what begins (an exchange under way ends with the old ones); cfg is
	 * moved into the new settings */
	if (rc == APEX_OK && ctx->settings != NULL &&
	    (rc = apex_settings_replace(ctx->settings, cfg)) == APEX_OK && ctx->secondary != NULL)
		apex_secondary_settings_changed(ctx->secondary);
	return rc;
}

static int cmd_reconfig(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
			apex_ctl_buf_t *out, apex_command_pending_t *pending)
{
	apex_config_t cfg;
	char err[APEX_CTL_MESSAGE_MAX];
	int rc;

	(void)req;
	if (ctx->reread_config == NULL)
		return apex_command_reply_error(
			out, "reconfig: apexd was started without a config file");
	/* one configuration put in force at a time: a catalog's change waits */
	if (ctx->lock_config != NULL)
		ctx->lock_config(ctx->catalogs_arg, true);
	rc = ctx->reread_config(ctx->reread_arg, &cfg, err, sizeof(err));
	/* the members of the catalogs stay */
	if (rc == APEX_OK && ctx->extend_config != NULL)
		rc = ctx->extend_config(ctx->catalogs_arg, &cfg, err, sizeof(err));
	if (rc < 0) {
		if (ctx->lock_config != NULL)
			ctx->lock_config(ctx->catalogs_arg, false);
		apex_config_free(&cfg);
		apex_error("reconfig: %s", err);
		return apex_command_reply_error(out, "%s", err);
	}
	/* certificates renewed on disk: new connections get them, open ones
	 * keep theirs; a file that cannot be read keeps the one in use */
	if (ctx->server->tls_ready &&
	    apex_tls_service_reload(&ctx->server->tls, &cfg, err, sizeof(err)) < 0)
		apex_error("reconfig: tls: %s: the certificate in use stays", err);
	rc = apex_command_apply_config(ctx, &cfg, pending);
	if (ctx->lock_config != NULL)
		ctx->lock_config(ctx->catalogs_arg, false);
	apex_config_free(&cfg);
	if (rc < 0) {
		apex_command_pending_free(pending);
		return apex_command_reply_error(out, "reconfig: %s", apex_strerror(rc));
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
	if (pending->reloading != NULL)
		apexd_sd_notify_reload_end(apex_reloader_count(pending->reloading));
	pending->reloading = NULL;
}

/* ---------------------------------------------------------------- zone-add, zone-remove */

/* zone-add ZONE PATTERN and zone-remove ZONE: the zone put in force (or
 * out) by the catalog thread, which the reply does not wait for. */
static int cmd_zone_list(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
			 apex_ctl_buf_t *out)
{
	bool add = req->command == APEX_CTL_ZONE_ADD;
	uint8_t origin[APEX_NAME_MAX];
	char err[APEX_CTL_MESSAGE_MAX];
	int rc;

	if (ctx->zone_add == NULL || ctx->zone_remove == NULL)
		return apex_command_reply_error(out, "%s: apexd was started without a config file",
						req->argv[0]);
	if (!apex_command_parse_zone(req->argv[0], origin, out))
		return APEX_COMMAND_DONE;
	apex_name_lower(origin);
	rc = add ? ctx->zone_add(ctx->catalogs_arg, origin, req->argv[1], err, sizeof(err))
		 : ctx->zone_remove(ctx->catalogs_arg, origin, err, sizeof(err));
	if (rc < 0)
		return apex_command_reply_error(out, "%s", err);
	apex_ctl_reply_status(out, true, NULL);
	if (req->format == APEX_CTL_FORMAT_JSON) {
		apex_ctl_buf_puts(out, "{\"zone\":");
		apex_ctl_json_string(out, req->argv[0]);
		apex_ctl_buf_printf(out, ",\"%s\":true}\n", add ? "added" : "removed");
	} else {
		apex_ctl_buf_printf(out, "zone %s: %s\n", req->argv[0],
				    add ? "added: served once loaded or transferred"
					: "removed, its files deleted");
	}
	return APEX_COMMAND_DONE;
}

/* ---------------------------------------------------------------- transfers */

/* refresh, retransfer (a secondary zone) and notify (a zone with notify:). */
static int cmd_transfer(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
			apex_ctl_buf_t *out)
{
	uint8_t origin[APEX_NAME_MAX];
	const char *done;
	int rc;

	if (!apex_command_parse_zone(req->argv[0], origin, out))
		return APEX_COMMAND_DONE;
	if (req->command == APEX_CTL_NOTIFY) {
		rc = ctx->notifier != NULL ? apex_notifier_notify_now(ctx->notifier, origin)
					   : APEX_ENOENT;
		if (rc == APEX_ENOENT)
			return apex_command_reply_error(out, "zone %s has no notify: targets",
							req->argv[0]);
		done = "NOTIFY queued for its targets";
	} else {
		bool full = req->command == APEX_CTL_RETRANSFER;

		rc = ctx->secondary != NULL ? apex_secondary_refresh(ctx->secondary, origin, full)
					    : APEX_ENOENT;
		if (rc == APEX_ENOENT)
			return apex_command_reply_error(
				out, "zone %s is not a secondary zone (no request-xfr)",
				req->argv[0]);
		done = full ? "a full transfer (AXFR) starts now" : "an SOA check starts now";
	}
	if (rc < 0)
		return apex_command_reply_error(out, "%s: %s", req->argv[0], apex_strerror(rc));
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

/*
 * A reload or reconfig inside systemd's RELOADING=1 ... READY=1, as a
 * SIGHUP's is (the unit's ExecReload runs `apexctl reload`): begun before
 * the command reads anything, ended when its loads are all done, or at
 * once when it queued none.
 */
static int reload_bracketed(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
			    apex_ctl_buf_t *out, apex_command_pending_t *pending,
			    int (*command)(const apex_command_context_t *,
					   const apex_ctl_request_t *, apex_ctl_buf_t *,
					   apex_command_pending_t *))
{
	apexd_sd_notify_reload_begin();
	pending->reloading = ctx->reloader;
	int rc = command(ctx, req, out, pending);
	if (rc != APEX_COMMAND_PENDING)
		apex_command_pending_free(pending);
	return rc;
}

int apex_command_run(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
		     apex_ctl_buf_t *out, apex_command_pending_t *pending, bool *stop)
{
	*stop = false;
	memset(pending, 0, sizeof(*pending));
	pending->command = req->command;
	pending->format = req->format;
	switch (req->command) {
	case APEX_CTL_STATUS: return apex_command_status(ctx, req, out);
	case APEX_CTL_RELOAD: return reload_bracketed(ctx, req, out, pending, cmd_reload);
	case APEX_CTL_ZONE_STATUS: return apex_command_zone_status(ctx, req, out);
	case APEX_CTL_STATS: return apex_command_stats(ctx, req, out);
	case APEX_CTL_RECONFIG: return reload_bracketed(ctx, req, out, pending, cmd_reconfig);
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
	case APEX_CTL_ZONE_ADD:
	case APEX_CTL_ZONE_REMOVE: return cmd_zone_list(ctx, req, out);
	case APEX_CTL_COMMAND_COUNT: break;
	}
	return apex_command_reply_error(out, "unknown command");
}
