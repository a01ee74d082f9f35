/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory-limit (apex.conf(5), doc/reload.md): a reload, a transfer or a
 * zone added by a reconfig whose estimated peak would cross the limit is
 * refused before it builds, and the version served is kept, instead of
 * the kernel killing apexd for memory in the middle of the build.
 *
 * The limit is a number of bytes, or a percentage of the limit of the
 * cgroup apexd runs in: cgroup v2's memory.max, or v1's
 * memory.limit_in_bytes where the memory controller is on v1 (the
 * smallest of the cgroup's and its parents').  The cgroup's files are
 * opened at start, so that a chroot does not hide them, and read again at
 * each check, so that a limit changed since (systemctl set-property) is
 * the one applied.
 *
 * A build claims its estimate (process/memory_estimate.h: the bytes it
 * adds to the resident size at its peak) before it starts, and may raise
 * it as it goes (a transfer, as its records arrive): the claim is refused
 * when the resident size when it began, plus the estimates of the other
 * builds under way, plus its own, would cross the limit.  The claim is
 * released when the build is over (published or not).
 */
#ifndef APEXD_MEMORY_LIMIT_H
#define APEXD_MEMORY_LIMIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/daemon_config.h"

#define APEXD_CGROUP_DEPTH_MAX 16
#define APEXD_CGROUP_PATH_MAX 1024

/* What a refused claim was for (the counts of apexctl stats and metrics). */
typedef enum apexd_memory_kind {
	APEXD_MEMORY_RELOAD,   /* a zone's file loaded again, or loaded for a reconfig */
	APEXD_MEMORY_TRANSFER, /* an AXFR, or an IXFR applied */
	APEXD_MEMORY_KINDS,
} apexd_memory_kind_t;

/* The files that hold the memory limit of apexd's cgroup and of its
 * parents, innermost first (apexd_cgroup_find()). */
typedef struct apexd_cgroup {
	int version;                          /* 1 or 2 */
	char path[APEXD_CGROUP_PATH_MAX / 2]; /* the cgroup, as /proc/self/cgroup names it */
	char files[APEXD_CGROUP_DEPTH_MAX][APEXD_CGROUP_PATH_MAX];
	size_t count;
} apexd_cgroup_t;

typedef struct apexd_memory_limit {
	uint64_t bytes;   /* memory-limit: BYTES; 0: a percentage, or none */
	unsigned percent; /* memory-limit: P%; 0: bytes, or none */
	/* with percent: the cgroup's files, open (-1: not), and the last
	 * limit read from them (to use when a read fails) */
	apexd_cgroup_t cgroup;
	int fds[APEXD_CGROUP_DEPTH_MAX];
	uint64_t cgroup_limit;
	pthread_mutex_t lock;
	bool lock_ready;
	uint64_t reserved; /* the estimates of the builds under way, under lock */
	atomic_ullong refused[APEXD_MEMORY_KINDS];
} apexd_memory_limit_t;

/* One build's claim: zero it before the first apexd_memory_limit_claim(). */
typedef struct apexd_memory_claim {
	uint64_t rss;      /* the resident size when it began; 0: not begun */
	uint64_t estimate; /* what it holds of the reservation */
} apexd_memory_claim_t;

/*
 * The limit of cfg (memory_limit, memory_limit_percent).  With a
 * percentage, the cgroup's limit files are found under root ("" on a real
 * system; a directory of fake files in the tests) and opened; no limit
 * there is an error (APEX_EINVAL) whose reason, in err, says why.  No
 * limit configured: m is off, every claim succeeds.
 */
int apexd_memory_limit_init(apexd_memory_limit_t *m, const apex_config_t *cfg, const char *root,
			    char *err, size_t err_size);

void apexd_memory_limit_free(apexd_memory_limit_t *m);

/* Whether a limit is configured (m may be NULL). */
bool apexd_memory_limit_on(const apexd_memory_limit_t *m);

/* The limit in bytes now (0: none); *cgroup (may be NULL) receives the
 * cgroup's limit a percentage is taken of (0 with a fixed limit). */
uint64_t apexd_memory_limit_bytes(apexd_memory_limit_t *m, uint64_t *cgroup);

/*
 * Claim estimate bytes above the resident size for a build (kind, for
 * the counts), or raise c's claim to it.  what describes the build for
 * the message ("reloading FILE (...)").  APEX_OK, or APEX_EMEMLIMIT with
 * the refusal in err: the estimated peak, the resident size, the limit;
 * c is released then.  m NULL or off: APEX_OK.
 */
int apexd_memory_limit_claim(apexd_memory_limit_t *m, apexd_memory_kind_t kind,
			     apexd_memory_claim_t *c, uint64_t estimate, const char *what,
			     char *err, size_t err_size);

/* The build is over: give back what c holds (nothing if nothing). */
void apexd_memory_limit_release(apexd_memory_limit_t *m, apexd_memory_claim_t *c);

/* The limit now in words, into buf: "none", "512.0 MiB", or "190.0 MiB
 * (95% of the cgroup's 200.0 MiB, cgroup v1 /system.slice/apexd.service)". */
void apexd_memory_limit_describe(apexd_memory_limit_t *m, char *buf, size_t size);

/* How many claims of kind were refused. */
uint64_t apexd_memory_limit_refused(const apexd_memory_limit_t *m, apexd_memory_kind_t kind);

/* ---------------------------------------------------------------- the cgroup */

/*
 * The memory limit files of the calling process's cgroup, from
 * ROOT/proc/self/cgroup: v1's memory.limit_in_bytes under
 * ROOT/sys/fs/cgroup/memory where a hierarchy has the memory controller,
 * else v2's memory.max under ROOT/sys/fs/cgroup (or its unified/ of a
 * hybrid set-up); the cgroup's own and its parents' that exist.  Returns
 * APEX_OK (out->count may be 0: none found), or an error with the reason
 * in why.
 */
int apexd_cgroup_find(const char *root, apexd_cgroup_t *out, char *why, size_t why_size);

/* A limit file's text: *limit in bytes, or 0 for none ("max", or v1's
 * page-rounded largest value).  APEX_EINVAL when it is neither. */
int apexd_cgroup_parse_limit(const char *text, uint64_t *limit);

#endif
