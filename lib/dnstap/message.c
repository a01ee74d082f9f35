/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One dnstap frame, encoded by hand in the protobuf wire format (varints,
 * and length-delimited fields, in field-number order), as dnstap.proto
 * describes it.  protobuf-c's generic packer cost about 1,800
 * instructions a frame, more than answering the query
 * (doc/performance.md); this writes the dozen fields directly.  The unit
 * test decodes every frame with the code protoc-c generates from the
 * same schema.
 */
#include "dnstap/message.h"

#include <string.h>

/* Wire types (the low 3 bits of a field's key). */
enum { VARINT = 0, LENGTH = 2, FIXED32 = 5 };

/* The field numbers and enum values of dnstap.proto. */
enum {
	DNSTAP_IDENTITY = 1,
	DNSTAP_VERSION = 2,
	DNSTAP_MESSAGE = 14,
	DNSTAP_TYPE = 15,
	DNSTAP_TYPE_MESSAGE = 1,
	MESSAGE_TYPE = 1,
	MESSAGE_SOCKET_FAMILY = 2,
	MESSAGE_SOCKET_PROTOCOL = 3,
	MESSAGE_QUERY_ADDRESS = 4,
	MESSAGE_QUERY_PORT = 6,
	MESSAGE_QUERY_TIME_SEC = 8,
	MESSAGE_QUERY_TIME_NSEC = 9,
	MESSAGE_QUERY_MESSAGE = 10,
	MESSAGE_RESPONSE_TIME_SEC = 12,
	MESSAGE_RESPONSE_TIME_NSEC = 13,
	MESSAGE_RESPONSE_MESSAGE = 14,
	AUTH_QUERY = 1,
	AUTH_RESPONSE = 2,
	INET = 1,
	INET6 = 2,
	UDP = 1,
	TCP = 2,
};

static size_t varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Sizes of whole fields (key and value); the keys here all fit one byte. */
static size_t varint_field(uint64_t v)
{
	return 1 + varint_size(v);
}

static size_t bytes_field(size_t size)
{
	return 1 + varint_size(size) + size;
}

static uint8_t *put_key(uint8_t *p, unsigned field, unsigned wire_type)
{
	*p++ = (uint8_t)(field << 3 | wire_type);
	return p;
}

static uint8_t *put_uint(uint8_t *p, unsigned field, uint64_t v)
{
	return put_varint(put_key(p, field, VARINT), v);
}

static uint8_t *put_bytes(uint8_t *p, unsigned field, const void *data, size_t size)
{
	p = put_varint(put_key(p, field, LENGTH), size);
	memcpy(p, data, size);
	return p + size;
}

static uint8_t *put_fixed32(uint8_t *p, unsigned field, uint32_t v)
{
	p = put_key(p, field, FIXED32);
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)(v >> (8 * i)); /* little-endian */
	return p;
}

/* The size of the Message of ev, without its own key and length. */
static size_t message_size(const apex_dnstap_event_t *ev)
{
	size_t n = varint_field(AUTH_RESPONSE) + varint_field(INET6) + varint_field(TCP) +
		   bytes_field(ev->client_addr_size) + varint_field(ev->client_port) +
		   varint_field(ev->query_sec) + 5 + bytes_field(ev->message_size);
	if (ev->response)
		n += varint_field(ev->response_sec) + 5;
	return n;
}

size_t apex_dnstap_encode(const apex_dnstap_event_t *ev, uint8_t *out, size_t capacity)
{
	size_t identity = ev->identity != NULL ? strlen(ev->identity) : 0;
	size_t version = ev->version != NULL ? strlen(ev->version) : 0;
	size_t inner = message_size(ev);
	size_t total = (ev->identity != NULL ? bytes_field(identity) : 0) +
		       (ev->version != NULL ? bytes_field(version) : 0) + bytes_field(inner) +
		       varint_field(DNSTAP_TYPE_MESSAGE);
	uint8_t *p = out;

	if (total > capacity)
		return 0;
	if (ev->identity != NULL)
		p = put_bytes(p, DNSTAP_IDENTITY, ev->identity, identity);
	if (ev->version != NULL)
		p = put_bytes(p, DNSTAP_VERSION, ev->version, version);
	p = put_varint(put_key(p, DNSTAP_MESSAGE, LENGTH), inner);
	p = put_uint(p, MESSAGE_TYPE, ev->response ? AUTH_RESPONSE : AUTH_QUERY);
	p = put_uint(p, MESSAGE_SOCKET_FAMILY, ev->client_addr_size == 16 ? INET6 : INET);
	p = put_uint(p, MESSAGE_SOCKET_PROTOCOL, ev->protocol);
	p = put_bytes(p, MESSAGE_QUERY_ADDRESS, ev->client_addr, ev->client_addr_size);
	p = put_uint(p, MESSAGE_QUERY_PORT, ev->client_port);
	p = put_uint(p, MESSAGE_QUERY_TIME_SEC, ev->query_sec);
	p = put_fixed32(p, MESSAGE_QUERY_TIME_NSEC, ev->query_nsec);
	if (ev->response) {
		p = put_uint(p, MESSAGE_RESPONSE_TIME_SEC, ev->response_sec);
		p = put_fixed32(p, MESSAGE_RESPONSE_TIME_NSEC, ev->response_nsec);
		p = put_bytes(p, MESSAGE_RESPONSE_MESSAGE, ev->message, ev->message_size);
	} else {
		p = put_bytes(p, MESSAGE_QUERY_MESSAGE, ev->message, ev->message_size);
	}
	p = put_uint(p, DNSTAP_TYPE, DNSTAP_TYPE_MESSAGE);
	return (size_t)(p - out);
}
