/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* strerrordesc_np */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

int apex_fail(char *err, size_t err_size, int code, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && err_size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *apex_strerror(int err)
{
	switch (err) {
	case APEX_OK: return "success";
	case APEX_ELOAD: return "zone load failed";
	case APEX_EREFUSED: return "refused by the peer";
	case APEX_EMEMLIMIT: return "over the memory limit";
	/* apex's own wording for the codes it uses most */
	case APEX_ENOMEM: return "out of memory";
	case APEX_EMALFORMED: return "malformed data";
	case APEX_ENOENT: return "not found";
	case APEX_EINVAL: return "invalid argument";
	case APEX_ESPACE: return "no space left in buffer";
	default: break;
	}
	if (err < 0) {
		/* strerrordesc_np() returns a static string (strerror() may
		 * format into a buffer shared between threads). */
		const char *text = strerrordesc_np(-err);
		if (text != NULL)
			return text;
	}
	return "unknown error";
}
