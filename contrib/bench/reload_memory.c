/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memory of a reload derived from the version served, step by step,
 * in one process: no server, no workers (doc/reload.md, "How the
 * reload's memory is bounded").
 *
 *   contrib/bench/reload_memory ZONEFILE ORIGIN EDITED_FILE [JOURNAL_SIZE]
 *
 * Loads ZONEFILE and precomputes its answers as apexd serves it, then
 * does what apexd's reload thread does with EDITED_FILE: the comparison
 * (apex_file_diff()), the version derived from the change
 * (apex_ixfr_version_guarded()) after the allocator is purged, its
 * precomputed answers, the change set freed (apexd keeps it for the
 * journal until the version is published, unless it is larger than 1/64
 * of the version served: then it is freed once the derivation has read
 * it, and the journal compares the two versions instead once the
 * allocator is purged, timed here as "journal's difference": written in
 * pieces into a journal of JOURNAL_SIZE bytes, default 64 MiB as apexd's
 * journal-size, in a file of its own that is removed after), the old
 * version let go and the allocator purged.  A thread samples the
 * resident size every millisecond; printed for each step: its peak and
 * its end, in MiB above the steady state (the version loaded, purged),
 * and jemalloc's allocated bytes at its end.  Run with apexd's allocator options (they
 * are set below as apexd sets them).
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
const char *malloc_conf = "thp:always,retain:false"; /* apexd's (process/memory.c) */
#endif

#include "dns/name.h"
#include "query/precompute.h"
#include "util/error.h"
#include "util/clock.h"
#include "xfr/changes.h"
#include "xfr/diff.h"
#include "xfr/file_diff.h"
#include "xfr/ixfr_apply.h"
#include "xfr/journal_diff.h"
#include "zone/load.h"
#include "zone/zone.h"

static atomic_size_t peak;   /* resident bytes, the highest since the last step */
static atomic_bool sampling; /* the sampler runs while set */

/* Read without the allocator: the sampler thread would else take an
 * allocator arena of its own, whose first huge page the figures would
 * count. */
static size_t resident(void)
{
	char text[128];
	int fd = open("/proc/self/statm", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	unsigned long size = 0, pages = 0;

	if (fd >= 0)
		close(fd);
	if (n > 0) {
		text[n] = '\0';
		if (sscanf(text, "%lu %lu", &size, &pages) != 2)
			pages = 0;
	}
	return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

static void *sampler(void *arg)
{
	const struct timespec ms = { 0, 1000000 };

	(void)arg;
	while (atomic_load(&sampling)) {
		size_t r = resident(), p = atomic_load(&peak);

		while (r > p && !atomic_compare_exchange_weak(&peak, &p, r))
			;
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static size_t allocated(void)
{
#ifdef HAVE_JEMALLOC
	uint64_t epoch = 1;
	size_t value = 0, size = sizeof(value);

	mallctl("epoch", &epoch, &size, &epoch, sizeof(epoch));
	size = sizeof(value);
	if (mallctl("stats.allocated", &value, &size, NULL, 0) != 0)
		value = 0;
	return value;
#else
	return 0;
#endif
}

static void purge(void)
{
#ifdef HAVE_JEMALLOC
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	mallctl("arena.4096.purge", NULL, NULL, NULL, 0); /* MALLCTL_ARENAS_ALL */
#endif
}

/* As apexd's reload does with a large set (zones/reload_diff.c). */
static void release_set(void *ctx)
{
	apex_changes_free(ctx);
	purge();
}

static int no_whole(void *ctx, char *err, size_t err_size)
{
	(void)ctx;
	(void)err;
	(void)err_size;
	return APEX_OK;
}

static double mib(size_t bytes, size_t base)
{
	return ((double)bytes - (double)base) / (1024.0 * 1024.0);
}

/* One step's line: its peak and end above base, the allocator's bytes. */
static void step(const char *what, size_t base)
{
	size_t now = resident(), p = atomic_exchange(&peak, now);

	printf("%-34s peak %+8.1f  end %+8.1f MiB  allocated %8.1f MiB\n", what,
	       mib(p > now ? p : now, base), mib(now, base), (double)allocated() / 1048576.0);
	fflush(stdout);
}

/* What apexd's journal does after the reload when the change set was
 * freed once read: the difference of the two versions appended to a
 * journal of journal_size bytes, in a file of its own, removed after
 * (xfr/journal_diff.h). */
static int journal_difference(const apex_zone_t *old, const apex_zone_t *zone, size_t journal_size,
			      size_t steady)
{
	char path[] = "/tmp/apex-reload-memory-XXXXXX", err[512];
	apex_journal_t j;
	size_t removed = 0, added = 0;
	int fd = mkstemp(path);

	if (fd < 0)
		return APEX_EIO;
	close(fd);
	unlink(path);
	purge(); /* as apexd does before (zones/reload.c) */
	step("allocator purged", steady);
	int rc = apex_journal_open(&j, path, old->origin, journal_size, false, NULL, err,
				   sizeof(err));
	if (rc != APEX_OK) {
		fprintf(stderr, "%s\n", err);
		return rc;
	}
	uint64_t t0 = apex_monotonic_ns();
	rc = apex_journal_append_diff(&j, old, zone, &removed, &added, err, sizeof(err));
	double s = (double)(apex_monotonic_ns() - t0) / 1e9;
	if (rc == APEX_ESPACE)
		printf("journal's difference: larger than journal-size (%zu bytes), not made, in "
		       "%.3f s\n",
		       journal_size, s);
	else if (rc == APEX_OK)
		printf("journal's difference: %zu removed, %zu added, %.1f MiB written in %.3f s\n",
		       removed, added, (double)j.entries[0].size / 1048576.0, s);
	else
		fprintf(stderr, "journal: %s\n", err);
	apex_journal_close(&j);
	unlink(path);
	step("journal's difference, written", steady);
	return rc == APEX_ESPACE ? APEX_OK : rc;
}

int main(int argc, char **argv)
{
	uint8_t origin[APEX_NAME_MAX];
	char err[512] = "";
	apex_zone_t *old = NULL, *zone = NULL;
	apex_changes_t set;
	apex_file_diff_result_t result;
	pthread_t thread;
	bool in_place = false;

	/* the bound of the journal's difference: journal-size, apexd's
	 * default unless given (the file's few bytes of header aside) */
	size_t journal_size = argc == 5 ? strtoull(argv[4], NULL, 10) : 64u << 20;
	if (argc < 4 || argc > 5 || apex_name_from_str(argv[2], origin) < 0) {
		fprintf(stderr, "usage: %s ZONEFILE ORIGIN EDITED_FILE [JOURNAL_SIZE]\n", argv[0]);
		return 2;
	}
	if (apex_zone_load(argv[1], origin, &old, err, sizeof(err)) != APEX_OK ||
	    apex_precompute(old) != APEX_OK) {
		fprintf(stderr, "%s: %s\n", argv[1], err);
		return 1;
	}
	purge();
	size_t steady = resident();
	printf("steady: %.1f MiB resident, %zu records, %zu ids, %zu names\n", mib(steady, 0),
	       old->record_count, old->id_count, old->node_count);
	atomic_store(&peak, steady);
	atomic_store(&sampling, true);
	if (pthread_create(&thread, NULL, sampler, NULL) != 0)
		return 1;

	apex_changes_init(&set);
	int rc = apex_file_diff(old, argv[3], &set, &result, NULL, err, sizeof(err));
	printf("change set: %zu removed, %zu added, %.1f MiB\n", set.removed, set.added,
	       (double)set.size / 1048576.0);
	step("comparison (apex_file_diff)", steady);
	purge(); /* as apexd does before a derivation (zones/reload_diff.c) */
	step("allocator purged", steady);
	if (rc == APEX_OK && result == APEX_FILE_DIFF_CHANGED) {
		bool large = set.size > old->memory / 64; /* zones/reload_diff.c's share */
		apex_ixfr_guard_t guard = { no_whole, &set, large ? release_set : NULL };
		rc = apex_ixfr_version_guarded(old, &set, 1, argv[3], &guard, &zone, &in_place, err,
					       sizeof(err));
		step(in_place ? "derivation (in place)" : "derivation (built whole)", steady);
		printf("change set %s\n", set.data == NULL ? "freed once read" : "kept");
		if (rc == APEX_OK) {
			apex_index_mem_t *im = atomic_load(&zone->index_mem);
			/* the index: its arena (a hash table built again) and its
			 * block (key prefixes, order, a hash table copied:
			 * zone/index_block.h) */
			printf("new version: arena %.1f MiB, name index %.1f MiB (arena %.1f, "
			       "block %.1f), %zu ids\n",
			       (double)apex_arena_footprint(zone->arena) / 1048576.0,
			       im != NULL ? (double)(apex_arena_footprint(im->arena) +
						     im->block_size) /
						    1048576.0
					  : 0.0,
			       im != NULL ? (double)apex_arena_footprint(im->arena) / 1048576.0
					  : 0.0,
			       im != NULL ? (double)im->block_size / 1048576.0 : 0.0,
			       zone->id_count);
		}
		if (rc == APEX_OK)
			rc = apex_precompute(zone);
		step("precomputed answers", steady);
		if (rc == APEX_OK && set.data == NULL)
			rc = journal_difference(old, zone, journal_size, steady);
	}
	apex_changes_free(&set);
	step("change set freed", steady);
	apex_zone_unref(old);
	purge();
	step("old version let go, purged", steady);
	atomic_store(&sampling, false);
	pthread_join(thread, NULL);
	if (zone != NULL)
		apex_zone_unref(zone);
	if (rc != APEX_OK) {
		fprintf(stderr, "%s: %s (%d)\n", argv[3], err, rc);
		return 1;
	}
	printf("result: %s\n", result == APEX_FILE_DIFF_SAME ? "unchanged" : "changed");
	return 0;
}
