/* SPDX-License-Identifier: BSD-3-Clause */
/* Mappings aligned to 2 MiB in transparent huge pages (see huge_map.h). */
#include "util/huge_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A mapping of size bytes (a multiple of the system's page) aligned to
 * APEX_HUGE_PAGE, its first whole_huge bytes marked for huge pages. */
static void *map_aligned(size_t size, size_t whole_huge)
{
	/* one huge page more than asked, its unaligned head and tail given
	 * back: the kernel aligns a mapping to 4 KiB only */
	uint8_t *raw = mmap(NULL, size + APEX_HUGE_PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (raw == MAP_FAILED)
		return NULL;
	uintptr_t at = ((uintptr_t)raw + APEX_HUGE_PAGE - 1) & ~(uintptr_t)(APEX_HUGE_PAGE - 1);
	size_t head = at - (uintptr_t)raw;

	if (head > 0)
		munmap(raw, head);
	if (APEX_HUGE_PAGE - head > 0)
		munmap((uint8_t *)at + size, APEX_HUGE_PAGE - head);
#ifdef MADV_HUGEPAGE
	if (whole_huge > 0) /* a hint: without, 4 KiB pages */
		(void)madvise((void *)at, whole_huge, MADV_HUGEPAGE);
#endif
	return (void *)at;
}

void *apex_huge_map(size_t size)
{
	size = apex_huge_round(size);
	if (size == 0)
		return NULL;
	return map_aligned(size, size);
}

void apex_huge_unmap(void *p, size_t size)
{
	if (p != NULL)
		munmap(p, apex_huge_round(size));
}

void *apex_huge_block_alloc(size_t *size)
{
	if (*size < APEX_HUGE_PAGE)
		return malloc(*size);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	*size = (*size + page - 1) & ~(page - 1);
	return map_aligned(*size, *size & ~(APEX_HUGE_PAGE - 1));
}

void apex_huge_block_free(void *p, size_t size)
{
	if (size < APEX_HUGE_PAGE)
		free(p);
	else if (p != NULL)
		munmap(p, size);
}
