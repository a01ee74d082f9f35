/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The open connections of a server loop (the control socket's, the
 * metrics endpoint's): an intrusive doubly linked list and its length.
 * A connection struct holds an apex_conn_link_t as its first member, so
 * a link is the connection itself; the list owns nothing.  Used on one
 * loop's thread only.
 */
#ifndef APEXD_CONN_LIST_H
#define APEXD_CONN_LIST_H

#include <stddef.h>

typedef struct apex_conn_link {
	struct apex_conn_link *prev, *next;
} apex_conn_link_t;

typedef struct apex_conn_list {
	apex_conn_link_t *first;
	unsigned count;
} apex_conn_list_t;

static inline void apex_conn_list_add(apex_conn_list_t *list, apex_conn_link_t *link)
{
	link->prev = NULL;
	link->next = list->first;
	if (list->first != NULL)
		list->first->prev = link;
	list->first = link;
	list->count++;
}

static inline void apex_conn_list_remove(apex_conn_list_t *list, apex_conn_link_t *link)
{
	if (link->prev != NULL)
		link->prev->next = link->next;
	else
		list->first = link->next;
	if (link->next != NULL)
		link->next->prev = link->prev;
	list->count--;
}

#endif
