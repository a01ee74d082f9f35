/* SPDX-License-Identifier: BSD-3-Clause */
/* The TLS client contexts of a secondary's primaries (tls_clients.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "transfers/tls_clients.h"

#include <stdlib.h>
#include <string.h>

#include "tls/client_context.h"
#include "util/error.h"
#include "util/log.h"

/* Whether a request-xfr entry of cfg names the clause: only those are built. */
static bool used(const apex_config_t *cfg, const apex_tls_auth_t *auth)
{
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const apex_zone_config_t *z = &cfg->zones[i];

		for (size_t j = 0; j < z->request_xfr_count; j++)
			if (z->request_xfr[j].tls_auth == auth)
				return true;
	}
	return false;
}

int apex_tls_clients_build(apex_tls_clients_t *c, const apex_config_t *cfg)
{
	char err[512];

	memset(c, 0, sizeof(*c));
	c->auths = cfg->tls.auths;
	c->count = cfg->tls.auth_count;
	c->ctx = calloc(c->count + 1, sizeof(*c->ctx));
	c->why = calloc(c->count + 1, sizeof(*c->why));
	if (c->ctx == NULL || c->why == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < c->count; i++) {
		const apex_tls_auth_t *a = &c->auths[i];
		apex_tls_client_options_t o = {
			.ca_file = cfg->tls.cert_bundle,
			.cert_file = a->client_cert,
			.key_file = a->client_key,
			.key_password = a->client_key_pw,
		};

		if (!used(cfg, a))
			continue;
		if (apex_tls_client_context_new(&o, &c->ctx[i], err, sizeof(err)) == APEX_OK)
			continue;
		apex_error("tls-auth %s: %s: its primaries are not asked", a->name, err);
		c->why[i] = strdup(err);
		if (c->why[i] == NULL)
			return APEX_ENOMEM;
	}
	return APEX_OK;
}

SSL_CTX *apex_tls_clients_get(const apex_tls_clients_t *c, const apex_tls_auth_t *auth,
			      const char **why)
{
	for (size_t i = 0; i < c->count; i++) {
		if (&c->auths[i] != auth)
			continue;
		*why = c->why[i] != NULL ? c->why[i] : "its certificates could not be read";
		return c->ctx[i];
	}
	*why = "no such tls-auth";
	return NULL;
}

void apex_tls_clients_free(apex_tls_clients_t *c)
{
	for (size_t i = 0; i < c->count; i++) {
		if (c->ctx != NULL)
			SSL_CTX_free(c->ctx[i]);
		if (c->why != NULL)
			free(c->why[i]);
	}
	free(c->ctx);
	free(c->why);
	memset(c, 0, sizeof(*c));
}
