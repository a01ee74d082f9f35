/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the input is a master file for the zone example.,
 * loaded with apex_zone_load().
 *
 * The file is written to a private temporary directory that also holds
 * inc.zone, so $INCLUDE of a relative name is exercised.  Inputs that
 * could make the loader read outside that directory (an $INCLUDE and a
 * '/' anywhere) or recurse exponentially (more than one $INCLUDE) are
 * skipped: reading /dev/zero or loading 2^16 files are not bugs.
 *
 * A failed load must leave *out NULL and explain itself in err (which
 * starts with the name of the file at fault, ours or inc.zone).  A
 * loaded zone is checked against the invariants zone.h promises, then
 * a few queries per node (the node's first type over UDP, ANY over TCP,
 * a name below it) are answered from it and go through the oracle of
 * fuzz_common.h, so that whatever the builder accepted is also served
 * safely.
 */
#include <strings.h>

#include "fuzz_common.h"

#define NODES_QUERIED 16

static char dir[4096];
static char zone_path[sizeof(dir) + 16];
static char inc_path[sizeof(dir) + 16];
static uint8_t origin[APEX_NAME_MAX];
static apex_answer_config_t cfg;
static uint8_t *answer_udp;
static uint8_t *answer_tcp;
static bool verbose; /* $FUZZ_VERBOSE: print each load's outcome */

