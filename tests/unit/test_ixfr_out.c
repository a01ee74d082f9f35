/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/ixfr_out: the messages of an outgoing IXFR carry the journal's
 * change sets, which apex's reader of incoming transfers (xfr/xfr_in)
 * gets back byte for byte, whatever the message size; an up-to-date
 * secondary gets the SOA alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/rrtype.h"
#include "util/error.h"
#include "xfr/diff.h"
#include "xfr/ixfr_out.h"
#include "xfr/xfr_in.h"
#include "zone/load.h"

static apex_zone_t *version(unsigned serial, int hosts)
{
	char path[] = "/tmp/apex-ixfr-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "$ORIGIN example.\n$TTL 60\n@ SOA ns hm %u 1 1 1 1\n@ NS ns\nns A 192.0.2.1\n",
		serial);
	for (int i = 0; i < hosts; i++)
		fprintf(f, "h%d A 192.0.2.%d\nh%d TXT \"serial %u, host %d\"\n", i, i % 250 + 1, i,
			serial, i);
	fclose(f);
	uint8_t origin[APEX_NAME_MAX];
	assert_true(apex_name_from_str("example.", origin) > 0);
	apex_zone_t *zone = NULL;
	char err[256];
	if (apex_zone_load(path, origin, &zone, err, sizeof(err)) != APEX_OK)
		fail_msg("%s", err);
	unlink(path);
	return zone;
}

typedef struct received {
	apex_changes_t sets[4];
	size_t count;
} received_t;

static int on_record(void *ctx, const apex_rr_t *rr)
{
	(void)ctx;
	(void)rr;
	fail_msg("an IXFR read as a whole zone");
	return APEX_EINVAL;
}

static int on_changes(void *ctx, apex_changes_t *set)
{
	received_t *r = ctx;
	assert_true(r->count < 4);
	apex_changes_t *copy = &r->sets[r->count++];
	apex_changes_init(copy);
	copy->data = malloc(set->size);
	assert_non_null(copy->data);
	memcpy(copy->data, set->data, set->size);
	copy->size = set->size;
	copy->serial_from = set->serial_from;
	copy->serial_to = set->serial_to;
	return APEX_OK;
}

/* Send the sets as an IXFR in messages of capacity bytes, read them back. */
static void send_and_read(const apex_zone_t *served, apex_changes_t *sets, size_t count,
			  uint32_t known, size_t capacity, received_t *got, apex_xfr_style_t *style)
{
	static uint8_t buf[65535];
	const uint8_t *data[4];
	size_t sizes[4];
	apex_ixfr_out_t out;
	apex_xfr_in_t in;
	apex_xfr_in_handler_t handler = { got, on_record, on_changes, NULL };
	size_t size;

	for (size_t i = 0; i < count; i++) {
		data[i] = sets[i].data;
		sizes[i] = sets[i].size;
	}
	memset(got, 0, sizeof(*got));
	apex_ixfr_out_init(&out, served, 0x7777, served->origin, data, sizes, count);
	assert_int_equal(apex_xfr_in_init(&in, served->origin, 0x7777, APEX_TYPE_IXFR, known,
					  &handler, NULL),
			 APEX_OK);
	for (;;) {
		assert_int_equal(apex_ixfr_out_next(&out, buf, capacity, &size), APEX_OK);
		if (size == 0)
			break;
		assert_true(size <= capacity);
		ldns_pkt *pkt = NULL;
		assert_int_equal(ldns_wire2pkt(&pkt, buf, size), LDNS_STATUS_OK);
		ldns_pkt_free(pkt);
		if (apex_xfr_in_message(&in, buf, size) != APEX_OK)
			fail_msg("refused: %s", in.err);
	}
	assert_true(apex_xfr_in_done(&in));
	*style = in.style;
	apex_xfr_in_free(&in);
}

static void change_sets_round_trip(void **state)
{
	(void)state;
	apex_zone_t *a = version(1, 300), *b = version(2, 320), *c = version(3, 280);
	apex_changes_t sets[2];
	received_t got;
	apex_xfr_style_t style;

	apex_changes_init(&sets[0]);
	apex_changes_init(&sets[1]);
	assert_int_equal(apex_xfr_diff(a, b, &sets[0]), APEX_OK);
	assert_int_equal(apex_xfr_diff(b, c, &sets[1]), APEX_OK);
	static const size_t capacities[] = { 65535, 4096, 512 };
	for (size_t k = 0; k < 3; k++) {
		send_and_read(c, sets, 2, 1, capacities[k], &got, &style);
		assert_int_equal(style, APEX_XFR_STYLE_IXFR);
		assert_int_equal(got.count, 2);
		for (size_t i = 0; i < 2; i++) {
			assert_int_equal(got.sets[i].serial_from, sets[i].serial_from);
			assert_int_equal(got.sets[i].serial_to, sets[i].serial_to);
			assert_int_equal(got.sets[i].size, sets[i].size);
			assert_memory_equal(got.sets[i].data, sets[i].data, sets[i].size);
			apex_changes_free(&got.sets[i]);
		}
	}
	/* up to date: the SOA alone */
	send_and_read(c, sets, 0, 3, 65535, &got, &style);
	assert_int_equal(style, APEX_XFR_STYLE_UP_TO_DATE);
	assert_int_equal(got.count, 0);

	apex_changes_free(&sets[0]);
	apex_changes_free(&sets[1]);
	apex_zone_unref(a);
	apex_zone_unref(b);
	apex_zone_unref(c);
}

/* A change set that does not read back stops the transfer. */
static void broken_set(void **state)
{
	(void)state;
	static uint8_t buf[65535];
	apex_zone_t *c = version(3, 1);
	const uint8_t junk[] = { 7, 'e', 'x', 'a', 'm' };
	const uint8_t *data[1] = { junk };
	size_t sizes[1] = { sizeof(junk) }, size;
	apex_ixfr_out_t out;

	apex_ixfr_out_init(&out, c, 1, c->origin, data, sizes, 1);
	assert_int_equal(apex_ixfr_out_next(&out, buf, sizeof(buf), &size), APEX_EMALFORMED);
	apex_zone_unref(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(change_sets_round_trip),
		cmocka_unit_test(broken_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
