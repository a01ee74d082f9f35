/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the input is a master file for the zone
 * catalog.invalid., loaded with apex_zone_load() and read as a catalog
 * zone (RFC 9432) with apex_catalog_read() (lib/catalog/catalog_read.h).
 *
 * The file is written to a private temporary directory; inputs with an
 * $INCLUDE are skipped (fuzz_zone_load covers the directive, and reading
 * other files is not this target's subject).
 *
 * Oracle (a violation aborts): a catalog read fails only with
 * APEX_EINVAL (its reason in err, no members) or APEX_ENOMEM; one read
 * has its members in strictly ascending canonical order of zone name,
 * each a lower-cased name that is neither the root nor at or below the
 * catalog, with the lower-cased label of a member node of the version
 * whose one PTR record names that zone, a group of 1 to 255 octets
 * without whitespace or none, a lower-cased coo name or none, and found
 * by apex_catalog_find(); every member node of the version (a name one
 * label below zones.catalog.invalid. with a PTR RRset, found here by a
 * scan of every name) is either a member or skipped exactly once, with
 * an owner and a reason; a second read gives the same members.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "catalog/catalog_read.h"
#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/load.h"
#include "zone/zone.h"

static char catalog_dir[4096];
static char catalog_path[sizeof(catalog_dir) + 16];
static uint8_t catalog_origin[APEX_NAME_MAX];
static uint8_t catalog_zones[APEX_NAME_MAX]; /* zones.catalog.invalid. */
static size_t catalog_skips;

__attribute__((noreturn)) static void catalog_fail(const char *what)
{
	fprintf(stderr, "apex fuzz oracle: fuzz_catalog: %s\n", what);
	abort();
}

static void catalog_cleanup(void)
{
	unlink(catalog_path);
	rmdir(catalog_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
/* a and b hold the same zone, member node, group and coo. */
static bool catalog_same_member(const apex_catalog_member_t *a, const apex_catalog_member_t *b)
{
	return apex_name_size(a->zone) == apex_name_size(b->zone) &&
	       memcmp(a->zone, b->zone, apex_name_size(a->zone)) == 0 &&
	       memcmp(a->id, b->id, 1 + (size_t)a->id[0]) == 0 && strcmp(a->group, b->group) == 0 &&
	       (a->coo == NULL) == (b->coo == NULL) &&
	       (a->coo == NULL || (apex_name_size(a->coo) == apex_name_size(b->coo) &&
				   memcmp(a->coo, b->coo, apex_name_size(a->coo)) == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	apex_log_set_level(APEX_LOG_ERROR);
	const char *tmp = getenv("TMPDIR");
	snprintf(catalog_dir, sizeof(catalog_dir), "%s/apex-fuzz-catalog.XXXXXX",
		 tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(catalog_dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	snprintf(catalog_path, sizeof(catalog_path), "%s/zone", catalog_dir);
	atexit(catalog_cleanup);
	if (apex_name_from_str("catalog.invalid.", catalog_origin) < 0 ||
	    apex_name_from_str("zones.catalog.invalid.", catalog_zones) < 0)
		abort();
	return 0;
}

static bool catalog_has_include(const uint8_t *data, size_t size)
{
	static const char word[] = "$include";
	for (size_t i = 0; i + sizeof(word) - 1 <= size; i++) {
		if (strncasecmp((const char *)data + i, word, sizeof(word) - 1) == 0)
			return true;
	}
	return false;
}

static void catalog_on_skip(void *ctx, const char *owner, const char *reason)
{
	(void)ctx;
	if (owner == NULL || reason == NULL || owner[0] == '\0' || reason[0] == '\0')
		catalog_fail("a skip without its owner or reason");
	catalog_skips++;
}

/* name is lower-case (no A-Z in its labels). */
static bool catalog_is_lower(const uint8_t *name)
{
	uint8_t lower[APEX_NAME_MAX];
	size_t size = apex_name_size(name);
	memcpy(lower, name, size);
	apex_name_lower(lower);
	return memcmp(lower, name, size) == 0;
}

/* A member node of zone: one label below zones.$CATZ, with a PTR RRset. */
static bool catalog_is_member_node(const apex_zone_t *zone, const apex_node_t *node)
{
	return apex_name_labels(node->name) == apex_name_labels(catalog_zones) + 1 &&
	       apex_name_equal(apex_name_parent(node->name), catalog_zones) &&
	       apex_node_rrset(zone, node, APEX_TYPE_PTR) != NULL;
}

/* Member m as its member node in zone says. */
static void catalog_check_member(const apex_zone_t *zone, const apex_catalog_member_t *m)
{
	uint8_t name[APEX_NAME_MAX], key[APEX_KEY_MAX];
	size_t zones_size = apex_name_size(catalog_zones);

	if (apex_name_checked_size(m->zone, m->zone + APEX_NAME_MAX) == 0 || m->zone[0] == 0 ||
	    !catalog_is_lower(m->zone) || apex_name_is_subdomain(m->zone, catalog_origin))
		catalog_fail("a member zone that is not a lower-case name outside the catalog");
	if (m->id[0] == 0 || m->id[0] > APEX_LABEL_MAX || 1 + m->id[0] + zones_size > APEX_NAME_MAX)
		catalog_fail("a member node label of a bad length");
	memcpy(name, m->id, 1 + (size_t)m->id[0]);
	memcpy(name + 1 + m->id[0], catalog_zones, zones_size);
	if (!catalog_is_lower(name))
		catalog_fail("a member node label not lower-cased");
	const apex_node_t *node = apex_zone_find(zone, key, apex_name_key(name, key, NULL));
	const apex_rrset_t *ptr = node != NULL ? apex_node_rrset(zone, node, APEX_TYPE_PTR) : NULL;
	if (ptr == NULL || ptr->count != 1)
		catalog_fail("a member without a member node of one PTR record");
	uint16_t size = apex_read_u16(ptr->rdata);
	if (size != apex_name_size(m->zone) || !apex_name_equal(ptr->rdata + 2, m->zone))
		catalog_fail("a member zone that is not its PTR record's name");
	size_t group = strnlen(m->group, 256);
	if (group == 256 || strpbrk(m->group, " \t\r\n") != NULL)
		catalog_fail("a group longer than 255 octets or with whitespace");
	if (m->coo != NULL && (apex_name_checked_size(m->coo, m->coo + APEX_NAME_MAX) == 0 ||
			       !catalog_is_lower(m->coo)))
		catalog_fail("a coo that is not a lower-case name");
}

static void catalog_check(const apex_zone_t *zone, const apex_catalog_t *cat)
{
	size_t member_nodes = 0;

	for (size_t i = 0; i < zone->node_count; i++)
		member_nodes += catalog_is_member_node(zone, apex_zone_node_at(zone, i));
	if (cat->count + catalog_skips != member_nodes)
		catalog_fail("member nodes neither members nor skipped once");
	for (size_t i = 0; i < cat->count; i++) {
		const apex_catalog_member_t *m = &cat->members[i];
		catalog_check_member(zone, m);
		if (i > 0 && apex_name_compare(cat->members[i - 1].zone, m->zone) >= 0)
			catalog_fail("members not in strictly ascending order of zone");
		if (apex_catalog_find(cat, m->zone) != m)
			catalog_fail("apex_catalog_find() misses a member");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (catalog_has_include(data, size))
		return 0;
	FILE *fp = fopen(catalog_path, "w");
	if (fp == NULL || (size > 0 && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0) {
		perror(catalog_path);
		abort();
	}
	apex_zone_t *zone = NULL;
	char err[512];
	if (apex_zone_load(catalog_path, catalog_origin, &zone, err, sizeof(err)) != APEX_OK)
		return 0;

	apex_catalog_t cat, again;
	catalog_skips = 0;
	memset(err, 'x', sizeof(err));
	int rc = apex_catalog_read(zone, &cat, catalog_on_skip, NULL, err, sizeof(err));
	if (rc == APEX_EINVAL) {
		if (cat.members != NULL || cat.count != 0 || catalog_skips != 0 ||
		    memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			catalog_fail("a refused catalog with members, skips or no reason");
	} else if (rc == APEX_OK) {
		catalog_check(zone, &cat);
		if (apex_catalog_read(zone, &again, NULL, NULL, NULL, 0) != APEX_OK ||
		    again.count != cat.count)
			catalog_fail("a second read differs");
		for (size_t i = 0; i < cat.count; i++)
			if (!catalog_same_member(&cat.members[i], &again.members[i]))
				catalog_fail("a second read differs");
		apex_catalog_free(&again);
	} else if (rc != APEX_ENOMEM) {
		catalog_fail("an undocumented result");
	}
	apex_catalog_free(&cat);
	apex_zone_unref(zone);
	return 0;
}
