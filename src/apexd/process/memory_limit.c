/* SPDX-License-Identifier: BSD-3-Clause */
/* memory-limit: the limit, the cgroup it may come from, and the builds' claims. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "process/memory_limit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/memory.h"
#include "util/error.h"

#define MIB(x) ((double)(x) / (1024.0 * 1024.0))

/* ---------------------------------------------------------------- the cgroup */

int apexd_cgroup_parse_limit(const char *text, uint64_t *limit)
{
	char *end;
	unsigned long long v;

	while (*text == ' ' || *text == '\t')
		text++;
	if (strncmp(text, "max", 3) == 0 && strspn(text + 3, " \t\r\n") == strlen(text + 3)) {
		*limit = 0;
		return APEX_OK;
	}
	if (*text < '0' || *text > '9')
		return APEX_EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno != 0 || strspn(end, " \t\r\n") != strlen(end))
		return APEX_EINVAL;
	/* v1 says "no limit" with the largest page count in bytes
	 * (9223372036854771712 with 4 KiB pages): nothing near it is a limit */
	*limit = v >= (1ULL << 62) ? 0 : (uint64_t)v;
	return APEX_OK;
}

/* Whether a hierarchy's controller list ("cpu,memory") holds memory. */
static bool has_memory(const char *list)
{
	size_t n = strlen("memory");

	for (const char *p = list; *p != '\0';) {
		size_t len = strcspn(p, ",");

		if (len == n && strncmp(p, "memory", n) == 0)
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

/*
 * From ROOT/proc/self/cgroup: the cgroup of the memory controller, on v1
 * (*version 1, its hierarchy's controller list in controllers) or else on
 * v2 (*version 2).  APEX_ENOENT when neither is there.
 */
static int read_proc_cgroup(const char *root, int *version, char *path, char *controllers,
			    char *why, size_t why_size)
{
	char file[APEXD_CGROUP_PATH_MAX + 32], line[APEXD_CGROUP_PATH_MAX + 128];
	char v2[APEXD_CGROUP_PATH_MAX] = "";
	FILE *fp;

	snprintf(file, sizeof(file), "%s/proc/self/cgroup", root);
	if ((fp = fopen(file, "re")) == NULL) {
		int rc = apex_errno();
		return apex_fail(why, why_size, rc, "%s: %s", file, apex_strerror(rc));
	}
	*version = 0;
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *list = strchr(line, ':'), *cgroup;

		line[strcspn(line, "\n")] = '\0';
		if (list == NULL || (cgroup = strchr(++list, ':')) == NULL)
			continue;
		*cgroup++ = '\0';
		if (list[0] == '\0' && strncmp(line, "0:", 2) == 0) {
			snprintf(v2, sizeof(v2), "%s", cgroup);
		} else if (has_memory(list)) {
			*version = 1;
			snprintf(path, APEXD_CGROUP_PATH_MAX / 2, "%s", cgroup);
			snprintf(controllers, APEXD_CGROUP_PATH_MAX, "%s", list);
			break;
		}
	}
	fclose(fp);
	if (*version == 0 && v2[0] != '\0') {
		*version = 2;
		snprintf(path, APEXD_CGROUP_PATH_MAX / 2, "%s", v2);
	}
	if (*version == 0)
		return apex_fail(why, why_size, APEX_ENOENT,
				 "%s names no memory controller (neither cgroup v1's nor v2's)",
				 file);
	return APEX_OK;
}

/* Where the hierarchy of out->version is mounted under root, into mount. */
static void find_mount(const char *root, const apexd_cgroup_t *out, const char *controllers,
		       char *mount, size_t size)
{
	struct stat st;
	char probe[APEXD_CGROUP_PATH_MAX + 64];

	if (out->version == 1) {
		snprintf(mount, size, "%.200s/sys/fs/cgroup/memory", root);
		if (stat(mount, &st) != 0) /* mounted under its list: "cpu,memory" */
			snprintf(mount, size, "%.200s/sys/fs/cgroup/%.200s", root, controllers);
		return;
	}
	snprintf(mount, size, "%.200s/sys/fs/cgroup", root);
	snprintf(probe, sizeof(probe), "%.400s/cgroup.controllers", mount);
	if (stat(probe, &st) != 0) /* a hybrid set-up: v2 beside v1 */
		snprintf(mount, size, "%.200s/sys/fs/cgroup/unified", root);
}

int apexd_cgroup_find(const char *root, apexd_cgroup_t *out, char *why, size_t why_size)
{
	char controllers[APEXD_CGROUP_PATH_MAX], mount[APEXD_CGROUP_PATH_MAX / 2];
	char dir[APEXD_CGROUP_PATH_MAX];
	int rc;

	memset(out, 0, sizeof(*out));
	rc = read_proc_cgroup(root, &out->version, out->path, controllers, why, why_size);
	if (rc < 0)
		return rc;
	find_mount(root, out, controllers, mount, sizeof(mount));
	const char *name = out->version == 1 ? "memory.limit_in_bytes" : "memory.max";
	/* the cgroup, then each parent up to the hierarchy's root; a cgroup
	 * not seen from here (a container without its own cgroup namespace
	 * sees its cgroup as the mount) is passed over */
	snprintf(dir, sizeof(dir), "%s", out->path[0] == '/' ? out->path : "/");
	for (;;) {
		char *file = out->files[out->count];
		int n = snprintf(file, APEXD_CGROUP_PATH_MAX, "%.440s%.512s/%.40s", mount,
				 strcmp(dir, "/") == 0 ? "" : dir, name);

		if (n > 0 && n < APEXD_CGROUP_PATH_MAX && access(file, R_OK) == 0 &&
		    out->count < APEXD_CGROUP_DEPTH_MAX - 1)
			out->count++;
		char *slash = strrchr(dir, '/');
		if (slash == NULL || strcmp(dir, "/") == 0)
			break;
		slash[slash == dir] = '\0'; /* "/a/b" to "/a", "/a" to "/" */
	}
	if (out->count == 0)
		apex_fail(why, why_size, APEX_OK, "no %s for cgroup %s (cgroup v%d) under %s", name,
			  out->path, out->version, mount);
	return APEX_OK;
}

/* The smallest limit of m's cgroup files (0: none), or the last one read
 * when no file can be read.  Under m->lock once the threads run. */
static uint64_t read_cgroup(apexd_memory_limit_t *m)
{
	uint64_t smallest = 0;
	bool read_one = false;

	for (size_t i = 0; i < m->cgroup.count; i++) {
		char buf[64];
		ssize_t n = m->fds[i] >= 0 ? pread(m->fds[i], buf, sizeof(buf) - 1, 0) : -1;
		uint64_t limit;

		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (apexd_cgroup_parse_limit(buf, &limit) < 0)
			continue;
		read_one = true;
		if (limit != 0 && (smallest == 0 || limit < smallest))
			smallest = limit;
	}
	if (read_one)
		m->cgroup_limit = smallest;
	return m->cgroup_limit;
}

/* ---------------------------------------------------------------- the limit */

/* The reason a percentage finds no limit: the cgroup's files say none. */
static int no_limit(const apexd_memory_limit_t *m, char *err, size_t err_size)
{
	const char *name = m->cgroup.version == 1 ? "memory.limit_in_bytes" : "memory.max";

	return apex_fail(err, err_size, APEX_EINVAL,
			 "memory-limit: %u%%: the cgroup apexd runs in (%s, cgroup v%d) has no "
			 "memory limit: %s says none there (%s) and in every parent",
			 m->percent, m->cgroup.path, m->cgroup.version, name, m->cgroup.files[0]);
}

int apexd_memory_limit_init(apexd_memory_limit_t *m, const apex_config_t *cfg, const char *root,
			    char *err, size_t err_size)
{
	char why[APEXD_CGROUP_PATH_MAX * 2] = "";
	int rc;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < APEXD_CGROUP_DEPTH_MAX; i++)
		m->fds[i] = -1;
	m->bytes = cfg->memory_limit;
	m->percent = cfg->memory_limit_percent;
	if (!apexd_memory_limit_on(m))
		return APEX_OK;
	if (pthread_mutex_init(&m->lock, NULL) != 0)
		return apex_fail(err, err_size, APEX_ENOMEM, "memory-limit: out of memory");
	m->lock_ready = true;
	if (m->bytes != 0)
		return APEX_OK;
	if ((rc = apexd_cgroup_find(root, &m->cgroup, why, sizeof(why))) < 0)
		return apex_fail(err, err_size, APEX_EINVAL, "memory-limit: %u%%: %s", m->percent,
				 why);
	if (m->cgroup.count == 0)
		return apex_fail(err, err_size, APEX_EINVAL,
				 "memory-limit: %u%%: no limit found: %s", m->percent, why);
	for (size_t i = 0; i < m->cgroup.count; i++)
		m->fds[i] = open(m->cgroup.files[i], O_RDONLY | O_CLOEXEC);
	if (read_cgroup(m) == 0)
		return no_limit(m, err, err_size);
	return APEX_OK;
}

