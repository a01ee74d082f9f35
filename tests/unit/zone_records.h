/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helpers: the records of a zone version as a sorted set of text
 * lines ("owner type ttl hex-rdata", owner in lower case), to compare
 * what a transfer carries with what a version holds.
 */
#ifndef APEX_TESTS_UNIT_ZONE_RECORDS_H
#define APEX_TESTS_UNIT_ZONE_RECORDS_H

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "xfr/axfr_out.h"
#include "xfr/diff.h"
#include "xfr/ixfr_apply.h"
#include "zone/load.h"
#include "zone/zone.h"

/* The version loaded from zones/FILE of the source tree with origin
 * origin_text; the test fails with the loader's message if it does not
 * load.  The caller releases it. */
static inline apex_zone_t *load_file(const char *file, const char *origin_text)
{
	char path[512], err[512];
	uint8_t origin[APEX_NAME_MAX];
	apex_zone_t *zone = NULL;

	snprintf(path, sizeof(path), "%s/zones/%s", APEX_SRCDIR, file);
	assert_true(apex_name_from_str(origin_text, origin) > 0);
	if (apex_zone_load(path, origin, &zone, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	return zone;
}

/* The version loaded from text, a zone file's content, with origin
 * origin_text (through a temporary file, removed); the test fails with
 * the loader's message if it does not load.  The caller releases it. */
static inline apex_zone_t *load_text(const char *text, const char *origin_text)
{
	char path[] = "/tmp/apex-zone-text-XXXXXX", err[512];
	uint8_t origin[APEX_NAME_MAX];
	apex_zone_t *zone = NULL;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_true(apex_name_from_str(origin_text, origin) > 0);
	int rc = apex_zone_load(path, origin, &zone, err, sizeof(err));
	unlink(path);
	if (rc != APEX_OK)
		fail_msg("%s", err);
	return zone;
}

/* example. loaded from its SOA, the records of head (zone file text),
 * and the names h0 .. h(hosts - 1).example. with an address each; the
 * caller releases it. */
static inline apex_zone_t *load_hosts(const char *head, int hosts)
{
	size_t size = 200 + strlen(head) + (size_t)hosts * 40, len;
	char *text = malloc(size);

	assert_non_null(text);
	len = (size_t)snprintf(
		text, size, "example. 3600 IN SOA ns.example. h.example. 1 3600 900 86400 60\n%s",
		head);
	for (int i = 0; i < hosts; i++)
		len += (size_t)snprintf(text + len, size - len, "h%d.example. 60 IN A 192.0.2.%d\n",
					i, i % 250);
	apex_zone_t *zone = load_text(text, "example.");
	free(text);
	return zone;
}

/* The version that the difference from from to to makes when it is
 * applied to from as an IXFR: derived in place (the test fails
 * otherwise), its base from.  The caller releases it. */
static inline apex_zone_t *derive_in_place(apex_zone_t *from, const apex_zone_t *to)
{
	apex_changes_t set;
	apex_zone_t *derived = NULL;
	bool in_place = false;
	char err[512];

	apex_changes_init(&set);
	assert_int_equal(apex_xfr_diff(from, to, &set), APEX_OK);
	if (apex_ixfr_version(from, &set, 1, "test", &derived, &in_place, err, sizeof(err)) !=
	    APEX_OK)
		fail_msg("%s", err);
	assert_true(in_place);
	assert_ptr_equal(derived->base, from);
	apex_changes_free(&set);
	return derived;
}

/* "owner type ttl hex-rdata", owner in lower case: one record. */
static inline char *record_text(const uint8_t *owner, uint16_t type, uint32_t ttl,
				const uint8_t *rdata, uint16_t size)
{
	char name[1100];
	apex_name_to_str(owner, name, sizeof(name));
	for (char *c = name; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	char *text = malloc(strlen(name) + 32 + 2 * (size_t)size);
	assert_non_null(text);
	int n = sprintf(text, "%s %u %u ", name, type, ttl);
	for (uint16_t i = 0; i < size; i++)
		n += sprintf(text + n, "%02x", rdata[i]);
	return text;
}

typedef struct text_set {
	char **items;
	size_t count, capacity;
} text_set_t;

static inline void set_add(text_set_t *s, char *text)
{
	if (s->count == s->capacity) {
		s->capacity = s->capacity ? 2 * s->capacity : 64;
		s->items = realloc(s->items, s->capacity * sizeof(*s->items));
		assert_non_null(s->items);
	}
	s->items[s->count++] = text;
}

static inline int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline void set_sort(text_set_t *s)
{
	if (s->count > 0) /* items is NULL then */
		qsort(s->items, s->count, sizeof(*s->items), by_text);
}

static inline bool set_has(const text_set_t *s, const char *text)
{
	return s->count > 0 &&
	       bsearch(&text, s->items, s->count, sizeof(*s->items), by_text) != NULL;
}

static inline void set_free(text_set_t *s)
{
	for (size_t i = 0; i < s->count; i++)
		free(s->items[i]);
	free(s->items);
	memset(s, 0, sizeof(*s));
}

static inline void add_rrset(text_set_t *s, const uint8_t *owner, uint16_t type,
			     const apex_rrset_t *rs)
{
	const uint8_t *p = rs->rdata;
	for (uint16_t i = 0; i < rs->count; i++) {
		uint16_t size = apex_read_u16(p);
		set_add(s, record_text(owner, type, rs->ttl, p + 2, size));
		p += 2u + size;
	}
}

static inline void add_node(text_set_t *s, const apex_zone_t *zone, const apex_node_t *node)
{
	for (uint16_t i = 0; i < node->rrset_count; i++) {
		add_rrset(s, node->name, apex_node_rrsets(zone, node)[i].type,
			  &apex_node_rrsets(zone, node)[i]);
		if (apex_node_rrsets(zone, node)[i].rrsig != NULL)
			add_rrset(s, node->name, APEX_TYPE_RRSIG,
				  apex_node_rrsets(zone, node)[i].rrsig);
	}
}

/* Every record a version holds, the stray RRSIG sets (over glue or
 * occluded data, which no answer carries) included. */
static inline void zone_records(const apex_zone_t *zone, text_set_t *s)
{
	for (size_t i = 0; i < zone->node_count; i++)
		add_node(s, zone, apex_zone_node_at(zone, i));
	for (size_t i = 0; i < zone->nsec3_owner_count; i++)
		add_node(s, zone, apex_zone_nsec3_owner_at(zone, i));
	for (size_t i = 0; i < zone->stray_rrsig_count; i++) {
		const apex_node_t *node = apex_zone_node(zone, zone->stray_rrsigs[i].node);
		add_rrset(s, node->name, APEX_TYPE_RRSIG, zone->stray_rrsigs[i].sigs);
	}
	set_sort(s);
}

/* Versions a and b hold the same records (zone_records()) and serial. */
static inline void assert_same_version(const apex_zone_t *a, const apex_zone_t *b)
{
	text_set_t x = { 0 }, y = { 0 };

	zone_records(a, &x);
	zone_records(b, &y);
	assert_int_equal(x.count, y.count);
	for (size_t i = 0; i < x.count; i++)
		assert_string_equal(x.items[i], y.items[i]);
	assert_int_equal(a->serial, b->serial);
	set_free(&x);
	set_free(&y);
}

/* Every message of an AXFR of zone, back to back (the caller frees it). */
static inline uint8_t *axfr_bytes(const apex_zone_t *zone, size_t *size)
{
	apex_axfr_out_t a;
	size_t capacity = 1 << 20, used = 0;
	uint8_t *all = malloc(capacity), buf[65535];

	assert_non_null(all);
	apex_axfr_out_init(&a, zone, 1, zone->origin);
	for (;;) {
		size_t n = 0;
		assert_int_equal(apex_axfr_out_next(&a, buf, sizeof(buf), &n), APEX_OK);
		if (n == 0)
			break;
		if (used + n > capacity) {
			capacity = 2 * (used + n);
			all = realloc(all, capacity);
			assert_non_null(all);
		}
		memcpy(all + used, buf, n);
		used += n;
	}
	*size = used;
	return all;
}

#endif
