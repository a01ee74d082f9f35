/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Privileges of the apexd process: the file descriptor limit raised at
 * start, and the drop to an unprivileged user once every socket is
 * bound (port 53 needs root or CAP_NET_BIND_SERVICE; nothing after
 * that does).
 *
 * The drop happens before any thread is started, so that it covers every
 * thread: credentials, capabilities and no_new_privs are per thread in
 * Linux, and threads inherit them from their creator.
 */
#ifndef APEXD_PRIVS_H
#define APEXD_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/daemon_config.h"

/* Who to become: resolved before a chroot hides /etc/passwd. */
typedef struct apex_privs {
	bool drop; /* a user: was configured */
	uid_t uid;
	gid_t gid;
	char name[64]; /* for logs */
} apex_privs_t;

/*
 * Raise RLIMIT_NOFILE so that `needed` descriptors fit: the soft limit
 * to the hard one, and as root the hard one too if it is still short.
 * A shortfall is logged, not fatal.
 */
void apex_privs_raise_nofile(unsigned long needed);

/*
 * Look up cfg's user and group (names or numbers; the group defaults
 * to the user's primary group).  Without a user: out->drop is false.
 * Returns APEX_OK or APEX_EINVAL with the reason in err.
 */
int apex_privs_resolve(const apex_config_t *cfg, apex_privs_t *out, char *err, size_t err_size);

/*
 * chroot to chroot_dir (if not NULL), then become privs' user and group
 * with no supplementary groups, clear every capability (libcap) and set
 * no_new_privs.  Must run before any thread is created.  Returns APEX_OK
 * or a negative apex code (-errno of the failed call) with the reason in
 * err.
 */
int apex_privs_drop(const apex_privs_t *privs, const char *chroot_dir, char *err, size_t err_size);

/* The path a file outside has inside chroot_dir (a suffix of path, or path itself). */
const char *apex_privs_chroot_path(const char *chroot_dir, const char *path);

#endif
