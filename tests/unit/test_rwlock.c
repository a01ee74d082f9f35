/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The zone table's rwlock must not starve a writer: while readers keep
 * the lock continuously held (overlapping read sections), a writer that
 * asks for it must get it before the readers run out of work.  With a
 * reader-preferring lock the writer would wait for all of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>
#include <cmocka.h>

#include "util/rwlock.h"

#define READERS 3
#define READ_SECTIONS 2000 /* per reader; each holds the lock ~100 us */

static apex_rwlock_t lock;
static atomic_int sections_done;
static atomic_bool writer_done;

static void *reader(void *arg)
{
	struct timespec hold = { 0, 100000 };
	for (int i = 0; i < READ_SECTIONS && !atomic_load(&writer_done); i++) {
		apex_rwlock_rdlock(&lock);
		nanosleep(&hold, NULL);
		apex_rwlock_unlock(&lock);
		atomic_fetch_add(&sections_done, 1);
	}
	return NULL;
}

static void test_writer_not_starved(void **state)
{
	assert_int_equal(apex_rwlock_init(&lock), 0);
	pthread_t threads[READERS];
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&threads[i], NULL, reader, NULL), 0);

	/* Let the readers get going, then ask for the write lock. */
	while (atomic_load(&sections_done) < 3 * READERS) {
		struct timespec pause = { 0, 100000 };
		nanosleep(&pause, NULL);
	}
	apex_rwlock_wrlock(&lock);
	int done_at_write = atomic_load(&sections_done);
	atomic_store(&writer_done, true);
	apex_rwlock_unlock(&lock);

	for (int i = 0; i < READERS; i++)
		pthread_join(threads[i], NULL);
	apex_rwlock_destroy(&lock);

	/* The writer got in long before the readers' work ran out. */
	assert_true(done_at_write < READERS * READ_SECTIONS / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_not_starved),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