void apexd_memory_limit_free(apexd_memory_limit_t *m)
{
	for (size_t i = 0; i < APEXD_CGROUP_DEPTH_MAX; i++)
		if (m->fds[i] >= 0)
			close(m->fds[i]);
	if (m->lock_ready)
		pthread_mutex_destroy(&m->lock);
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < APEXD_CGROUP_DEPTH_MAX; i++)
		m->fds[i] = -1;
}

bool apexd_memory_limit_on(const apexd_memory_limit_t *m)
{
	return m != NULL && (m->bytes != 0 || m->percent != 0);
}

/* The limit now, under m->lock. */
static uint64_t limit_locked(apexd_memory_limit_t *m, uint64_t *cgroup)
{
	uint64_t of;

	if (m->bytes != 0) {
		*cgroup = 0;
		return m->bytes;
	}
	of = read_cgroup(m);
	*cgroup = of;
	return of / 100 * m->percent + of % 100 * m->percent / 100;
}

uint64_t apexd_memory_limit_bytes(apexd_memory_limit_t *m, uint64_t *cgroup)
{
	uint64_t limit, of = 0;

	if (!apexd_memory_limit_on(m)) {
		if (cgroup != NULL)
			*cgroup = 0;
		return 0;
	}
	pthread_mutex_lock(&m->lock);
	limit = limit_locked(m, &of);
	pthread_mutex_unlock(&m->lock);
	if (cgroup != NULL)
		*cgroup = of;
	return limit;
}

