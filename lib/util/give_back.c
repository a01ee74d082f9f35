/* SPDX-License-Identifier: BSD-3-Clause */
/* The part of a large array read through given back (give_back.h). */
#include "util/give_back.h"

#include <sys/mman.h>

void apex_give_back_init(apex_give_back_t *g, const void *start)
{
	g->next = ((uintptr_t)start + APEX_GIVE_BACK_UNIT - 1) & ~(APEX_GIVE_BACK_UNIT - 1);
}

size_t apex_give_back_below(apex_give_back_t *g, const void *end)
{
	uintptr_t to = (uintptr_t)end & ~(APEX_GIVE_BACK_UNIT - 1);

	if (to <= g->next)
		return 0;
	/* a failure (none is expected) only leaves the memory resident */
	if (madvise((void *)g->next, to - g->next, MADV_DONTNEED) != 0)
		return 0;
	size_t given = to - g->next;
	g->next = to;
	return given;
}
