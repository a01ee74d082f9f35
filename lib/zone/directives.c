/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The directives of zone file text: $ORIGIN, $TTL and $INCLUDE (RFC 1035
 * section 5.1) (zone_file_reader.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ldns/ldns.h>

#include "util/error.h"
#include "zone/zone_file_reader.h"

/* A name for $ORIGIN / $INCLUDE: absolute, or relative to origin.
 * Parsed by ldns as before; returns the wire size or 0. */
static size_t directive_name(const char *text, const uint8_t *origin, uint8_t *out)
{
	ldns_rdf *origin_rdf =
		ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, apex_name_size(origin), origin);
	if (origin_rdf == NULL)
		return 0;
	size_t len = strlen(text);
	bool absolute = len > 0 && text[len - 1] == '.' && (len < 2 || text[len - 2] != '\\');
	ldns_rdf *name = NULL;
	if (absolute) {
		name = ldns_dname_new_frm_str(text);
	} else {
		char *origin_text = ldns_rdf2str(origin_rdf);
		size_t size = origin_text ? len + strlen(origin_text) + 2 : 0;
		char *full = origin_text ? malloc(size) : NULL;
		if (full != NULL) {
			if (strcmp(origin_text, ".") == 0)
				snprintf(full, size, "%s.", text);
			else
				snprintf(full, size, "%s.%s", text, origin_text);
			name = ldns_dname_new_frm_str(full);
		}
		free(full);
		free(origin_text);
	}
	ldns_rdf_deep_free(origin_rdf);
	size_t size = 0;
	if (name != NULL && ldns_rdf_size(name) <= APEX_NAME_MAX && ldns_rdf_size(name) > 0 &&
	    ldns_rdf_data(name)[ldns_rdf_size(name) - 1] == 0) {
		size = ldns_rdf_size(name);
		memcpy(out, ldns_rdf_data(name), size);
	}
	ldns_rdf_deep_free(name);
	return size;
}

/* The path of an $INCLUDE: relative to the directory of the including file. */
static char *include_path(const char *including, const char *name)
{
	if (name[0] == '/')
		return strdup(name);
	const char *slash = strrchr(including, '/');
	size_t dir_len = slash ? (size_t)(slash - including) + 1 : 0;
	size_t size = dir_len + strlen(name) + 1;
	char *path = malloc(size);
	if (path != NULL) {
		memcpy(path, including, dir_len);
		strcpy(path + dir_len, name);
	}
	return path;
}

static void set_origin(apex_reader_t *r, const uint8_t *origin)
{
	memcpy(r->origin, origin, apex_name_size(origin));
	ldns_rdf_deep_free(r->origin_rdf);
	r->origin_rdf = NULL;
}

int apex_directive(apex_reader_t *r, int line, int depth)
{
	char *p = r->rec;
	char *word = apex_next_token(&p);
	char *arg = apex_next_token(&p);
	uint8_t name[APEX_NAME_MAX];
	if (strcasecmp(word, "$TTL") == 0) {
		const char *end = NULL;
		if (arg == NULL)
			return apex_reader_fail(r, line, "$TTL without a value");
		uint32_t ttl = ldns_str2period(arg, &end);
		if (end == arg || *end != '\0' || ttl > INT32_MAX)
			return apex_reader_fail(r, line, "bad TTL '%s'", arg);
		r->sink->default_ttl = ttl;
		r->sink->directives++;
		return APEX_OK;
	}
	if (strcasecmp(word, "$ORIGIN") == 0) {
		if (arg == NULL)
			return apex_reader_fail(r, line, "$ORIGIN without a name");
		if (directive_name(arg, r->origin, name) == 0)
			return apex_reader_fail(r, line, "bad $ORIGIN name '%s'", arg);
		set_origin(r, name);
		r->sink->directives++;
		return APEX_OK;
	}
	if (strcasecmp(word, "$INCLUDE") == 0 && depth >= 0) {
		if (arg == NULL)
			return apex_reader_fail(r, line, "$INCLUDE without a file name");
		char *origin_arg = apex_next_token(&p);
		if (origin_arg != NULL) {
			if (directive_name(origin_arg, r->origin, name) == 0)
				return apex_reader_fail(r, line, "bad $INCLUDE origin '%s'",
							origin_arg);
		} else {
			memcpy(name, r->origin, apex_name_size(r->origin));
		}
		if (depth + 1 >= INCLUDE_DEPTH_MAX)
			return apex_reader_fail(r, line, "$INCLUDE nested too deeply");
		char *path = include_path(r->path, arg);
		if (path == NULL)
			return APEX_ENOMEM;
		FILE *fp = fopen(path, "r");
		if (fp == NULL) {
			int e = errno;
			int rc = apex_reader_fail(r, line, "cannot open $INCLUDE file %s: %s", path,
						  strerror(e));
			free(path);
			return rc;
		}
		fclose(fp);
		/* The included file starts with the given origin; ours is
		 * unchanged afterwards (RFC 1035 section 5.1). */
		int rc = apex_load_file(r->ld, r->sink, path, name, depth + 1);
		free(path);
		return rc;
	}
	return apex_reader_fail(r, line, "unknown directive %s", word);
}
