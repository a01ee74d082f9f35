/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control commands (doc/control-protocol.md): status, reload,
 * zone-status, stats, reconfig and stop, each rendering its reply into
 * a buffer in the requested format.  Run on the control thread.
 *
 * reload and reconfig wait for zone loads on the reload thread: they
 * return APEX_COMMAND_PENDING with the tickets to wait for, and
 * apex_command_poll() finishes their reply once every load is done.
 */
#ifndef APEXD_COMMANDS_H
#define APEXD_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "config/daemon_config.h"
#include "ctl/buf.h"
#include "ctl/request.h"
#include "zones/reload.h"
#include "serve/server.h"

struct apexd_memory_limit; /* process/memory_limit.h */

typedef struct apex_command_context {
	apex_server_t *server;
	apex_reloader_t *reloader;
	/* transfers and NOTIFY (NULL when absent) */
	struct apex_secondary *secondary;
	struct apex_notifier *notifier;
	struct apex_xfr_out *xfr_out;
	struct apex_dnstap *dnstap; /* NULL: dnstap off */
	/* the keys and transfer lists in force, which reconfig replaces */
	struct apex_settings_holder *settings;
	const char *control_path;                /* for status */
	struct apexd_memory_limit *memory_limit; /* memory-limit, for status and stats */
	/*
	 * Read the configuration again (reconfig) into out, which the
	 * caller frees with apex_config_free(); returns APEX_OK or an error
	 * with a one-line reason in err.  NULL: reconfig is not possible.
	 */
	int (*reread_config)(void *arg, apex_config_t *out, char *err, size_t err_size);
	void *reread_arg;
	/* Told of the configuration a reconfig reads, before its zones are
	 * applied (loaded) and its settings are in force (the journals of
	 * zones given provide-xfr); NULL: nobody. */
	void (*reconfigured)(void *arg, const apex_config_t *cfg);
	void *reconfigured_arg;
	/* The catalogs consumed (catalog/consumer.h), as hooks (NULL: none):
	 * reconfig holds lock_config while it reads a configuration and puts
	 * it in force, one configuration at a time, and keeps their members
	 * with extend_config (as apexd_catalogs_extend()). */
	void (*lock_config)(void *arg, bool locked);
	int (*extend_config)(void *arg, apex_config_t *cfg, char *err, size_t err_size);
	/* zone-add and zone-remove (apexd_catalogs_zone_add(), _remove()) */
	int (*zone_add)(void *arg, const uint8_t *zone, const char *pattern, char *err,
			size_t err_size);
	int (*zone_remove)(void *arg, const uint8_t *zone, char *err, size_t err_size);
	void *catalogs_arg;
} apex_command_context_t;

/* A reload or reconfig waiting for its zone loads. */
typedef struct apex_command_pending {
	apex_ctl_command_t command;
	apex_ctl_format_t format;
	apex_reload_ticket_t *tickets; /* owned */
	size_t count;
	size_t added, removed, changed; /* reconfig */
	/* set while this reload or reconfig holds systemd's RELOADING=1
	 * (observe/sd_notify.h); apex_command_pending_free() ends it */
	apex_reloader_t *reloading;
} apex_command_pending_t;

enum { APEX_COMMAND_DONE = 0, APEX_COMMAND_PENDING = 1 };

/*
 * Run req.  The complete reply (status line and body) is appended to
 * out, and APEX_COMMAND_DONE returned; or APEX_COMMAND_PENDING with
 * *pending filled (out untouched): call apex_command_poll() after each
 * finished load.  *stop is set when the command was `stop`.
 */
int apex_command_run(const apex_command_context_t *ctx, const apex_ctl_request_t *req,
		     apex_ctl_buf_t *out, apex_command_pending_t *pending, bool *stop);

/*
 * Whether every load pending waits for has finished; if so its reply is
 * appended to out and pending's memory released.
 */
bool apex_command_poll(const apex_command_context_t *ctx, apex_command_pending_t *pending,
		       apex_ctl_buf_t *out);

/* The counters of ctx's threads beside the workers: transfers, NOTIFY and
 * dnstap's writer (zeros for those absent). */
void apex_command_thread_stats(const apex_command_context_t *ctx, apex_thread_stats_t *out);

/*
 * Put cfg, a configuration just read (with a catalog's members, if any),
 * in force as reconfig does: the journals and the verifiers it needs, its
 * zones added and removed (the loads queued are given in pending's
 * tickets and counts), then its keys and transfer lists; cfg is moved
 * into the settings in force, the caller still frees it.  The caller
 * holds lock_config when there is one.  Returns APEX_OK
 * or a negative apex code.
 */
int apex_command_apply_config(const apex_command_context_t *ctx, apex_config_t *cfg,
			      apex_command_pending_t *pending);

/* Release a pending command that will not be finished (connection gone). */
void apex_command_pending_free(apex_command_pending_t *pending);

#endif
