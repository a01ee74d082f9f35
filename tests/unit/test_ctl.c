/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the control protocol (lib/ctl): requests, replies, buffers, JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl/buf.h"
#include "ctl/json.h"
#include "ctl/reply.h"
#include "ctl/request.h"
#include "util/error.h"

static apex_ctl_request_t req;

static int parse(const char *text, const char **reason)
{
	return apex_ctl_request_parse((const uint8_t *)text, strlen(text), &req, reason);
}

static void test_request_valid(void **state)
{
	const char *reason = NULL;

	(void)state;
	assert_int_equal(parse("text status\n", &reason), APEX_OK);
	assert_int_equal(req.format, APEX_CTL_FORMAT_TEXT);
	assert_int_equal(req.command, APEX_CTL_STATUS);
	assert_int_equal(req.argc, 0);

	assert_int_equal(parse("json  reload\tnu.  example.\r\n", &reason), APEX_OK);
	assert_int_equal(req.format, APEX_CTL_FORMAT_JSON);
	assert_int_equal(req.command, APEX_CTL_RELOAD);
	assert_int_equal(req.argc, 2);
	assert_string_equal(req.argv[0], "nu.");
	assert_string_equal(req.argv[1], "example.");

	/* no newline: the caller cut it off */
	assert_int_equal(parse("text zone-status .", &reason), APEX_OK);
	assert_int_equal(req.command, APEX_CTL_ZONE_STATUS);
	assert_string_equal(req.argv[0], ".");
	assert_int_equal(parse("text stop\n", &reason), APEX_OK);
	assert_int_equal(req.command, APEX_CTL_STOP);
	assert_int_equal(parse("json stats\n", &reason), APEX_OK);
	assert_int_equal(parse("text reconfig\n", &reason), APEX_OK);
	assert_int_equal(req.command, APEX_CTL_RECONFIG);
	assert_int_equal(parse("text zone-add example.com. members\n", &reason), APEX_OK);
	assert_int_equal(req.command, APEX_CTL_ZONE_ADD);
	assert_int_equal(req.argc, 2);
	assert_string_equal(req.argv[1], "members");
	assert_int_equal(parse("json zone-remove example.com.\n", &reason), APEX_OK);
	assert_int_equal(req.command, APEX_CTL_ZONE_REMOVE);
	assert_int_equal(req.argc, 1);
}

static void test_request_invalid(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"   \n",
		"text\n",
		"status\n",
		"yaml status\n",
		"text frobnicate\n",
		"text status extra\n",
		"text stats x\n",
		"text stop now\n",
		"text reconfig a\n",
		"text zone-add example.com.\n",
		"text zone-add a. p extra\n",
		"text zone-remove\n",
		"text zone-remove a. b.\n",
		"text status\ntext stats\n",
		"text reload a\x01\n",
		"text reload \xc3\xa9.\n",
		"text\x7fstatus\n",
		"TEXT status\n",
		"text STATUS\n",
	};
	const char *reason;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reason = NULL;
		assert_int_equal(parse(bad[i], &reason), APEX_EMALFORMED);
		assert_non_null(reason);
		assert_null(strchr(reason, '\n'));
	}
	/* an embedded NUL is a control byte */
	assert_int_equal(
		apex_ctl_request_parse((const uint8_t *)"text st\0atus\n", 13, &req, &reason),
		APEX_EMALFORMED);
	/* NULL with a size, and NULL reason */
	assert_int_equal(apex_ctl_request_parse(NULL, 3, &req, NULL), APEX_EMALFORMED);
}

static void test_request_limits(void **state)
{
	char *line = malloc(APEX_CTL_REQUEST_MAX + 2);
	const char *reason;
	size_t len;

	(void)state;
	assert_non_null(line);
	/* exactly the maximum, newline included: accepted */
	strcpy(line, "text reload ");
	len = strlen(line);
	memset(line + len, 'a', APEX_CTL_REQUEST_MAX - 1 - len);
	line[APEX_CTL_REQUEST_MAX - 1] = '\n';
	assert_int_equal(
		apex_ctl_request_parse((uint8_t *)line, APEX_CTL_REQUEST_MAX, &req, &reason),
		APEX_OK);
	assert_int_equal(req.argc, 1);
	assert_int_equal(strlen(req.argv[0]), APEX_CTL_REQUEST_MAX - 1 - len);
	/* one byte more: refused */
	line[APEX_CTL_REQUEST_MAX - 1] = 'a';
	line[APEX_CTL_REQUEST_MAX] = '\n';
	assert_int_equal(
		apex_ctl_request_parse((uint8_t *)line, APEX_CTL_REQUEST_MAX + 1, &req, &reason),
		APEX_EMALFORMED);
	/* 256 arguments pass, 257 do not */
	strcpy(line, "text reload");
	for (int i = 0; i < APEX_CTL_ARGS_MAX; i++)
		strcat(line, " a");
	assert_int_equal(parse(line, &reason), APEX_OK);
	assert_int_equal(req.argc, APEX_CTL_ARGS_MAX);
	strcat(line, " a");
	assert_int_equal(parse(line, &reason), APEX_EMALFORMED);
	free(line);
}

