/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/metrics: the HTTP request head parser and the Prometheus text format;
 * and apexd's statistics as `apexctl stats` and the log at shutdown show them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics/exposition.h"
#include "metrics/http_request.h"
#include "observe/stats.h"

static apex_http_request_t req;

static apex_http_parse_t parse(const char *text)
{
	return apex_http_request_parse((const uint8_t *)text, strlen(text), &req);
}

static void test_request_complete(void **state)
{
	(void)state;
	const char *scrape = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9100\r\n"
			     "User-Agent: Prometheus/2.42.0\r\nAccept: text/plain;version=0.0.4\r\n"
			     "X-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n";
	assert_int_equal(parse(scrape), APEX_HTTP_COMPLETE);
	assert_true(req.get);
	assert_false(req.head);
	assert_string_equal(req.path, "/metrics");
	assert_int_equal(req.head_size, strlen(scrape));

	/* HEAD, HTTP/1.0, bare LF, a query, a body that is not read */
	assert_int_equal(parse("HEAD /metrics?name[]=x HTTP/1.0\n\nbody"), APEX_HTTP_COMPLETE);
	assert_true(req.head);
	assert_string_equal(req.path, "/metrics");
	assert_int_equal(req.head_size, strlen("HEAD /metrics?name[]=x HTTP/1.0\n\n"));
	/* another method is a request too (the server answers 405) */
	assert_int_equal(parse("POST /metrics HTTP/1.1\r\n\r\n"), APEX_HTTP_COMPLETE);
	assert_false(req.get || req.head);
	/* empty lines before the request line are ignored (RFC 9112 2.2) */
	assert_int_equal(parse("\r\n\r\nGET / HTTP/1.1\r\n\r\n"), APEX_HTTP_COMPLETE);
	assert_string_equal(req.path, "/");
	/* a path longer than kept is no path of ours */
	char longer[600];
	snprintf(longer, sizeof(longer), "GET /%0400d HTTP/1.1\r\n\r\n", 0);
	assert_int_equal(parse(longer), APEX_HTTP_COMPLETE);
	assert_string_equal(req.path, "");
}

static void test_request_incomplete_and_bad(void **state)
{
	(void)state;
	assert_int_equal(parse(""), APEX_HTTP_INCOMPLETE);
	assert_int_equal(parse("\r\n"), APEX_HTTP_INCOMPLETE);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n"), APEX_HTTP_INCOMPLETE);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\n\r"), APEX_HTTP_INCOMPLETE);

	const char *bad[] = {
		"GET /metrics HTTP/2.0\r\n\r\n",        "GET /metrics HTTP/1.1 \r\n\r\n",
		"GET  /metrics HTTP/1.1\r\n\r\n",       "GET metrics HTTP/1.1\r\n\r\n",
		"GET http://x/ HTTP/1.1\r\n\r\n",       "GET /metrics\r\n\r\n",
		" GET /metrics HTTP/1.1\r\n\r\n",       "G(T /metrics HTTP/1.1\r\n\r\n",
		"GET /a\x01 HTTP/1.1\r\n\r\n",          "GET /metrics HTTP/1.1\r\nno colon\r\n\r\n",
		"GET /metrics HTTP/1.1\r\n: v\r\n\r\n", "GET /metrics HTTP/1.1\r\nA: \x7f\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i]) != APEX_HTTP_BAD)
			fail_msg("accepted: %s", bad[i]);
	}

	/* no end within the limit; the limit is the parser's, not the input's */
	char *big = malloc(APEX_HTTP_REQUEST_MAX + 100);
	assert_non_null(big);
	memset(big, 'a', APEX_HTTP_REQUEST_MAX + 100);
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	assert_int_equal(apex_http_request_parse((uint8_t *)big, APEX_HTTP_REQUEST_MAX - 1, &req),
			 APEX_HTTP_INCOMPLETE);
	assert_int_equal(apex_http_request_parse((uint8_t *)big, APEX_HTTP_REQUEST_MAX, &req),
			 APEX_HTTP_TOO_LARGE);
	assert_int_equal(apex_http_request_parse((uint8_t *)big, APEX_HTTP_REQUEST_MAX + 100, &req),
			 APEX_HTTP_TOO_LARGE);
	free(big);
}

