/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one-line reason of a failed OpenSSL call, from this thread's OpenSSL
 * error queue.  The queue is per thread; every function here empties it,
 * and the callers of lib/tls empty it before each SSL call (ERR_clear_error)
 * so that one connection's error never shows on another handled later by
 * the same thread.
 */
#ifndef APEX_TLS_REASON_H
#define APEX_TLS_REASON_H

#include <stddef.h>

#include <openssl/ssl.h>

/* Write "what: reason" into err (the reason of the first error queued, with
 * its data, e.g. a file name; "unknown error" when the queue is empty),
 * empty the queue and return code. */
int apex_tls_fail(char *err, size_t err_size, int code, const char *what);

/* The reason of the failure of the SSL call on ssl that returned ret: the
 * peer's certificate not verified (expected_name, or NULL, is the name a
 * client asked for: a mismatch names it), an alert from the peer, a
 * protocol error, ...  Written as "what: reason"; the queue is emptied.
 * Returns code. */
int apex_tls_fail_ssl(const SSL *ssl, int ret, const char *expected_name, char *err,
		      size_t err_size, int code, const char *what);

#endif
