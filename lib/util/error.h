/* SPDX-License-Identifier: BSD-3-Clause */
/* apex error codes.
 *
 * One convention everywhere: a function returns 0 (APEX_OK) on success and
 * a negative code on failure. A code is either the negated errno value of
 * the failure (what libuv returns on Unix too, so its codes need no
 * conversion) or one of the few apex-specific codes below, which lie
 * outside the errno range. The APEX_E* names of failures that have an
 * errno equivalent are that value, so `return -errno;` after a failed
 * system call and `return APEX_ENOMEM;` are the same kind of result, and
 * apex_strerror() describes any of them. */
#ifndef APEX_UTIL_ERROR_H
#define APEX_UTIL_ERROR_H

#include <errno.h>
#include <stddef.h>

enum {
	APEX_OK = 0,
	APEX_ENOMEM = -ENOMEM,       /* allocation failed */
	APEX_EMALFORMED = -EBADMSG,  /* malformed wire data */
	APEX_ENOENT = -ENOENT,       /* not found */
	APEX_EINVAL = -EINVAL,       /* invalid argument or configuration */
	APEX_ESPACE = -ENOBUFS,      /* output buffer too small */
	APEX_EIO = -EIO,             /* I/O failed and no errno says more */
	APEX_ENOTSUP = -ENOTSUP,     /* not done this way: the caller takes the general way */
	APEX_ECANCELED = -ECANCELED, /* gave way to more urgent work: to be done again later */

	/* apex-specific codes, below every errno value */
	APEX_ELOAD = -20001,     /* zone could not be loaded (details in the error text) */
	APEX_EREFUSED = -20002,  /* a peer answered with an error RCODE */
	APEX_EMEMLIMIT = -20003, /* refused: it would cross memory-limit (details in the text) */
};

/* The failure of the system call that just returned, as an apex code:
 * -errno, or APEX_EIO if errno was not set. Call it before anything else
 * can change errno. */
static inline int apex_errno(void)
{
	return errno > 0 ? -errno : APEX_EIO;
}

/* A short static description of an apex code (either kind); never NULL,
 * safe to call from any thread. */
const char *apex_strerror(int err);

/* Write the reason of a failure into err[0..err_size) (nothing when err is
 * NULL or empty) and return code: `return apex_fail(err, size, APEX_EINVAL,
 * "%s: ...", file);`. */
int apex_fail(char *err, size_t err_size, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
