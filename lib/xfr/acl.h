/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who may do what with a zone, and whom apex talks to about it: the
 * entries of request-xfr and allow-notify (apex.conf(5)), spelled as NSD
 * spells them.
 *
 *   ADDR[/PREFIX][@PORT] KEY|NOKEY|BLOCKED      (an access list entry)
 *   [AXFR] ADDR[@PORT] KEY|NOKEY                (a peer: a primary)
 *
 * An access list is read in order and the first entry whose address
 * matches decides: BLOCKED refuses, NOKEY lets an unsigned message in, a
 * key name lets in a message signed with that key.  Nothing allocates.
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

typedef struct apex_acl_entry {
	apex_prefix_t prefix;                 /* a peer's has every bit */
	uint16_t port;                        /* 0: 53 for a peer, any port in a list */
	bool blocked;                         /* BLOCKED */
	bool axfr_only;                       /* AXFR: never ask this primary for IXFR */
	char key_name[APEX_ACL_KEY_NAME_MAX]; /* as written; empty: NOKEY */
	const apex_tsig_key_t *key;           /* resolved (apex_acl_resolve()); NULL: NOKEY */
	char text[APEX_ACL_TEXT_MAX];         /* as written, for logs */
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

/* The entry's address as a socket address (port 53 unless given). */
socklen_t apex_acl_sockaddr(const apex_acl_entry_t *e, struct sockaddr_storage *out);

/* What an access list says of a message. */
typedef enum apex_acl_verdict {
	APEX_ACL_ALLOW,
	APEX_ACL_NO_MATCH, /* no entry for the address (REFUSED) */
	APEX_ACL_BLOCKED,  /* BLOCKED (REFUSED) */
	APEX_ACL_BAD_KEY,  /* the entry wants another key, or none (NOTAUTH) */
} apex_acl_verdict_t;

/* The verdict on a message from peer signed with key (NULL: unsigned). */
apex_acl_verdict_t apex_acl_check(const apex_acl_entry_t *list, size_t count,
				  const struct sockaddr *peer, const apex_tsig_key_t *key);

#endif