static void cleanup(void)
{
	unlink(zone_path);
	unlink(inc_path);
	rmdir(dir);
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *fp = fopen(path, "w");
	if (fp == NULL || (size > 0 && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0) {
		perror(path);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	apex_log_set_level(APEX_LOG_ERROR);
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/apex-fuzz-zone.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	snprintf(zone_path, sizeof(zone_path), "%s/zone", dir);
	snprintf(inc_path, sizeof(inc_path), "%s/inc.zone", dir);
	static const char inc[] = "inc 300 IN A 192.0.2.7\n"
				  "    300 IN AAAA 2001:db8::7\n"
				  "*.inc 300 IN TXT \"wild\"\n";
	write_file(inc_path, (const uint8_t *)inc, sizeof(inc) - 1);
	atexit(cleanup);
	if (apex_name_from_str("example.", origin) < 0)
		abort();
	apex_answer_config_init(&cfg);
	answer_udp = fuzz_buffer(cfg.edns_payload);
	answer_tcp = fuzz_buffer(APEX_MAX_MESSAGE);
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	return 0;
}

/* See the top of the file: $INCLUDE only of files in our directory, once. */
static bool include_is_safe(const uint8_t *data, size_t size)
{
	static const char word[] = "$include";
	size_t includes = 0;
	bool slash = false;
	for (size_t i = 0; i < size; i++) {
		slash = slash || data[i] == '/';
		if (size - i >= sizeof(word) - 1 &&
		    strncasecmp((const char *)data + i, word, sizeof(word) - 1) == 0)
			includes++;
	}
	return includes == 0 || (includes == 1 && !slash);
}

/* A query for name/type with EDNS (payload 1232, DO) into buf; its size. */
static size_t make_query(uint8_t *buf, const uint8_t *prefix, size_t prefix_size,
			 const uint8_t *name, uint16_t type)
{
	size_t name_size = apex_name_size(name);
	if (prefix_size + name_size > APEX_NAME_MAX)
		return 0;
	memset(buf, 0, APEX_HEADER_SIZE);
	apex_write_u16(buf + APEX_HDR_ID, 0xfeed);
	apex_write_u16(buf + APEX_HDR_QDCOUNT, 1);
	apex_write_u16(buf + APEX_HDR_ARCOUNT, 1);
	size_t pos = APEX_HEADER_SIZE;
	memcpy(buf + pos, prefix, prefix_size);
	memcpy(buf + pos + prefix_size, name, name_size);
	pos += prefix_size + name_size;
	apex_write_u16(buf + pos, type);
	apex_write_u16(buf + pos + 2, 1);
	pos += 4;
	static const uint8_t opt[11] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0 };
	memcpy(buf + pos, opt, sizeof(opt));
	return pos + sizeof(opt);
}

static void ask(const apex_zoneset_t *set, apex_transport_t transport, const uint8_t *query,
		size_t query_size)
{
	if (query_size == 0)
		return;
	apex_answer_info_t info;
	uint8_t *buf = transport == APEX_TRANSPORT_UDP ? answer_udp : answer_tcp;
	size_t cap = transport == APEX_TRANSPORT_UDP ? cfg.edns_payload : APEX_MAX_MESSAGE;
	size_t n = apex_answer(set, &cfg, transport, query, query_size, buf, cap, &info);
	fuzz_check_response(query, query_size, &cfg, transport, buf, n, cap, &info);
}

/* What zone.h promises about a loaded version. */
static void check_zone(const apex_zone_t *zone)
{
	if (zone->soa == NULL || zone->node_count == 0 ||
	    zone->apex != apex_zone_node_at(zone, 0) || !(zone->apex->flags & APEX_NODE_APEX) ||
	    !apex_name_equal(zone->origin, origin))
		abort();
	for (size_t i = 0; i < zone->node_count; i++) {
		const apex_node_t *n = apex_zone_node_at(zone, i);
		if (!apex_name_is_subdomain(n->name, zone->origin))
			abort();
		if (i > 0) {
			const apex_node_t *p = apex_zone_node_at(zone, i - 1);
			size_t common = p->key_size < n->key_size ? p->key_size : n->key_size;
			int c = memcmp(apex_node_key(p), apex_node_key(n), common);
			if (c > 0 || (c == 0 && p->key_size >= n->key_size))
				abort(); /* not in strict canonical order */
			if (n->parent == APEX_NODE_NONE)
				abort(); /* only the apex has no parent */
		}
		if (apex_zone_find(zone, apex_node_key(n), n->key_size) != n)
			abort();
		for (uint16_t r = 1; r < n->rrset_count; r++) {
			if (apex_node_rrsets(zone, n)[r - 1].type >=
			    apex_node_rrsets(zone, n)[r].type)
				abort(); /* RRsets sorted by type, one per type */
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!include_is_safe(data, size)) {
		if (verbose)
			fprintf(stderr, "skipped: $INCLUDE outside the directory\n");
		return 0;
	}
	write_file(zone_path, data, size);

	apex_zone_t *zone = NULL;
	char err[512];
	memset(err, 'x', sizeof(err));
	int rc = apex_zone_load(zone_path, origin, &zone, err, sizeof(err));
	if (verbose)
		fprintf(stderr, "load: %s\n", rc == APEX_OK ? "ok" : err);
	if (rc != APEX_OK) {
		if (zone != NULL || (rc != APEX_ELOAD && rc != APEX_ENOMEM) ||
		    memchr(err, '\0', sizeof(err)) == NULL || strncmp(err, dir, strlen(dir)) != 0) {
			fprintf(stderr,
				"failed load: rc %d, zone %p, err not \"FILE[:LINE]: reason\"\n",
				rc, (void *)zone);
			abort();
		}
		return 0;
	}
	check_zone(zone);
	if (apex_precompute(zone) != APEX_OK)
		abort();

	apex_zonetable_t table;
	if (apex_zonetable_init(&table) != APEX_OK ||
	    apex_zonetable_publish(&table, zone) != APEX_OK)
		abort();
	unsigned long long generation;
	apex_zoneset_t *set = apex_zonetable_acquire(&table, &generation);
	if (set == NULL)
		abort();
	uint8_t query[APEX_NAME_MAX + 64];
	static const uint8_t below[] = "\003zzz";
	for (size_t i = 0; i < zone->node_count && i < NODES_QUERIED; i++) {
		const apex_node_t *n = apex_zone_node_at(zone, i);
		uint16_t type = n->rrset_count > 0 ? apex_node_rrsets(zone, n)[0].type : 1;
		ask(set, APEX_TRANSPORT_UDP, query, make_query(query, below, 0, n->name, type));
		ask(set, APEX_TRANSPORT_TCP, query, make_query(query, below, 0, n->name, 255));
		ask(set, APEX_TRANSPORT_UDP, query,
		    make_query(query, below, sizeof(below) - 1, n->name, 1));
	}
	apex_zoneset_release(set);
	apex_zonetable_destroy(&table);
	return 0;
}
