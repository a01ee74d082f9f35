/* SPDX-License-Identifier: BSD-3-Clause */
/* The current context of new connections (context_slot.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "tls/context_slot.h"

void apex_tls_context_slot_init(apex_tls_context_slot_t *slot)
{
	pthread_mutex_init(&slot->lock, NULL);
	slot->ctx = NULL;
}

void apex_tls_context_slot_set(apex_tls_context_slot_t *slot, SSL_CTX *ctx)
{
	SSL_CTX *old;

	pthread_mutex_lock(&slot->lock);
	old = slot->ctx;
	slot->ctx = ctx;
	pthread_mutex_unlock(&slot->lock);
	SSL_CTX_free(old); /* outside the lock: it may free the whole context */
}

SSL_CTX *apex_tls_context_slot_get(apex_tls_context_slot_t *slot)
{
	SSL_CTX *ctx;

	pthread_mutex_lock(&slot->lock);
	ctx = slot->ctx;
	if (ctx != NULL)
		SSL_CTX_up_ref(ctx);
	pthread_mutex_unlock(&slot->lock);
	return ctx;
}

void apex_tls_context_slot_destroy(apex_tls_context_slot_t *slot)
{
	SSL_CTX_free(slot->ctx);
	slot->ctx = NULL;
	pthread_mutex_destroy(&slot->lock);
}
