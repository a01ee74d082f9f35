/* SPDX-License-Identifier: BSD-3-Clause */
/* apexd's log as configured (logging.h). */
#include "observe/logging.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/log.h"

int apexd_logging_start(const apex_config_t *cfg, bool verbose, const apex_privs_t *privs)
{
	char err[600];

	apex_log_set_level(verbose ? APEX_LOG_DEBUG : (apex_log_level_t)cfg->log_level);
	if (cfg->log_syslog)
		apex_log_to_syslog(cfg->log_facility);
	if (cfg->log_file == NULL)
		return APEX_OK;
	int rc = apex_log_to_file(cfg->log_file, err, sizeof(err));
	if (rc < 0) {
		apex_error("%s", err);
		return rc;
	}
	if (privs->drop && chown(cfg->log_file, privs->uid, privs->gid) < 0)
		apex_warning("log file %s: cannot give it to user %s: %s (SIGUSR1 may then "
			     "fail to open it again)",
			     cfg->log_file, privs->name, strerror(errno));
	return APEX_OK;
}

void apexd_logging_rebase(const apex_config_t *cfg)
{
	if (cfg->chroot_dir == NULL)
		return;
	apex_log_rebase(apex_privs_chroot_path, cfg->chroot_dir);
	if (cfg->log_file != NULL &&
	    apex_privs_chroot_path(cfg->chroot_dir, cfg->log_file) == cfg->log_file)
		apex_warning("log file %s: outside the chroot, SIGUSR1 cannot open it again",
			     cfg->log_file);
}
