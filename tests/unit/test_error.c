/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util/error: one convention for failures. The APEX_E* codes that have an
 * errno equivalent are that errno negated, libuv's codes are the same
 * values, apex-specific codes lie outside the errno range, and
 * apex_strerror() describes every kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <uv.h>

#include "util/error.h"

static void codes_are_negated_errno(void **state)
{
	(void)state;
	assert_int_equal(APEX_ENOMEM, -ENOMEM);
	assert_int_equal(APEX_ENOENT, -ENOENT);
	assert_int_equal(APEX_EINVAL, -EINVAL);
	assert_int_equal(APEX_ESPACE, -ENOBUFS);
	assert_int_equal(APEX_EMALFORMED, -EBADMSG);
	assert_int_equal(APEX_EIO, -EIO);
}

/* The daemon passes libuv's results on unchanged: that is only right while
 * libuv's codes are -errno, as they are on Linux. */
static void libuv_codes_are_apex_codes(void **state)
{
	(void)state;
	assert_int_equal(UV_ENOMEM, APEX_ENOMEM);
	assert_int_equal(UV_EINVAL, APEX_EINVAL);
	assert_int_equal(UV_EADDRINUSE, -EADDRINUSE);
	assert_int_equal(UV_ECONNRESET, -ECONNRESET);
}

static void apex_codes_are_outside_errno(void **state)
{
	(void)state;
	assert_true(APEX_ELOAD < -4095); /* the kernel's errno range is 1..4095 */
	assert_true(APEX_EREFUSED < -4095);
	assert_true(APEX_EMEMLIMIT < -4095);
	assert_string_equal(apex_strerror(APEX_ELOAD), "zone load failed");
	assert_string_equal(apex_strerror(APEX_EREFUSED), "refused by the peer");
	assert_string_equal(apex_strerror(APEX_EMEMLIMIT), "over the memory limit");
}

static void strerror_describes_every_kind(void **state)
{
	(void)state;
	assert_string_equal(apex_strerror(APEX_OK), "success");
	assert_string_equal(apex_strerror(APEX_ENOMEM), "out of memory");
	assert_string_equal(apex_strerror(APEX_ESPACE), "no space left in buffer");
	/* a plain -errno, as from a failed system call */
	assert_string_equal(apex_strerror(-EADDRINUSE), strerror(EADDRINUSE));
	assert_string_equal(apex_strerror(-EACCES), strerror(EACCES));
	/* a libuv result */
	assert_string_equal(apex_strerror(UV_ECONNREFUSED), strerror(ECONNREFUSED));
	/* nothing known */
	assert_string_equal(apex_strerror(-30000), "unknown error");
	assert_string_equal(apex_strerror(7), "unknown error");
}

static void errno_is_kept(void **state)
{
	(void)state;
	errno = EACCES;
	assert_int_equal(apex_errno(), -EACCES);
	errno = 0;
	assert_int_equal(apex_errno(), APEX_EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(codes_are_negated_errno),
		cmocka_unit_test(libuv_codes_are_apex_codes),
		cmocka_unit_test(apex_codes_are_outside_errno),
		cmocka_unit_test(strerror_describes_every_kind),
		cmocka_unit_test(errno_is_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
