/* SPDX-License-Identifier: BSD-3-Clause */
/* The head of an HTTP/1.x request (RFC 9112 sections 2 and 3). */
#include "metrics/http_request.h"

#include <string.h>

/* RFC 9110 5.6.2: tchar, the characters of a method or header name. */
static bool is_tchar(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The end of the head: the offset just past its empty line, or 0. */
static size_t head_end(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i + 1 < size; i++) {
		if (data[i] != '\n')
			continue;
		if (data[i + 1] == '\n')
			return i + 2;
		if (data[i + 1] == '\r' && i + 2 < size && data[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* The length of the line at data[0..size) without its CRLF or LF. */
static size_t line_length(const uint8_t *data, size_t size, size_t *next)
{
	size_t n = 0;
	while (n < size && data[n] != '\n')
		n++;
	*next = n < size ? n + 1 : n;
	if (n > 0 && data[n - 1] == '\r')
		n--;
	return n;
}

/* "METHOD SP TARGET SP HTTP/1.x" (RFC 9112 3). */
static bool parse_request_line(const uint8_t *line, size_t size, apex_http_request_t *r)
{
	size_t i = 0, target, target_end;

	while (i < size && is_tchar(line[i]))
		i++;
	if (i == 0 || i == size || line[i] != ' ')
		return false;
	r->get = i == 3 && memcmp(line, "GET", 3) == 0;
	r->head = i == 4 && memcmp(line, "HEAD", 4) == 0;
	target = ++i;
	while (i < size && line[i] > ' ' && line[i] < 0x7f)
		i++;
	target_end = i;
	if (target_end == target || i == size || line[i] != ' ')
		return false;
	i++;
	if (size - i != 8 || memcmp(line + i, "HTTP/1.", 7) != 0 ||
	    (line[i + 7] != '0' && line[i + 7] != '1'))
		return false;
	/* origin-form only (a scraper's); the query is not part of the path */
	if (line[target] != '/')
		return false;
	size_t path_size = 0;
	while (target + path_size < target_end && line[target + path_size] != '?')
		path_size++;
	if (path_size >= sizeof(r->path))
		path_size = 0;
	memcpy(r->path, line + target, path_size);
	r->path[path_size] = '\0';
	return true;
}

/* "name: value": a token, a colon, then no control character but HTAB. */
static bool valid_header(const uint8_t *line, size_t size)
{
	size_t i = 0;

	while (i < size && is_tchar(line[i]))
		i++;
	if (i == 0 || i == size || line[i] != ':')
		return false;
	for (i++; i < size; i++) {
		if ((line[i] < ' ' && line[i] != '\t') || line[i] == 0x7f)
			return false;
	}
	return true;
}

apex_http_parse_t apex_http_request_parse(const uint8_t *data, size_t size,
					  apex_http_request_t *request)
{
	size_t end, at = 0, next;

	memset(request, 0, sizeof(*request));
	if (size > APEX_HTTP_REQUEST_MAX)
		size = APEX_HTTP_REQUEST_MAX;
	/* RFC 9112 2.2: empty lines before the request line are ignored */
	while (at < size &&
	       (data[at] == '\n' || (data[at] == '\r' && at + 1 < size && data[at + 1] == '\n')))
		at += data[at] == '\r' ? 2 : 1;
	end = head_end(data + at, size - at);
	if (end == 0)
		return size == APEX_HTTP_REQUEST_MAX ? APEX_HTTP_TOO_LARGE : APEX_HTTP_INCOMPLETE;
	end += at;
	size_t n = line_length(data + at, end - at, &next);
	if (!parse_request_line(data + at, n, request))
		return APEX_HTTP_BAD;
	for (at += next; at < end; at += next) {
		n = line_length(data + at, end - at, &next);
		if (n == 0)
			break; /* the empty line */
		if (!valid_header(data + at, n))
			return APEX_HTTP_BAD;
	}
	request->head_size = end;
	return APEX_HTTP_COMPLETE;
}
