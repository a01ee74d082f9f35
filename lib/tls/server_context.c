/* SPDX-License-Identifier: BSD-3-Clause */
/* The server's TLS context (server_context.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "tls/server_context.h"

#include <stdio.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "tls/context_common.h"
#include "tls/reason.h"
#include "util/error.h"

/* ALPN: "dot" when the client offers it; a client offering only other
 * protocols gets the fatal alert no_application_protocol. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned char *selected;
	unsigned char len;

	if (SSL_select_next_proto(&selected, &len, (const unsigned char *)APEX_TLS_ALPN_DOT,
				  APEX_TLS_ALPN_DOT_SIZE, in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = selected;
	*outlen = len;
	return SSL_TLSEXT_ERR_OK;
}

/* Where client certificates are required, a session resumes only if it
 * has one, verified: the contexts that ask for none (the tls-port's) share
 * the ticket keys, and OpenSSL would resume their sessions here too (a
 * TLS 1.3 ticket of another session id context included).  A ticket
 * ignored means a full handshake, which asks for the certificate. */
static SSL_TICKET_RETURN ticket_with_cert(SSL *ssl, SSL_SESSION *session,
					  const unsigned char *key_name, size_t key_name_size,
					  SSL_TICKET_STATUS status, void *arg)
{
	(void)ssl;
	(void)key_name;
	(void)key_name_size;
	(void)arg;
	if (status != SSL_TICKET_SUCCESS && status != SSL_TICKET_SUCCESS_RENEW)
		return SSL_TICKET_RETURN_IGNORE_RENEW; /* none, or not ours: OpenSSL's default */
	if (SSL_SESSION_get0_peer(session) == NULL)
		return SSL_TICKET_RETURN_IGNORE_RENEW;
	return status == SSL_TICKET_SUCCESS ? SSL_TICKET_RETURN_USE : SSL_TICKET_RETURN_USE_RENEW;
}

/* Client certificates required, verified against the CAs of ca_file, whose
 * names are sent to the client to choose its certificate by; sessions
 * resumed only with one (ticket_with_cert()). */
static int require_client_cert(SSL_CTX *ctx, const char *ca_file, char *err, size_t err_size)
{
	STACK_OF(X509_NAME) * names;
	char what[600];

	snprintf(what, sizeof what, "client CA bundle %s", ca_file);
	ERR_clear_error();
	if (SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1)
		return apex_tls_fail(err, err_size, APEX_EINVAL, what);
	names = SSL_load_client_CA_file(ca_file);
	if (names == NULL)
		return apex_tls_fail(err, err_size, APEX_EINVAL, what);
	SSL_CTX_set_client_CA_list(ctx, names);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	if (SSL_CTX_set_session_ticket_cb(ctx, NULL, ticket_with_cert, NULL) != 1)
		return apex_tls_fail(err, err_size, APEX_EINVAL, "session ticket callback");
	return APEX_OK;
}

/* Resumption through tickets only, or none without keys.  The session id
 * context is required for a session of a verified client to resume. */
static int set_resumption(SSL_CTX *ctx, apex_tls_ticket_keys_t *tickets, char *err, size_t err_size)
{
	static const unsigned char id_context[] = "apex";

	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (SSL_CTX_set_session_id_context(ctx, id_context, sizeof id_context - 1) != 1)
		return apex_tls_fail(err, err_size, APEX_EINVAL, "session id context");
	if (tickets != NULL)
		return apex_tls_ticket_keys_attach(ctx, tickets, err, err_size);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_num_tickets(ctx, 0);
	return APEX_OK;
}

int apex_tls_server_context_new(const apex_tls_server_options_t *o, SSL_CTX **out, char *err,
				size_t err_size)
{
	SSL_CTX *ctx = apex_tls_context_base(TLS_server_method(), err, err_size);
	int rc;

	*out = NULL;
	if (ctx == NULL)
		return APEX_ENOMEM;
	if (o->cert != NULL && o->key != NULL)
		rc = apex_tls_context_use_pair(ctx, o->cert, o->key, err, err_size);
	else if (o->cert_file == NULL || o->key_file == NULL)
		rc = apex_fail(err, err_size, APEX_EINVAL, "TLS: a certificate and key are needed");
	else
		rc = apex_tls_context_load_pair(ctx, o->cert_file, o->key_file, o->key_password,
						err, err_size);
	if (rc == APEX_OK && o->client_ca_file != NULL)
		rc = require_client_cert(ctx, o->client_ca_file, err, err_size);
	if (rc == APEX_OK)
		rc = set_resumption(ctx, o->tickets, err, err_size);
	if (rc < 0) {
		SSL_CTX_free(ctx);
		return rc;
	}
	SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_max_early_data(ctx, 0);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	*out = ctx;
	return APEX_OK;
}
