/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What tcp_listen.c (the listeners) asks of tcp.c (the connections).
 * Internal to the TCP service.
 */
#ifndef APEXD_SERVE_TCP_INTERNAL_H
#define APEXD_SERVE_TCP_INTERNAL_H

struct apex_tcp_listener;
struct apex_tcp_worker;

/* A connection waiting on l accepted, within the connection limits. */
void apex_tcp_accept(struct apex_tcp_listener *l);

/* Every connection of tcp closed (the worker stops). */
void apex_tcp_close_all(struct apex_tcp_worker *tcp);

#endif
