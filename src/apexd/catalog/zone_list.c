/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The zones apexctl zone-add adds (consumer.h): kept in the
 * zone-list-file in NSD's zone.list form, a line "add ZONE PATTERN" each
 * ("del ZONE" lines, which NSD writes, are read too), so that they are
 * served again after a restart; put in force as a catalog's members are.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "catalog/consumer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/consumer_internal.h"
#include "util/error.h"
#include "util/file_replace.h"
#include "util/log.h"

static void added_clear(added_t *a)
{
	free(a->zone);
	free(a->pattern);
}

void zone_list_free(apexd_catalogs_t *c)
{
	for (size_t i = 0; i < c->added_count; i++)
		added_clear(&c->added[i]);
	free(c->added);
	c->added = NULL;
	c->added_count = 0;
	for (size_t i = 0; i < c->pattern_count; i++)
		free(c->patterns[i]);
	free(c->patterns);
	c->patterns = NULL;
	c->pattern_count = 0;
	free(c->zone_list);
	c->zone_list = NULL;
}

/* The place of zone in the sorted list: found (*at its index) or where
 * it would go. */
static bool added_find(const apexd_catalogs_t *c, const uint8_t *zone, size_t *at)
{
	size_t lo = 0, hi = c->added_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = apex_name_compare(zone, c->added[mid].zone);

		if (cmp == 0) {
			*at = mid;
			return true;
		}
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*at = lo;
	return false;
}

/* zone added with pattern (replacing an earlier entry), in order. */
static int added_insert(apexd_catalogs_t *c, const uint8_t *zone, const char *pattern)
{
	added_t a = { name_dup(zone), strdup(pattern) }, *grown;
	size_t at;

	if (a.zone == NULL || a.pattern == NULL) {
		added_clear(&a);
		return APEX_ENOMEM;
	}
	if (added_find(c, zone, &at)) {
		added_clear(&c->added[at]);
		c->added[at] = a;
		return APEX_OK;
	}
	if ((grown = realloc(c->added, (c->added_count + 1) * sizeof(*grown))) == NULL) {
		added_clear(&a);
		return APEX_ENOMEM;
	}
	c->added = grown;
	memmove(&c->added[at + 1], &c->added[at], (c->added_count - at) * sizeof(*grown));
	c->added[at] = a;
	c->added_count++;
	return APEX_OK;
}

static void added_delete(apexd_catalogs_t *c, size_t at)
{
	added_clear(&c->added[at]);
	memmove(&c->added[at], &c->added[at + 1], (c->added_count - at - 1) * sizeof(*c->added));
	c->added_count--;
}

/* The list file at path read into c->added (replacing it); a missing file
 * is an empty list, a line that cannot be read is logged and skipped. */
static int read_list(apexd_catalogs_t *c, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[2048], zone[1100], pattern[512];
	uint8_t origin[APEX_NAME_MAX];
	unsigned number = 0;
	int rc = APEX_OK;

	for (size_t i = 0; i < c->added_count; i++)
		added_clear(&c->added[i]);
	c->added_count = 0;
	if (f == NULL) {
		if (errno != ENOENT)
			apex_error("zone-list-file %s: %s: no zone added", path, strerror(errno));
		return APEX_OK;
	}
	while (rc == APEX_OK && fgets(line, sizeof(line), f) != NULL) {
		size_t at;

		number++;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (sscanf(line, "add %1099s %511s", zone, pattern) == 2 &&
		    apex_name_from_str(zone, origin) > 0) {
			apex_name_lower(origin);
			rc = added_insert(c, origin, pattern);
		} else if (sscanf(line, "del %1099s", zone) == 1 &&
			   apex_name_from_str(zone, origin) > 0) {
			apex_name_lower(origin);
			if (added_find(c, origin, &at))
				added_delete(c, at);
		} else {
			apex_warning(
				"zone-list-file %s:%u: not read: expected \"add ZONE PATTERN\" "
				"or \"del ZONE\"",
				path, number);
		}
	}
	fclose(f);
	return rc;
}

