/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the libFuzzer targets: finding the source tree, loading
 * zones into a zonetable, and the response oracle.
 *
 * The oracle checks every response apex_answer() writes, independently
 * of apex's own parser: it must decode with ldns (a well-formed
 * message), carry the query's ID, QR=1 and opcode, agree with the
 * apex_answer_info_t it reports, and never exceed the size limit
 * (512 bytes over UDP without EDNS, the smaller of the two payload
 * sizes with EDNS, 65535 over TCP or TLS, and never the buffer).  A violation
 * aborts, which libFuzzer reports as a crash with the input saved.
 */
#ifndef APEX_TESTS_FUZZ_COMMON_H
#define APEX_TESTS_FUZZ_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ldns/ldns.h>

#include "dns/name.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/precompute.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/load.h"
#include "zone/zoneset.h"

/* Print why the oracle failed, with the response in hex, and abort. */
__attribute__((noreturn, format(printf, 3, 4))) static void
fuzz_fail(const uint8_t *resp, size_t resp_size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "apex fuzz oracle: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nresponse (%zu bytes):", resp_size);
	for (size_t i = 0; i < resp_size && i < 4096; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n  ", resp[i]);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

/* The source tree: $APEX_SRCDIR, else the current directory or its ancestors. */
static const char *fuzz_srcdir(void)
{
	static char dir[4096];
	const char *env = getenv("APEX_SRCDIR");
	if (env != NULL && env[0] != '\0')
		return env;
	static const char *const tries[] = { ".", "..", "../..", "../../.." };
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/zones/root.zone", tries[i]);
		if (access(dir, R_OK) == 0) {
			snprintf(dir, sizeof(dir), "%s", tries[i]);
			return dir;
		}
	}
	fprintf(stderr, "cannot find the source tree: set APEX_SRCDIR\n");
	abort();
}

/* Load zones/<file> for origin into table; aborts on failure (a broken setup). */
static void fuzz_load(apex_zonetable_t *table, const char *file, const char *origin)
{
	char path[4096];
	if (snprintf(path, sizeof(path), "%s/zones/%s", fuzz_srcdir(), file) >= (int)sizeof(path))
		abort();
	uint8_t wire[APEX_NAME_MAX];
	if (apex_name_from_str(origin, wire) < 0)
		abort();
	apex_zone_t *zone = NULL;
	char err[512] = "";
	if (apex_zone_load(path, wire, &zone, err, sizeof(err)) != APEX_OK ||
	    apex_precompute(zone) != APEX_OK) {
		fprintf(stderr, "load %s: %s\n", path, err);
		abort();
	}
	if (apex_zonetable_publish(table, zone) != APEX_OK)
		abort();
}

/*
 * The EDNS payload size the query asks for as ldns reads it: 0 if the
 * query does not decode or has no OPT.
 */
static uint16_t fuzz_query_payload(const uint8_t *query, size_t query_size)
{
	ldns_pkt *pkt = NULL;
	uint16_t payload = 0;
	if (ldns_wire2pkt(&pkt, query, query_size) == LDNS_STATUS_OK && ldns_pkt_edns(pkt))
		payload = ldns_pkt_edns_udp_size(pkt);
	ldns_pkt_free(pkt);
	return payload;
}

/*
 * The UDP size limit of the response to query: 512 without EDNS (the
 * response has no OPT), else the requestor's payload as an independent
 * decoder (ldns) reads it, capped by ours and at least 512.  When ldns
 * cannot read the query, our own payload: an upper bound.
 */
static size_t fuzz_udp_limit(const uint8_t *query, size_t query_size,
			     const apex_answer_config_t *cfg, bool edns)
{
	if (!edns)
		return APEX_MIN_UDP_PAYLOAD;
	uint16_t asked = fuzz_query_payload(query, query_size);
	size_t limit = asked != 0 && asked < cfg->edns_payload ? asked : cfg->edns_payload;
	return limit < APEX_MIN_UDP_PAYLOAD ? APEX_MIN_UDP_PAYLOAD : limit;
}

