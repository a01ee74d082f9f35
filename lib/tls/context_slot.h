/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The context new connections are made from, replaceable at any time (a
 * certificate renewed on disk): a pointer and a mutex.  Taking it costs a
 * lock and a reference count, once per accepted connection, never per
 * query; the connections made from the context before keep it by their
 * own reference (SSL_new() takes one).
 */
#ifndef APEX_TLS_CONTEXT_SLOT_H
#define APEX_TLS_CONTEXT_SLOT_H

#include <pthread.h>

#include <openssl/ssl.h>

typedef struct apex_tls_context_slot {
	pthread_mutex_t lock;
	SSL_CTX *ctx; /* one reference, the slot's; NULL when empty */
} apex_tls_context_slot_t;

/* An empty slot. */
void apex_tls_context_slot_init(apex_tls_context_slot_t *slot);

/* ctx (the caller's reference moves into the slot; NULL empties it) in
 * place of the context before, whose reference is dropped. */
void apex_tls_context_slot_set(apex_tls_context_slot_t *slot, SSL_CTX *ctx);

/* The context now, with a reference for the caller (SSL_CTX_free() it
 * once the session is made), or NULL when the slot is empty. */
SSL_CTX *apex_tls_context_slot_get(apex_tls_context_slot_t *slot);

/* The slot's reference dropped. */
void apex_tls_context_slot_destroy(apex_tls_context_slot_t *slot);

#endif
