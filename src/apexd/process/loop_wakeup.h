/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A wake-up for a libuv loop that a thread of any scheduling priority may
 * send: an eventfd of its own, watched by a uv_poll_t.
 *
 * Why not uv_async_send(): it marks its handle busy, writes the loop's
 * eventfd, then marks the handle done, and the loop's thread, once woken,
 * spins on the busy mark (calling sched_yield() every 997 tries) until
 * the sender has marked it done.  A sender running under SCHED_IDLE
 * (reload-priority idle: the transfer and reload threads) is preempted by
 * the thread it wakes right after the write, and the woken thread then
 * spins for as long as the scheduler keeps the sender off the CPU they
 * share: measured, up to 10 ms of a worker's time, during which it
 * answered nothing.  A write to an eventfd is one system call with no
 * second step, so nobody waits on the sender.
 */
#ifndef APEXD_LOOP_WAKEUP_H
#define APEXD_LOOP_WAKEUP_H

#include <stdbool.h>
#include <uv.h>

struct apex_loop_wakeup;
typedef void (*apex_loop_wakeup_cb)(struct apex_loop_wakeup *wakeup);

typedef struct apex_loop_wakeup {
	uv_poll_t poll;
	int fd;    /* the eventfd, when open */
	bool open; /* false in a zeroed struct: free() is then harmless */
	bool polling;
	apex_loop_wakeup_cb on_wake;
	void *data; /* the caller's */
} apex_loop_wakeup_t;

/*
 * Open the eventfd and watch it on loop (from the loop's thread, or
 * before that thread runs): on_wake(wakeup) is called on the loop's thread
 * after one or more sends.  0, or a negative libuv/errno code.  Either
 * way, apex_loop_wakeup_close() and apex_loop_wakeup_free() end it.
 */
int apex_loop_wakeup_init(apex_loop_wakeup_t *wakeup, uv_loop_t *loop, apex_loop_wakeup_cb on_wake,
			  void *data);

/* From any thread, while the eventfd is open: wake the loop. */
void apex_loop_wakeup_send(apex_loop_wakeup_t *wakeup);

/* On the loop's thread: stop watching (the handle closes as the loop
 * runs on); the eventfd stays open, so late sends are harmless. */
void apex_loop_wakeup_close(apex_loop_wakeup_t *wakeup);

/* Once the loop has run for the last time: close the eventfd (a zeroed
 * or already freed wakeup is left as it is). */
void apex_loop_wakeup_free(apex_loop_wakeup_t *wakeup);

#endif
