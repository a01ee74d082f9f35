/* SPDX-License-Identifier: BSD-3-Clause */
/* The transfer settings in force, replaced by a reconfig (settings.h). */
#include "zones/settings.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

int apex_settings_holder_init(apex_settings_holder_t *h, const apex_config_t *cfg)
{
	apex_settings_t *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return APEX_ENOMEM;
	atomic_init(&s->refs, 1);
	s->cfg = cfg;
	s->generation = 1;
	pthread_mutex_init(&h->lock, NULL);
	h->current = s;
	atomic_init(&h->generation, 1);
	return APEX_OK;
}

void apex_settings_holder_free(apex_settings_holder_t *h)
{
	apex_settings_put(h->current);
	h->current = NULL;
	pthread_mutex_destroy(&h->lock);
}

apex_settings_t *apex_settings_get(apex_settings_holder_t *h)
{
	pthread_mutex_lock(&h->lock);
	apex_settings_t *s = h->current;
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&h->lock);
	return s;
}

void apex_settings_put(apex_settings_t *s)
{
	if (s == NULL || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (s->owned) {
		apex_config_free((apex_config_t *)s->cfg);
		free((apex_config_t *)s->cfg);
	}
	free(s);
}

int apex_settings_replace(apex_settings_holder_t *h, apex_config_t *cfg)
{
	apex_settings_t *s = calloc(1, sizeof(*s));
	apex_config_t *moved = malloc(sizeof(*moved));

	if (s == NULL || moved == NULL) {
		free(s);
		free(moved);
		return APEX_ENOMEM;
	}
	*moved = *cfg;
	apex_config_init(cfg);
	atomic_init(&s->refs, 1);
	s->owned = true;
	s->cfg = moved;
	pthread_mutex_lock(&h->lock);
	apex_settings_t *old = h->current;
	s->generation = old->generation + 1;
	h->current = s;
	atomic_store_explicit(&h->generation, s->generation, memory_order_release);
	pthread_mutex_unlock(&h->lock);
	apex_settings_put(old);
	return APEX_OK;
}

unsigned apex_settings_generation(apex_settings_holder_t *h)
{
	return atomic_load_explicit(&h->generation, memory_order_acquire);
}

const apex_config_t *apex_settings_cached(apex_settings_cache_t *c)
{
	if (c->current == NULL || c->current->generation != apex_settings_generation(c->holder)) {
		apex_settings_t *old = c->current;

		c->current = apex_settings_get(c->holder);
		apex_settings_put(old);
	}
	return c->current->cfg;
}

void apex_settings_cache_free(apex_settings_cache_t *c)
{
	apex_settings_put(c->current);
	c->current = NULL;
}
