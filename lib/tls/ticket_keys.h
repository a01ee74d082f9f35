/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keys of session tickets (RFC 8446 §4.6.1, RFC 5077): a current key,
 * which encrypts every new ticket, and the one before it, which still
 * decrypts (a ticket encrypted with it resumes its session and is replaced
 * by a new one).  apex_tls_ticket_keys_rotate(), on the daemon's timer,
 * makes a new current key from RAND_bytes and drops the oldest: rotated
 * every hour, a ticket resumes for one to two hours, and a ticket from
 * before two rotations is refused (a full handshake).  OpenSSL's default
 * session lifetime, 2 hours, matches that.
 *
 * Threads: the handshakes of any number of threads read the keys at once
 * while one thread rotates them.  Reading takes no lock: the keys lie in
 * atomic words under a sequence count (a seqlock; odd while a rotation
 * writes), and a reader that saw the count change copies them again.
 * Rotations take turns on a mutex that no reader takes.  A ring is
 * reference counted: each context it is attached to holds a reference,
 * so a ring may be shared by a context and the one made from renewed
 * certificate files (tickets survive the renewal).
 */
#ifndef APEX_TLS_TICKET_KEYS_H
#define APEX_TLS_TICKET_KEYS_H

#include <stddef.h>

#include <openssl/ssl.h>

typedef struct apex_tls_ticket_keys apex_tls_ticket_keys_t;

/* A new ring with two random keys (one reference, the caller's).  Returns
 * APEX_OK, or an error with the reason in err. */
int apex_tls_ticket_keys_new(apex_tls_ticket_keys_t **out, char *err, size_t err_size);

/* One more reference to k. */
void apex_tls_ticket_keys_ref(apex_tls_ticket_keys_t *k);

/* One reference fewer: k freed (its keys wiped) with the last.  NULL is
 * ignored. */
void apex_tls_ticket_keys_unref(apex_tls_ticket_keys_t *k);

/* A new current key; the current one becomes the previous one, the
 * previous one is forgotten.  Any thread; returns APEX_OK, or an error
 * with the reason in err (the keys are then unchanged). */
int apex_tls_ticket_keys_rotate(apex_tls_ticket_keys_t *k, char *err, size_t err_size);

/* ctx's tickets encrypted and decrypted with k from now on (a reference
 * to k held by ctx and dropped when ctx is freed).  Once per context. */
int apex_tls_ticket_keys_attach(SSL_CTX *ctx, apex_tls_ticket_keys_t *k, char *err,
				size_t err_size);

#endif