/*
 * Check one response (see the top of this file).  capacity is the size
 * of the buffer apex_answer() was given.  Returns true if the response
 * has an OPT record.
 */
static bool fuzz_check_response(const uint8_t *query, size_t query_size,
				const apex_answer_config_t *cfg, apex_transport_t transport,
				const uint8_t *resp, size_t resp_size, size_t capacity,
				const apex_answer_info_t *info)
{
	bool must_drop = query_size < APEX_HEADER_SIZE || (query[2] & 0x80) != 0 ||
			 capacity < APEX_MIN_UDP_PAYLOAD;
	if (resp_size == 0) {
		if (!must_drop)
			fuzz_fail(resp, 0, "no response to a query that must be answered");
		if (!info->dropped)
			fuzz_fail(resp, 0, "no response but info->dropped is false");
		return false;
	}
	if (must_drop)
		fuzz_fail(resp, resp_size, "a response to a message that must be dropped");
	if (info->dropped)
		fuzz_fail(resp, resp_size, "a response but info->dropped is true");
	if (resp_size > capacity)
		fuzz_fail(resp, resp_size, "response larger than the buffer (%zu)", capacity);
	if (resp_size < APEX_HEADER_SIZE)
		fuzz_fail(resp, resp_size, "response shorter than a header");
	if (memcmp(resp, query, 2) != 0)
		fuzz_fail(resp, resp_size, "response ID differs from the query's");
	uint16_t qflags = apex_read_u16(query + APEX_HDR_FLAGS);
	uint16_t rflags = apex_read_u16(resp + APEX_HDR_FLAGS);
	if (!(rflags & APEX_FLAG_QR))
		fuzz_fail(resp, resp_size, "QR not set");
	if (APEX_OPCODE(rflags) != APEX_OPCODE(qflags))
		fuzz_fail(resp, resp_size, "opcode not copied");
	if (transport != APEX_TRANSPORT_UDP && (rflags & APEX_FLAG_TC))
		fuzz_fail(resp, resp_size, "TC set over TCP or TLS");
	if (((rflags & APEX_FLAG_TC) != 0) != info->truncated)
		fuzz_fail(resp, resp_size, "TC bit and info->truncated disagree");

	ldns_pkt *pkt = NULL;
	ldns_status st = ldns_wire2pkt(&pkt, resp, resp_size);
	if (st != LDNS_STATUS_OK)
		fuzz_fail(resp, resp_size, "ldns cannot decode the response: %s",
			  ldns_get_errorstr_by_id(st));
	bool edns = ldns_pkt_edns(pkt);
	unsigned rcode = (unsigned)ldns_pkt_get_rcode(pkt) |
			 (edns ? (unsigned)ldns_pkt_edns_extended_rcode(pkt) << 4 : 0);
	if (rcode != info->rcode) {
		ldns_pkt_free(pkt);
		fuzz_fail(resp, resp_size, "rcode %u but info->rcode %u", rcode, info->rcode);
	}
	if (edns && ldns_pkt_edns_udp_size(pkt) != cfg->edns_payload) {
		ldns_pkt_free(pkt);
		fuzz_fail(resp, resp_size, "OPT payload is not the configured one");
	}
	ldns_pkt_free(pkt);

	size_t limit = transport == APEX_TRANSPORT_UDP
			       ? fuzz_udp_limit(query, query_size, cfg, edns)
			       : APEX_MAX_MESSAGE;
	if (resp_size > limit)
		fuzz_fail(resp, resp_size, "response of %zu bytes over the %zu-byte limit",
			  resp_size, limit);
	return edns;
}

/* A heap buffer of exactly size bytes, so that ASan sees any write past it. */
static uint8_t *fuzz_buffer(size_t size)
{
	uint8_t *p = malloc(size);
	if (p == NULL)
		abort();
	return p;
}

#endif
