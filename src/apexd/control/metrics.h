/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apexd's metrics in the Prometheus text format: the workers' counters
 * summed when read (stats.h), with RSSAC002's measurements among them,
 * the zones and the transfers.  What the metrics endpoint
 * (metrics_server.h) serves at /metrics; doc/apexd.8 lists the families.
 */
#ifndef APEXD_METRICS_H
#define APEXD_METRICS_H

#include "control/commands.h"
#include "ctl/buf.h"

/* Append every family to out; APEX_OK, or APEX_ENOMEM (out's contents are then partial). */
int apex_metrics_render(const apex_command_context_t *ctx, apex_ctl_buf_t *out);

#endif
