/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parts of the control commands (commands.h) shared by commands.c
 * (the commands that change things, and the dispatch) and
 * status_commands.c (those that report).  Internal to these files.
 */
#ifndef APEXD_COMMANDS_INTERNAL_H
#define APEXD_COMMANDS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/buf.h"
#include "ctl/request.h"

struct apex_command_context; /* control/commands.h */

/* A reply that is only an error status line; returns APEX_COMMAND_DONE. */
int apex_command_reply_error(apex_ctl_buf_t *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The argument as a wire-format name, or an error reply. */
bool apex_command_parse_zone(const char *arg, uint8_t *origin, apex_ctl_buf_t *out);

/* status, zone-status and stats (status_commands.c): the reply appended to
 * out; they return APEX_COMMAND_DONE. */
int apex_command_status(const struct apex_command_context *ctx, const apex_ctl_request_t *req,
			apex_ctl_buf_t *out);
int apex_command_zone_status(const struct apex_command_context *ctx, const apex_ctl_request_t *req,
			     apex_ctl_buf_t *out);
int apex_command_stats(const struct apex_command_context *ctx, const apex_ctl_request_t *req,
		       apex_ctl_buf_t *out);

#endif
