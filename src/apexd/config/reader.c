/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The config file reader (apex.conf(5)): lines, quoting, sections, and a
 * key's value applied through its section's table of keys.
 *
 * Adding a section (say "tls-auth:"): write config/tls_auth_section.c with
 * its table of keys (UINT_KEY, STRING_KEY, BOOL_KEY, CUSTOM_KEY, WORDS_KEY
 * rows, reader.h) and its section_def_t, apex_config_tls_auth_section;
 * declare that in reader.h beside the others and add it to sections[]
 * below; list the file in Makefile.am (apexd and the config unit test).
 * A section that gathers values before it can store them, as zone: and
 * key: do, keeps them in a struct of its own (p->state), stored by its
 * end() and freed by its discard().  NSD's spellings of its keys are rows
 * of nsd_spellings.c.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "config/reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "config/daemon_config_internal.h"
#include "config/nsd_spellings.h"
#include "util/error.h"

/* The sections a line "NAME:" starts.  Once the file is read, their
 * finish() checks run in this order. */
static const section_def_t *const sections[] = {
	&apex_config_zone_section,     &apex_config_pattern_section, &apex_config_key_section,
	&apex_config_tls_auth_section, &apex_config_server_section,  &apex_config_dnstap_section,
};

#define SECTION_COUNT (sizeof(sections) / sizeof(sections[0]))

int apex_config_fail(parser_t *p, const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return apex_fail(p->err, p->err_size, APEX_EINVAL, "%s:%u: %s", p->file, p->line, reason);
}

int apex_config_parse_uint(parser_t *p, const char *key, const char *value, unsigned long min,
			   unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno != 0 || v < min || v > max)
		return PFAIL(p, "%s: expected a number from %lu to %lu, not '%s'", key, min, max,
			     value);
	*out = v;
	return APEX_OK;
}

int apex_config_replace_string(parser_t *p, char **slot, const char *value)
{
	char *copy = strdup(value);

	if (copy == NULL)
		return PFAIL(p, "out of memory");
	free(*slot);
	*slot = copy;
	return APEX_OK;
}

int apex_config_parse_bool(parser_t *p, const char *key, const char *value, bool *out)
{
	if (strcmp(value, "yes") == 0 || strcmp(value, "on") == 0) {
		*out = true;
		return APEX_OK;
	}
	if (strcmp(value, "no") == 0 || strcmp(value, "off") == 0) {
		*out = false;
		return APEX_OK;
	}
	return PFAIL(p, "%s: expected yes or no, not '%s'", key, value);
}

/* The directory of a file, absolute, as a new string (caller frees). */
static char *directory_of(const char *file)
{
	char *abs = apex_config_absolute_path(file, NULL);
	char *slash;

	if (abs == NULL)
		return NULL;
	slash = strrchr(abs, '/');
	if (slash == abs)
		slash[1] = '\0'; /* "/apex.conf" -> "/" */
	else
		*slash = '\0';
	return abs;
}

/* The row of a section's table for key, or NULL. */
static const key_def_t *find_key(const section_def_t *section, const char *key)
{
	for (size_t i = 0; i < section->key_count; i++)
		if (strcmp(key, section->keys[i].name) == 0)
			return &section->keys[i];
	return NULL;
}

/* Keys whose value is several words, in whichever section. */
static bool key_takes_words(const char *key)
{
	for (size_t i = 0; i < SECTION_COUNT; i++) {
		const key_def_t *k = find_key(sections[i], key);

		if (k != NULL && k->words)
			return true;
	}
	return false;
}

/* Store v in an unsigned integer field of `size` bytes. */
static void store_uint(void *field, size_t size, unsigned long v)
{
	switch (size) {
	case sizeof(uint16_t): *(uint16_t *)field = (uint16_t)v; break;
	case sizeof(uint32_t): *(uint32_t *)field = (uint32_t)v; break;
	default: *(uint64_t *)field = (uint64_t)v; break;
	}
}

/*
 * Apply key = value with the definitions of the current section, or of the
 * key NSD's spelling stands for (the parsers are given the key as written,
 * for their messages).
 */
static int apply_key(parser_t *p, const char *key, const char *value)
{
	const key_def_t *k = find_key(p->section, key);
	const char *apex_key;
	void *field;
	unsigned long v;
	int rc;

	if (k == NULL && (apex_key = apex_config_nsd_spelling(p->section->name, key)) != NULL)
		k = find_key(p->section, apex_key);
	if (k == NULL)
		return PFAIL(p, "unknown key '%s' in %s", key, p->section->what);
	field = (char *)p->cfg + k->offset;
	switch (k->kind) {
	case KEY_UINT:
		if ((rc = apex_config_parse_uint(p, key, value, k->min, k->max, &v)) < 0)
			return rc;
		store_uint(field, k->size, v);
		return APEX_OK;
	case KEY_STRING: return apex_config_replace_string(p, (char **)field, value);
	case KEY_BOOL: return apex_config_parse_bool(p, key, value, (bool *)field);
	case KEY_CUSTOM: return k->parse(p, key, value);
	}
	return PFAIL(p, "unknown key '%s' in %s", key, p->section->what);
}

/* Free what the current section gathered. */
static void drop_state(parser_t *p)
{
	if (p->state == NULL)
		return;
	if (p->section->discard != NULL)
		p->section->discard(p->state);
	free(p->state);
	p->state = NULL;
}

