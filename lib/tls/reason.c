/* SPDX-License-Identifier: BSD-3-Clause */
/* One-line reasons from OpenSSL's error queue (reason.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "tls/reason.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "util/error.h"

/* The first queued error as "reason (data)" into buf; false if none. */
static bool queued_reason(char *buf, size_t size)
{
	const char *data = NULL;
	int flags = 0;
	unsigned long e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags);
	const char *reason;

	if (e == 0)
		return false;
	/* A system error's data only names the call that failed (fopen). */
	if (ERR_SYSTEM_ERROR(e)) {
		snprintf(buf, size, "%s", strerror(ERR_GET_REASON(e)));
		return true;
	}
	reason = ERR_reason_error_string(e);
	if (reason == NULL) {
		ERR_error_string_n(e, buf, size);
		return true;
	}
	if (data != NULL && (flags & ERR_TXT_STRING) && data[0] != '\0')
		snprintf(buf, size, "%s (%s)", reason, data);
	else
		snprintf(buf, size, "%s", reason);
	return true;
}

int apex_tls_fail(char *err, size_t err_size, int code, const char *what)
{
	char reason[256];

	if (!queued_reason(reason, sizeof reason))
		snprintf(reason, sizeof reason, "unknown error");
	ERR_clear_error();
	return apex_fail(err, err_size, code, "%s: %s", what, reason);
}

/* The peer's certificate was not verified: why, or false if it was. */
static bool verify_reason(const SSL *ssl, const char *expected_name, char *buf, size_t size)
{
	long v = SSL_get_verify_result(ssl);
	const char *whose = SSL_is_server(ssl) ? "client certificate" : "certificate";

	if (v == X509_V_OK)
		return false;
	if ((v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH) &&
	    expected_name != NULL)
		snprintf(buf, size, "%s name does not match %s", whose, expected_name);
	else
		snprintf(buf, size, "%s verify failed: %s", whose,
			 X509_verify_cert_error_string(v));
	return true;
}

int apex_tls_fail_ssl(const SSL *ssl, int ret, const char *expected_name, char *err,
		      size_t err_size, int code, const char *what)
{
	char reason[256];
	int e = SSL_get_error(ssl, ret);

	if (verify_reason(ssl, expected_name, reason, sizeof reason)) {
		ERR_clear_error();
	} else if (queued_reason(reason, sizeof reason)) {
		ERR_clear_error();
	} else if (e == SSL_ERROR_SYSCALL && errno != 0) {
		snprintf(reason, sizeof reason, "%s", strerror(errno));
	} else if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN) {
		snprintf(reason, sizeof reason, "connection closed by the peer");
	} else {
		snprintf(reason, sizeof reason, "TLS error %d", e);
	}
	return apex_fail(err, err_size, code, "%s: %s", what, reason);
}