int apexd_memory_limit_claim(apexd_memory_limit_t *m, apexd_memory_kind_t kind,
			     apexd_memory_claim_t *c, uint64_t estimate, const char *what,
			     char *err, size_t err_size)
{
	uint64_t limit, of, rss, others;
	char detail[96] = "", from[96] = "";

	if (!apexd_memory_limit_on(m))
		return APEX_OK;
	pthread_mutex_lock(&m->lock);
	limit = limit_locked(m, &of);
	if (c->rss == 0)
		c->rss = apex_memory_rss();
	rss = c->rss;
	others = m->reserved - c->estimate;
	if (limit == 0 || rss + others + estimate <= limit) {
		m->reserved = others + estimate;
		c->estimate = estimate;
		pthread_mutex_unlock(&m->lock);
		return APEX_OK;
	}
	m->reserved = others;
	c->estimate = c->rss = 0;
	pthread_mutex_unlock(&m->lock);
	atomic_fetch_add(&m->refused[kind], 1);
	if (others != 0)
		snprintf(detail, sizeof(detail), " + %.1f MiB claimed by other builds under way",
			 MIB(others));
	if (of != 0)
		snprintf(from, sizeof(from), " (%u%% of the cgroup's %.1f MiB)", m->percent,
			 MIB(of));
	return apex_fail(err, err_size, APEX_EMEMLIMIT,
			 "refused by memory-limit: %s: estimated peak %.1f MiB (resident %.1f "
			 "MiB + %.1f MiB for the build%s) would cross the limit of %.1f MiB%s",
			 what, MIB(rss + others + estimate), MIB(rss), MIB(estimate), detail,
			 MIB(limit), from);
}

void apexd_memory_limit_release(apexd_memory_limit_t *m, apexd_memory_claim_t *c)
{
	if (!apexd_memory_limit_on(m) || (c->estimate == 0 && c->rss == 0))
		return;
	pthread_mutex_lock(&m->lock);
	m->reserved -= c->estimate;
	pthread_mutex_unlock(&m->lock);
	c->estimate = c->rss = 0;
}

void apexd_memory_limit_describe(apexd_memory_limit_t *m, char *buf, size_t size)
{
	uint64_t of, limit = apexd_memory_limit_bytes(m, &of);

	if (!apexd_memory_limit_on(m))
		snprintf(buf, size, "none");
	else if (m->bytes != 0)
		snprintf(buf, size, "%.1f MiB", MIB(limit));
	else
		snprintf(buf, size, "%.1f MiB (%u%% of the cgroup's %.1f MiB, cgroup v%d %.200s)",
			 MIB(limit), m->percent, MIB(of), m->cgroup.version, m->cgroup.path);
}

uint64_t apexd_memory_limit_refused(const apexd_memory_limit_t *m, apexd_memory_kind_t kind)
{
	return m != NULL ? atomic_load(&m->refused[kind]) : 0;
}
