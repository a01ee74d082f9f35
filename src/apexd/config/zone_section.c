/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zone: section of the config file (apex.conf(5)): a zone, its file and
 * its access lists; and a pattern: section, the same settings under a
 * name, which a catalog's member zones take (catalog/consumer.h).
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "config/reader.h"

#include <stdlib.h>
#include <string.h>

#include "config/daemon_config_internal.h"
#include "util/error.h"

/* A growing array of access list entries. */
typedef struct acl_list {
	apex_acl_entry_t *entries;
	size_t count;
} acl_list_t;

/* What a zone: section gathers until its end (p->state). */
typedef struct zone_state {
	char *name;
	char *file;
	acl_list_t request_xfr, allow_notify, provide_xfr, notify;
	bool zonemd_off; /* zonemd-verify: no */
	/* verify-zone, verifier, verifier-feed-zone, verifier-timeout: -1 or
	 * NULL when not given */
	int verify_zone;
	char *verifier;
	int verifier_feed_zone;
	long verifier_timeout;
	bool verify_given;     /* the -1s above are set (the state starts zeroed) */
	bool catalog_consumer; /* catalog: consumer */
	char *member_pattern;  /* catalog-member-pattern */
	bool catalog_producer; /* catalog: producer */
	char *producer_zone;   /* catalog-producer-zone */
	char *group;           /* catalog-group */
} zone_state_t;

/* The state's "not given" marks, before the first verify key. */
static void verify_defaults(zone_state_t *z)
{
	if (z->verify_given)
		return;
	z->verify_given = true;
	z->verify_zone = -1;
	z->verifier_feed_zone = -1;
	z->verifier_timeout = -1;
}

static int key_zone_name(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;

	(void)key;
	if (z->name != NULL)
		return PFAIL(p, "zone: name given twice");
	return apex_config_replace_string(p, &z->name, value);
}

static int key_zone_file(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;

	(void)key;
	if (z->file != NULL)
		return PFAIL(p, "zone: file given twice");
	return apex_config_replace_string(p, &z->file, value);
}

/* One entry appended to list; tls: the list takes a tls-auth name as a
 * third word (request-xfr and provide-xfr: NOTIFY stays on UDP, RFC 9103
 * section 7). */
static int acl_push(parser_t *p, acl_list_t *list, const char *value, bool peer, bool tls)
{
	char reason[300];
	apex_acl_entry_t *grown = realloc(list->entries, (list->count + 1) * sizeof(*grown));

	if (grown == NULL)
		return PFAIL(p, "out of memory");
	list->entries = grown;
	if (apex_acl_entry_parse(&grown[list->count], value, peer, reason, sizeof(reason)) < 0)
		return PFAIL(p, "%s", reason);
	if (!tls && grown[list->count].tls_auth_name[0] != '\0')
		return PFAIL(p, "'%s': unexpected text after the key", value);
	list->count++;
	return APEX_OK;
}

static int key_request_xfr(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;

	(void)key;
	return acl_push(p, &z->request_xfr, value, true, true);
}

static int key_allow_notify(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;

	(void)key;
	return acl_push(p, &z->allow_notify, value, false, false);
}

static int key_provide_xfr(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;

	(void)key;
	return acl_push(p, &z->provide_xfr, value, false, true);
}

static int key_notify(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;

	(void)key;
	return acl_push(p, &z->notify, value, true, false);
}

/* zonemd-verify: yes (the default) or no. */
static int key_zonemd_verify(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;
	bool on = true;
	int rc = apex_config_parse_bool(p, key, value, &on);

	if (rc == APEX_OK)
		z->zonemd_off = !on;
	return rc;
}

/* verify-zone and verifier-feed-zone: yes or no. */
static int key_verify_bool(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;
	bool on = false;
	int rc = apex_config_parse_bool(p, key, value, &on);

	verify_defaults(z);
	if (rc == APEX_OK && strcmp(key, "verify-zone") == 0)
		z->verify_zone = on;
	else if (rc == APEX_OK)
		z->verifier_feed_zone = on;
	return rc;
}

static int key_zone_verifier(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;

	verify_defaults(z);
	if (value[0] == '\0')
		return PFAIL(p, "%s: a command is expected", key);
	return apex_config_replace_string(p, &z->verifier, value);
}

static int key_verifier_timeout(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;
	unsigned long seconds = 0;
	int rc = apex_config_parse_uint(p, key, value, 0, 86400, &seconds);

	verify_defaults(z);
	if (rc == APEX_OK)
		z->verifier_timeout = (long)seconds;
	return rc;
}

