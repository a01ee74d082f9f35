/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_bench: the query engine alone, without sockets.
 *
 *   engine_bench [-D] [-a] [-s SECONDS] [-t MAXTHREADS] -q QUERYFILE -z ORIGIN=FILE...
 *
 * Loads the zones, turns every "name type" line of QUERYFILE (dnsperf's
 * format) into a query message (EDNS, payload 1232, DO with -D), then
 * for 1..MAXTHREADS threads lets every thread answer the whole list
 * over and over with apex_answer() for SECONDS.  Prints queries per
 * second, the ratio to one thread, queries per CPU-second of each
 * thread (which stays flat when nothing is shared, even on a machine
 * where other work steals wall-clock time), and the CPU ratio: threads
 * x that rate / one thread's rate, the scaling the engine would show
 * with a CPU to each thread.  With -a the queries are answered in batches
 * of 64 read ahead as a worker's UDP batch reads them
 * (query/answer_ahead.h, src/apexd/serve/udp.c); without it, one by one
 * with nothing read ahead.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/answer_ahead.h"
#include "query/precompute.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/zoneset.h"

#define MAX_THREADS 64
#define QUERY_ROOM 512 /* bytes per pre-built query */

typedef struct bench {
	apex_zoneset_t *zones;
	apex_answer_config_t cfg;
	uint8_t *queries; /* count * QUERY_ROOM */
	uint16_t *sizes;
	size_t count;
	double seconds;
	bool ahead; /* -a */
	atomic_bool stop;
} bench_t;

typedef struct worker {
	pthread_t thread;
	bench_t *bench;
	int cpu;
	unsigned long answered;
	double cpu_seconds;
	size_t bytes;
} worker_t;

static double now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct {
	const char *name;
	uint16_t type;
} type_names[] = {
	{ "A", APEX_TYPE_A },
	{ "NS", APEX_TYPE_NS },
	{ "CNAME", APEX_TYPE_CNAME },
	{ "SOA", APEX_TYPE_SOA },
	{ "PTR", APEX_TYPE_PTR },
	{ "MX", APEX_TYPE_MX },
	{ "TXT", APEX_TYPE_TXT },
	{ "AAAA", APEX_TYPE_AAAA },
	{ "SRV", APEX_TYPE_SRV },
	{ "DS", APEX_TYPE_DS },
	{ "DNSKEY", APEX_TYPE_DNSKEY },
	{ "NSEC", APEX_TYPE_NSEC },
	{ "NSEC3PARAM", APEX_TYPE_NSEC3PARAM },
	{ "ANY", APEX_TYPE_ANY },
};

static int type_from_str(const char *s)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		if (strcasecmp(s, type_names[i].name) == 0)
			return type_names[i].type;
	}
	if (strncasecmp(s, "TYPE", 4) == 0)
		return atoi(s + 4);
	return -1;
}

/* Build one query message; returns its size or 0 if the line is unusable. */
static size_t build_query(uint8_t *w, const char *name, int type, bool dnssec_ok, uint16_t id)
{
	memset(w, 0, APEX_HEADER_SIZE);
	apex_write_u16(w + APEX_HDR_ID, id);
	apex_write_u16(w + APEX_HDR_QDCOUNT, 1);
	apex_write_u16(w + APEX_HDR_ARCOUNT, 1);
	int n = apex_name_from_str(name, w + APEX_HEADER_SIZE);
	if (n < 0)
		return 0;
	size_t pos = APEX_HEADER_SIZE + (size_t)n;
	apex_write_u16(w + pos, (uint16_t)type);
	apex_write_u16(w + pos + 2, 1);
	pos += 4;
	w[pos] = 0; /* OPT: root owner */
	apex_write_u16(w + pos + 1, APEX_TYPE_OPT);
	apex_write_u16(w + pos + 3, 1232);
	w[pos + 5] = 0;
	w[pos + 6] = 0;
	apex_write_u16(w + pos + 7, dnssec_ok ? 0x8000 : 0);
	apex_write_u16(w + pos + 9, 0);
	return pos + 11;
}

