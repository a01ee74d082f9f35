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

#include <stdbool.h>
#include <stddef.h>

/* Return the allocator's unused pages to the system (jemalloc: purge every arena). */
void apex_memory_purge(void);

/*
 * Take back, faulted in, the page pool's regions the last purge gave
 * back (at most util/page_pool.h's APEX_PAGE_POOL_PREPARE_MAX): for a
 * version about to be derived, made while its change is on its way
 * (transfers/secondary_transfer.c, once an IXFR is asked for), so that
 * its arena's chunks do not fault fresh regions in on the way to
 * serving.  The next purge gives back those left empty.
 */
void apex_memory_prepare(void);

/*
 * The calling thread allocates from now on in a jemalloc arena that gives
 * freed memory back to the system at once (its decay times 0), shared by
 * the threads that ask: a reload thread about to compare a large zone's
 * file with the version served (zones/reload_diff.c), whose temporaries
 * (the parse's, the builder's arrays, the lookups, the parsed names)
 * would else stay resident for jemalloc's 10 s of decay under the peak
 * that follows (a reload of a tenth of a 1M-record zone: 1.36 times
 * steady against 1.28, doc/reload.md).  Made on the first call: an arena
 * costs 2 to 3 MiB of its own once used (its small objects' pages),
 * which a server that never asks does not pay.  Not the transfer
 * threads: an AXFR in of that zone then peaked 4 MiB higher (its parser
 * threads' memory, in the automatic arenas, is not reused by this one).
 * Memory that thread allocates keeps to that arena whoever frees it.
 * Returns whether the thread now does: false without jemalloc, or when
 * the arena cannot be made (logged at debug level).
 */
bool apex_memory_thread_gives_back(void);

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
