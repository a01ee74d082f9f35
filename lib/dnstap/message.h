/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One dnstap frame (the Dnstap protobuf of dnstap.proto) for a message
 * an authoritative server received or sent, encoded into the caller's
 * buffer: no allocation, so a worker may encode on its query path.
 */
#ifndef APEX_DNSTAP_MESSAGE_H
#define APEX_DNSTAP_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The content type of dnstap frames in a Frame Streams connection. */
#define APEX_DNSTAP_CONTENT_TYPE "protobuf:dnstap.Dnstap"

/* dnstap's SocketProtocol values. */
typedef enum apex_dnstap_protocol {
	APEX_DNSTAP_UDP = 1,
	APEX_DNSTAP_TCP = 2,
	APEX_DNSTAP_DOT = 3, /* DNS over TLS */
} apex_dnstap_protocol_t;

typedef struct apex_dnstap_event {
	bool response;                   /* AUTH_RESPONSE (else AUTH_QUERY) */
	apex_dnstap_protocol_t protocol; /* the transport */
	/* the client: 4 (IPv4) or 16 (IPv6) address bytes, its port */
	const uint8_t *client_addr;
	uint8_t client_addr_size;
	uint16_t client_port;
	/* when the query arrived, and (responses) when its response left */
	uint64_t query_sec, response_sec;
	uint32_t query_nsec, response_nsec;
	const uint8_t *message; /* the query, or the response */
	size_t message_size;
	/* the server's identity and version (NULL: not sent) */
	const char *identity, *version;
} apex_dnstap_event_t;

/* Encode ev into out[0..capacity); returns its size, or 0 if it does not fit. */
size_t apex_dnstap_encode(const apex_dnstap_event_t *ev, uint8_t *out, size_t capacity);

#endif
