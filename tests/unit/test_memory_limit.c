/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory-limit (src/apexd/process/memory_limit.c, memory_estimate.c): the
 * cgroup's limit found from fake /proc/self/cgroup and /sys/fs/cgroup
 * trees (v1, v2, a hybrid set-up, a container's view, limits on parents,
 * none), its files read again as they change, the builds' claims and the
 * refusal's message, and the estimates.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "process/memory.h"
#include "process/memory_estimate.h"
#include "process/memory_limit.h"
#include "util/error.h"

static char root[512];

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(root, sizeof(root), "%s/apex-memory-test-XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	return mkdtemp(root) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* A fresh fake root for one test: ROOT/name. */
static const char *fake_root(const char *name)
{
	static char path[600];
	char cmd[700];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	return path;
}

/* Write text to base/rel, making its directories. */
static void put(const char *base, const char *rel, const char *text)
{
	char path[1200], cmd[1300];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_true(fputs(text, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
}

static apex_config_t percent_config(unsigned percent)
{
	apex_config_t cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.memory_limit_percent = percent;
	return cfg;
}

#define V1_UNLIMITED "9223372036854771712\n"

static void parse_limit(void **state)
{
	uint64_t v = 1;

	(void)state;
	assert_int_equal(apexd_cgroup_parse_limit("max\n", &v), APEX_OK);
	assert_true(v == 0);
	assert_int_equal(apexd_cgroup_parse_limit(V1_UNLIMITED, &v), APEX_OK);
	assert_true(v == 0);
	assert_int_equal(apexd_cgroup_parse_limit("536870912\n", &v), APEX_OK);
	assert_true(v == 536870912);
	assert_int_equal(apexd_cgroup_parse_limit("4096", &v), APEX_OK);
	assert_true(v == 4096);
	assert_int_equal(apexd_cgroup_parse_limit("", &v), APEX_EINVAL);
	assert_int_equal(apexd_cgroup_parse_limit("maximum\n", &v), APEX_EINVAL);
	assert_int_equal(apexd_cgroup_parse_limit("12k\n", &v), APEX_EINVAL);
	assert_int_equal(apexd_cgroup_parse_limit("-1\n", &v), APEX_EINVAL);
}

/* cgroup v1, as on Debian with systemd's hybrid set-up: the memory
 * hierarchy's line, its group and a parent with a smaller limit. */
static void v1_with_parents(void **state)
{
	const char *r = fake_root("v1");
	apexd_cgroup_t cg;
	apexd_memory_limit_t m;
	apex_config_t cfg = percent_config(50);
	char why[512] = "", err[1024] = "", path[1200];
	uint64_t of;

	(void)state;
	put(r, "proc/self/cgroup",
	    "12:pids:/system.slice/apexd.service\n"
	    "4:memory:/system.slice/apexd.service\n"
	    "1:name=systemd:/system.slice/apexd.service\n"
	    "0::/system.slice/apexd.service\n");
	put(r, "sys/fs/cgroup/memory/memory.limit_in_bytes", V1_UNLIMITED);
	put(r, "sys/fs/cgroup/memory/system.slice/memory.limit_in_bytes", "1073741824\n");
	put(r, "sys/fs/cgroup/memory/system.slice/apexd.service/memory.limit_in_bytes",
	    "536870912\n");
	put(r, "sys/fs/cgroup/unified/system.slice/apexd.service/memory.max", "max\n");
	assert_int_equal(apexd_cgroup_find(r, &cg, why, sizeof(why)), APEX_OK);
	assert_int_equal(cg.version, 1);
	assert_string_equal(cg.path, "/system.slice/apexd.service");
	assert_int_equal(cg.count, 3); /* the group, its parent, the root */
	snprintf(path, sizeof(path),
		 "%s/sys/fs/cgroup/memory/system.slice/apexd.service/memory.limit_in_bytes", r);
	assert_string_equal(cg.files[0], path);

	/* 50% of the smaller of 512 MiB and 1 GiB */
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, r, err, sizeof(err)), APEX_OK);
	assert_true(apexd_memory_limit_on(&m));
	assert_true(apexd_memory_limit_bytes(&m, &of) == 256ULL << 20);
	assert_true(of == 512ULL << 20);
	/* read again at each use: the group's limit raised past its parent's */
	put(r, "sys/fs/cgroup/memory/system.slice/apexd.service/memory.limit_in_bytes",
	    "4294967296\n");
	assert_true(apexd_memory_limit_bytes(&m, &of) == 512ULL << 20);
	assert_true(of == 1ULL << 30);
	apexd_memory_limit_describe(&m, err, sizeof(err));
	assert_string_equal(err, "512.0 MiB (50% of the cgroup's 1024.0 MiB, cgroup v1 "
				 "/system.slice/apexd.service)");
	apexd_memory_limit_free(&m);
}

/* A hierarchy mounted under its controller list; a file that cannot be
 * read keeps the last limit read. */
static void v1_joined_controllers(void **state)
{
	const char *r = fake_root("v1-joined");
	apexd_memory_limit_t m;
	apex_config_t cfg = percent_config(100);
	char why[512] = "", err[1024] = "";
	apexd_cgroup_t cg;

	(void)state;
	put(r, "proc/self/cgroup", "3:cpu,memory:/apex\n");
	put(r, "sys/fs/cgroup/cpu,memory/apex/memory.limit_in_bytes", "209715200\n");
	assert_int_equal(apexd_cgroup_find(r, &cg, why, sizeof(why)), APEX_OK);
	assert_int_equal(cg.version, 1);
	assert_int_equal(cg.count, 1);
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, r, err, sizeof(err)), APEX_OK);
	assert_true(apexd_memory_limit_bytes(&m, NULL) == 200ULL << 20);
	put(r, "sys/fs/cgroup/cpu,memory/apex/memory.limit_in_bytes", "garbage\n");
	assert_true(apexd_memory_limit_bytes(&m, NULL) == 200ULL << 20);
	apexd_memory_limit_free(&m);
}

