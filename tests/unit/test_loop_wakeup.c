/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/apexd/process/loop_wakeup: a wake-up sent from other threads runs
 * its callback on the loop's thread, sends that come together give one
 * call or more (never none), and a wakeup that was never opened or was
 * already freed is left alone by close and free.
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "process/loop_wakeup.h"

#define SENDERS 4
#define SENDS 1000

typedef struct {
	apex_loop_wakeup_t wake;
	pthread_t loop_thread;
	atomic_int sent; /* sends made, by every sender */
	atomic_bool stop;
	int calls;        /* on_wake calls, on the loop's thread only */
	int seen_at_last; /* `sent` at the last call */
	bool on_loop_thread;
} fixture_t;

static void on_wake(apex_loop_wakeup_t *wake)
{
	fixture_t *f = wake->data;

	f->calls++;
	f->seen_at_last = atomic_load(&f->sent);
	f->on_loop_thread = f->on_loop_thread && pthread_equal(pthread_self(), f->loop_thread);
	if (atomic_load(&f->stop))
		apex_loop_wakeup_close(wake);
}

static void *sender(void *arg)
{
	fixture_t *f = arg;

	for (int i = 0; i < SENDS; i++) {
		atomic_fetch_add(&f->sent, 1);
		apex_loop_wakeup_send(&f->wake);
	}
	return NULL;
}

static void *run_loop(void *arg)
{
	uv_loop_t *loop = arg;

	uv_run(loop, UV_RUN_DEFAULT);
	return NULL;
}

/* Four threads send 1,000 wake-ups each; the loop's thread sees them. */
static void test_senders(void **state)
{
	fixture_t f;
	uv_loop_t loop;
	pthread_t senders[SENDERS];

	(void)state;
	memset(&f, 0, sizeof(f));
	f.on_loop_thread = true;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(apex_loop_wakeup_init(&f.wake, &loop, on_wake, &f), 0);
	assert_int_equal(pthread_create(&f.loop_thread, NULL, run_loop, &loop), 0);
	for (int i = 0; i < SENDERS; i++)
		assert_int_equal(pthread_create(&senders[i], NULL, sender, &f), 0);
	for (int i = 0; i < SENDERS; i++)
		pthread_join(senders[i], NULL);
	/* the last send, after every other: its call sees them all, and
	 * closes the handle, which ends the loop */
	atomic_store(&f.stop, true);
	apex_loop_wakeup_send(&f.wake);
	pthread_join(f.loop_thread, NULL);

	assert_int_equal(uv_loop_close(&loop), 0);
	assert_true(f.calls >= 1);
	assert_true(f.calls <= SENDERS * SENDS + 1);
	assert_int_equal(f.seen_at_last, SENDERS * SENDS);
	assert_true(f.on_loop_thread);
	/* a send after close still succeeds (the eventfd stays open) */
	apex_loop_wakeup_send(&f.wake);
	apex_loop_wakeup_free(&f.wake);
	apex_loop_wakeup_free(&f.wake); /* twice: nothing closed twice */
}

/* Sends before the loop runs are not lost: the first run calls back. */
static void test_send_before_run(void **state)
{
	fixture_t f;
	uv_loop_t loop;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.on_loop_thread = true;
	f.loop_thread = pthread_self();
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(apex_loop_wakeup_init(&f.wake, &loop, on_wake, &f), 0);
	atomic_store(&f.stop, true);
	apex_loop_wakeup_send(&f.wake);
	apex_loop_wakeup_send(&f.wake);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(f.calls, 1);
	assert_int_equal(uv_loop_close(&loop), 0);
	apex_loop_wakeup_free(&f.wake);
}

/* A zeroed wakeup (a struct whose set-up failed earlier) owns no
 * descriptor: close and free must not touch descriptor 0. */
static void test_zeroed(void **state)
{
	apex_loop_wakeup_t wake;
	int opened = -1;

	(void)state;
	if (fcntl(0, F_GETFD) < 0)
		opened = open("/dev/null", O_RDONLY); /* the lowest free: 0 */
	assert_true(fcntl(0, F_GETFD) >= 0);
	memset(&wake, 0, sizeof(wake));
	apex_loop_wakeup_close(&wake);
	apex_loop_wakeup_free(&wake);
	assert_true(fcntl(0, F_GETFD) >= 0);
	if (opened >= 0)
		close(opened);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_senders),
		cmocka_unit_test(test_send_before_run),
		cmocka_unit_test(test_zeroed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