static void test_request_format_roundtrip(void **state)
{
	const char *args[] = { "nu.", "example." };
	const char *bad_args[] = { "a b" };
	const char *empty_args[] = { "" };
	char out[APEX_CTL_REQUEST_MAX + 1];
	int len;

	(void)state;
	len = apex_ctl_request_format(out, sizeof(out), APEX_CTL_FORMAT_JSON, APEX_CTL_RELOAD, 2,
				      args);
	assert_int_equal(len, (int)strlen("json reload nu. example.\n"));
	assert_string_equal(out, "json reload nu. example.\n");
	assert_int_equal(apex_ctl_request_parse((uint8_t *)out, (size_t)len, &req, NULL), APEX_OK);
	assert_int_equal(req.command, APEX_CTL_RELOAD);
	assert_int_equal(req.argc, 2);
	assert_string_equal(req.argv[1], "example.");

	assert_int_equal(apex_ctl_request_format(out, sizeof(out), APEX_CTL_FORMAT_TEXT,
						 APEX_CTL_RELOAD, 1, bad_args),
			 APEX_EINVAL);
	assert_int_equal(apex_ctl_request_format(out, sizeof(out), APEX_CTL_FORMAT_TEXT,
						 APEX_CTL_RELOAD, 1, empty_args),
			 APEX_EINVAL);
	assert_int_equal(apex_ctl_request_format(out, sizeof(out), APEX_CTL_FORMAT_TEXT,
						 APEX_CTL_STATUS, 1, args),
			 APEX_EINVAL);
	assert_int_equal(
		apex_ctl_request_format(out, 8, APEX_CTL_FORMAT_TEXT, APEX_CTL_STATUS, 0, NULL),
		APEX_ESPACE);
	assert_string_equal(apex_ctl_command_name(APEX_CTL_ZONE_STATUS), "zone-status");
	assert_int_equal(apex_ctl_command_from_name("stats"), APEX_CTL_STATS);
	assert_int_equal(apex_ctl_command_from_name("nope"), -1);
	assert_null(apex_ctl_command_name(APEX_CTL_COMMAND_COUNT));
}

static void test_reply(void **state)
{
	apex_ctl_buf_t buf;
	apex_ctl_reply_t r;

	(void)state;
	apex_ctl_buf_init(&buf, 1 << 20);
	apex_ctl_reply_status(&buf, true, NULL);
	apex_ctl_buf_puts(&buf, "body\n");
	assert_string_equal(buf.data, "ok\nbody\n");
	assert_int_equal(apex_ctl_reply_parse((uint8_t *)buf.data, buf.size, &r), APEX_OK);
	assert_true(r.ok);
	assert_int_equal(r.body_size, 5);
	assert_memory_equal(r.body, "body\n", 5);

	apex_ctl_buf_reset(&buf);
	apex_ctl_reply_status(&buf, false, "f.zone:3: bad\nline\x01");
	assert_string_equal(buf.data, "error f.zone:3: bad?line?\n");
	assert_int_equal(apex_ctl_reply_parse((uint8_t *)buf.data, buf.size, &r), APEX_OK);
	assert_false(r.ok);
	assert_int_equal(r.message_size, strlen("f.zone:3: bad?line?"));
	assert_int_equal(r.body_size, 0);

	/* a long message is cut to the maximum */
	char *longmsg = malloc(3000);
	assert_non_null(longmsg);
	memset(longmsg, 'm', 2999);
	longmsg[2999] = '\0';
	apex_ctl_buf_reset(&buf);
	apex_ctl_reply_status(&buf, false, longmsg);
	assert_int_equal(buf.size, 6 + APEX_CTL_MESSAGE_MAX + 1);
	assert_int_equal(apex_ctl_reply_parse((uint8_t *)buf.data, buf.size, &r), APEX_OK);
	free(longmsg);

	assert_int_equal(apex_ctl_reply_parse((const uint8_t *)"ok", 2, &r), APEX_EMALFORMED);
	assert_int_equal(apex_ctl_reply_parse((const uint8_t *)"okay\n", 5, &r), APEX_EMALFORMED);
	assert_int_equal(apex_ctl_reply_parse((const uint8_t *)"error \n", 7, &r), APEX_EMALFORMED);
	assert_int_equal(apex_ctl_reply_parse(NULL, 0, &r), APEX_EMALFORMED);
	apex_ctl_buf_free(&buf);
}

static void test_buf_limit_and_json(void **state)
{
	apex_ctl_buf_t buf;

	(void)state;
	apex_ctl_buf_init(&buf, 10);
	apex_ctl_buf_puts(&buf, "12345");
	apex_ctl_buf_printf(&buf, "%d", 6789);
	assert_false(buf.failed);
	assert_string_equal(buf.data, "123456789");
	apex_ctl_buf_puts(&buf, "01"); /* 11 > 10 */
	assert_true(buf.failed);
	apex_ctl_buf_puts(&buf, "x"); /* ignored once failed */
	assert_string_equal(buf.data, "123456789");
	apex_ctl_buf_free(&buf);

	apex_ctl_buf_init(&buf, 1 << 16);
	apex_ctl_json_string(&buf, "a\"b\\c\n\x01\xc3\xa9");
	assert_string_equal(buf.data, "\"a\\\"b\\\\c\\u000a\\u0001\\u00c3\\u00a9\"");
	apex_ctl_buf_reset(&buf);
	apex_ctl_json_string(&buf, "");
	assert_string_equal(buf.data, "\"\"");
	apex_ctl_buf_free(&buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_valid),
		cmocka_unit_test(test_request_invalid),
		cmocka_unit_test(test_request_limits),
		cmocka_unit_test(test_request_format_roundtrip),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_buf_limit_and_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
