/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory faulted in before a copy writes it (see populate.h). */
#include "util/populate.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older headers lack it */
#endif

/* Whether the page at addr is in memory; false if it cannot be told. */
static bool resident(uintptr_t addr)
{
	unsigned char in = 0;

	return mincore((void *)addr, 1, &in) == 0 && (in & 1) != 0;
}

void apex_populate_for_write(void *p, size_t size)
{
	if (p == NULL || size < APEX_POPULATE_MIN)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t end = ((uintptr_t)p + size) & ~(page - 1);
	if (end <= start)
		return;
	/* Memory the allocator hands out again before giving it back (IXFRs
	 * that follow each other within seconds) is in place already, and
	 * the call would walk every page of it for nothing: three pages
	 * sampled tell, as an extent is reused or given back whole. */
	uintptr_t middle = start + ((end - start) / 2 & ~(page - 1));
	if (resident(start) && resident(middle) && resident(end - page))
		return;
	(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}
