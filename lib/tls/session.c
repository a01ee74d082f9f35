/* SPDX-License-Identifier: BSD-3-Clause */
/* A TLS connection over memory BIOs (session.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "tls/session.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/buffer.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "tls/reason.h"
#include "util/error.h"

/* A drained memory BIO grown beyond this is replaced by an empty one. */
#define BIO_KEEP 4096

struct apex_tls_session {
	SSL *ssl;   /* owns both BIOs */
	BIO *in;    /* ciphertext fed, for OpenSSL to read */
	BIO *out;   /* ciphertext OpenSSL wrote, to send */
	char *name; /* a client's expected peer name (for reasons), or NULL */
	apex_tls_state_t state;
};

/* An empty memory BIO that asks for more (retry) rather than reporting
 * the end of the stream when it has nothing left. */
static BIO *memory_bio(void)
{
	BIO *b = BIO_new(BIO_s_mem());

	if (b != NULL)
		BIO_set_mem_eof_return(b, -1);
	return b;
}

static int session_new(SSL_CTX *ctx, apex_tls_session_t **out, char *err, size_t err_size)
{
	apex_tls_session_t *s = calloc(1, sizeof *s);

	*out = NULL;
	if (s == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "TLS session: out of memory");
	ERR_clear_error();
	s->ssl = SSL_new(ctx);
	s->in = memory_bio();
	s->out = memory_bio();
	if (s->ssl == NULL || s->in == NULL || s->out == NULL) {
		BIO_free(s->in);
		BIO_free(s->out);
		SSL_free(s->ssl);
		free(s);
		return apex_tls_fail(err, err_size, APEX_ENOMEM, "TLS session");
	}
	SSL_set_bio(s->ssl, s->in, s->out);
	s->state = APEX_TLS_HANDSHAKE;
	*out = s;
	return APEX_OK;
}

int apex_tls_session_new_server(SSL_CTX *ctx, apex_tls_session_t **out, char *err, size_t err_size)
{
	int rc = session_new(ctx, out, err, err_size);

	if (rc == APEX_OK)
		SSL_set_accept_state((*out)->ssl);
	return rc;
}

/* The name the peer's certificate must carry (no partial wildcards), also
 * sent as SNI; an address is checked against the certificate's addresses
 * instead, and is no server name to send. */
static int expect_name(apex_tls_session_t *s, const char *name, char *err, size_t err_size)
{
	size_t len = strlen(name);
	unsigned char addr[16];
	bool is_addr;

	if (len > 1 && name[len - 1] == '.')
		len--;
	s->name = strndup(name, len);
	if (s->name == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "TLS session: out of memory");
	is_addr = inet_pton(AF_INET, s->name, addr) == 1 || inet_pton(AF_INET6, s->name, addr) == 1;
	ERR_clear_error();
	if (is_addr) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s->ssl), s->name) != 1)
			return apex_tls_fail(err, err_size, APEX_EINVAL, s->name);
		return APEX_OK;
	}
	SSL_set_hostflags(s->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (SSL_set1_host(s->ssl, s->name) != 1 || SSL_set_tlsext_host_name(s->ssl, s->name) != 1)
		return apex_tls_fail(err, err_size, APEX_EINVAL, s->name);
	return APEX_OK;
}

int apex_tls_session_new_client(SSL_CTX *ctx, const char *name, apex_tls_session_t **out, char *err,
				size_t err_size)
{
	int rc;

	if (name == NULL || name[0] == '\0' || strcmp(name, ".") == 0)
		return apex_fail(err, err_size, APEX_EINVAL, "TLS: the server's name is needed");
	rc = session_new(ctx, out, err, err_size);
	if (rc < 0)
		return rc;
	SSL_set_connect_state((*out)->ssl);
	rc = expect_name(*out, name, err, err_size);
	if (rc < 0) {
		apex_tls_session_free(*out);
		*out = NULL;
	}
	return rc;
}

void apex_tls_session_free(apex_tls_session_t *s)
{
	if (s == NULL)
		return;
	SSL_free(s->ssl);
	free(s->name);
	free(s);
}

int apex_tls_session_feed(apex_tls_session_t *s, const uint8_t *data, size_t size, char *err,
			  size_t err_size)
{
	if (s->state == APEX_TLS_FAILED)
		return apex_fail(err, err_size, APEX_EINVAL, "TLS: the session failed");
	if (s->state == APEX_TLS_CLOSED || size == 0)
		return APEX_OK;
	if (size > APEX_TLS_INPUT_MAX || BIO_ctrl_pending(s->in) > APEX_TLS_INPUT_MAX - size)
		return apex_fail(err, err_size, APEX_ESPACE,
				 "TLS: more than %d bytes received and not read",
				 APEX_TLS_INPUT_MAX);
	ERR_clear_error();
	if (BIO_write(s->in, data, (int)size) != (int)size)
		return apex_tls_fail(err, err_size, APEX_ENOMEM, "TLS input");
	return APEX_OK;
}

