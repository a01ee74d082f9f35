/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/run_dir.h"
#include "util/error.h"
#include "util/log.h"

/* Whether the user uid (group gid) may create and remove files in a
 * directory with this status (supplementary groups and ACLs aside). */
static bool writable_by(const struct stat *st, uid_t uid, gid_t gid)
{
	if (uid == 0)
		return true;
	if (st->st_uid == uid)
		return (st->st_mode & S_IWUSR) && (st->st_mode & S_IXUSR);
	if (st->st_gid == gid)
		return (st->st_mode & S_IWGRP) && (st->st_mode & S_IXGRP);
	return (st->st_mode & S_IWOTH) && (st->st_mode & S_IXOTH);
}

/* apexd's own run directory: created if missing, given to the run user
 * if root owns it.  Only its last component is created. */
static int own_run_dir(const char *dir, const apex_privs_t *privs, char *err, size_t err_size)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		if (errno != ENOENT || mkdir(dir, 0755) < 0 || stat(dir, &st) < 0) {
			int rc = apex_errno();
			snprintf(err, err_size, "run directory %s: %s", dir,
				 errno == ENOENT ? "its parent does not exist" : apex_strerror(rc));
			return rc;
		}
		apex_info("run directory %s created", dir);
	}
	if (privs->drop && S_ISDIR(st.st_mode) && st.st_uid == 0 && privs->uid != 0) {
		if (chown(dir, privs->uid, privs->gid) < 0) {
			int rc = apex_errno();
			snprintf(err, err_size, "run directory %s: giving it to user %s: %s", dir,
				 privs->name, apex_strerror(rc));
			return rc;
		}
		apex_info("run directory %s given to user %s", dir, privs->name);
	}
	return APEX_OK;
}

int apexd_run_dir_prepare(const char *path, const char *what, const apex_privs_t *privs, char *err,
			  size_t err_size)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct stat st;
	int rc;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else {
		snprintf(err, err_size, "%s %s: path too long", what, path);
		return APEX_EINVAL;
	}
	if (strcmp(dir, APEX_RUN_DIR) == 0 && (rc = own_run_dir(dir, privs, err, err_size)) < 0)
		return rc;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, err_size, "%s %s: the directory %s does not exist", what, path, dir);
		return APEX_ENOENT;
	}
	if (privs->drop && !writable_by(&st, privs->uid, privs->gid))
		apex_warning("%s %s: user %s cannot write the directory %s, so the file stays "
			     "behind at exit",
			     what, path, privs->name, dir);
	return APEX_OK;
}