/* cgroup v2 alone (cgroup.controllers at the mount): memory.max. */
static void v2(void **state)
{
	const char *r = fake_root("v2");
	apexd_memory_limit_t m;
	apex_config_t cfg = percent_config(80);
	char why[512] = "", err[1024] = "";
	apexd_cgroup_t cg;

	(void)state;
	put(r, "proc/self/cgroup", "0::/system.slice/apexd.service\n");
	put(r, "sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
	put(r, "sys/fs/cgroup/system.slice/memory.max", "max\n");
	put(r, "sys/fs/cgroup/system.slice/apexd.service/memory.max", "1000000000\n");
	assert_int_equal(apexd_cgroup_find(r, &cg, why, sizeof(why)), APEX_OK);
	assert_int_equal(cg.version, 2);
	assert_int_equal(cg.count, 2); /* the root has no memory.max */
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, r, err, sizeof(err)), APEX_OK);
	assert_true(apexd_memory_limit_bytes(&m, NULL) == 800000000);
	apexd_memory_limit_free(&m);

	/* a hybrid set-up without a v1 memory hierarchy: v2 under unified/ */
	r = fake_root("hybrid-v2");
	put(r, "proc/self/cgroup", "5:pids:/x\n0::/x\n");
	put(r, "sys/fs/cgroup/unified/x/memory.max", "2000000000\n");
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, r, err, sizeof(err)), APEX_OK);
	assert_true(apexd_memory_limit_bytes(&m, NULL) == 1600000000);
	apexd_memory_limit_free(&m);
}

/* A container without a cgroup namespace of its own: /proc/self/cgroup
 * names a path that is not under the mount, whose root is the group. */
