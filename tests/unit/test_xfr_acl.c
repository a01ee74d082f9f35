/* SPDX-License-Identifier: BSD-3-Clause */
/* Access lists and peers of transfers and NOTIFY (lib/xfr/acl.c). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/error.h"
#include "xfr/acl.h"

static apex_tsig_key_t keys[2];

static void make_keys(void)
{
	char err[200];

	assert_int_equal(
		apex_tsig_key_init(&keys[0], "a-key", "hmac-sha256", "AAAA", err, sizeof(err)),
		APEX_OK);
	assert_int_equal(
		apex_tsig_key_init(&keys[1], "b-key", "hmac-sha1", "AAAA", err, sizeof(err)),
		APEX_OK);
}

static void entry(apex_acl_entry_t *e, const char *text, bool peer)
{
	apex_tsig_keyring_t ring = { keys, 2 };
	char err[200];

	assert_int_equal(apex_acl_entry_parse(e, text, peer, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_acl_resolve(e, &ring, err, sizeof(err)), APEX_OK);
}

static struct sockaddr_storage addr(const char *text, uint16_t port)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(text, ':') != NULL) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		assert_int_equal(inet_pton(AF_INET6, text, &sin6->sin6_addr), 1);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		assert_int_equal(inet_pton(AF_INET, text, &sin->sin_addr), 1);
	}
	return ss;
}

static apex_acl_verdict_t check(const apex_acl_entry_t *list, size_t n, const char *from,
				const apex_tsig_key_t *key)
{
	struct sockaddr_storage ss = addr(from, 4321);

	return apex_acl_check(list, n, (const struct sockaddr *)&ss, key, NULL);
}

/* The first entry whose address matches decides, by prefix, port and key. */
static void test_first_match_decides(void **state)
{
	apex_acl_entry_t list[5];

	(void)state;
	make_keys();
	entry(&list[0], "192.0.2.7 BLOCKED", false);
	entry(&list[1], "192.0.2.0/25 a-key", false);
	entry(&list[2], "192.0.2.0/24 NOKEY", false);
	entry(&list[3], "2001:db8::/32 b-key", false);
	entry(&list[4], "198.51.100.1@53 a-key", false);

	assert_int_equal(check(list, 5, "192.0.2.7", &keys[0]), APEX_ACL_BLOCKED);
	assert_int_equal(check(list, 5, "192.0.2.8", &keys[0]), APEX_ACL_ALLOW);
	assert_int_equal(check(list, 5, "192.0.2.8", NULL), APEX_ACL_BAD_KEY);
	assert_int_equal(check(list, 5, "192.0.2.8", &keys[1]), APEX_ACL_BAD_KEY);
	/* 192.0.2.200 is outside /25, inside /24: unsigned only */
	assert_int_equal(check(list, 5, "192.0.2.200", NULL), APEX_ACL_ALLOW);
	assert_int_equal(check(list, 5, "192.0.2.200", &keys[0]), APEX_ACL_BAD_KEY);
	assert_int_equal(check(list, 5, "192.0.3.1", NULL), APEX_ACL_NO_MATCH);
	assert_int_equal(check(list, 5, "2001:db8:ffff::1", &keys[1]), APEX_ACL_ALLOW);
	assert_int_equal(check(list, 5, "2001:db9::1", &keys[1]), APEX_ACL_NO_MATCH);
	/* a port in a list entry must match too (4321 is not 53) */
	assert_int_equal(check(list, 5, "198.51.100.1", &keys[0]), APEX_ACL_NO_MATCH);
	/* an empty list refuses */
	assert_int_equal(check(list, 0, "192.0.2.8", &keys[0]), APEX_ACL_NO_MATCH);
}

/* Prefixes that do not end on a byte boundary. */
static void test_odd_prefixes(void **state)
{
	apex_acl_entry_t e;

	(void)state;
	make_keys();
	entry(&e, "10.0.0.0/9 NOKEY", false);
	assert_int_equal(check(&e, 1, "10.127.255.255", NULL), APEX_ACL_ALLOW);
	assert_int_equal(check(&e, 1, "10.128.0.0", NULL), APEX_ACL_NO_MATCH);
	entry(&e, "0.0.0.0/0 NOKEY", false);
	assert_int_equal(check(&e, 1, "203.0.113.9", NULL), APEX_ACL_ALLOW);
	assert_int_equal(check(&e, 1, "::1", NULL), APEX_ACL_NO_MATCH);
}

