/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory of the system in 2 MiB pages: mappings aligned to 2 MiB whose
 * whole 2 MiB are marked for transparent huge pages.
 *
 * Why: memory written whole soon after it is taken (a derived version's
 * name index, the page pool's regions) costs a fault for each 4 KiB page
 * at its first write, about 2 µs each on a virtual machine even when
 * faulted in by one MADV_POPULATE_WRITE (doc/performance.md section 15);
 * a huge page is one fault for 512 of them.  Where the kernel gives no
 * huge page (THP off, or memory too fragmented), the mapping works the
 * same on 4 KiB pages.
 */
#ifndef APEX_UTIL_HUGE_MAP_H
#define APEX_UTIL_HUGE_MAP_H

#include <stddef.h>

#define APEX_HUGE_PAGE ((size_t)2 << 20)

/* size rounded up to whole huge pages. */
static inline size_t apex_huge_round(size_t size)
{
	return (size + APEX_HUGE_PAGE - 1) & ~(APEX_HUGE_PAGE - 1);
}

/* A new mapping of apex_huge_round(size) bytes (size > 0), aligned to
 * APEX_HUGE_PAGE, zero until written; owned by the caller until
 * apex_huge_unmap() with the same size.  NULL if the system gives none. */
void *apex_huge_map(size_t size);

/* Give back a mapping of apex_huge_map(size); nothing if p is NULL. */
void apex_huge_unmap(void *p, size_t size);

/*
 * A block of *size bytes or more for data written whole: from the
 * allocator below APEX_HUGE_PAGE; from it up, a mapping aligned to
 * APEX_HUGE_PAGE of *size rounded up to the system's page, whose whole
 * huge pages are marked for them and whose tail (less than one) stays in
 * small pages.  Rounding the size up to a huge page instead would make
 * the tail resident whole: a 2.5 MiB block would hold 4 MiB.  The size
 * given into *size.  Owned by the caller until apex_huge_block_free()
 * with that size.  NULL if there is no memory.
 */
void *apex_huge_block_alloc(size_t *size);

/* Free a block of apex_huge_block_alloc() of size bytes (the size it
 * gave); nothing if p is NULL. */
void apex_huge_block_free(void *p, size_t size);

#endif
