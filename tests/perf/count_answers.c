/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * count_answers: the query path whose instructions tests/perf/run.sh
 * counts under callgrind and compares with tests/perf/baseline.txt.
 *
 *   count_answers [-D] -q QUERYFILE -z ORIGIN=FILE
 *   count_answers -b
 *
 * Loads the zone, turns every "name type" line of QUERYFILE (dnsperf's
 * format, contrib/bench/querygen.py's mix) into the message dnsperf
 * sends (RD, EDNS with a 4096-byte payload, DO with -D, no option),
 * from 127.0.0.1, and answers the whole list twice through
 * apex_worker_answer(), the daemon's per-query path minus the sockets:
 * the engine, the client's address for server cookies, the worker's
 * statistics and response rate limiting's check, with the daemon's
 * default settings (server cookies on, rate limiting and NSID off, a
 * 1232-byte UDP payload).  The first pass warms up (lazy binding of the
 * C library's functions); the second runs inside
 * apex_perf_counted_pass(), the only function callgrind counts
 * (--toggle-collect), so loading and parsing are not counted.
 *
 * Nothing that varies between runs reaches the counted pass: the
 * cookie secret is fixed and the worker's batch clock is pinned.
 *
 * -b prints what the counts depend on besides the code: the compiler,
 * the flags the build used, the C library and the architecture, or
 * "instrumented" for a sanitizer build (whose counts mean nothing).
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/precompute.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/zoneset.h"
#include "serve/worker.h" /* src/apexd: the daemon's answer path */

#ifndef APEX_PERF_CFLAGS
#define APEX_PERF_CFLAGS "?"
#endif

#define QUERY_ROOM 512 /* bytes per pre-built query */
#define PINNED_NOW 1700000000u

typedef struct query_set {
	uint8_t *wire; /* count * QUERY_ROOM */
	uint16_t *sizes;
	size_t count;
} query_set_t;

static const struct {
	const char *name;
	uint16_t type;
} type_names[] = {
	{ "A", APEX_TYPE_A },     { "NS", APEX_TYPE_NS },         { "CNAME", APEX_TYPE_CNAME },
	{ "SOA", APEX_TYPE_SOA }, { "PTR", APEX_TYPE_PTR },       { "MX", APEX_TYPE_MX },
	{ "TXT", APEX_TYPE_TXT }, { "AAAA", APEX_TYPE_AAAA },     { "SRV", APEX_TYPE_SRV },
	{ "DS", APEX_TYPE_DS },   { "DNSKEY", APEX_TYPE_DNSKEY }, { "NSEC", APEX_TYPE_NSEC },
	{ "ANY", APEX_TYPE_ANY },
};

static int type_from_str(const char *s)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		if (strcasecmp(s, type_names[i].name) == 0)
			return type_names[i].type;
	}
	return -1;
}

/* The query dnsperf -e (or -D) sends; returns its size, 0 if unusable. */
static size_t build_query(uint8_t *w, const char *name, int type, bool dnssec_ok, uint16_t id)
{
	memset(w, 0, APEX_HEADER_SIZE);
	apex_write_u16(w + APEX_HDR_ID, id);
	apex_write_u16(w + APEX_HDR_FLAGS, 0x0100); /* RD */
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
	apex_write_u16(w + pos + 3, 4096);
	w[pos + 5] = 0;
	w[pos + 6] = 0;
	apex_write_u16(w + pos + 7, dnssec_ok ? 0x8000 : 0);
	apex_write_u16(w + pos + 9, 0);
	return pos + 11;
}

static int read_queries(query_set_t *qs, const char *path, bool dnssec_ok)
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
		if (line[0] == '#' || sscanf(line, "%1023s %63s", name, type) != 2)
			continue;
		int t = type_from_str(type);
		if (t <= 0) {
			fprintf(stderr, "%s: unknown type %s\n", path, type);
			fclose(f);
			return -1;
		}
		if (qs->count == cap) {
			cap = cap ? cap * 2 : 4096;
			uint8_t *w = realloc(qs->wire, cap * QUERY_ROOM);
			if (w != NULL)
				qs->wire = w;
			uint16_t *s = w != NULL ? realloc(qs->sizes, cap * sizeof(*s)) : NULL;
			if (s == NULL) {
				fclose(f);
				return -1;
			}
			qs->sizes = s;
		}
		size_t size = build_query(qs->wire + qs->count * QUERY_ROOM, name, t, dnssec_ok,
					  (uint16_t)qs->count);
		if (size == 0) {
			fprintf(stderr, "%s: bad name %s\n", path, name);
			fclose(f);
			return -1;
		}
		qs->sizes[qs->count++] = (uint16_t)size;
	}
	fclose(f);
	return qs->count > 0 ? 0 : -1;
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
	if (apex_zone_load(eq + 1, origin, &zone, err, sizeof(err)) != APEX_OK ||
	    apex_precompute(zone) != APEX_OK) {
		fprintf(stderr, "%s: %s\n", eq + 1, err[0] ? err : "out of memory");
		return -1;
	}
	return apex_zonetable_publish(table, zone) == APEX_OK ? 0 : -1;
}

/* Every query once, as a worker answers the datagrams of its batches. */
static void answer_all(apex_worker_t *worker, const query_set_t *qs,
		       const struct sockaddr_storage *peer, uint8_t *out, size_t out_capacity)
{
	for (size_t i = 0; i < qs->count; i++)
		apex_worker_answer(worker, APEX_TRANSPORT_UDP, peer, qs->wire + i * QUERY_ROOM,
				   qs->sizes[i], out, out_capacity, NULL);
}