static void test_exposition(void **state)
{
	(void)state;
	apex_ctl_buf_t out;
	apex_metrics_sample_t s;

	apex_ctl_buf_init(&out, 1 << 16);
	apex_metrics_family(&out, "apex_zone_queries_total", "counter", "Queries by zone.");
	apex_metrics_sample(&out, "apex_zone_queries_total", "zone", "example.", 7);
	/* a zone name may hold a backslash, a quote or (escaped in its text) anything */
	apex_metrics_sample(&out, "apex_zone_queries_total", "zone", "a\\046b\"c\nd.", 1);
	apex_metrics_sample(&out, "apex_workers", NULL, NULL, 2);
	apex_metrics_sample_start(&s, &out, "apex_request_size_bytes_bucket");
	apex_metrics_label(&s, "transport", "udp");
	apex_metrics_label(&s, "le", "+Inf");
	apex_metrics_sample_end(&s, 18446744073709551615ULL);
	apex_metrics_sample_start(&s, &out, "apex_uptime_seconds");
	apex_metrics_sample_end_real(&s, 1.5);
	assert_false(out.failed);
	assert_string_equal(out.data,
			    "# HELP apex_zone_queries_total Queries by zone.\n"
			    "# TYPE apex_zone_queries_total counter\n"
			    "apex_zone_queries_total{zone=\"example.\"} 7\n"
			    "apex_zone_queries_total{zone=\"a\\\\046b\\\"c\\nd.\"} 1\n"
			    "apex_workers 2\n"
			    "apex_request_size_bytes_bucket{transport=\"udp\",le=\"+Inf\"} "
			    "18446744073709551615\n"
			    "apex_uptime_seconds 1.5\n");
	apex_ctl_buf_free(&out);
}

/* The counters of one worker, as a snapshot and a total of it. */
static apex_worker_stats_t worker;

static void render(apex_ctl_buf_t *out, apex_ctl_format_t format)
{
	apex_stats_totals_t one, total;

	memset(&total, 0, sizeof(total));
	apex_stats_snapshot(&worker, &one);
	apex_stats_add(&total, &one);
	apex_ctl_buf_init(out, 1 << 20);
	apex_stats_render(out, format, NULL, NULL, &one, 1, &total);
	assert_false(out->failed);
}

/* How often needle occurs in haystack. */
static unsigned occurrences(const char *haystack, const char *needle)
{
	unsigned n = 0;

	for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

static void test_stats_tls(void **state)
{
	(void)state;
	apex_ctl_buf_t out;

	assert_string_equal(apex_stats_tls_failure_name(APEX_STATS_TLS_PROTOCOL), "protocol");
	assert_string_equal(apex_stats_tls_failure_name(APEX_STATS_TLS_CERTIFICATE), "certificate");
	assert_string_equal(apex_stats_tls_failure_name(APEX_STATS_TLS_TIMEOUT), "timeout");

	/* without TLS: zeros, the last member of the total and of each worker */
	memset(&worker, 0, sizeof(worker));
	render(&out, APEX_CTL_FORMAT_JSON);
	assert_int_equal(occurrences(out.data, "\"kernel_drops\":0},\"tls\":{\"queries\":0,"
					       "\"handshakes\":0,\"resumed\":0,\"failed\":{"
					       "\"protocol\":0,\"certificate\":0,\"timeout\":0}}}"),
			 2);
	apex_ctl_buf_free(&out);

	APEX_STAT_ADD(worker.tcp_queries, 9);
	APEX_STAT_ADD(worker.tls_queries, 7);
	APEX_STAT_ADD(worker.tls_handshakes, 4);
	APEX_STAT_ADD(worker.tls_resumed, 1);
	APEX_STAT_ADD(worker.tls_failed[APEX_STATS_TLS_PROTOCOL], 2);
	APEX_STAT_ADD(worker.tls_failed[APEX_STATS_TLS_CERTIFICATE], 5);
	APEX_STAT_ADD(worker.tls_failed[APEX_STATS_TLS_TIMEOUT], 3);
	render(&out, APEX_CTL_FORMAT_JSON);
	const char *json = "\"tls\":{\"queries\":7,\"handshakes\":4,\"resumed\":1,"
			   "\"failed\":{\"protocol\":2,\"certificate\":5,\"timeout\":3}}}";
	assert_int_equal(occurrences(out.data, json), 2);
	assert_non_null(strstr(out.data, "{\"total\":{\"queries\":9,\"udp\":0,\"tcp\":9,"));
	assert_int_equal(occurrences(out.data, "}}},\"rssac002\":{"), 1); /* the total's end */
	assert_int_equal(occurrences(out.data, "}}}]}\n"), 1);            /* the worker's */
	apex_ctl_buf_free(&out);

	render(&out, APEX_CTL_FORMAT_TEXT);
	assert_int_equal(occurrences(out.data, "\n  tls: queries 7, handshakes 4 (resumed 1), "
					       "failed protocol=2 certificate=5 timeout=3\n"),
			 2);
	apex_ctl_buf_free(&out);

	apex_stats_totals_t total;
	apex_stats_snapshot(&worker, &total);
	apex_ctl_buf_init(&out, 4096);
	apex_stats_summary(&out, &total);
	assert_false(out.failed);
	const char *tail = "; tls queries=7 handshakes=4 resumed=1 failed-protocol=2 "
			   "failed-certificate=5 failed-timeout=3";
	assert_true(out.size > strlen(tail));
	assert_string_equal(out.data + out.size - strlen(tail), tail);
	apex_ctl_buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_complete),
		cmocka_unit_test(test_request_incomplete_and_bad),
		cmocka_unit_test(test_exposition),
		cmocka_unit_test(test_stats_tls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