/* Reads the query file; the caller owns b->queries and b->sizes. */
static int read_queries(bench_t *b, const char *path, bool dnssec_ok)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 0;
	char line[1024];
	while (fgets(line, sizeof(line), f) != NULL) {
		char name[1024], type[64];
		if (sscanf(line, "%1023s %63s", name, type) != 2)
			continue;
		int t = type_from_str(type);
		if (t <= 0)
			continue;
		if (b->count == cap) {
			cap = cap ? cap * 2 : 4096;
			uint8_t *q = realloc(b->queries, cap * QUERY_ROOM);
			uint16_t *s = q ? realloc(b->sizes, cap * sizeof(*s)) : NULL;
			if (q != NULL)
				b->queries = q;
			if (s == NULL) {
				fclose(f);
				return -1;
			}
			b->sizes = s;
		}
		size_t size = build_query(b->queries + b->count * QUERY_ROOM, name, t, dnssec_ok,
					  (uint16_t)b->count);
		if (size > 0)
			b->sizes[b->count++] = (uint16_t)size;
	}
	fclose(f);
	return b->count > 0 ? 0 : -1;
}

/* Queries answered together with -a, as many as a worker's UDP batch. */
#define BATCH 64

/* The lookahead before query i of a batch of n from first, as
 * src/apexd/serve/udp.c's read_ahead(). */
static void read_ahead(bench_t *b, apex_answer_ahead_t *ring, size_t first, int i, int n)
{
	int j = i + APEX_AHEAD_BEGIN;
	bool in = j >= 0 && j < n;
	apex_answer_ahead_step(ring, b->zones, i, n,
			       in ? b->queries + (first + (size_t)j) * QUERY_ROOM : NULL,
			       in ? b->sizes[first + (size_t)j] : 0);
}

/* Answer the n queries from first, read ahead; returns the bytes. */
static size_t answer_batch(bench_t *b, size_t first, size_t n, apex_answer_ahead_t *ring,
			   uint8_t *out, size_t out_size)
{
	size_t bytes = 0;
	if (!b->zones->read_ahead) { /* as the worker's batch: nothing read ahead */
		for (size_t i = first; i < first + n; i++)
			bytes += apex_answer(b->zones, &b->cfg, APEX_TRANSPORT_UDP,
					     b->queries + i * QUERY_ROOM, b->sizes[i], out,
					     out_size, NULL);
		return bytes;
	}
	for (int i = -APEX_AHEAD_BEGIN; i < 0; i++)
		read_ahead(b, ring, first, i, (int)n);
	for (size_t i = 0; i < n; i++) {
		read_ahead(b, ring, first, (int)i, (int)n);
		bytes += apex_answer_ahead(b->zones, &b->cfg, APEX_TRANSPORT_UDP, NULL,
					   &ring[i % APEX_AHEAD_RING],
					   b->queries + (first + i) * QUERY_ROOM,
					   b->sizes[first + i], out, out_size, NULL);
	}
	return bytes;
}

