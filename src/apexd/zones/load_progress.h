/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A large zone's load says how far it is, in the log and to systemd
 * (which then waits ten more minutes): a load of millions of records
 * takes minutes, and a silent one looks hung.
 */
#ifndef APEXD_LOAD_PROGRESS_H
#define APEXD_LOAD_PROGRESS_H

#include <stddef.h>

/* Before the first loads (of zone_count zones): every load from now on
 * reports its progress; systemd, which waits for READY=1 at most
 * TimeoutStartSec, is asked for more (once, 10 minutes from now). */
void apexd_load_progress_start(size_t zone_count);

#endif
