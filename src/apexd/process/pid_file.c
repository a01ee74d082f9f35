/* SPDX-License-Identifier: BSD-3-Clause */
/* The pid file (pid_file.h). */
#include "process/pid_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "process/run_dir.h"
#include "util/error.h"
#include "util/log.h"

/* Write the pid file, in a directory made ready for privs' user, and
 * give it to that user, as NSD does. */
int apexd_pid_file_write(const char *path, const apex_privs_t *privs)
{
	char buf[32], err[512];
	int len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	int rc = apexd_run_dir_prepare(path, "pid file", privs, err, sizeof(err));

	if (rc < 0) {
		apex_error("%s", err);
		return rc;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, (size_t)len) != len ||
	    (privs->drop && fchown(fd, privs->uid, privs->gid) < 0)) {
		int failure = apex_errno();
		apex_error("pid file %s: %s", path, apex_strerror(failure));
		if (fd >= 0)
			close(fd);
		return failure;
	}
	if (close(fd) < 0) {
		int failure = apex_errno();
		apex_error("pid file %s: %s", path, apex_strerror(failure));
		return failure;
	}
	return APEX_OK;
}

void apexd_pid_file_remove(const char *path, const char *chroot_dir)
{
	if (unlink(apex_privs_chroot_path(chroot_dir, path)) < 0)
		apex_warning("pid file %s: %s", path, strerror(errno));
}
