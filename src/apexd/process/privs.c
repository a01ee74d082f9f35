/* SPDX-License-Identifier: BSD-3-Clause */
/* Privileges: descriptor limit, user/group switch, capabilities, chroot. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "process/privs.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/error.h"
#include "util/log.h"

void apex_privs_raise_nofile(unsigned long needed)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		apex_warning("getrlimit NOFILE: %s", strerror(errno));
		return;
	}
	if (rl.rlim_cur >= needed)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < needed && geteuid() == 0) {
		struct rlimit want = { needed, needed };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0) {
			apex_debug("file descriptor limit raised to %lu", needed);
			return;
		}
	}
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < needed ? rl.rlim_max : needed;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		apex_warning("setrlimit NOFILE: %s", strerror(errno));
	if (rl.rlim_cur < needed)
		apex_warning("file descriptor limit %lu is below the %lu that tcp-max-connections "
			     "needs: raise it (ulimit -n)",
			     (unsigned long)rl.rlim_cur, needed);
}

/* A number, or NULL-terminated digits only. */
static bool parse_id(const char *s, unsigned long *out)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return *end == '\0' && errno == 0 && *out < (unsigned long)(uid_t)-1;
}

int apex_privs_resolve(const apex_config_t *cfg, apex_privs_t *out, char *err, size_t err_size)
{
	unsigned long id;

	memset(out, 0, sizeof(*out));
	if (cfg->user == NULL) {
		if (cfg->group != NULL) {
			snprintf(err, err_size, "group: is set but user: is not");
			return APEX_EINVAL;
		}
		return APEX_OK;
	}
	struct passwd *pw = getpwnam(cfg->user);

	if (pw != NULL) {
		out->uid = pw->pw_uid;
		out->gid = pw->pw_gid;
	} else if (parse_id(cfg->user, &id)) {
		out->uid = (uid_t)id;
		out->gid = (gid_t)id;
	} else {
		snprintf(err, err_size, "user %s: no such user", cfg->user);
		return APEX_EINVAL;
	}
	if (cfg->group != NULL) {
		struct group *gr = getgrnam(cfg->group);

		if (gr != NULL) {
			out->gid = gr->gr_gid;
		} else if (parse_id(cfg->group, &id)) {
			out->gid = (gid_t)id;
		} else {
			snprintf(err, err_size, "group %s: no such group", cfg->group);
			return APEX_EINVAL;
		}
	}
	out->drop = true;
	snprintf(out->name, sizeof(out->name), "%s", cfg->user);
	return APEX_OK;
}

const char *apex_privs_chroot_path(const char *chroot_dir, const char *path)
{
	size_t n;

	if (chroot_dir == NULL)
		return path;
	n = strlen(chroot_dir);
	while (n > 1 && chroot_dir[n - 1] == '/')
		n--;
	if (n == 1 && chroot_dir[0] == '/')
		return path;
	if (strncmp(path, chroot_dir, n) == 0 && path[n] == '/')
		return path + n;
	return path;
}

int apex_privs_drop(const apex_privs_t *privs, const char *chroot_dir, char *err, size_t err_size)
{
	cap_t caps;

	if (chroot_dir != NULL) {
		if (chroot(chroot_dir) < 0 || chdir("/") < 0) {
			int failure = apex_errno();
			snprintf(err, err_size, "chroot %s: %s", chroot_dir,
				 apex_strerror(failure));
			return failure;
		}
	}
	if (privs->drop || chroot_dir != NULL) {
		/* the bounding set first, while CAP_SETPCAP is still held: then
		 * nothing executed later could regain a capability */
		for (int c = 0; c <= CAP_LAST_CAP; c++)
			(void)prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	}
	if (privs->drop) {
		/* capabilities must not survive the uid change */
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0) {
			int failure = apex_errno();
			snprintf(err, err_size, "prctl KEEPCAPS: %s", apex_strerror(failure));
			return failure;
		}
		if (setgroups(1, &privs->gid) < 0 ||
		    setresgid(privs->gid, privs->gid, privs->gid) < 0) {
			int failure = apex_errno();
			snprintf(err, err_size, "group %lu: %s", (unsigned long)privs->gid,
				 apex_strerror(failure));
			return failure;
		}
		if (setresuid(privs->uid, privs->uid, privs->uid) < 0) {
			int failure = apex_errno();
			snprintf(err, err_size, "user %s: %s", privs->name, apex_strerror(failure));
			return failure;
		}
		/* no way back: root again must fail */
		if (privs->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
			snprintf(err, err_size, "user %s: could become root again", privs->name);
			return APEX_EIO;
		}
	}
	if (privs->drop || chroot_dir != NULL) {
		caps = cap_init(); /* every set empty */
		if (caps == NULL) {
			int failure = apex_errno();
			snprintf(err, err_size, "cap_init: %s", apex_strerror(failure));
			return failure;
		}
		if (cap_clear(caps) < 0 || cap_set_proc(caps) < 0) {
			int failure = apex_errno();
			snprintf(err, err_size, "clearing capabilities: %s",
				 apex_strerror(failure));
			cap_free(caps);
			return failure;
		}
		cap_free(caps);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
			int failure = apex_errno();
			snprintf(err, err_size, "prctl NO_NEW_PRIVS: %s", apex_strerror(failure));
			return failure;
		}
	}
	return APEX_OK;
}