static void container_view(void **state)
{
	const char *r = fake_root("container");
	apexd_memory_limit_t m;
	apex_config_t cfg = percent_config(90);
	char err[1024] = "";

	(void)state;
	put(r, "proc/self/cgroup", "7:memory:/docker/0123abcd\n");
	put(r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "1048576000\n");
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, r, err, sizeof(err)), APEX_OK);
	assert_true(apexd_memory_limit_bytes(&m, NULL) == 943718400);
	apexd_memory_limit_free(&m);
}

/* A percentage with no limit to take it of is an error that says why. */
static void no_limit_is_an_error(void **state)
{
	const char *r = fake_root("unlimited");
	apexd_memory_limit_t m;
	apex_config_t cfg = percent_config(95);
	char err[1024] = "", expect[1400];

	(void)state;
	put(r, "proc/self/cgroup", "4:memory:/a/b\n");
	put(r, "sys/fs/cgroup/memory/memory.limit_in_bytes", V1_UNLIMITED);
	put(r, "sys/fs/cgroup/memory/a/memory.limit_in_bytes", V1_UNLIMITED);
	put(r, "sys/fs/cgroup/memory/a/b/memory.limit_in_bytes", V1_UNLIMITED);
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, r, err, sizeof(err)), APEX_EINVAL);
	snprintf(expect, sizeof(expect),
		 "memory-limit: 95%%: the cgroup apexd runs in (/a/b, cgroup v1) has no memory "
		 "limit: memory.limit_in_bytes says none there "
		 "(%s/sys/fs/cgroup/memory/a/b/memory.limit_in_bytes) and in every parent",
		 r);
	assert_string_equal(err, expect);
	apexd_memory_limit_free(&m);

	/* no limit file at all */
	r = fake_root("no-files");
	put(r, "proc/self/cgroup", "4:memory:/a\n");
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, r, err, sizeof(err)), APEX_EINVAL);
	snprintf(expect, sizeof(expect),
		 "memory-limit: 95%%: no limit found: no memory.limit_in_bytes for cgroup /a "
		 "(cgroup v1) under %s/sys/fs/cgroup/memory",
		 r);
	assert_string_equal(err, expect);
	apexd_memory_limit_free(&m);

	/* no memory controller named */
	r = fake_root("no-memory");
	put(r, "proc/self/cgroup", "3:cpu:/a\n1:name=systemd:/a\n");
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, r, err, sizeof(err)), APEX_EINVAL);
	snprintf(expect, sizeof(expect),
		 "memory-limit: 95%%: %s/proc/self/cgroup names no memory controller (neither "
		 "cgroup v1's nor v2's)",
		 r);
	assert_string_equal(err, expect);
	apexd_memory_limit_free(&m);

	/* no /proc/self/cgroup */
	r = fake_root("no-proc");
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, r, err, sizeof(err)), APEX_EINVAL);
	snprintf(expect, sizeof(expect), "memory-limit: 95%%: %s/proc/self/cgroup: not found", r);
	assert_string_equal(err, expect);
	apexd_memory_limit_free(&m);
}

/* Claims: within the limit, the others' claims counted, a refusal's
 * message, and the counts. */