/* A peer: one address, port 53 unless given, AXFR first allowed. */
static void test_peer(void **state)
{
	apex_acl_entry_t e;
	struct sockaddr_storage ss;

	(void)state;
	make_keys();
	entry(&e, "AXFR ::1@5300 b-key", true);
	assert_true(e.axfr_only);
	assert_ptr_equal(e.key, &keys[1]);
	assert_int_equal(apex_acl_sockaddr(&e, &ss), sizeof(struct sockaddr_in6));
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 5300);
	entry(&e, "192.0.2.1 NOKEY", true);
	assert_null(e.key);
	assert_int_equal(apex_acl_sockaddr(&e, &ss), sizeof(struct sockaddr_in));
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 53);
}

/* A certificate that carries one name, for the checks below. */
static bool cert_has_name(const void *ctx, const char *name)
{
	return strcmp(ctx, name) == 0;
}

/* A tls-auth name: a peer reached on 853 unless given; an access list
 * entry that admits only a request over TLS whose client certificate
 * carries the clause's auth-domain-name, and still checks the key. */
static void test_tls_auth(void **state)
{
	apex_tls_auth_t auths[2] = {
		{ .name = "primary", .auth_domain_name = "primary.example" },
		{ .name = "secondaries", .auth_domain_name = "secondary.example" },
	};
	apex_acl_tls_peer_t right = { cert_has_name, "secondary.example" };
	apex_acl_tls_peer_t wrong = { cert_has_name, "wrong.example" };
	struct sockaddr_storage ss = addr("192.0.2.9", 4321), out;
	apex_acl_entry_t e, list[2];
	char err[200];

	(void)state;
	make_keys();
	entry(&e, "192.0.2.1 a-key primary", true);
	assert_int_equal(apex_acl_resolve_tls(&e, auths, 2, err, sizeof(err)), APEX_OK);
	assert_ptr_equal(e.tls_auth, &auths[0]);
	apex_acl_sockaddr(&e, &out);
	assert_int_equal(ntohs(((struct sockaddr_in *)&out)->sin_port), 853);
	entry(&e, "192.0.2.1@8853 a-key primary", true);
	apex_acl_sockaddr(&e, &out);
	assert_int_equal(ntohs(((struct sockaddr_in *)&out)->sin_port), 8853);

	entry(&list[0], "192.0.2.0/24 a-key secondaries", false);
	entry(&list[1], "0.0.0.0/0 NOKEY", false);
	/* an unresolved clause admits nobody */
	assert_int_equal(apex_acl_check(list, 2, (const struct sockaddr *)&ss, &keys[0], &right),
			 APEX_ACL_NEEDS_TLS);
	assert_int_equal(apex_acl_resolve_tls(&list[0], auths, 2, err, sizeof(err)), APEX_OK);
	assert_int_equal(apex_acl_check(list, 2, (const struct sockaddr *)&ss, &keys[0], &right),
			 APEX_ACL_ALLOW);
	assert_int_equal(apex_acl_check(list, 2, (const struct sockaddr *)&ss, &keys[1], &right),
			 APEX_ACL_BAD_KEY);
	assert_int_equal(apex_acl_check(list, 2, (const struct sockaddr *)&ss, &keys[0], &wrong),
			 APEX_ACL_NEEDS_TLS);
	assert_int_equal(apex_acl_check(list, 2, (const struct sockaddr *)&ss, &keys[0], NULL),
			 APEX_ACL_NEEDS_TLS);

	entry(&e, "192.0.2.1 a-key nosuch", true);
	assert_int_equal(apex_acl_resolve_tls(&e, auths, 2, err, sizeof(err)), APEX_ENOENT);
	assert_non_null(strstr(err, "no tls-auth named 'nosuch'"));
	assert_int_equal(
		apex_acl_entry_parse(&e, "192.0.2.1 BLOCKED primary", false, err, sizeof(err)),
		APEX_EINVAL);
	assert_int_equal(
		apex_acl_entry_parse(&e, "192.0.2.1 a-key primary more", true, err, sizeof(err)),
		APEX_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_match_decides),
		cmocka_unit_test(test_odd_prefixes),
		cmocka_unit_test(test_peer),
		cmocka_unit_test(test_tls_auth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