/* What the state gathered, moved into zone (the state keeps the rest). */
static void take_state(zone_state_t *z, apex_zone_config_t *zone)
{
	zone->request_xfr = z->request_xfr.entries;
	zone->request_xfr_count = z->request_xfr.count;
	zone->allow_notify = z->allow_notify.entries;
	zone->allow_notify_count = z->allow_notify.count;
	zone->provide_xfr = z->provide_xfr.entries;
	zone->provide_xfr_count = z->provide_xfr.count;
	zone->notify = z->notify.entries;
	zone->notify_count = z->notify.count;
	zone->zonemd_verify = !z->zonemd_off;
	if (z->verify_given) {
		zone->verify_zone = z->verify_zone;
		zone->verifier = z->verifier;
		zone->verifier_feed_zone = z->verifier_feed_zone;
		zone->verifier_timeout = z->verifier_timeout;
		z->verifier = NULL;
	}
	memset(&z->notify, 0, sizeof(z->notify));
	memset(&z->request_xfr, 0, sizeof(z->request_xfr));
	memset(&z->allow_notify, 0, sizeof(z->allow_notify));
	memset(&z->provide_xfr, 0, sizeof(z->provide_xfr));
}

/* The end of a zone: section: it needs a name and a file.  The zone takes
 * the access lists; zone_discard() frees the rest. */
static int zone_end(parser_t *p)
{
	zone_state_t *z = p->state;
	char reason[300];
	unsigned line = p->line;
	int rc = APEX_OK;

	p->line = p->section_line; /* errors point at the "zone:" line */
	if (z->name == NULL)
		rc = PFAIL(p, "zone without a name");
	else if (z->file == NULL)
		rc = PFAIL(p, "zone %s without a file", z->name);
	else if (z->catalog_consumer && z->member_pattern == NULL)
		rc = PFAIL(p, "zone %s: catalog: consumer without a catalog-member-pattern",
			   z->name);
	else if (!z->catalog_consumer && z->member_pattern != NULL)
		rc = PFAIL(p, "zone %s: catalog-member-pattern without catalog: consumer", z->name);
	else if (z->catalog_producer && z->request_xfr.count > 0)
		rc = PFAIL(p, "zone %s: catalog: producer is written by apexd, not transferred",
			   z->name);
	else if (z->group != NULL && z->producer_zone == NULL)
		rc = PFAIL(p, "zone %s: catalog-group without catalog-producer-zone", z->name);
	else if (apex_config_add_zone(p->cfg, z->name, z->file,
				      p->zones_dir != NULL ? p->zones_dir : p->base_dir, reason,
				      sizeof(reason)) < 0)
		rc = PFAIL(p, "%s", reason);
	if (rc == APEX_OK) {
		apex_zone_config_t *zone = &p->cfg->zones[p->cfg->zone_count - 1];

		take_state(z, zone);
		zone->catalog_consumer = z->catalog_consumer;
		zone->catalog_member_pattern = z->member_pattern;
		z->member_pattern = NULL;
		zone->catalog_producer = z->catalog_producer;
		zone->catalog_producer_zone = z->producer_zone;
		z->producer_zone = NULL;
		zone->catalog_group = z->group;
		z->group = NULL;
	}
	p->line = line;
	return rc;
}

/* The end of a pattern: section: a name, given once; its file template
 * defaults to "%s.zone", where the zones' files go. */
static int pattern_end(parser_t *p)
{
	zone_state_t *z = p->state;
	apex_zone_config_t item, *grown;
	unsigned line = p->line;
	int rc = APEX_OK;

	memset(&item, 0, sizeof(item));
	p->line = p->section_line; /* errors point at the "pattern:" line */
	if (z->name == NULL || z->name[0] == '\0')
		rc = PFAIL(p, "pattern without a name");
	else if (apex_config_pattern(p->cfg, z->name) != NULL)
		rc = PFAIL(p, "pattern %s given twice", z->name);
	else if ((item.file = apex_config_absolute_path(
			  z->file != NULL ? z->file : "%s.zone",
			  p->zones_dir != NULL ? p->zones_dir : p->base_dir)) == NULL ||
		 (grown = realloc(p->cfg->patterns,
				  (p->cfg->pattern_count + 1) * sizeof(*grown))) == NULL) {
		free(item.file);
		rc = PFAIL(p, "out of memory");
	}
	if (rc == APEX_OK) {
		item.name = z->name;
		z->name = NULL;
		item.zonemd_verify = true;
		item.verify_zone = -1;
		item.verifier_feed_zone = -1;
		item.verifier_timeout = -1;
		take_state(z, &item);
		p->cfg->patterns = grown;
		p->cfg->patterns[p->cfg->pattern_count++] = item;
	}
	p->line = line;
	return rc;
}

/* catalog: consumer or producer. */
static int key_catalog(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;

	if (strcmp(value, "consumer") == 0)
		z->catalog_consumer = true;
	else if (strcmp(value, "producer") == 0)
		z->catalog_producer = true;
	else
		return PFAIL(p, "%s: expected consumer or producer, not '%s'", key, value);
	if (z->catalog_consumer && z->catalog_producer)
		return PFAIL(p, "%s: a zone is a consumer or a producer, not both", key);
	return APEX_OK;
}