static void claims(void **state)
{
	apexd_memory_limit_t m;
	apex_config_t cfg;
	apexd_memory_claim_t a = { 0 }, b = { 0 };
	char err[1024] = "";
	uint64_t rss = apex_memory_rss(), limit;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, root, err, sizeof(err)), APEX_OK);
	assert_false(apexd_memory_limit_on(&m)); /* no limit: every claim passes */
	assert_int_equal(apexd_memory_limit_claim(&m, APEXD_MEMORY_RELOAD, &a, 1ULL << 60, "x", err,
						  sizeof(err)),
			 APEX_OK);
	assert_int_equal(apexd_memory_limit_claim(NULL, APEXD_MEMORY_RELOAD, &a, 1ULL << 60, "x",
						  err, sizeof(err)),
			 APEX_OK);
	apexd_memory_limit_free(&m);

	assert_true(rss > 0);
	limit = (rss + (100ULL << 20)) >> 20 << 20; /* about 100 MiB free */
	cfg.memory_limit = limit;
	assert_int_equal(apexd_memory_limit_init(&m, &cfg, root, err, sizeof(err)), APEX_OK);
	assert_true(apexd_memory_limit_bytes(&m, NULL) == limit);
	assert_int_equal(apexd_memory_limit_claim(&m, APEXD_MEMORY_RELOAD, &a, 60ULL << 20,
						  "the first", err, sizeof(err)),
			 APEX_OK);
	assert_true(a.rss > 0 && a.estimate == 60ULL << 20);
	/* raised: still within */
	assert_int_equal(apexd_memory_limit_claim(&m, APEXD_MEMORY_RELOAD, &a, 70ULL << 20,
						  "the first", err, sizeof(err)),
			 APEX_OK);
	/* a second build meanwhile: 70 MiB are claimed */
	assert_int_equal(apexd_memory_limit_claim(&m, APEXD_MEMORY_TRANSFER, &b, 50ULL << 20,
						  "an AXFR of x.", err, sizeof(err)),
			 APEX_EMEMLIMIT);
	assert_non_null(strstr(err, "refused by memory-limit: an AXFR of x.: estimated peak "));
	assert_non_null(strstr(err, " + 50.0 MiB for the build + 70.0 MiB claimed by other "
				    "builds under way) would cross the limit of "));
	assert_true(b.rss == 0 && b.estimate == 0);
	assert_true(apexd_memory_limit_refused(&m, APEXD_MEMORY_TRANSFER) == 1);
	assert_true(apexd_memory_limit_refused(&m, APEXD_MEMORY_RELOAD) == 0);
	/* the first is over: the second fits */
	apexd_memory_limit_release(&m, &a);
	apexd_memory_limit_release(&m, &a); /* twice: nothing more */
	assert_true(m.reserved == 0);
	assert_int_equal(apexd_memory_limit_claim(&m, APEXD_MEMORY_TRANSFER, &b, 50ULL << 20,
						  "an AXFR of x.", err, sizeof(err)),
			 APEX_OK);
	/* raised past the limit: refused, and its claim given back */
	assert_int_equal(apexd_memory_limit_claim(&m, APEXD_MEMORY_TRANSFER, &b, 200ULL << 20,
						  "an AXFR of x.", err, sizeof(err)),
			 APEX_EMEMLIMIT);
	assert_true(m.reserved == 0);
	assert_true(apexd_memory_limit_refused(&m, APEXD_MEMORY_TRANSFER) == 2);
	apexd_memory_limit_free(&m);
}

/* The estimates, on the figures they come from (memory_estimate.h). */
static void estimates(void **state)
{
	const uint64_t fixed = APEXD_PEAK_FIXED;

	(void)state;
	/* the 1M-record NSEC3 zone: a version of 130.0 MB, its reload
	 * measured at 217.1 MB above steady */
	uint64_t e = apexd_estimate_like(130000000, 994984, 1.0);
	assert_true(e == fixed + 130000000 + 99498400);
	assert_true(e > 217100000 && e < 217100000 * 1.15);
	/* the same zone a tenth larger */
	assert_true(apexd_estimate_like(130000000, 994984, 1.1) > e * 1.09);
	/* without a version to go by: its 994,984 lines of 102.3 MB */
	e = apexd_estimate_records(994984, 102293040);
	assert_true(e == fixed + 994984ULL * 220 + 51146520);
	assert_true(e > 217100000 && e < 217100000 * 1.3);
	/* delegations with glue: 600,003 records of 13.6 MB, 137.3 MB measured */
	e = apexd_estimate_records(600003, 13554103);
	assert_true(e > 137300000 && e < 137300000 * 1.1);
	/* an IXFR derived in place: the pages of the changed nodes, up to all */
	uint64_t page = 512 * 56;
	assert_true(apexd_estimate_derived(1000, 10, 400000) ==
		    fixed + 8000 + 10 * page + 400000 * 20);
	assert_true(apexd_estimate_derived(1000, 1000000, 400000) ==
		    fixed + 8000 + (400000 + 511) / 512 * page + 400000 * 20);
}

