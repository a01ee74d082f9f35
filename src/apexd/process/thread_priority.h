/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The priority of the threads that build zone versions (the reload
 * thread, the transfer thread of secondary zones): below the workers, as
 * reload-priority in apex.conf(5) says, so that building a new version of
 * a large zone on a busy server takes the CPU time the workers leave
 * instead of a share of theirs.
 */
#ifndef APEX_APEXD_THREAD_PRIORITY_H
#define APEX_APEXD_THREAD_PRIORITY_H

#include <stdbool.h>

/*
 * Lower the calling thread's priority: SCHED_IDLE when idle (nice 10 if
 * that is refused), else nice `nice` (0: unchanged).  what names the
 * thread in the log ("reload thread"); NULL: a thread of one task (an
 * outgoing transfer), which logs only a failure.  Threads it creates
 * afterwards inherit the policy and the nice value.
 */
void apex_thread_lower_priority(const char *what, bool idle, int nice);

#endif
