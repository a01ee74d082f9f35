/* SPDX-License-Identifier: BSD-3-Clause */
/* Access lists and peers of zone transfers and NOTIFY (acl.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/acl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static int fail(char *err, size_t err_size, const char *text, const char *why)
{
	snprintf(err, err_size, "'%s': %s", text, why);
	return APEX_EINVAL;
}

/* The next word of *s (spaces skipped) into word; false at the end. */
static bool next_word(const char **s, char *word, size_t size)
{
	size_t n = 0;

	while (**s == ' ' || **s == '\t')
		(*s)++;
	if (**s == '\0')
		return false;
	while (**s != '\0' && **s != ' ' && **s != '\t') {
		if (n + 1 < size)
			word[n++] = **s;
		(*s)++;
	}
	word[n] = '\0';
	return true;
}

/* "ADDR[/PREFIX][@PORT]" into e. */
static int parse_address(apex_acl_entry_t *e, char *word, bool peer, const char *text, char *err,
			 size_t err_size)
{
	char *at = strchr(word, '@'), *end;
	const char *why;
	unsigned long v;

	if (at != NULL) {
		*at++ = '\0';
		v = strtoul(at, &end, 10);
		if (*at == '\0' || *end != '\0' || v == 0 || v > 65535)
			return fail(err, err_size, text, "bad port after '@'");
		e->port = (uint16_t)v;
	}
	if (peer && strchr(word, '/') != NULL)
		return fail(err, err_size, text, "a peer is one address, without a prefix");
	if (apex_prefix_parse(word, &e->prefix, &why) < 0)
		return fail(err, err_size, text, why);
	return APEX_OK;
}

int apex_acl_entry_parse(apex_acl_entry_t *e, const char *text, bool peer, char *err,
			 size_t err_size)
{
	char word[APEX_ACL_KEY_NAME_MAX];
	const char *s = text;
	int rc;

	memset(e, 0, sizeof(*e));
	snprintf(e->text, sizeof(e->text), "%s", text);
	if (!next_word(&s, word, sizeof(word)))
		return fail(err, err_size, text, "an address is needed");
	if (peer && strcmp(word, "AXFR") == 0) {
		e->axfr_only = true;
		if (!next_word(&s, word, sizeof(word)))
			return fail(err, err_size, text, "an address is needed after AXFR");
	}
	if ((rc = parse_address(e, word, peer, text, err, err_size)) < 0)
		return rc;
	if (!next_word(&s, word, sizeof(word)))
		return fail(err, err_size, text,
			    peer ? "a key name or NOKEY is needed after the address"
				 : "a key name, NOKEY or BLOCKED is needed after the address");
	if (strcmp(word, "BLOCKED") == 0) {
		if (peer)
			return fail(err, err_size, text, "BLOCKED is for access lists");
		e->blocked = true;
	} else if (strcmp(word, "NOKEY") != 0) {
		snprintf(e->key_name, sizeof(e->key_name), "%s", word);
	}
	if (next_word(&s, word, sizeof(word))) {
		if (e->blocked)
			return fail(err, err_size, text, "unexpected text after BLOCKED");
		if (strlen(word) >= sizeof(e->tls_auth_name))
			return fail(err, err_size, text, "tls-auth name too long");
		snprintf(e->tls_auth_name, sizeof(e->tls_auth_name), "%s", word);
		if (peer && e->port == 0)
			e->port = APEX_ACL_TLS_PORT;
	}
	if (next_word(&s, word, sizeof(word)))
		return fail(err, err_size, text, "unexpected text after the tls-auth name");
	return APEX_OK;
}

int apex_acl_resolve(apex_acl_entry_t *e, const apex_tsig_keyring_t *ring, char *err,
		     size_t err_size)
{
	uint8_t name[APEX_NAME_MAX];

	e->key = NULL;
	if (e->key_name[0] == '\0')
		return APEX_OK;
	if (apex_name_from_str(e->key_name, name) < 0) {
		snprintf(err, err_size, "'%s': bad key name '%s'", e->text, e->key_name);
		return APEX_EINVAL;
	}
	for (size_t i = 0; i < ring->count; i++) {
		if (apex_name_equal(ring->keys[i].name, name)) {
			e->key = &ring->keys[i];
			return APEX_OK;
		}
	}
	snprintf(err, err_size, "'%s': no key named '%s' (define it in a key: section)", e->text,
		 e->key_name);
	return APEX_ENOENT;
}

int apex_acl_resolve_tls(apex_acl_entry_t *e, const apex_tls_auth_t *auths, size_t count, char *err,
			 size_t err_size)
{
	e->tls_auth = NULL;
	if (e->tls_auth_name[0] == '\0')
		return APEX_OK;
	for (size_t i = 0; i < count; i++) {
		if (strcmp(auths[i].name, e->tls_auth_name) == 0) {
			e->tls_auth = &auths[i];
			return APEX_OK;
		}
	}
	snprintf(err, err_size, "'%s': no tls-auth named '%s' (define it in a tls-auth: section)",
		 e->text, e->tls_auth_name);
	return APEX_ENOENT;
}

socklen_t apex_acl_sockaddr(const apex_acl_entry_t *e, struct sockaddr_storage *out)
{
	uint16_t port = htons(e->port != 0 ? e->port : 53);

	memset(out, 0, sizeof(*out));
	if (e->prefix.family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		memcpy(&sin6->sin6_addr, e->prefix.addr, 16);
		return sizeof(*sin6);
	}
	struct sockaddr_in *sin = (struct sockaddr_in *)out;

	sin->sin_family = AF_INET;
	sin->sin_port = port;
	memcpy(&sin->sin_addr, e->prefix.addr, 4);
	return sizeof(*sin);
}

static bool address_match(const apex_acl_entry_t *e, const struct sockaddr *peer)
{
	uint16_t port;

	if (!apex_prefix_match(&e->prefix, peer))
		return false;
	if (peer->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)peer)->sin_port);
	else
		port = ntohs(((const struct sockaddr_in6 *)peer)->sin6_port);
	return e->port == 0 || e->port == port;
}

apex_acl_verdict_t apex_acl_check(const apex_acl_entry_t *list, size_t count,
				  const struct sockaddr *peer, const apex_tsig_key_t *key,
				  const apex_acl_tls_peer_t *tls)
{
	for (size_t i = 0; i < count; i++) {
		const apex_acl_entry_t *e = &list[i];

		if (!address_match(e, peer))
			continue;
		if (e->blocked)
			return APEX_ACL_BLOCKED;
		/* an entry that names a tls-auth without its clause resolved
		 * admits nobody */
		if (e->tls_auth_name[0] != '\0' &&
		    (tls == NULL || e->tls_auth == NULL ||
		     !tls->has_name(tls->ctx, e->tls_auth->auth_domain_name)))
			return APEX_ACL_NEEDS_TLS;
		return e->key == key ? APEX_ACL_ALLOW : APEX_ACL_BAD_KEY;
	}
	return APEX_ACL_NO_MATCH;
}
