/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The head of an HTTP/1.x request, as a Prometheus server sends it to
 * scrape a target: "GET /metrics HTTP/1.1", header lines, an empty
 * line.  Only what choosing the reply needs is read (the method and the
 * path); headers are checked for form and otherwise ignored, and a body
 * is never read.  The input is untrusted: any byte string is handled.
 */
#ifndef APEX_METRICS_HTTP_REQUEST_H
#define APEX_METRICS_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest request head accepted, bytes (a scraper's is ~200). */
#define APEX_HTTP_REQUEST_MAX 8192
/* The longest path kept (longer paths are no path of ours: 404). */
#define APEX_HTTP_PATH_MAX 256

typedef enum {
	APEX_HTTP_INCOMPLETE, /* no empty line yet: read more */
	APEX_HTTP_COMPLETE,   /* a request head: see the request */
	APEX_HTTP_BAD,        /* not an HTTP/1.x request head: 400 */
	APEX_HTTP_TOO_LARGE,  /* no end within APEX_HTTP_REQUEST_MAX bytes: 431 */
} apex_http_parse_t;

typedef struct apex_http_request {
	bool get;  /* the method is GET */
	bool head; /* the method is HEAD (the reply without its body) */
	/* The request target without its query ("?..."), NUL-terminated;
	 * empty when it was longer than the buffer. */
	char path[APEX_HTTP_PATH_MAX];
	size_t head_size; /* bytes of the head, the empty line included */
} apex_http_request_t;

/* Read the request head at the start of data[0..size) into *request. */
apex_http_parse_t apex_http_request_parse(const uint8_t *data, size_t size,
					  apex_http_request_t *request);

#endif
