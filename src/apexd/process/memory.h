/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Process memory: what the allocator holds and what the system charges.
 *
 * After a reload has freed the old version of a large zone, the
 * allocator keeps much of that memory for reuse (jemalloc purges unused
 * pages only after its decay time, glibc keeps the top of its heaps).
 * apex_memory_purge() hands it back at once, so that the resident size
 * returns to its level before the reload.
 */
#ifndef APEXD_MEMORY_H
#define APEXD_MEMORY_H

#include <stddef.h>

/* Return the allocator's unused pages to the system (jemalloc: purge every arena). */
void apex_memory_purge(void);

/* Resident set size of this process in bytes (0 if unknown). */
size_t apex_memory_rss(void);

/*
 * Keep /proc/self/statm open for apex_memory_rss(), so that the resident
 * size is still known inside a chroot.  Call it once the process is the
 * one that serves (after daemonize: a fork's child would read its
 * parent's) and before the chroot, before any thread starts.
 */
void apex_memory_keep_statm(void);

#endif