/* c->added written to the list file (util/file_replace.h). */
static int write_list(const apexd_catalogs_t *c, char *err, size_t err_size)
{
	char name[APEX_NAME_MAX * 4 + 1], *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	int rc;

	if (f == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	fputs("# the zones apexctl zone-add added (NSD's zone.list form)\n", f);
	for (size_t i = 0; i < c->added_count; i++) {
		apex_name_to_str(c->added[i].zone, name, sizeof(name));
		fprintf(f, "add %s %s\n", name, c->added[i].pattern);
	}
	rc = ferror(f) ? APEX_ENOMEM : APEX_OK;
	if (fclose(f) != 0)
		rc = APEX_ENOMEM;
	if (rc == APEX_OK)
		rc = apex_file_replace(c->zone_list, text, size);
	free(text);
	if (rc < 0)
		return apex_fail(err, err_size, rc, "zone-list-file %s: %s", c->zone_list,
				 apex_strerror(rc));
	return APEX_OK;
}

int zone_list_configure(apexd_catalogs_t *c, const apex_config_t *cfg)
{
	char **names = calloc(cfg->pattern_count > 0 ? cfg->pattern_count : 1, sizeof(*names));

	if (names == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < cfg->pattern_count; i++) {
		if ((names[i] = strdup(cfg->patterns[i].name)) == NULL) {
			for (size_t j = 0; j < i; j++)
				free(names[j]);
			free(names);
			return APEX_ENOMEM;
		}
	}
	for (size_t i = 0; i < c->pattern_count; i++)
		free(c->patterns[i]);
	free(c->patterns);
	c->patterns = names;
	c->pattern_count = cfg->pattern_count;
	if (cfg->zone_list_file == NULL) {
		free(c->zone_list);
		c->zone_list = NULL;
		return APEX_OK; /* the zones added stay, and are not written */
	}
	if (c->zone_list != NULL && strcmp(c->zone_list, cfg->zone_list_file) == 0)
		return APEX_OK;
	free(c->zone_list);
	if ((c->zone_list = strdup(cfg->zone_list_file)) == NULL)
		return APEX_ENOMEM;
	c->dirty = true;
	return read_list(c, c->zone_list);
}

/* Whether a pattern of that name is in force. */
static bool has_pattern(const apexd_catalogs_t *c, const char *name)
{
	for (size_t i = 0; i < c->pattern_count; i++)
		if (strcmp(c->patterns[i], name) == 0)
			return true;
	return false;
}

/* Why zone cannot be added or removed: it is the file's, or a catalog's. */
static int taken(apexd_catalogs_t *c, const uint8_t *zone, const char *text, char *err,
		 size_t err_size)
{
	const member_t *m = member_find(c->members, c->member_count, zone);
	const consumer_t *k = m != NULL && m->catalog != NULL ? consumer_find(c, m->catalog) : NULL;

	if (is_configured(c, zone))
		return apex_fail(err, err_size, APEX_EINVAL, "zone %s is in the configuration file",
				 text);
	if (k != NULL)
		return apex_fail(err, err_size, APEX_EINVAL, "zone %s is a member of catalog %s",
				 text, k->name);
	return APEX_OK;
}

int apexd_catalogs_zone_add(apexd_catalogs_t *c, const uint8_t *zone, const char *pattern,
			    char *err, size_t err_size)
{
	char text[APEX_NAME_MAX * 4 + 1];
	size_t at;
	int rc;

	apex_name_to_str(zone, text, sizeof(text));
	pthread_mutex_lock(&c->apply);
	if (c->zone_list == NULL)
		rc = apex_fail(err, err_size, APEX_EINVAL,
			       "zone-add needs a zone-list-file in the server section");
	else if (!has_pattern(c, pattern))
		rc = apex_fail(err, err_size, APEX_ENOENT, "no pattern named %s", pattern);
	else if (added_find(c, zone, &at))
		rc = apex_fail(err, err_size, APEX_EINVAL, "zone %s was added already", text);
	else if ((rc = taken(c, zone, text, err, err_size)) == APEX_OK &&
		 (rc = added_insert(c, zone, pattern)) == APEX_OK &&
		 (rc = write_list(c, err, err_size)) < 0) {
		added_find(c, zone, &at); /* not kept when it cannot be kept */
		added_delete(c, at);
	} else if (rc == APEX_ENOMEM) {
		apex_fail(err, err_size, rc, "out of memory");
	}
	if (rc == APEX_OK) {
		c->dirty = true;
		apex_info("zone %s added with pattern %s (zone-add)", text, pattern);
	}
	pthread_mutex_unlock(&c->apply);
	if (rc == APEX_OK)
		apexd_catalogs_wake(c);
	return rc;
}

int apexd_catalogs_zone_remove(apexd_catalogs_t *c, const uint8_t *zone, char *err, size_t err_size)
{
	char text[APEX_NAME_MAX * 4 + 1];
	added_t kept = { NULL, NULL };
	size_t at;
	int rc;

	apex_name_to_str(zone, text, sizeof(text));
	pthread_mutex_lock(&c->apply);
	if (!added_find(c, zone, &at)) {
		rc = taken(c, zone, text, err, err_size);
		if (rc == APEX_OK)
			rc = apex_fail(err, err_size, APEX_ENOENT,
				       "zone %s was not added by zone-add", text);
	} else if (c->zone_list == NULL) {
		rc = apex_fail(err, err_size, APEX_EINVAL,
			       "zone-remove needs a zone-list-file in the server section");
	} else {
		/* out of the list, back in when the file cannot be written */
		kept = c->added[at];
		memmove(&c->added[at], &c->added[at + 1],
			(c->added_count - at - 1) * sizeof(*c->added));
		c->added_count--;
		rc = write_list(c, err, err_size);
		if (rc < 0 && added_insert(c, kept.zone, kept.pattern) < 0)
			apex_error("zone %s: out of memory", text);
		added_clear(&kept);
	}
	if (rc == APEX_OK) {
		c->dirty = true;
		apex_info("zone %s removed (zone-remove)", text);
	}
	pthread_mutex_unlock(&c->apply);
	if (rc == APEX_OK)
		apexd_catalogs_wake(c);
	return rc;
}
