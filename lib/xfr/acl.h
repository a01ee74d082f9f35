/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who may do what with a zone, and whom apex talks to about it: the
 * entries of request-xfr and allow-notify (apex.conf(5)), spelled as NSD
 * spells them.
 *
 *   ADDR[/PREFIX][@PORT] KEY|NOKEY|BLOCKED [TLSAUTH]   (an access list entry)
 *   [AXFR] ADDR[@PORT] KEY|NOKEY [TLSAUTH]             (a peer: a primary)
 *
 * An access list is read in order and the first entry whose address
 * matches decides: BLOCKED refuses, NOKEY lets an unsigned message in, a
 * key name lets in a message signed with that key.  TLSAUTH names a
 * tls-auth: clause (RFC 9103, zone transfers over TLS): a peer is then
 * reached over TLS (port 853 unless given) and must show a certificate
 * carrying the clause's auth-domain-name; an access list entry lets in
 * only a request that came over TLS with a client certificate carrying
 * it.  Nothing allocates.
 */
#ifndef APEX_XFR_ACL_H
#define APEX_XFR_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tsig/tsig.h"
#include "util/prefix.h"

#define APEX_ACL_KEY_NAME_MAX 256
#define APEX_ACL_TEXT_MAX 128
#define APEX_ACL_TLS_NAME_MAX 64
#define APEX_ACL_TLS_PORT 853 /* a TLS peer's port unless given (RFC 7858) */

/* A tls-auth: clause (NSD's): the name entries give it, the name the
 * peer's certificate must carry (auth-domain-name), and the certificate a
 * secondary presents to its primary for mutual TLS (client-cert,
 * client-key, client-key-pw; NULL: none).  Strings owned by whoever holds
 * the clauses (the daemon's configuration). */
typedef struct apex_tls_auth {
	char *name;
	char *auth_domain_name;
	char *client_cert, *client_key, *client_key_pw;
} apex_tls_auth_t;

typedef struct apex_acl_entry {
	apex_prefix_t prefix;                      /* a peer's has every bit */
	uint16_t port;                             /* 0: 53 for a peer, any port in a list */
	bool blocked;                              /* BLOCKED */
	bool axfr_only;                            /* AXFR: never ask this primary for IXFR */
	char key_name[APEX_ACL_KEY_NAME_MAX];      /* as written; empty: NOKEY */
	const apex_tsig_key_t *key;                /* resolved (apex_acl_resolve()); NULL: NOKEY */
	char text[APEX_ACL_TEXT_MAX];              /* as written, for logs */
	char tls_auth_name[APEX_ACL_TLS_NAME_MAX]; /* as written; empty: no TLS */
	const apex_tls_auth_t *tls_auth; /* resolved (apex_acl_resolve_tls()); NULL: no TLS */
} apex_acl_entry_t;

/*
 * Parse one entry.  peer: a single address, optionally "AXFR" first
 * (request-xfr); else an access list entry with an optional prefix and
 * BLOCKED allowed.  APEX_EINVAL with the reason in err.
 */
int apex_acl_entry_parse(apex_acl_entry_t *e, const char *text, bool peer, char *err,
			 size_t err_size);

/* Find the key an entry names in ring; APEX_ENOENT (reason in err) when
 * there is none. */
int apex_acl_resolve(apex_acl_entry_t *e, const apex_tsig_keyring_t *ring, char *err,
		     size_t err_size);

/* Find the tls-auth: clause an entry names among count; APEX_ENOENT
 * (reason in err) when there is none of that name.  An entry naming none
 * is left without TLS. */
int apex_acl_resolve_tls(apex_acl_entry_t *e, const apex_tls_auth_t *auths, size_t count, char *err,
			 size_t err_size);

/* The entry's address as a socket address (port 53 unless given, 853 over TLS). */
socklen_t apex_acl_sockaddr(const apex_acl_entry_t *e, struct sockaddr_storage *out);

/* What an access list says of a message. */
typedef enum apex_acl_verdict {
	APEX_ACL_ALLOW,
	APEX_ACL_NO_MATCH,  /* no entry for the address (REFUSED) */
	APEX_ACL_BLOCKED,   /* BLOCKED (REFUSED) */
	APEX_ACL_BAD_KEY,   /* the entry wants another key, or none (NOTAUTH) */
	APEX_ACL_NEEDS_TLS, /* the entry wants TLS and a certificate this peer lacks (REFUSED) */
} apex_acl_verdict_t;

/* How a request came over TLS with a client certificate that verified:
 * has_name() tells whether the certificate carries a name. */
typedef struct apex_acl_tls_peer {
	bool (*has_name)(const void *ctx, const char *name);
	const void *ctx;
} apex_acl_tls_peer_t;

/* The verdict on a message from peer signed with key (NULL: unsigned),
 * received over TLS with a verified client certificate tls (NULL: plain
 * TCP or UDP, or TLS without a client certificate). */
apex_acl_verdict_t apex_acl_check(const apex_acl_entry_t *list, size_t count,
				  const struct sockaddr *peer, const apex_tsig_key_t *key,
				  const apex_acl_tls_peer_t *tls);

#endif
