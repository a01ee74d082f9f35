/* SPDX-License-Identifier: BSD-3-Clause */
/* The client's TLS context (client_context.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "tls/client_context.h"

#include <stdio.h>

#include <openssl/err.h>

#include "tls/context_common.h"
#include "tls/reason.h"
#include "util/error.h"

static int set_trust(SSL_CTX *ctx, const char *ca_file, char *err, size_t err_size)
{
	char what[600];

	ERR_clear_error();
	if (ca_file == NULL) {
		if (SSL_CTX_set_default_verify_paths(ctx) != 1)
			return apex_tls_fail(err, err_size, APEX_EINVAL, "the system's CA store");
	} else if (SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) {
		snprintf(what, sizeof what, "CA bundle %s", ca_file);
		return apex_tls_fail(err, err_size, APEX_EINVAL, what);
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return APEX_OK;
}

int apex_tls_client_context_new(const apex_tls_client_options_t *o, SSL_CTX **out, char *err,
				size_t err_size)
{
	SSL_CTX *ctx = apex_tls_context_base(TLS_client_method(), err, err_size);
	int rc;

	*out = NULL;
	if (ctx == NULL)
		return APEX_ENOMEM;
	rc = set_trust(ctx, o->ca_file, err, err_size);
	if (rc == APEX_OK && (o->cert_file != NULL) != (o->key_file != NULL))
		rc = apex_fail(err, err_size, APEX_EINVAL,
			       "TLS: a client certificate needs its key and a key its certificate");
	if (rc == APEX_OK && o->cert_file != NULL)
		rc = apex_tls_context_load_pair(ctx, o->cert_file, o->key_file, o->key_password,
						err, err_size);
	/* SSL_CTX_set_alpn_protos() returns 0 on success. */
	if (rc == APEX_OK && SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)APEX_TLS_ALPN_DOT,
						     APEX_TLS_ALPN_DOT_SIZE) != 0)
		rc = apex_tls_fail(err, err_size, APEX_ENOMEM, "ALPN");
	if (rc < 0) {
		SSL_CTX_free(ctx);
		return rc;
	}
	*out = ctx;
	return APEX_OK;
}
