/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fair reader-writer lock: a waiting writer blocks new readers, so a
 * stream of readers can never starve the writer that publishes a zone
 * (glibc's default rwlock prefers readers and can).  Used only to publish
 * or pick up a zone table version, never per query.
 */
#ifndef APEX_UTIL_RWLOCK_H
#define APEX_UTIL_RWLOCK_H

#include <pthread.h>

typedef struct apex_rwlock {
	pthread_rwlock_t lock;
} apex_rwlock_t;

int apex_rwlock_init(apex_rwlock_t *lock);
void apex_rwlock_destroy(apex_rwlock_t *lock);
void apex_rwlock_rdlock(apex_rwlock_t *lock);
void apex_rwlock_wrlock(apex_rwlock_t *lock);
void apex_rwlock_unlock(apex_rwlock_t *lock);

#endif