/* The pass callgrind counts (run.sh: --toggle-collect=apex_perf_counted_pass). */
__attribute__((noinline)) void apex_perf_counted_pass(apex_worker_t *worker, const query_set_t *qs,
						      const struct sockaddr_storage *peer,
						      uint8_t *out, size_t out_capacity);
__attribute__((noinline)) void apex_perf_counted_pass(apex_worker_t *worker, const query_set_t *qs,
						      const struct sockaddr_storage *peer,
						      uint8_t *out, size_t out_capacity)
{
	answer_all(worker, qs, peer, out, out_capacity);
	__asm__ volatile("" ::: "memory"); /* not a tail call: the pass stays one frame */
}

static bool instrumented(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
	return true;
#endif
#endif
	return strstr(APEX_PERF_CFLAGS, "-fsanitize") != NULL ||
	       strstr(APEX_PERF_CFLAGS, "--coverage") != NULL;
}

/* What the counts depend on besides the code, on one line. */
static void print_build(void)
{
	struct utsname u;
	const char *machine = uname(&u) == 0 ? u.machine : "?";
#if defined(__clang__)
	const char *compiler = "clang";
#elif defined(__GNUC__)
	const char *compiler = "gcc";
#else
	const char *compiler = "cc";
#endif
#ifdef __GLIBC__
	const char *libc = gnu_get_libc_version();
#else
	const char *libc = "not glibc";
#endif
	if (instrumented())
		printf("instrumented\n");
	else
		printf("%s %s, CFLAGS %s, glibc %s, %s\n", compiler, __VERSION__, APEX_PERF_CFLAGS,
		       libc, machine);
}

/* The worker as the daemon sets one up, with its batch clock pinned. */
static int setup_worker(apex_worker_t *worker, apex_zonetable_t *table,
			const apex_answer_config_t *cfg, const apex_rrl_config_t *rrl)
{
	if (apex_worker_init(worker, 0, table, cfg, rrl, 1) != APEX_OK)
		return -1;
	apex_worker_batch(worker, false);
	worker->now = PINNED_NOW;
	worker->now_ms = (uint64_t)PINNED_NOW * 1000;
	return 0;
}

static int run(const char *query_file, bool dnssec_ok, apex_zonetable_t *table)
{
	static const uint8_t cookie_secret[16] = "count-answers-k";
	static apex_worker_t worker;
	static uint8_t out[65535];
	apex_answer_config_t cfg;
	/* the daemon's defaults: rate limiting off (rate 0) */
	const apex_rrl_config_t rrl = { .slip = 2, .ipv4_prefix = 24, .ipv6_prefix = 56 };
	query_set_t qs = { 0 };
	struct sockaddr_storage peer = { 0 };
	struct sockaddr_in *in = (struct sockaddr_in *)&peer;

	apex_answer_config_init(&cfg);
	cfg.cookie_secret = cookie_secret;
	in->sin_family = AF_INET;
	in->sin_port = htons(53000);
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (read_queries(&qs, query_file, dnssec_ok) != 0 ||
	    setup_worker(&worker, table, &cfg, &rrl) != 0) {
		fprintf(stderr, "%s: no usable queries, or no worker\n", query_file);
		return 1;
	}
	size_t capacity = cfg.edns_payload; /* the UDP path's buffer */
	answer_all(&worker, &qs, &peer, out, capacity);
	apex_perf_counted_pass(&worker, &qs, &peer, out, capacity);

	/* what each pass answered, for a sanity check (the two are alike) */
	const apex_worker_stats_t *s = &worker.stats;
	unsigned long long sent = atomic_load(&s->sent[0][0]) / 2;
	printf("%zu queries, DO=%d: %llu answered, NOERROR %llu, NXDOMAIN %llu, %llu bytes\n",
	       qs.count, dnssec_ok, sent, (unsigned long long)atomic_load(&s->rcode[0]) / 2,
	       (unsigned long long)atomic_load(&s->rcode[3]) / 2,
	       (unsigned long long)atomic_load(&s->response_bytes[0]) / 2);
	apex_worker_free(&worker);
	free(qs.wire);
	free(qs.sizes);
	return sent == qs.count ? 0 : 1;
}

int main(int argc, char **argv)
{
	apex_zonetable_t table;
	const char *query_file = NULL;
	bool dnssec_ok = false, zone = false;
	int c;

	if (argc == 2 && strcmp(argv[1], "-b") == 0) {
		print_build();
		return 0;
	}
	if (apex_zonetable_init(&table) != APEX_OK)
		return 1;
	while ((c = getopt(argc, argv, "Dq:z:")) != -1) {
		switch (c) {
		case 'D': dnssec_ok = true; break;
		case 'q': query_file = optarg; break;
		case 'z':
			if (load_zone(&table, optarg) != 0)
				return 1;
			zone = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-D] -q QUERYFILE -z ORIGIN=FILE | -b\n",
				argv[0]);
			return 2;
		}
	}
	if (query_file == NULL || !zone) {
		fprintf(stderr, "usage: %s [-D] -q QUERYFILE -z ORIGIN=FILE | -b\n", argv[0]);
		return 2;
	}
	int rc = run(query_file, dnssec_ok, &table);
	apex_zonetable_destroy(&table);
	return rc;
}
