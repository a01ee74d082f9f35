/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory about to be written whole, faulted in by one system call
 * (MADV_POPULATE_WRITE, Linux 5.14) rather than a page fault for each
 * 4 KiB page as the copy first writes it.  A derivation copies tens of
 * megabytes of node pages and index into memory just allocated; on the
 * machines measured, faulting them one by one took longer than the copy
 * (doc/performance.md section 15).
 */
#ifndef APEX_UTIL_POPULATE_H
#define APEX_UTIL_POPULATE_H

#include <stddef.h>

/* Below this, a system call costs more than the faults it saves. */
#define APEX_POPULATE_MIN ((size_t)64 << 10)

/*
 * Fault in the whole system pages of [p, p + size) for writing, when size
 * is at least APEX_POPULATE_MIN and its first, middle and last pages are
 * not all in memory already.  Only a hint: where the kernel lacks the
 * call, or memory is short, nothing is done and the writes fault as
 * before.
 */
void apex_populate_for_write(void *p, size_t size);

#endif
