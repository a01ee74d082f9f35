/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a machine charges for memory taken fresh from the system: the time
 * to fault in MiB mebibytes (MADV_POPULATE_WRITE, as a derivation faults
 * in its copies, util/populate.h) in small pages or in transparent huge
 * pages, then to write them once more, after a pause in which the memory
 * freed by the round before may be given to a hypervisor (free page
 * reporting) or merged by the kernel.  The cost a secondary pays at its
 * first IXFR after a purge gave its blocks back (doc/performance.md
 * section 15).
 *
 *   contrib/bench/fault_cost [-m MIB] [-p SECONDS] [-r ROUNDS] [-k small,huge]
 *
 * Each round maps MIB MiB aligned to 2 MiB, asks for the kind of page
 * with madvise (MADV_NOHUGEPAGE or MADV_HUGEPAGE), faults it in, writes
 * it, reports both times and the huge pages it got (AnonHugePages of
 * /proc/self/smaps_rollup), unmaps it and pauses; the kinds alternate.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define HUGE_PAGE ((size_t)2 << 20)

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The process's AnonHugePages in KiB, or -1. */
static long huge_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "AnonHugePages:", 14) == 0)
			kib = atol(line + 14);
	fclose(f);
	return kib;
}

/* One round: 0 on success, -1 when the memory could not be had. */
static int round_of(size_t size, int huge)
{
	size_t mapped = size + HUGE_PAGE;
	uint8_t *map =
		mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (map == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	uint8_t *p = (uint8_t *)(((uintptr_t)map + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (madvise(p, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0)
		perror("madvise");
	double t0 = now_ms();
	int rc = madvise(p, size, MADV_POPULATE_WRITE);
	double t1 = now_ms();
	memset(p, 0x5a, size);
	double t2 = now_ms();
	printf("%-5s %6zu MiB: fault in %9.3f ms%s, write %8.3f ms, huge pages %ld KiB\n",
	       huge ? "huge" : "small", size >> 20, t1 - t0,
	       rc != 0 ? " (MADV_POPULATE_WRITE failed: faulted by the write)" : "", t2 - t1,
	       huge_kib());
	fflush(stdout);
	munmap(map, mapped);
	return 0;
}

int main(int argc, char **argv)
{
	size_t mib = 100;
	unsigned pause_s = 5, rounds = 2;
	int kinds[2] = { 0, 1 }, nkinds = 2;
	int opt;

	while ((opt = getopt(argc, argv, "m:p:r:k:")) != -1) {
		switch (opt) {
		case 'm': mib = strtoull(optarg, NULL, 10); break;
		case 'p': pause_s = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'r': rounds = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'k':
			nkinds = 0;
			if (strstr(optarg, "small") != NULL)
				kinds[nkinds++] = 0;
			if (strstr(optarg, "huge") != NULL)
				kinds[nkinds++] = 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-m MIB] [-p SECONDS] [-r ROUNDS] [-k small,huge]\n",
				argv[0]);
			return 2;
		}
	}
	if (mib == 0 || nkinds == 0) {
		fprintf(stderr, "%s: nothing to measure\n", argv[0]);
		return 2;
	}
	for (unsigned r = 0; r < rounds; r++) {
		for (int k = 0; k < nkinds; k++) {
			if (round_of(mib << 20, kinds[k]) < 0)
				return 1;
			sleep(pause_s);
		}
	}
	return 0;
}