/* The lines of a file: counted whole when small, sampled when large. */
static void file_lines(void **state)
{
	char path[600], line[64];
	uint64_t lines = 0;
	FILE *fp;

	(void)state;
	snprintf(path, sizeof(path), "%s/small.zone", root);
	put(root, "small.zone", "a\nb\nc\n");
	assert_int_equal(apexd_estimate_file_lines(path, 6, &lines), APEX_OK);
	assert_true(lines == 4); /* rounded up */
	snprintf(path, sizeof(path), "%s/large.zone", root);
	fp = fopen(path, "w");
	assert_non_null(fp);
	for (unsigned i = 0; i < 200000; i++) { /* 32 bytes a line, 6.1 MiB */
		snprintf(line, sizeof(line), "d%07u IN NS ns1.example.tst.\n", i % 10000000);
		assert_int_equal(strlen(line), 32);
		fputs(line, fp);
	}
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(apexd_estimate_file_lines(path, 200000 * 32, &lines), APEX_OK);
	assert_true(lines >= 200000 && lines <= 200001);
	snprintf(path, sizeof(path), "%s/missing.zone", root);
	assert_int_equal(apexd_estimate_file_lines(path, 100, &lines), APEX_ENOENT);
}

/* What a thread's 64 MiB of 32 KiB allocations, written and freed, take
 * off the resident size at once; SIZE_MAX when the thread was to give
 * memory back and cannot (no jemalloc: the sanitizer build).  Every other
 * block of 128 MiB is freed, as a load's temporaries lie among what it
 * keeps: freed blocks that make one extent of 8 MiB and more jemalloc
 * gives back at once whatever the arena. */
static void *freed_at_once(void *arg)
{
	size_t *drop = arg, count = 4096, size = 32 << 10;
	char **blocks = calloc(count, sizeof(*blocks));

	if (*drop == 1 && !apex_memory_thread_gives_back()) {
		*drop = SIZE_MAX;
		free(blocks);
		return NULL;
	}
	assert_non_null(blocks);
	for (size_t i = 0; i < count; i++) {
		blocks[i] = malloc(size);
		assert_non_null(blocks[i]);
		memset(blocks[i], 1, size);
	}
	size_t before = apex_memory_rss();
	for (size_t i = 0; i < count; i += 2)
		free(blocks[i]);
	size_t after = apex_memory_rss();
	*drop = before > after ? before - after : 0;
	for (size_t i = 1; i < count; i += 2)
		free(blocks[i]);
	free(blocks);
	return NULL;
}

/* A thread that asks for it (the reload and transfer threads) allocates
 * in an arena that gives freed memory back to the system at once; another
 * thread's freed memory stays resident for jemalloc's decay time. */
static void thread_gives_back(void **state)
{
	size_t plain = 0, giving = 1;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, freed_at_once, &plain), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(pthread_create(&t, NULL, freed_at_once, &giving), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (giving == SIZE_MAX)
		skip();
	print_message("freed 64 MiB: %zu MiB given back at once, %zu without\n", giving >> 20,
		      plain >> 20);
	assert_true(giving >= (size_t)48 << 20);
	assert_true(plain < (size_t)16 << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_limit),
		cmocka_unit_test(v1_with_parents),
		cmocka_unit_test(v1_joined_controllers),
		cmocka_unit_test(v2),
		cmocka_unit_test(container_view),
		cmocka_unit_test(no_limit_is_an_error),
		cmocka_unit_test(claims),
		cmocka_unit_test(estimates),
		cmocka_unit_test(file_lines),
		cmocka_unit_test(thread_gives_back),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
