/* SPDX-License-Identifier: BSD-3-Clause */
/* Control protocol requests: parsing and formatting (pure functions). */
#include "ctl/request.h"

#include <string.h>

#include "util/error.h"

static const char *const command_names[APEX_CTL_COMMAND_COUNT] = {
	[APEX_CTL_STATUS] = "status",           [APEX_CTL_RELOAD] = "reload",
	[APEX_CTL_ZONE_STATUS] = "zone-status", [APEX_CTL_STATS] = "stats",
	[APEX_CTL_RECONFIG] = "reconfig",       [APEX_CTL_STOP] = "stop",
	[APEX_CTL_REFRESH] = "refresh",         [APEX_CTL_RETRANSFER] = "retransfer",
	[APEX_CTL_NOTIFY] = "notify",           [APEX_CTL_ZONE_ADD] = "zone-add",
	[APEX_CTL_ZONE_REMOVE] = "zone-remove",
};

/* Least number of arguments each command takes (0 unless given). */
static const size_t command_min_args[APEX_CTL_COMMAND_COUNT] = {
	[APEX_CTL_REFRESH] = 1,  [APEX_CTL_RETRANSFER] = 1,  [APEX_CTL_NOTIFY] = 1,
	[APEX_CTL_ZONE_ADD] = 2, [APEX_CTL_ZONE_REMOVE] = 1,
};

/* Largest number of arguments each command takes. */
static const size_t command_max_args[APEX_CTL_COMMAND_COUNT] = {
	[APEX_CTL_STATUS] = 0,
	[APEX_CTL_RELOAD] = APEX_CTL_ARGS_MAX,
	[APEX_CTL_ZONE_STATUS] = APEX_CTL_ARGS_MAX,
	[APEX_CTL_STATS] = 0,
	[APEX_CTL_RECONFIG] = 0,
	[APEX_CTL_STOP] = 0,
	[APEX_CTL_REFRESH] = 1,
	[APEX_CTL_RETRANSFER] = 1,
	[APEX_CTL_NOTIFY] = 1,
	[APEX_CTL_ZONE_ADD] = 2,
	[APEX_CTL_ZONE_REMOVE] = 1,
};

const char *apex_ctl_command_name(apex_ctl_command_t command)
{
	if ((unsigned)command >= APEX_CTL_COMMAND_COUNT)
		return NULL;
	return command_names[command];
}

int apex_ctl_command_from_name(const char *name)
{
	for (int c = 0; c < APEX_CTL_COMMAND_COUNT; c++) {
		if (strcmp(name, command_names[c]) == 0)
			return c;
	}
	return -1;
}

static int fail(const char **reason, const char *why)
{
	if (reason != NULL)
		*reason = why;
	return APEX_EMALFORMED;
}

int apex_ctl_request_parse(const uint8_t *data, size_t size, apex_ctl_request_t *req,
			   const char **reason)
{
	size_t words = 0;
	const char *word[APEX_CTL_ARGS_MAX + 2];
	char *s;

	req->format = APEX_CTL_FORMAT_TEXT;
	req->command = APEX_CTL_STATUS;
	req->argc = 0;
	req->text[0] = '\0';
	if (data == NULL && size > 0)
		return fail(reason, "no data");
	if (size > APEX_CTL_REQUEST_MAX)
		return fail(reason, "request too long");
	/* one final newline, optionally preceded by a carriage return */
	if (size > 0 && data[size - 1] == '\n')
		size--;
	if (size > 0 && data[size - 1] == '\r')
		size--;
	for (size_t i = 0; i < size; i++) {
		if (data[i] == '\t' || (data[i] >= 0x20 && data[i] < 0x7f))
			continue;
		return fail(reason, data[i] == '\n' ? "more than one line in a request"
						    : "control or non-ASCII byte in the request");
	}
	if (size > 0)
		memcpy(req->text, data, size);
	req->text[size] = '\0';

	/* split on runs of spaces and tabs, in place */
	s = req->text;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			*s++ = '\0';
		if (*s == '\0')
			break;
		if (words == APEX_CTL_ARGS_MAX + 2)
			return fail(reason, "too many arguments");
		word[words++] = s;
		while (*s != '\0' && *s != ' ' && *s != '\t')
			s++;
	}
	if (words == 0)
		return fail(reason, "empty request");
	if (strcmp(word[0], "text") == 0)
		req->format = APEX_CTL_FORMAT_TEXT;
	else if (strcmp(word[0], "json") == 0)
		req->format = APEX_CTL_FORMAT_JSON;
	else
		return fail(reason, "unknown format (expected 'text' or 'json')");
	if (words < 2)
		return fail(reason, "no command");
	int command = apex_ctl_command_from_name(word[1]);
	if (command < 0)
		return fail(reason, "unknown command");
	req->command = (apex_ctl_command_t)command;
	if (words - 2 > command_max_args[command])
		return fail(reason, command_max_args[command] == 0
					    ? "this command takes no argument"
					    : "too many arguments");
	if (words - 2 < command_min_args[command])
		return fail(reason, "this command takes a zone name");
	req->argc = words - 2;
	for (size_t i = 0; i < req->argc; i++)
		req->argv[i] = word[i + 2];
	return APEX_OK;
}

/* Append src to out at *len, keeping room for a final NUL. */
static int append(char *out, size_t out_size, size_t *len, const char *src)
{
	size_t n = strlen(src);

	if (*len + n + 1 > out_size)
		return APEX_ESPACE;
	memcpy(out + *len, src, n);
	*len += n;
	out[*len] = '\0';
	return APEX_OK;
}

int apex_ctl_request_format(char *out, size_t out_size, apex_ctl_format_t format,
			    apex_ctl_command_t command, size_t argc, const char *const *argv)
{
	const char *name = apex_ctl_command_name(command);
	size_t len = 0;

	if (out_size == 0)
		return APEX_ESPACE;
	out[0] = '\0';
	if (name == NULL || (format != APEX_CTL_FORMAT_TEXT && format != APEX_CTL_FORMAT_JSON))
		return APEX_EINVAL;
	if (argc > command_max_args[command])
		return APEX_EINVAL;
	for (size_t i = 0; i < argc; i++) {
		if (argv[i][0] == '\0')
			return APEX_EINVAL;
		for (const char *c = argv[i]; *c != '\0'; c++) {
			if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
				return APEX_EINVAL;
		}
	}
	if (append(out, out_size, &len, format == APEX_CTL_FORMAT_JSON ? "json " : "text ") < 0 ||
	    append(out, out_size, &len, name) < 0)
		return APEX_ESPACE;
	for (size_t i = 0; i < argc; i++) {
		if (append(out, out_size, &len, " ") < 0 ||
		    append(out, out_size, &len, argv[i]) < 0)
			return APEX_ESPACE;
	}
	if (append(out, out_size, &len, "\n") < 0 || len > APEX_CTL_REQUEST_MAX)
		return APEX_ESPACE;
	return (int)len;
}
