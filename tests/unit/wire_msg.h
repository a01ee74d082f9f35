/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helpers: a DNS message written byte by byte, as a primary's
 * transfer responses are (test_xfr_in, test_xfr_message): the caller lays
 * out the header, names and records; these append to it.  Include after
 * cmocka.h.
 */
#ifndef APEX_TESTS_UNIT_WIRE_MSG_H
#define APEX_TESTS_UNIT_WIRE_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dns/name.h"
#include "dns/wire.h"

typedef struct msg {
	uint8_t data[4096];
	size_t size;
	uint16_t ancount; /* records added, for the header's count */
} msg_t;

static inline void msg_put(msg_t *m, const void *data, size_t size)
{
	assert_true(m->size + size <= sizeof(m->data));
	memcpy(m->data + m->size, data, size);
	m->size += size;
}

static inline void msg_put_u16(msg_t *m, uint16_t v)
{
	uint8_t b[2];
	apex_write_u16(b, v);
	msg_put(m, b, 2);
}

static inline void msg_put_u32(msg_t *m, uint32_t v)
{
	uint8_t b[4];
	apex_write_u32(b, v);
	msg_put(m, b, 4);
}

/* A name from its text, uncompressed. */
static inline void msg_put_name(msg_t *m, const char *text)
{
	uint8_t name[APEX_NAME_MAX];
	int size = apex_name_from_str(text, name);
	assert_true(size > 0);
	msg_put(m, name, (size_t)size);
}

#endif
