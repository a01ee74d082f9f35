/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * answer_dump: every answer of the query engine over a large,
 * deterministic query set, one line per query, so that two builds can
 * be compared byte for byte (a refactoring must leave every line alike).
 *
 *   answer_dump [-n MAXNAMES] [-x] -z ORIGIN=FILE...
 *
 * For every zone, up to MAXNAMES owner names (evenly spread over the
 * name index, NSEC3 owners included), and for each of them the name
 * itself, a name below it, a name below that and a wildcard-like
 * sibling, each with every type in query_types[] in eight variants
 * (no EDNS; EDNS 1232; 1232 with DO; 4096 with DO and a client cookie,
 * each over UDP and TCP), with random letter case from a fixed seed.
 * Prints "NAME TYPE VARIANT SIZE DIGEST" (FNV-1a 64 of the response),
 * or with -x the response itself in hex instead of its digest.  The
 * last line is the count and a digest of all the lines.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/precompute.h"
#include "util/error.h"
#include "zone/load.h"
#include "zone/zone.h"
#include "zone/zoneset.h"

#define MAX_ZONES 16
#define VARIANTS 8

static const uint16_t query_types[] = {
	1,   /* A */ 2,           /* NS */ 5,     /* CNAME */ 6,   /* SOA */
	12,  /* PTR */ 13,        /* HINFO */ 15, /* MX */ 16,     /* TXT */
	28,  /* AAAA */ 33,       /* SRV */ 39,   /* DNAME */ 43,  /* DS */
	46,  /* RRSIG */ 47,      /* NSEC */ 48,  /* DNSKEY */ 50, /* NSEC3 */
	51,  /* NSEC3PARAM */ 52, /* TLSA */ 64,  /* SVCB */ 65,   /* HTTPS */
	99,  /* SPF */ 251,       /* IXFR */ 252, /* AXFR */ 253,  /* MAILB */
	255, /* ANY */ 65280,                                      /* private use */
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng_next(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static uint64_t fnv64(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001B3ull;
	return h;
}

/* A query for name/type in variant v (see the comment at the top);
 * returns its size. */
static size_t make_query(uint8_t *q, const uint8_t *name, uint16_t type, int v, uint16_t id)
{
	size_t pos = 0;
	q[pos++] = (uint8_t)(id >> 8);
	q[pos++] = (uint8_t)id;
	q[pos++] = 0; /* QR=0 opcode=0 RD=0 */
	q[pos++] = 0;
	q[pos++] = 0;
	q[pos++] = 1; /* QDCOUNT */
	memset(q + pos, 0, 6);
	int edns = v % 4; /* 0: none, 1: 1232, 2: 1232 DO, 3: 4096 DO + cookie */
	if (edns != 0)
		q[pos + 5] = 1; /* ARCOUNT */
	pos += 6;
	size_t n = apex_name_size(name);
	memcpy(q + pos, name, n);
	/* random letter case, as resolvers send (RFC 5452 0x20) */
	for (size_t i = 0; i < n; i++) {
		uint8_t c = q[pos + i];
		if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && (rng_next() & 1))
			q[pos + i] = c ^ 0x20;
	}
	pos += n;
	q[pos++] = (uint8_t)(type >> 8);
	q[pos++] = (uint8_t)type;
	q[pos++] = 0;
	q[pos++] = 1; /* IN */
	if (edns == 0)
		return pos;
	uint16_t payload = edns == 3 ? 4096 : 1232;
	q[pos++] = 0; /* root */
	q[pos++] = 0;
	q[pos++] = 41;
	q[pos++] = (uint8_t)(payload >> 8);
	q[pos++] = (uint8_t)payload;
	q[pos++] = 0;                    /* extended rcode */
	q[pos++] = 0;                    /* version */
	q[pos++] = edns >= 2 ? 0x80 : 0; /* DO */
	q[pos++] = 0;
	if (edns != 3) {
		q[pos++] = 0;
		q[pos++] = 0;
		return pos;
	}
	q[pos++] = 0;
	q[pos++] = 16; /* RDLENGTH: one cookie option, plus NSID */
	q[pos++] = 0;
	q[pos++] = 10; /* COOKIE */
	q[pos++] = 0;
	q[pos++] = 8;
	for (int i = 0; i < 8; i++)
		q[pos++] = (uint8_t)(0xA0 + i);
	q[pos++] = 0;
	q[pos++] = 3; /* NSID, empty */
	q[pos++] = 0;
	q[pos++] = 0;
	return pos;
}

/* name with one more label `label` in front; false if too long. */
static bool prepend(uint8_t *out, const char *label, const uint8_t *name)
{
	size_t l = strlen(label), n = apex_name_size(name);
	if (1 + l + n > APEX_NAME_MAX)
		return false;
	out[0] = (uint8_t)l;
	memcpy(out + 1, label, l);
	memcpy(out + 1 + l, name, n);
	return true;
}

typedef struct dump {
	const apex_zoneset_t *zones;
	apex_answer_config_t cfg;
	bool hex;
	unsigned long lines;
	uint64_t total;
	uint16_t id;
	uint8_t out[65535];
} dump_t;

static void dump_one(dump_t *d, const uint8_t *name, uint16_t type)
{
	static const uint8_t client_addr[4] = { 127, 0, 0, 1 };
	const apex_answer_client_t client = {
		.addr = client_addr,
		.addr_size = 4,
		.now = 1700000000u,
	};
	char text[1024];
	apex_name_to_str(name, text, sizeof(text));
	for (int v = 0; v < VARIANTS; v++) {
		uint8_t q[600];
		size_t qsize = make_query(q, name, type, v, d->id++);
		apex_transport_t tr = v < 4 ? APEX_TRANSPORT_UDP : APEX_TRANSPORT_TCP;
		size_t cap = tr == APEX_TRANSPORT_TCP ? sizeof(d->out) : 4096;
		size_t n = apex_answer_from(d->zones, &d->cfg, tr, &client, q, qsize, d->out, cap,
					    NULL);
		char line[1024 + 64];
		int len = snprintf(line, sizeof(line), "%s %u %d %zu", text, type, v, n);
		d->total = fnv64(d->total, (const uint8_t *)line, (size_t)len);
		d->total = fnv64(d->total, d->out, n);
		d->lines++;
		if (d->hex) {
			fputs(line, stdout);
			putchar(' ');
			for (size_t i = 0; i < n; i++)
				printf("%02x", d->out[i]);
			putchar('\n');
		} else {
			printf("%s %016llx\n", line,
			       (unsigned long long)fnv64(0xCBF29CE484222325ull, d->out, n));
		}
	}
}

static void dump_name(dump_t *d, const uint8_t *name)
{
	for (size_t t = 0; t < sizeof(query_types) / sizeof(query_types[0]); t++)
		dump_one(d, name, query_types[t]);
}

static void dump_zone(dump_t *d, const apex_zone_t *zone, size_t max_names)
{
	size_t total = zone->node_count + zone->nsec3_owner_count;
	size_t step = total > max_names ? total / max_names : 1;
	for (size_t i = 0; i < total; i += step) {
		const apex_node_t *node =
			i < zone->node_count ? apex_zone_node_at(zone, i)
					     : apex_zone_nsec3_owner_at(zone, i - zone->node_count);
		uint8_t below[APEX_NAME_MAX], deeper[APEX_NAME_MAX], star[APEX_NAME_MAX];
		dump_name(d, node->name);
		if (prepend(below, "www", node->name)) {
			dump_name(d, below);
			if (prepend(deeper, "a-b", below))
				dump_name(d, deeper);
		}
		/* a sibling that only a wildcard could match, or nothing */
		if (node->labels > zone->origin_labels &&
		    prepend(star, "zz-none", apex_name_parent(node->name)))
			dump_name(d, star);
	}
}

static int load_zone(apex_zonetable_t *table, const char *arg, apex_zone_t **zone)
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
	char err[512] = "";
	if (apex_zone_load(eq + 1, origin, zone, err, sizeof(err)) != APEX_OK) {
		fprintf(stderr, "%s: %s\n", eq + 1, err);
		return -1;
	}
	if (apex_precompute(*zone) != APEX_OK) {
		fprintf(stderr, "%s: out of memory\n", eq + 1);
		return -1;
	}
	apex_zone_ref(*zone); /* kept for the walk over its names */
	return apex_zonetable_publish(table, *zone) == APEX_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
	static dump_t d;
	static const uint8_t secret[16] = "answer-dump-key";
	static const uint8_t nsid[] = "dump";
	apex_zonetable_t table;
	apex_zone_t *zones[MAX_ZONES];
	size_t zone_count = 0, max_names = 2000;
	int c;

	if (apex_zonetable_init(&table) != APEX_OK)
		return 1;
	apex_answer_config_init(&d.cfg);
	d.cfg.cookie_secret = secret;
	d.cfg.nsid = nsid;
	d.cfg.nsid_size = 4;
	while ((c = getopt(argc, argv, "n:xz:")) != -1) {
		switch (c) {
		case 'n': max_names = (size_t)strtoul(optarg, NULL, 10); break;
		case 'x': d.hex = true; break;
		case 'z':
			if (zone_count == MAX_ZONES ||
			    load_zone(&table, optarg, &zones[zone_count]) != 0)
				return 1;
			zone_count++;
			break;
		default:
			fprintf(stderr,
				"usage: answer_dump [-n MAXNAMES] [-x] -z ORIGIN=FILE...\n");
			return 2;
		}
	}
	if (zone_count == 0 || max_names == 0) {
		fprintf(stderr, "usage: answer_dump [-n MAXNAMES] [-x] -z ORIGIN=FILE...\n");
		return 2;
	}
	unsigned long long generation;
	apex_zoneset_t *set = apex_zonetable_acquire(&table, &generation);
	d.zones = set;
	d.total = 0xCBF29CE484222325ull;
	for (size_t z = 0; z < zone_count; z++)
		dump_zone(&d, zones[z], max_names);
	printf("# %lu answers, digest %016llx\n", d.lines, (unsigned long long)d.total);
	apex_zoneset_release(set);
	for (size_t z = 0; z < zone_count; z++)
		apex_zone_unref(zones[z]);
	apex_zonetable_destroy(&table);
	return 0;
}
