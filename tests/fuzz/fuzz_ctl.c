/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the control protocol's request parser
 * (lib/ctl/request.c), which reads whatever a client of the control
 * socket sends.
 *
 * The input is copied into a heap block of exactly its size (ASan sees
 * any read past it).  Oracle: apex_ctl_request_parse() returns APEX_OK
 * or APEX_EMALFORMED with a reason; on APEX_OK the request is
 * well-formed (known format and command, argc within bounds, every
 * argument a non-empty string of printable ASCII without spaces), and
 * formatting it again with apex_ctl_request_format() and parsing the
 * result gives the same request.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/request.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static apex_ctl_request_t req, again;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size > 0 ? size : 1);
	const char *reason = NULL;
	char line[APEX_CTL_REQUEST_MAX + 2];
	int rc, len;

	if (copy == NULL)
		abort();
	memcpy(copy, data, size);
	rc = apex_ctl_request_parse(copy, size, &req, &reason);
	free(copy);
	if (rc != APEX_OK) {
		if (rc != APEX_EMALFORMED || reason == NULL || reason[0] == '\0')
			abort();
		return 0;
	}
	if ((req.format != APEX_CTL_FORMAT_TEXT && req.format != APEX_CTL_FORMAT_JSON) ||
	    (unsigned)req.command >= APEX_CTL_COMMAND_COUNT || req.argc > APEX_CTL_ARGS_MAX ||
	    apex_ctl_command_name(req.command) == NULL)
		abort();
	for (size_t i = 0; i < req.argc; i++) {
		const char *a = req.argv[i];

		if (a == NULL || a[0] == '\0')
			abort();
		for (; *a != '\0'; a++) {
			if (*a <= ' ' || *a >= 0x7f)
				abort();
		}
	}
	/* round trip */
	len = apex_ctl_request_format(line, sizeof(line), req.format, req.command, req.argc,
				      req.argv);
	if (len < 0)
		abort();
	if (apex_ctl_request_parse((const uint8_t *)line, (size_t)len, &again, &reason) !=
		    APEX_OK ||
	    again.format != req.format || again.command != req.command || again.argc != req.argc)
		abort();
	for (size_t i = 0; i < req.argc; i++) {
		if (strcmp(again.argv[i], req.argv[i]) != 0)
			abort();
	}
	return 0;
}
