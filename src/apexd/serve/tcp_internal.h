/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A worker's TCP connection, shared by the files of the TCP service:
 * tcp_listen.c (the listeners), tcp_conn.c (a connection's life:
 * accepted within the limits, its buffers taken and given back, closed)
 * and tcp.c (its reads, answers and writes).  Internal to the TCP
 * service; everything runs on the worker's loop thread.
 */
#ifndef APEXD_SERVE_TCP_INTERNAL_H
#define APEXD_SERVE_TCP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "serve/buffer_pool.h"
#include "serve/conn_list.h"
#include "serve/tcp_tls.h"

typedef struct apex_tcp_conn {
	apex_conn_link_t link; /* first: in tcp->conns, the link is the connection */
	uv_tcp_t handle;
	uv_timer_t timer;
	uv_write_t write_req;
	struct apex_tcp_worker *tcp;
	/* Buffers from the worker's pools (tcp->buffers), held while used
	 * (apex_tcp_conn_release()), NULL otherwise: */
	uint8_t *in; /* APEX_TCP_IN_CAPACITY: messages received, not all answered */
	size_t in_used;
	uint8_t *out; /* APEX_TCP_OUT_CAPACITY: answers gathered (plain TCP: until written) */
	size_t out_used;
	uint8_t *tls_out;         /* APEX_TCP_TLS_OUT: TLS, ciphertext being written */
	uint8_t *sending;         /* out or tls_out while the write in flight still reads it */
	int open_handles;         /* libuv handles still to be closed before free */
	bool counted;             /* holds one of tcp->shared->connections */
	atomic_uint *client_slot; /* holds one count of it (per-client limit), or NULL */
	/* the client, for server cookies, ACLs and the logs: on a
	 * proxy-protocol-port, the one its PROXY v2 header names */
	struct sockaddr_storage peer;
	uint64_t partial_since; /* uv_now() when the unfinished input message began; 0: none */
	uint64_t write_since;   /* uv_now() when the write in flight began */
	bool linked;
	bool reading;
	bool writing;
	bool eof;
	bool closing;
	bool is_tls;        /* DNS over TLS: every byte goes through tls */
	bool proxy_pending; /* its PROXY v2 header is still to be read */
	apex_tcp_tls_t tls; /* its session */
} apex_tcp_conn_t;

/* A connection waiting on l accepted, within the connection limits. */
void apex_tcp_accept(struct apex_tcp_listener *l);

/* Every connection of tcp closed (the worker stops). */
void apex_tcp_close_all(struct apex_tcp_worker *tcp);

/* Close the connection; its memory is freed once libuv has closed its
 * handles, and its buffers go back to the pools then. */
void apex_tcp_conn_close(apex_tcp_conn_t *conn);

/* A buffer from pool into *held, unless it holds one already.  NULL when
 * memory ran out (logged). */
uint8_t *apex_tcp_conn_take(apex_tcp_conn_t *conn, apex_buffer_pool_t *pool, uint8_t **held);

/* The buffers the connection does not need now given back to the pools. */
void apex_tcp_conn_release(apex_tcp_conn_t *conn);

/* An accepted connection's timer started and its reading (tcp.c). */
void apex_tcp_conn_start(apex_tcp_conn_t *conn);

#endif
