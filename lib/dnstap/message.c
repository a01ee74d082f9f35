/* SPDX-License-Identifier: BSD-3-Clause */
/* One dnstap frame, with the protobuf-c code generated from dnstap.proto. */
#include "dnstap/message.h"

#include <string.h>

#include "dnstap/dnstap.pb-c.h"

size_t apex_dnstap_encode(const apex_dnstap_event_t *ev, uint8_t *out, size_t capacity)
{
	Dnstap__Dnstap frame = DNSTAP__DNSTAP__INIT;
	Dnstap__Message m = DNSTAP__MESSAGE__INIT;
	ProtobufCBinaryData message = { ev->message_size, (uint8_t *)ev->message };

	frame.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
	frame.message = &m;
	if (ev->identity != NULL) {
		frame.has_identity = true;
		frame.identity =
			(ProtobufCBinaryData){ strlen(ev->identity), (uint8_t *)ev->identity };
	}
	if (ev->version != NULL) {
		frame.has_version = true;
		frame.version =
			(ProtobufCBinaryData){ strlen(ev->version), (uint8_t *)ev->version };
	}
	m.type = ev->response ? DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE
			      : DNSTAP__MESSAGE__TYPE__AUTH_QUERY;
	m.has_socket_family = true;
	m.socket_family = ev->client_addr_size == 16 ? DNSTAP__SOCKET_FAMILY__INET6
						     : DNSTAP__SOCKET_FAMILY__INET;
	m.has_socket_protocol = true;
	m.socket_protocol = ev->tcp ? DNSTAP__SOCKET_PROTOCOL__TCP : DNSTAP__SOCKET_PROTOCOL__UDP;
	m.has_query_address = true;
	m.query_address = (ProtobufCBinaryData){ ev->client_addr_size, (uint8_t *)ev->client_addr };
	m.has_query_port = true;
	m.query_port = ev->client_port;
	m.has_query_time_sec = m.has_query_time_nsec = true;
	m.query_time_sec = ev->query_sec;
	m.query_time_nsec = ev->query_nsec;
	if (ev->response) {
		m.has_response_time_sec = m.has_response_time_nsec = true;
		m.response_time_sec = ev->response_sec;
		m.response_time_nsec = ev->response_nsec;
		m.has_response_message = true;
		m.response_message = message;
	} else {
		m.has_query_message = true;
		m.query_message = message;
	}
	size_t size = dnstap__dnstap__get_packed_size(&frame);
	if (size > capacity)
		return 0;
	return dnstap__dnstap__pack(&frame, out);
}
