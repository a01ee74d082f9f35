/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A give-way question (util/give_way.h) for the tests of work that asks
 * it: says yes at its yes_at-th question (0: never), counting them, so
 * that a test tells the work to give way at each question in turn.
 */
#ifndef APEX_TESTS_GIVE_WAY_ASKER_H
#define APEX_TESTS_GIVE_WAY_ASKER_H

#include <stdbool.h>

typedef struct asker {
	int yes_at;
	int asked;
} asker_t;

static inline bool give_way_at(void *ctx)
{
	asker_t *a = ctx;

	return ++a->asked == a->yes_at;
}

#endif
