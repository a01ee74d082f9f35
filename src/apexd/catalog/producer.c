/* SPDX-License-Identifier: BSD-3-Clause */
/* Catalogs produced (producer.h): each catalog's file written when its members changed. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "catalog/producer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog/catalog_write.h"
#include "dns/name.h"
#include "util/error.h"
#include "util/file_replace.h"
#include "util/log.h"

/* The members of catalog among cfg's zones, into *out (malloc'ed). */
static int members_of(const apex_config_t *cfg, const apex_zone_config_t *catalog,
		      apex_catalog_entry_t **out, size_t *count)
{
	apex_catalog_entry_t *list =
		calloc(cfg->zone_count > 0 ? cfg->zone_count : 1, sizeof(*list));
	uint8_t name[APEX_NAME_MAX];
	size_t n = 0;

	if (list == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const apex_zone_config_t *z = &cfg->zones[i];

		/* the config reader checked that the name parses */
		if (z->catalog_producer_zone == NULL ||
		    apex_name_from_str(z->catalog_producer_zone, name) < 0 ||
		    !apex_name_equal(name, catalog->origin))
			continue;
		list[n].zone = z->origin;
		list[n++].group = z->catalog_group;
	}
	*out = list;
	*count = n;
	return APEX_OK;
}

/* The whole file at path (malloc'ed, NUL-terminated), or NULL (*missing
 * set when there is none). */
static char *read_whole(const char *path, bool *missing)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t size = 0;
	long end;

	*missing = f == NULL && errno == ENOENT;
	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (end = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (text = malloc((size_t)end + 1)) != NULL) {
		size = fread(text, 1, (size_t)end, f);
		text[size] = '\0';
	}
	fclose(f);
	return text;
}

/* In the text of a catalog apexd wrote: its serial, and where the body
 * after its SOA line begins; NULL when the text is not one. */
static const char *old_body(const char *text, uint32_t *serial)
{
	size_t prefix = strlen(APEX_CATALOG_SOA_PREFIX);
	const char *line = text;

	while (line != NULL && strncmp(line, APEX_CATALOG_SOA_PREFIX, prefix) != 0) {
		line = strchr(line, '\n');
		line = line != NULL ? line + 1 : NULL;
	}
	if (line == NULL || sscanf(line + prefix, "%u", serial) != 1)
		return NULL;
	line = strchr(line, '\n');
	return line != NULL ? line + 1 : NULL;
}

/* The catalog's file written anew: a header, its SOA, body. */
static int write_catalog(const apex_zone_config_t *catalog, uint32_t serial, const char *body,
			 size_t size)
{
	char *text = NULL;
	size_t text_size = 0;
	FILE *f = open_memstream(&text, &text_size);
	int rc;

	if (f == NULL)
		return APEX_ENOMEM;
	fprintf(f,
		"; The catalog (RFC 9432) of the zones naming %s in catalog-producer-zone,\n"
		"; written by apexd: edits are replaced.\n$ORIGIN %s\n" APEX_CATALOG_SOA_FORMAT,
		catalog->name, catalog->name, serial);
	fwrite(body, 1, size, f);
	rc = ferror(f) ? APEX_ENOMEM : APEX_OK;
	if (fclose(f) != 0)
		rc = APEX_ENOMEM;
	if (rc == APEX_OK)
		rc = apex_file_replace(catalog->file, text, text_size);
	free(text);
	return rc;
}

/* One catalog: its file written if its members changed; *written set then. */
static int produce_one(const apex_config_t *cfg, const apex_zone_config_t *catalog, bool *written)
{
	apex_catalog_entry_t *entries;
	size_t count, size;
	char *body = NULL, *text;
	const char *before = NULL;
	uint32_t serial = 0;
	bool missing;
	int rc;

	*written = false;
	if ((rc = members_of(cfg, catalog, &entries, &count)) < 0)
		return rc;
	rc = apex_catalog_body(entries, count, &body, &size);
	free(entries);
	if (rc < 0)
		return rc;
	text = read_whole(catalog->file, &missing);
	if (text != NULL)
		before = old_body(text, &serial);
	if (before != NULL && strcmp(before, body) == 0) {
		free(text);
		free(body);
		return APEX_OK;
	}
	/* a serial that moves: RFC 9432 section 4.1 */
	serial = before != NULL ? serial + 1 : (uint32_t)time(NULL);
	if (text == NULL && !missing)
		apex_warning("catalog %s: %s: not read: written anew with serial %u", catalog->name,
			     catalog->file, serial);
	rc = write_catalog(catalog, serial, body, size);
	if (rc < 0)
		apex_error("catalog %s: %s: not written: %s", catalog->name, catalog->file,
			   apex_strerror(rc));
	else
		apex_info("catalog %s: %zu member zone(s), serial %u", catalog->name, count,
			  serial);
	*written = rc == APEX_OK;
	free(text);
	free(body);
	return rc == APEX_ENOMEM ? rc : APEX_OK;
}

int apexd_catalogs_produce(const apex_config_t *cfg, uint8_t ***written, size_t *count)
{
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const apex_zone_config_t *catalog = &cfg->zones[i];
		uint8_t **grown, *origin;
		bool changed;
		int rc;

		if (!catalog->catalog_producer)
			continue;
		if ((rc = produce_one(cfg, catalog, &changed)) < 0)
			return rc;
		if (!changed || written == NULL)
			continue;
		origin = malloc(apex_name_size(catalog->origin));
		grown = realloc(*written, (*count + 1) * sizeof(*grown));
		if (grown != NULL)
			*written = grown;
		if (origin == NULL || grown == NULL) {
			free(origin);
			return APEX_ENOMEM;
		}
		memcpy(origin, catalog->origin, apex_name_size(catalog->origin));
		(*written)[(*count)++] = origin;
	}
	return APEX_OK;
}
