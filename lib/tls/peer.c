/* SPDX-License-Identifier: BSD-3-Clause */
/* The peer's name and protocol (peer.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "tls/peer.h"

#include <string.h>

#include <openssl/x509v3.h>

bool apex_tls_peer_name_matches(const SSL *ssl, const char *name)
{
	X509 *cert = SSL_get0_peer_certificate(ssl);
	size_t len = name != NULL ? strlen(name) : 0;

	if (cert == NULL || SSL_get_verify_result(ssl) != X509_V_OK)
		return false;
	if (len > 1 && name[len - 1] == '.')
		len--;
	if (len == 0)
		return false;
	return X509_check_host(cert, name, len, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, NULL) == 1;
}

bool apex_tls_alpn_is_dot(const SSL *ssl)
{
	const unsigned char *proto;
	unsigned int len;

	SSL_get0_alpn_selected(ssl, &proto, &len);
	return len == 3 && memcmp(proto, "dot", 3) == 0;
}