/* The end of the current section (if any): it stores what it gathered. */
static int section_end(parser_t *p)
{
	int rc = APEX_OK;

	if (p->section == NULL)
		return APEX_OK;
	if (p->section->end != NULL)
		rc = p->section->end(p);
	drop_state(p);
	return rc;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The section a line "name:" starts, or NULL. */
static const section_def_t *section_of(const char *name)
{
	for (size_t i = 0; i < SECTION_COUNT; i++)
		if (strcmp(name, sections[i]->name) == 0)
			return sections[i];
	return NULL;
}

/* A new section: the one before ends. */
static int section_start(parser_t *p, const section_def_t *section)
{
	int rc = section_end(p);

	if (rc < 0)
		return rc;
	p->section = section;
	p->section_line = p->line;
	if (section->state_size != 0 && (p->state = calloc(1, section->state_size)) == NULL)
		return PFAIL(p, "out of memory");
	return APEX_OK;
}

/*
 * The value after "key:" at *sp, bare or quoted, into *value (NULL if
 * there is none), cut from the rest of the line; *sp moves past it.
 */
static int read_value(parser_t *p, const char *key, char **sp, char **value)
{
	char *s = *sp;

	*value = NULL;
	if (*s == '"') {
		char *w = ++s;

		*value = w;
		for (;;) {
			if (*s == '\0' || *s == '\n')
				return PFAIL(p, "unterminated quoted string");
			if (*s == '"')
				break;
			if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
				s++;
			*w++ = *s++;
		}
		s++;
		*w = '\0';
	} else if (*s != '\0' && *s != '#') {
		*value = s;
		while (*s != '\0' && *s != '#' && !is_space(*s))
			s++;
		/* several words: up to a comment, trailing spaces dropped */
		while (key_takes_words(key) && is_space(*s)) {
			char *word = s;

			while (is_space(*word))
				word++;
			if (*word == '\0' || *word == '#')
				break;
			s = word;
			while (*s != '\0' && *s != '#' && !is_space(*s))
				s++;
		}
		if (*s == '#')
			return PFAIL(p, "a '#' right after a value: quote the value or put a space "
					"before the comment");
		if (*s != '\0')
			*s++ = '\0';
	}
	*sp = s;
	return APEX_OK;
}

/* One line: blank, comment, "section:" or "key: value" (value bare or quoted). */
static int parse_line(parser_t *p, char *s)
{
	char *key, *value;
	int rc;

	while (is_space(*s))
		s++;
	if (*s == '\0' || *s == '#')
		return APEX_OK;

	key = s;
	while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
	       *s == '-' || *s == '_')
		s++;
	if (s == key || *s != ':')
		return PFAIL(p, "expected 'key: value' or a section ('server:', 'zone:')");
	*s++ = '\0';
	while (is_space(*s))
		s++;
	if ((rc = read_value(p, key, &s, &value)) < 0)
		return rc;
	while (is_space(*s))
		s++;
	if (*s != '\0' && *s != '#')
		return PFAIL(p, "unexpected text after the value of '%s'", key);

	if (value == NULL) {
		if (section_of(key) != NULL)
			return section_start(p, section_of(key));
		return PFAIL(p, "'%s' needs a value", key);
	}
	if (p->section != NULL)
		return apply_key(p, key, value);
	if (section_of(key) != NULL)
		return PFAIL(p, "'%s:' takes no value: put its keys on the lines below", key);
	return PFAIL(p, "'%s' outside of a section (start with 'server:' or 'zone:')", key);
}

/* Every line of fp, then the end of the last section and the checks
 * across keys. */
static int read_lines(parser_t *p, FILE *fp, const char *path)
{
	char *line = NULL;
	size_t line_cap = 0;
	int rc = APEX_OK;

	for (;;) {
		errno = 0;
		ssize_t n = getline(&line, &line_cap, fp);

		if (n < 0) {
			if (ferror(fp))
				rc = apex_fail(p->err, p->err_size, apex_errno(), "%s: %s", path,
					       strerror(errno));
			break;
		}
		p->line++;
		if ((size_t)n != strlen(line)) {
			rc = PFAIL(p, "NUL byte in the line");
			break;
		}
		if ((rc = parse_line(p, line)) < 0)
			break;
	}
	free(line);
	if (rc == APEX_OK)
		rc = section_end(p);
	for (size_t i = 0; i < SECTION_COUNT && rc == APEX_OK; i++)
		if (sections[i]->finish != NULL)
			rc = sections[i]->finish(p);
	return rc;
}

int apex_config_load(apex_config_t *cfg, const char *path, char *err, size_t err_size)
{
	parser_t p;
	FILE *fp;
	int rc;

	memset(&p, 0, sizeof(p));
	p.cfg = cfg;
	p.file = path;
	p.err = err;
	p.err_size = err_size;

	fp = fopen(path, "r");
	if (fp == NULL)
		return apex_fail(err, err_size, apex_errno(), "%s: %s", path, strerror(errno));
	p.base_dir = directory_of(path);
	free(cfg->path);
	cfg->path = strdup(path);
	if (p.base_dir == NULL || cfg->path == NULL) {
		fclose(fp);
		free(p.base_dir);
		return apex_fail(err, err_size, APEX_ENOMEM, "%s: out of memory", path);
	}
	rc = read_lines(&p, fp, path);
	drop_state(&p);
	free(p.base_dir);
	free(p.zones_dir);
	fclose(fp);
	return rc;
}
