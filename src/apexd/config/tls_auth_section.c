/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tls-auth: section of the config file (apex.conf(5), NSD's keys): the
 * name a request-xfr or provide-xfr entry gives as its third word, the
 * name the peer's certificate must carry (auth-domain-name), and the
 * client certificate a secondary shows its primary (mutual TLS).  Once the
 * file is read, the clause each entry names.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "config/reader.h"

#include <stdlib.h>
#include <string.h>

#include "config/daemon_config_internal.h"
#include "util/error.h"

/* What a tls-auth: section gathers until its end (p->state). */
typedef struct tls_auth_state {
	apex_tls_auth_t auth; /* strings owned until stored */
} tls_auth_state_t;

static int key_name(parser_t *p, const char *key, const char *value)
{
	tls_auth_state_t *t = p->state;

	(void)key;
	if (t->auth.name != NULL)
		return PFAIL(p, "tls-auth: name given twice");
	if (value[0] == '\0' || strlen(value) >= APEX_ACL_TLS_NAME_MAX ||
	    strcspn(value, " \t") != strlen(value))
		return PFAIL(p, "tls-auth: name: one word of at most %d characters, not '%s'",
			     APEX_ACL_TLS_NAME_MAX - 1, value);
	return apex_config_replace_string(p, &t->auth.name, value);
}

static int key_auth_domain_name(parser_t *p, const char *key, const char *value)
{
	tls_auth_state_t *t = p->state;
	size_t size = strlen(value);

	(void)key;
	if (size > 0 && value[size - 1] == '.')
		size--; /* a certificate names hosts without the root's dot */
	if (size == 0 || size > 253)
		return PFAIL(p, "auth-domain-name: expected a host name, not '%s'", value);
	free(t->auth.auth_domain_name);
	t->auth.auth_domain_name = strndup(value, size);
	return t->auth.auth_domain_name != NULL ? APEX_OK : PFAIL(p, "out of memory");
}

/* client-cert and client-key: files from the config file's directory. */
static int client_path(parser_t *p, char **slot, const char *value)
{
	char *abs = apex_config_absolute_path(value, p->base_dir);

	if (abs == NULL)
		return PFAIL(p, "out of memory");
	free(*slot);
	*slot = abs;
	return APEX_OK;
}

static int key_client_cert(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return client_path(p, &((tls_auth_state_t *)p->state)->auth.client_cert, value);
}

static int key_client_key(parser_t *p, const char *key, const char *value)
{
	(void)key;
	return client_path(p, &((tls_auth_state_t *)p->state)->auth.client_key, value);
}

static int key_client_key_pw(parser_t *p, const char *key, const char *value)
{
	tls_auth_state_t *t = p->state;

	(void)key;
	if (t->auth.client_key_pw != NULL)
		explicit_bzero(t->auth.client_key_pw, strlen(t->auth.client_key_pw));
	return apex_config_replace_string(p, &t->auth.client_key_pw, value);
}

/* Whether the clause can be stored: the reason it cannot, or NULL. */
static const char *incomplete(const tls_auth_state_t *t)
{
	if (t->auth.name == NULL)
		return "a tls-auth needs a name";
	if (t->auth.auth_domain_name == NULL)
		return "a tls-auth needs an auth-domain-name";
	if ((t->auth.client_cert != NULL) != (t->auth.client_key != NULL))
		return "client-cert and client-key go together: give both";
	return NULL;
}

/* The end of a tls-auth: section: the clause stored in cfg->tls.auths. */
static int tls_auth_end(parser_t *p)
{
	tls_auth_state_t *t = p->state;
	apex_config_t *cfg = p->cfg;
	const char *why = incomplete(t);
	unsigned line = p->line;
	apex_tls_auth_t *grown;
	int rc = APEX_OK;

	p->line = p->section_line;
	if (why != NULL)
		rc = PFAIL(p, "%s", why);
	for (size_t i = 0; rc == APEX_OK && i < cfg->tls.auth_count; i++) {
		if (strcmp(cfg->tls.auths[i].name, t->auth.name) == 0)
			rc = PFAIL(p, "tls-auth %s given twice", t->auth.name);
	}
	grown = rc == APEX_OK ? realloc(cfg->tls.auths, (cfg->tls.auth_count + 1) * sizeof(*grown))
			      : NULL;
	if (rc == APEX_OK && grown == NULL)
		rc = PFAIL(p, "out of memory");
	if (rc == APEX_OK) {
		cfg->tls.auths = grown;
		cfg->tls.auths[cfg->tls.auth_count++] = t->auth;
		memset(&t->auth, 0, sizeof(t->auth));
	}
	p->line = line;
	return rc;
}

static void tls_auth_discard(void *state)
{
	tls_auth_state_t *t = state;

	free(t->auth.name);
	free(t->auth.auth_domain_name);
	free(t->auth.client_cert);
	free(t->auth.client_key);
	if (t->auth.client_key_pw != NULL)
		explicit_bzero(t->auth.client_key_pw, strlen(t->auth.client_key_pw));
	free(t->auth.client_key_pw);
}

/* The entries of one list: the clause each names (only request-xfr and
 * provide-xfr entries name one: zone_section.c). */
static int resolve_list(parser_t *p, const apex_zone_config_t *z, const char *what,
			apex_acl_entry_t *entries, size_t count)
{
	char reason[400];

	for (size_t i = 0; i < count; i++) {
		if (apex_acl_resolve_tls(&entries[i], p->cfg->tls.auths, p->cfg->tls.auth_count,
					 reason, sizeof(reason)) < 0)
			return apex_fail(p->err, p->err_size, APEX_EINVAL, "%s: zone %s: %s %s",
					 p->file, z->name, what, reason);
	}
	return APEX_OK;
}

/* Once the file is read: the clause each entry names, in the zones and
 * the patterns. */
static int resolve_tls_auths(parser_t *p)
{
	for (size_t i = 0; i < p->cfg->zone_count + p->cfg->pattern_count; i++) {
		apex_zone_config_t *z = i < p->cfg->zone_count
						? &p->cfg->zones[i]
						: &p->cfg->patterns[i - p->cfg->zone_count];
		int rc = resolve_list(p, z, "request-xfr", z->request_xfr, z->request_xfr_count);

		if (rc == APEX_OK)
			rc = resolve_list(p, z, "provide-xfr", z->provide_xfr,
					  z->provide_xfr_count);
		if (rc < 0)
			return rc;
	}
	return APEX_OK;
}

static const key_def_t tls_auth_keys[] = {
	CUSTOM_KEY("name", key_name),
	CUSTOM_KEY("auth-domain-name", key_auth_domain_name),
	CUSTOM_KEY("client-cert", key_client_cert),
	CUSTOM_KEY("client-key", key_client_key),
	CUSTOM_KEY("client-key-pw", key_client_key_pw),
};

const section_def_t apex_config_tls_auth_section = {
	.name = "tls-auth",
	.what = "a tls-auth section",
	.keys = tls_auth_keys,
	.key_count = sizeof(tls_auth_keys) / sizeof(tls_auth_keys[0]),
	.state_size = sizeof(tls_auth_state_t),
	.end = tls_auth_end,
	.discard = tls_auth_discard,
	.finish = resolve_tls_auths,
};
