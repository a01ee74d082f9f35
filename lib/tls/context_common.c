/* SPDX-License-Identifier: BSD-3-Clause */
/* Protocol floor, options and certificates shared by the contexts
 * (context_common.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "tls/context_common.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include "tls/reason.h"
#include "util/error.h"

SSL_CTX *apex_tls_context_base(const SSL_METHOD *method, char *err, size_t err_size)
{
	SSL_CTX *ctx;

	ERR_clear_error();
	ctx = SSL_CTX_new(method);
	if (ctx == NULL) {
		apex_tls_fail(err, err_size, APEX_ENOMEM, "TLS context");
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
		apex_tls_fail(err, err_size, APEX_EINVAL, "TLS 1.2 minimum");
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	return ctx;
}

/* The key's password from the configuration, never from a terminal: no
 * password (NULL) fails the load of an encrypted key. */
static int password_cb(char *buf, int size, int rwflag, void *userdata)
{
	const char *password = userdata;
	size_t len;

	if (password == NULL)
		return 0;
	len = strlen(password);
	if (len > (size_t)size)
		return 0;
	memcpy(buf, password, len);
	return (int)len;
}

int apex_tls_context_load_pair(SSL_CTX *ctx, const char *cert_file, const char *key_file,
			       const char *password, char *err, size_t err_size)
{
	char what[600];
	int ok;

	ERR_clear_error();
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
		snprintf(what, sizeof what, "certificate %s", cert_file);
		return apex_tls_fail(err, err_size, APEX_EINVAL, what);
	}
	SSL_CTX_set_default_passwd_cb(ctx, password_cb);
	SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)password);
	ok = SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM);
	SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
	if (ok != 1) {
		snprintf(what, sizeof what, "private key %s", key_file);
		return apex_tls_fail(err, err_size, APEX_EINVAL, what);
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(what, sizeof what, "private key %s and certificate %s", key_file,
			 cert_file);
		return apex_tls_fail(err, err_size, APEX_EINVAL, what);
	}
	return APEX_OK;
}

int apex_tls_context_use_pair(SSL_CTX *ctx, X509 *cert, EVP_PKEY *key, char *err, size_t err_size)
{
	ERR_clear_error();
	if (SSL_CTX_use_certificate(ctx, cert) != 1)
		return apex_tls_fail(err, err_size, APEX_EINVAL, "certificate");
	if (SSL_CTX_use_PrivateKey(ctx, key) != 1)
		return apex_tls_fail(err, err_size, APEX_EINVAL, "private key");
	if (SSL_CTX_check_private_key(ctx) != 1)
		return apex_tls_fail(err, err_size, APEX_EINVAL, "private key and certificate");
	return APEX_OK;
}
