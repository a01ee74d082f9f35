/* SPDX-License-Identifier: BSD-3-Clause */
#include "util/rwlock.h"
#include "util/error.h"

int apex_rwlock_init(apex_rwlock_t *lock)
{
	pthread_rwlockattr_t attr;
	if (pthread_rwlockattr_init(&attr) != 0)
		return APEX_ENOMEM;
	/* Writer preference: once a writer waits, new readers queue behind
	 * it, so publishing a zone cannot be starved by readers.  (The
	 * non-recursive kind is required for glibc to honour it.) */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	int rc = pthread_rwlock_init(&lock->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	return rc == 0 ? APEX_OK : APEX_ENOMEM;
}

void apex_rwlock_destroy(apex_rwlock_t *lock)
{
	pthread_rwlock_destroy(&lock->lock);
}

void apex_rwlock_rdlock(apex_rwlock_t *lock)
{
	pthread_rwlock_rdlock(&lock->lock);
}

void apex_rwlock_wrlock(apex_rwlock_t *lock)
{
	pthread_rwlock_wrlock(&lock->lock);
}

void apex_rwlock_unlock(apex_rwlock_t *lock)
{
	pthread_rwlock_unlock(&lock->lock);
}
