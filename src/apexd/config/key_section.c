/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A key: section of the config file (apex.conf(5)): a TSIG key, and once
 * the file is read, the key each access list entry names.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "config/reader.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

/* What a key: section gathers until its end (p->state). */
typedef struct key_state {
	char *name, *algorithm, *secret;
} key_state_t;

/* name, algorithm, secret (apex_tsig_key_init() checks them at the section's end). */
static int key_key_name(parser_t *p, const char *key, const char *value)
{
	key_state_t *k = p->state;

	(void)key;
	if (k->name != NULL)
		return PFAIL(p, "key: name given twice");
	return apex_config_replace_string(p, &k->name, value);
}

static int key_key_algorithm(parser_t *p, const char *key, const char *value)
{
	key_state_t *k = p->state;

	(void)key;
	return apex_config_replace_string(p, &k->algorithm, value);
}

static int key_key_secret(parser_t *p, const char *key, const char *value)
{
	key_state_t *k = p->state;

	(void)key;
	return apex_config_replace_string(p, &k->secret, value);
}

/* The end of a key: section: a TSIG key from its name, algorithm and secret. */
static int key_end(parser_t *p)
{
	key_state_t *k = p->state;
	char reason[300];
	unsigned line = p->line;
	apex_tsig_key_t key, *grown;
	int rc = APEX_OK;

	p->line = p->section_line;
	if (k->name == NULL || k->algorithm == NULL || k->secret == NULL) {
		rc = PFAIL(p, "a key needs a name, an algorithm and a secret");
	} else if (apex_tsig_key_init(&key, k->name, k->algorithm, k->secret, reason,
				      sizeof(reason)) < 0) {
		rc = PFAIL(p, "key %s: %s", k->name, reason);
	} else {
		for (size_t i = 0; i < p->cfg->key_count && rc == APEX_OK; i++) {
			if (apex_name_equal(p->cfg->keys[i].name, key.name))
				rc = PFAIL(p, "key %s given twice", k->name);
		}
		grown = rc == APEX_OK
				? realloc(p->cfg->keys, (p->cfg->key_count + 1) * sizeof(*grown))
				: NULL;
		if (rc == APEX_OK && grown == NULL)
			rc = PFAIL(p, "out of memory");
		if (rc == APEX_OK) {
			p->cfg->keys = grown;
			p->cfg->keys[p->cfg->key_count++] = key;
		}
	}
	explicit_bzero(&key, sizeof(key));
	p->line = line;
	return rc;
}

static void key_discard(void *state)
{
	key_state_t *k = state;

	free(k->name);
	free(k->algorithm);
	if (k->secret != NULL)
		explicit_bzero(k->secret, strlen(k->secret));
	free(k->secret);
}

/* The entries of one access list: the key each names. */
static int resolve_list(parser_t *p, const apex_zone_config_t *z, const char *what,
			apex_acl_entry_t *entries, size_t count)
{
	apex_tsig_keyring_t ring = { p->cfg->keys, p->cfg->key_count };
	char reason[400];

	for (size_t i = 0; i < count; i++) {
		if (apex_acl_resolve(&entries[i], &ring, reason, sizeof(reason)) < 0)
			return apex_fail(p->err, p->err_size, APEX_EINVAL, "%s: zone %s: %s %s",
					 p->file, z->name, what, reason);
	}
	return APEX_OK;
}

/* Once every key is read: the key each entry names, in the zones and the
 * patterns. */
static int resolve_keys(parser_t *p)
{
	for (size_t i = 0; i < p->cfg->zone_count + p->cfg->pattern_count; i++) {
		apex_zone_config_t *z = i < p->cfg->zone_count
						? &p->cfg->zones[i]
						: &p->cfg->patterns[i - p->cfg->zone_count];
		const struct {
			const char *what;
			apex_acl_entry_t *entries;
			size_t count;
		} lists[] = {
			{ "request-xfr", z->request_xfr, z->request_xfr_count },
			{ "notify", z->notify, z->notify_count },
			{ "provide-xfr", z->provide_xfr, z->provide_xfr_count },
			{ "allow-notify", z->allow_notify, z->allow_notify_count },
		};

		for (size_t j = 0; j < sizeof(lists) / sizeof(lists[0]); j++) {
			int rc =
				resolve_list(p, z, lists[j].what, lists[j].entries, lists[j].count);

			if (rc < 0)
				return rc;
		}
	}
	return APEX_OK;
}

/* A key: section. */
static const key_def_t key_keys[] = {
	CUSTOM_KEY("name", key_key_name),
	CUSTOM_KEY("algorithm", key_key_algorithm),
	CUSTOM_KEY("secret", key_key_secret),
};

const section_def_t apex_config_key_section = {
	.name = "key",
	.what = "a key section",
	.keys = key_keys,
	.key_count = sizeof(key_keys) / sizeof(key_keys[0]),
	.state_size = sizeof(key_state_t),
	.end = key_end,
	.discard = key_discard,
	.finish = resolve_keys,
};