static int key_producer_zone(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;
	uint8_t name[APEX_NAME_MAX];

	if (apex_name_from_str(value, name) < 0)
		return PFAIL(p, "%s: bad zone name '%s'", key, value);
	return apex_config_replace_string(p, &z->producer_zone, value);
}

/* catalog-group (Knot DNS's key): a group property, RFC 9432 section
 * 4.4.2: at most 255 octets, no white space (nor a quote or a backslash,
 * so that the catalog's file needs no escape). */
static int key_group(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;
	size_t len = strlen(value);

	if (len == 0 || len > 255 || strpbrk(value, " \t\r\n\"\\") != NULL)
		return PFAIL(p, "%s: '%s': 1 to 255 characters, no white space, quote or backslash",
			     key, value);
	return apex_config_replace_string(p, &z->group, value);
}

static int key_member_pattern(parser_t *p, const char *key, const char *value)
{
	zone_state_t *z = p->state;

	(void)key;
	return apex_config_replace_string(p, &z->member_pattern, value);
}

/* Whether cfg has a catalog: producer zone named name (text). */
static bool is_producer(const apex_config_t *cfg, const char *name)
{
	uint8_t origin[APEX_NAME_MAX];
	long i;

	if (apex_name_from_str(name, origin) < 0)
		return false;
	i = apex_config_find_zone(cfg, origin);
	return i >= 0 && cfg->zones[i].catalog_producer;
}

/* Once the file is read: each consumer's pattern exists, each producer
 * zone named is one. */
static int zone_finish(parser_t *p)
{
	for (size_t i = 0; i < p->cfg->zone_count; i++) {
		const apex_zone_config_t *zone = &p->cfg->zones[i];

		if (zone->catalog_member_pattern != NULL &&
		    apex_config_pattern(p->cfg, zone->catalog_member_pattern) == NULL)
			return apex_fail(p->err, p->err_size, APEX_EINVAL,
					 "%s: zone %s: catalog-member-pattern %s: no such pattern",
					 p->file, zone->name, zone->catalog_member_pattern);
		if (zone->catalog_producer_zone != NULL &&
		    !is_producer(p->cfg, zone->catalog_producer_zone))
			return apex_fail(p->err, p->err_size, APEX_EINVAL,
					 "%s: zone %s: catalog-producer-zone %s: no zone with "
					 "catalog: producer of that name",
					 p->file, zone->name, zone->catalog_producer_zone);
		if (zone->catalog_producer_zone != NULL && zone->catalog_producer)
			return apex_fail(p->err, p->err_size, APEX_EINVAL,
					 "%s: zone %s: a catalog cannot be its own member", p->file,
					 zone->name);
	}
	return APEX_OK;
}

static void zone_discard(void *state)
{
	zone_state_t *z = state;

	free(z->name);
	free(z->file);
	free(z->request_xfr.entries);
	free(z->allow_notify.entries);
	free(z->provide_xfr.entries);
	free(z->notify.entries);
	free(z->verifier);
	free(z->member_pattern);
	free(z->producer_zone);
	free(z->group);
}

/* A zone: section; the rows before the catalog keys are a pattern's too. */
#define PATTERN_KEY_COUNT 11
static const key_def_t zone_keys[] = {
	CUSTOM_KEY("name", key_zone_name),
	CUSTOM_KEY("file", key_zone_file),
	WORDS_KEY("request-xfr", key_request_xfr),
	WORDS_KEY("allow-notify", key_allow_notify),
	WORDS_KEY("provide-xfr", key_provide_xfr),
	WORDS_KEY("notify", key_notify),
	CUSTOM_KEY("zonemd-verify", key_zonemd_verify),
	CUSTOM_KEY("verify-zone", key_verify_bool),
	WORDS_KEY("verifier", key_zone_verifier),
	CUSTOM_KEY("verifier-feed-zone", key_verify_bool),
	CUSTOM_KEY("verifier-timeout", key_verifier_timeout),
	CUSTOM_KEY("catalog", key_catalog),
	CUSTOM_KEY("catalog-member-pattern", key_member_pattern),
	CUSTOM_KEY("catalog-producer-zone", key_producer_zone),
	CUSTOM_KEY("catalog-group", key_group),
};

const section_def_t apex_config_zone_section = {
	.name = "zone",
	.what = "a zone section",
	.keys = zone_keys,
	.key_count = sizeof(zone_keys) / sizeof(zone_keys[0]),
	.state_size = sizeof(zone_state_t),
	.end = zone_end,
	.discard = zone_discard,
	.finish = zone_finish,
};

const section_def_t apex_config_pattern_section = {
	.name = "pattern",
	.what = "a pattern section",
	.keys = zone_keys,
	.key_count = PATTERN_KEY_COUNT,
	.state_size = sizeof(zone_state_t),
	.end = pattern_end,
	.discard = zone_discard,
};
