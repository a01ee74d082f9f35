/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking DNS-over-TCP I/O for the threads that run zone transfers (never
 * a worker): whole messages with their 2-byte length, within an idle
 * time-out (no progress: a stalled peer), a deadline for the whole
 * exchange, and a descriptor that, once readable, abandons the exchange
 * (apexd stopping).  The socket may be non-blocking; poll() waits.
 */
#ifndef APEX_XFR_TCP_STREAM_H
#define APEX_XFR_TCP_STREAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct apex_xfr_timeouts {
	unsigned connect_ms; /* to connect */
	unsigned idle_ms;    /* between two bytes: a stalled stream */
	unsigned total_ms;   /* for the whole exchange */
	int cancel_fd;       /* -1, or a descriptor that becomes readable to abandon it */
} apex_xfr_timeouts_t;

typedef struct apex_tcp_stream {
	int fd;
	uint64_t deadline; /* CLOCK_MONOTONIC ms */
	unsigned idle_ms;
	int cancel_fd;
	const char *peer; /* for messages */
	char *err;        /* the reason of a failure */
	size_t err_size;
} apex_tcp_stream_t;

/* Wrap fd (not owned) for an exchange starting now under t. */
void apex_tcp_stream_init(apex_tcp_stream_t *s, int fd, const apex_xfr_timeouts_t *t,
			  const char *peer, char *err, size_t err_size);

/* Wait until fd is ready for events (POLLIN/POLLOUT); what names the step. */
int apex_tcp_stream_wait(apex_tcp_stream_t *s, short events, const char *what);

/* Send all of buf. */
int apex_tcp_stream_send(apex_tcp_stream_t *s, const uint8_t *buf, size_t size);

/* Send one message with its length in front. */
int apex_tcp_stream_send_message(apex_tcp_stream_t *s, const uint8_t *msg, size_t size);

/* Receive the next message (without its length) into buf (65535 bytes). */
int apex_tcp_stream_recv_message(apex_tcp_stream_t *s, uint8_t *buf, size_t *size);

#endif
