/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory faulted in before a copy writes it (see populate.h). */
#include "util/populate.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older headers lack it */
#endif

void apex_populate_for_write(void *p, size_t size)
{
	if (p == NULL || size < APEX_POPULATE_MIN)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t end = ((uintptr_t)p + size) & ~(page - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}
