/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apexd's endpoints for its operators: the control socket (apexctl) and
 * the metrics endpoint (metrics:).  Both are opened as root before the
 * privilege drop (the socket given to the run user, the port bound) and
 * served on threads of their own once it is done.
 */
#ifndef APEXD_ENDPOINTS_H
#define APEXD_ENDPOINTS_H

#include "config/daemon_config.h"
#include "control/commands.h"
#include "control/control.h"
#include "control/metrics_server.h"
#include "process/privs.h"

/*
 * Open the control socket: the configured path, or the default (where a
 * failure is only a warning: apexd then runs without one), or none
 * (*control NULL); then the metrics endpoint if configured (*metrics
 * NULL otherwise).  ctx is copied.  Returns APEX_OK, or a negative apex
 * code once the failure is logged and what was opened is closed.
 */
int apexd_endpoints_open(const apex_config_t *cfg, const apex_command_context_t *ctx,
			 const apex_privs_t *privs, apex_control_t **control,
			 apex_metrics_server_t **metrics);

/* Start serving those opened, after the privilege drop.  Returns APEX_OK,
 * or a negative apex code once the failure is logged. */
int apexd_endpoints_run(apex_control_t *control, apex_metrics_server_t *metrics);

/* Close both (NULL: nothing), the metrics endpoint first: after a failed
 * start. */
void apexd_endpoints_close(apex_control_t *control, apex_metrics_server_t *metrics);

#endif
