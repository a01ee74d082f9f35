/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the metrics endpoint's HTTP request head parser
 * (lib/metrics/http_request.c), which reads whatever a client of the
 * metrics port sends.
 *
 * The input is copied into a heap block of exactly its size (ASan sees
 * any read past it).  Oracle: INCOMPLETE only when the input holds no
 * end of a head and is below the limit, TOO_LARGE only at the limit; a
 * COMPLETE head lies within the input, has GET or HEAD or neither, and a
 * path that is empty or starts with '/' and holds printable ASCII
 * without '?'; the head alone parses the same, and the head without its
 * last byte is INCOMPLETE.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/http_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static apex_http_parse_t parse_copy(const uint8_t *data, size_t size, apex_http_request_t *req)
{
	uint8_t *copy = malloc(size > 0 ? size : 1);

	if (copy == NULL)
		abort();
	memcpy(copy, data, size);
	apex_http_parse_t rc = apex_http_request_parse(copy, size, req);
	free(copy);
	return rc;
}

static void check_request(const uint8_t *data, size_t size, const apex_http_request_t *req)
{
	apex_http_request_t again;

	if (req->head_size == 0 || req->head_size > size || req->head_size > APEX_HTTP_REQUEST_MAX)
		abort();
	if (req->get && req->head)
		abort();
	size_t len = strnlen(req->path, sizeof(req->path));
	if (len == sizeof(req->path) || (len > 0 && req->path[0] != '/'))
		abort();
	for (size_t i = 0; i < len; i++) {
		if (req->path[i] <= ' ' || req->path[i] >= 0x7f || req->path[i] == '?')
			abort();
	}
	if (parse_copy(data, req->head_size, &again) != APEX_HTTP_COMPLETE ||
	    again.get != req->get || again.head != req->head ||
	    strcmp(again.path, req->path) != 0 || again.head_size != req->head_size)
		abort();
	if (parse_copy(data, req->head_size - 1, &again) != APEX_HTTP_INCOMPLETE)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	apex_http_request_t req;

	switch (parse_copy(data, size, &req)) {
	case APEX_HTTP_COMPLETE: check_request(data, size, &req); break;
	case APEX_HTTP_TOO_LARGE:
		if (size < APEX_HTTP_REQUEST_MAX)
			abort();
		break;
	case APEX_HTTP_INCOMPLETE:
		if (size >= APEX_HTTP_REQUEST_MAX)
			abort();
		break;
	case APEX_HTTP_BAD: break;
	default: abort();
	}
	return 0;
}
