/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket and the metrics endpoint, opened and run (endpoints.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "control/endpoints.h"

#include <string.h>

#include "ctl/request.h"
#include "process/run_dir.h"
#include "util/error.h"
#include "util/log.h"

/* The control socket, created (and owned by the user apexd will run as)
 * but not yet served.  Returns APEX_OK with *ctl NULL when there is none. */
static int open_control(const apex_config_t *cfg, const apex_command_context_t *ctx,
			const apex_privs_t *privs, apex_control_t **ctl)
{
	const char *path =
		cfg->control_socket != NULL ? cfg->control_socket : APEX_CONTROL_SOCKET_DEFAULT;
	char err[512];
	int rc;

	*ctl = NULL;
	if (strcmp(path, "none") == 0)
		return APEX_OK;
	/* only created here; its thread starts after the privilege drop (the
	 * directory's check first: binding in a missing one fails with a
	 * misleading "permission denied") */
	rc = apexd_run_dir_prepare(path, "control socket", privs, err, sizeof(err));
	if (rc == APEX_OK)
		rc = apex_control_open(ctl, path, ctx, privs->drop ? privs->uid : (uid_t)-1,
				       privs->drop ? privs->gid : (gid_t)-1, err, sizeof(err));
	if (rc < 0) {
		if (cfg->control_socket != NULL) {
			apex_error("%s", err);
			return rc;
		}
		apex_warning("%s: running without a control socket (set one with -s)", err);
		return APEX_OK;
	}
	apex_info("control socket %s", path);
	return APEX_OK;
}

int apexd_endpoints_open(const apex_config_t *cfg, const apex_command_context_t *ctx,
			 const apex_privs_t *privs, apex_control_t **control,
			 apex_metrics_server_t **metrics)
{
	char err[512];
	int rc;

	*metrics = NULL;
	if ((rc = open_control(cfg, ctx, privs, control)) < 0)
		return rc;
	/* the metrics endpoint's port is bound here too, served after the drop */
	if (cfg->metrics_set &&
	    (rc = apex_metrics_server_open(metrics, &cfg->metrics, ctx, err, sizeof(err))) < 0) {
		apex_error("%s", err);
		apex_control_stop(*control);
		*control = NULL;
		*metrics = NULL;
		return rc;
	}
	return APEX_OK;
}

int apexd_endpoints_run(apex_control_t *control, apex_metrics_server_t *metrics)
{
	char err[256];
	int rc = APEX_OK;

	if ((control != NULL && (rc = apex_control_run(control, err, sizeof(err))) < 0) ||
	    (metrics != NULL && (rc = apex_metrics_server_run(metrics, err, sizeof(err))) < 0)) {
		apex_error("%s", err);
		return rc;
	}
	if (metrics != NULL)
		apex_info("metrics on %s", apex_metrics_server_url(metrics));
	return APEX_OK;
}

void apexd_endpoints_close(apex_control_t *control, apex_metrics_server_t *metrics)
{
	apex_metrics_server_stop(metrics);
	apex_control_stop(control);
}