static int failed(apex_tls_session_t *s, int ret, const char *what, char *err, size_t err_size)
{
	s->state = APEX_TLS_FAILED;
	return apex_tls_fail_ssl(s->ssl, ret, s->name, err, err_size, APEX_EIO, what);
}

int apex_tls_session_handshake(apex_tls_session_t *s, char *err, size_t err_size)
{
	int ret;

	if (s->state == APEX_TLS_FAILED)
		return apex_fail(err, err_size, APEX_EINVAL, "TLS: the session failed");
	if (s->state != APEX_TLS_HANDSHAKE)
		return APEX_OK;
	ERR_clear_error();
	ret = SSL_do_handshake(s->ssl);
	if (ret == 1)
		s->state = APEX_TLS_OPEN;
	else if (SSL_get_error(s->ssl, ret) != SSL_ERROR_WANT_READ)
		return failed(s, ret, "TLS handshake", err, err_size);
	return APEX_OK;
}

/* A drained memory BIO that grew large, replaced by an empty one (the
 * SSL frees the old one); kept when nothing could be allocated. */
static void shrink(apex_tls_session_t *s, bool input)
{
	BIO *b = input ? s->in : s->out;
	BUF_MEM *mem = NULL;
	BIO *fresh;

	if (s->state != APEX_TLS_OPEN || BIO_ctrl_pending(b) != 0 ||
	    BIO_get_mem_ptr(b, &mem) != 1 || mem == NULL || mem->max <= BIO_KEEP)
		return;
	fresh = memory_bio();
	if (fresh == NULL)
		return;
	if (input) {
		SSL_set0_rbio(s->ssl, fresh);
		s->in = fresh;
	} else {
		SSL_set0_wbio(s->ssl, fresh);
		s->out = fresh;
	}
}

int apex_tls_session_read(apex_tls_session_t *s, uint8_t *buf, size_t size, size_t *got, char *err,
			  size_t err_size)
{
	int rc = apex_tls_session_handshake(s, err, err_size);

	*got = 0;
	if (rc < 0 || s->state != APEX_TLS_OPEN)
		return rc;
	while (*got < size) {
		size_t n = 0;
		int ret, e;

		ERR_clear_error();
		ret = SSL_read_ex(s->ssl, buf + *got, size - *got, &n);
		if (ret == 1) {
			*got += n;
			continue;
		}
		e = SSL_get_error(s->ssl, ret);
		if (e == SSL_ERROR_WANT_READ)
			break;
		if (e == SSL_ERROR_ZERO_RETURN) {
			s->state = APEX_TLS_CLOSED;
			break;
		}
		return failed(s, ret, "TLS", err, err_size);
	}
	shrink(s, true);
	return APEX_OK;
}

int apex_tls_session_write(apex_tls_session_t *s, const uint8_t *data, size_t size, char *err,
			   size_t err_size)
{
	if (s->state != APEX_TLS_OPEN && s->state != APEX_TLS_CLOSED)
		return apex_fail(err, err_size, APEX_EINVAL, "TLS: the session is not open");
	while (size > 0) {
		size_t n = 0;
		int ret;

		ERR_clear_error();
		ret = SSL_write_ex(s->ssl, data, size < INT_MAX ? size : INT_MAX, &n);
		if (ret != 1)
			return failed(s, ret, "TLS", err, err_size);
		data += n;
		size -= n;
	}
	return APEX_OK;
}

int apex_tls_session_close(apex_tls_session_t *s, char *err, size_t err_size)
{
	int ret;

	if (s->state != APEX_TLS_OPEN && s->state != APEX_TLS_CLOSED)
		return APEX_OK;
	ERR_clear_error();
	ret = SSL_shutdown(s->ssl);
	if (ret < 0)
		return failed(s, ret, "TLS close", err, err_size);
	return APEX_OK;
}

size_t apex_tls_session_output_pending(const apex_tls_session_t *s)
{
	return BIO_ctrl_pending(s->out);
}

size_t apex_tls_session_take_output(apex_tls_session_t *s, uint8_t *buf, size_t size)
{
	int n = BIO_read(s->out, buf, size < INT_MAX ? (int)size : INT_MAX);

	if (n <= 0)
		return 0;
	shrink(s, false);
	return (size_t)n;
}

apex_tls_state_t apex_tls_session_state(const apex_tls_session_t *s)
{
	return s->state;
}

bool apex_tls_session_resumed(const apex_tls_session_t *s)
{
	return SSL_session_reused(s->ssl) == 1;
}

const uint8_t *apex_tls_session_alpn(const apex_tls_session_t *s, size_t *size)
{
	const unsigned char *proto = NULL;
	unsigned int len = 0;

	SSL_get0_alpn_selected(s->ssl, &proto, &len);
	*size = len;
	return len > 0 ? proto : NULL;
}

SSL *apex_tls_session_ssl(apex_tls_session_t *s)
{
	return s->ssl;
}