static void *worker_main(void *arg)
{
	worker_t *w = arg;
	bench_t *b = w->bench;
	uint8_t out[1232];
	apex_answer_ahead_t ring[APEX_AHEAD_RING];
	unsigned long answered = 0;
	size_t bytes = 0;

	if (w->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	double cpu0 = now(CLOCK_THREAD_CPUTIME_ID);
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		/* one pass over the list, then look at the stop flag again */
		if (b->ahead) {
			for (size_t i = 0; i < b->count; i += BATCH)
				bytes += answer_batch(b, i,
						      b->count - i < BATCH ? b->count - i : BATCH,
						      ring, out, sizeof(out));
		} else {
			for (size_t i = 0; i < b->count; i++) {
				bytes += apex_answer(b->zones, &b->cfg, APEX_TRANSPORT_UDP,
						     b->queries + i * QUERY_ROOM, b->sizes[i], out,
						     sizeof(out), NULL);
			}
		}
		answered += b->count;
	}
	w->cpu_seconds = now(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	w->answered = answered;
	w->bytes = bytes;
	return NULL;
}

/* Run `threads` workers for b->seconds; returns queries per second. */
static double run(bench_t *b, int threads, double *per_cpu_second)
{
	worker_t workers[MAX_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	atomic_store(&b->stop, false);
	double t0 = now(CLOCK_MONOTONIC);
	for (int t = 0; t < threads; t++) {
		workers[t] = (worker_t){ .bench = b, .cpu = threads <= cpus ? t : -1 };
		if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
	}
	/* bounded: sleep for the duration, then stop the workers */
	struct timespec ts = { (time_t)b->seconds,
			       (long)((b->seconds - (double)(time_t)b->seconds) * 1e9) };
	nanosleep(&ts, NULL);
	atomic_store(&b->stop, true);
	unsigned long answered = 0;
	double cpu = 0;
	for (int t = 0; t < threads; t++) {
		pthread_join(workers[t].thread, NULL);
		answered += workers[t].answered;
		cpu += workers[t].cpu_seconds;
	}
	double elapsed = now(CLOCK_MONOTONIC) - t0;
	*per_cpu_second = cpu > 0 ? (double)answered / cpu : 0;
	return (double)answered / elapsed;
}

static int load_zone(apex_zonetable_t *table, const char *arg)
{
	char origin_text[1024];
	const char *eq = strchr(arg, '=');
	if (eq == NULL || (size_t)(eq - arg) >= sizeof(origin_text)) {
		fprintf(stderr, "-z wants ORIGIN=FILE, not %s\n", arg);
		return -1;
	}
	memcpy(origin_text, arg, (size_t)(eq - arg));
	origin_text[eq - arg] = '\0';
	uint8_t origin[APEX_NAME_MAX];
	if (apex_name_from_str(origin_text, origin) < 0) {
		fprintf(stderr, "bad origin %s\n", origin_text);
		return -1;
	}
	apex_zone_t *zone = NULL;
	char err[512] = "";
	double t0 = now(CLOCK_MONOTONIC);
	if (apex_zone_load(eq + 1, origin, &zone, err, sizeof(err)) != APEX_OK ||
	    apex_precompute(zone) != APEX_OK) {
		fprintf(stderr, "%s: %s\n", eq + 1, err[0] ? err : "out of memory");
		return -1;
	}
	fprintf(stderr, "loaded %s: %zu records in %.2f s\n", origin_text, zone->record_count,
		now(CLOCK_MONOTONIC) - t0);
	return apex_zonetable_publish(table, zone) == APEX_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
	bench_t b = { .seconds = 3 };
	apex_zonetable_t table;
	const char *query_file = NULL;
	bool dnssec_ok = false;
	int max_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	int c;

	if (apex_zonetable_init(&table) != APEX_OK)
		return 1;
	apex_answer_config_init(&b.cfg);
	while ((c = getopt(argc, argv, "Das:t:q:z:h")) != -1) {
		switch (c) {
		case 'D': dnssec_ok = true; break;
		case 'a': b.ahead = true; break;
		case 's': b.seconds = atof(optarg); break;
		case 't': max_threads = atoi(optarg); break;
		case 'q': query_file = optarg; break;
		case 'z':
			if (load_zone(&table, optarg) != 0)
				return 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-D] [-a] [-s SECONDS] [-t MAXTHREADS] -q QUERYFILE "
				"-z ORIGIN=FILE...\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (query_file == NULL || max_threads < 1 || max_threads > MAX_THREADS || b.seconds <= 0 ||
	    b.seconds > 600) {
		fprintf(stderr, "need -q QUERYFILE, 1 <= -t <= %d, 0 < -s <= 600\n", MAX_THREADS);
		return 2;
	}
	if (read_queries(&b, query_file, dnssec_ok) != 0) {
		fprintf(stderr, "%s: no usable queries\n", query_file);
		return 1;
	}
	unsigned long long generation;
	b.zones = apex_zonetable_acquire(&table, &generation);

	printf("# engine_bench: %zu queries, DO=%d, %.1f s per run, %ld CPUs online\n", b.count,
	       dnssec_ok, b.seconds, sysconf(_SC_NPROCESSORS_ONLN));
	printf("%-8s %14s %10s %18s %12s %12s\n", "threads", "queries/s", "ratio", "q/CPU-s/thread",
	       "ns/query", "CPU ratio");
	double one = 0, one_per_cpu = 0;
	for (int t = 1; t <= max_threads; t++) {
		double per_cpu;
		double qps = run(&b, t, &per_cpu);
		if (t == 1) {
			one = qps;
			one_per_cpu = per_cpu;
		}
		/* CPU ratio: what t threads would answer, each on a CPU of its
		 * own, relative to one (t x per-thread rate / one thread's rate) */
		printf("%-8d %14.0f %10.3f %18.0f %12.1f %12.3f\n", t, qps, one > 0 ? qps / one : 0,
		       per_cpu, per_cpu > 0 ? 1e9 / per_cpu : 0,
		       one_per_cpu > 0 ? t * per_cpu / one_per_cpu : 0);
		fflush(stdout);
	}
	apex_zoneset_release(b.zones);
	apex_zonetable_destroy(&table);
	free(b.queries);
	free(b.sizes);
	return 0;
}
