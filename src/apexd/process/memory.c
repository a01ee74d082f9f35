/* SPDX-License-Identifier: BSD-3-Clause */
/* Allocator purging and resident size. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: HAVE_JEMALLOC, _GNU_SOURCE */
#endif
#include "process/memory.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#ifdef HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#else
#include <malloc.h>
#endif

#include "util/log.h"
#include "util/page_pool.h"

#ifdef HAVE_JEMALLOC
/*
 * jemalloc's options for apexd (MALLOC_CONF in the environment still
 * overrides them):
 *  - thp:always asks for transparent huge pages on all its memory.  A
 *    large zone's load touches gigabytes once, and on virtual machines a
 *    page fault costs microseconds: with 2 MiB pages a 10M-record TLD
 *    loads in about 0.6 of the time, and its lookups miss the TLB less.
 *  - retain:false returns freed extents to the system instead of keeping
 *    them mapped, so that the huge pages of the load's temporary arrays
 *    do not stay resident beside the version (doc/performance.md, 11).
 */
const char *malloc_conf = "thp:always,retain:false";
#endif

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* The page pool's regions the last purge gave back (apex_memory_prepare()). */
static atomic_size_t pool_given_back;

void apex_memory_purge(void)
{
	/* small arenas' regions left empty */
	size_t released = apex_page_pool_release() / APEX_PAGE_POOL_REGION;

	atomic_store_explicit(&pool_given_back, released, memory_order_relaxed);
#ifdef HAVE_JEMALLOC
	/* this thread's cached small objects first, then every arena's dirty
	 * and muzzy pages (MALLCTL_ARENAS_ALL names all arenas at once) */
	int rc = mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);

	if (rc != 0)
		apex_debug("jemalloc thread.tcache.flush: error %d", rc);
	rc = mallctl("arena." STRINGIFY(MALLCTL_ARENAS_ALL) ".purge", NULL, NULL, NULL, 0);
	if (rc != 0)
		apex_debug("jemalloc arena purge: error %d", rc);
#else
	malloc_trim(0);
#endif
}

void apex_memory_prepare(void)
{
	size_t mapped = apex_page_pool_prepare(
		atomic_load_explicit(&pool_given_back, memory_order_relaxed));

	if (mapped > 0)
		apex_debug("memory: %zu page pool regions taken ahead", mapped);
}

#ifdef HAVE_JEMALLOC
/* The arena of apex_memory_thread_gives_back(), made once; 0: none. */
static unsigned give_back_arena;
static pthread_once_t give_back_once = PTHREAD_ONCE_INIT;

static void give_back_arena_make(void)
{
	unsigned index = 0;
	size_t size = sizeof(index);
	ssize_t zero = 0;
	char name[64];
	int rc = mallctl("arenas.create", &index, &size, NULL, 0);

	for (int i = 0; i < 2 && rc == 0; i++) {
		snprintf(name, sizeof(name), "arena.%u.%s_decay_ms", index,
			 i == 0 ? "dirty" : "muzzy");
		rc = mallctl(name, NULL, NULL, &zero, sizeof(zero));
	}
	if (rc != 0)
		apex_debug("jemalloc: no arena that gives memory back at once: error %d", rc);
	else
		give_back_arena = index;
}
#endif

bool apex_memory_thread_gives_back(void)
{
#ifdef HAVE_JEMALLOC
	pthread_once(&give_back_once, give_back_arena_make);
	unsigned index = give_back_arena;
	if (index == 0)
		return false;
	if (mallctl("thread.arena", NULL, NULL, &index, sizeof(index)) == 0)
		return true;
	apex_debug("jemalloc: thread.arena %u refused", index);
#endif
	return false;
}

/* /proc/self/statm kept open (apex_memory_keep_statm()), or -1. */
static int statm_fd = -1;

void apex_memory_keep_statm(void)
{
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (statm_fd >= 0)
		close(statm_fd);
	statm_fd = fd;
}

size_t apex_memory_rss(void)
{
	unsigned long size = 0, resident = 0;
	long page = sysconf(_SC_PAGESIZE);
	char buf[128];
	ssize_t n;

	if (statm_fd >= 0) {
		n = pread(statm_fd, buf, sizeof(buf) - 1, 0);
	} else {
		int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return 0;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	return page > 0 ? (size_t)resident * (size_t)page : 0;
}
