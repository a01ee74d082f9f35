/* SPDX-License-Identifier: BSD-3-Clause */
/* Failed writes of the daemon's files, logged once (write_failures.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "observe/write_failures.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A file whose last write failed, and how. */
typedef struct failing {
	char *path;
	int rc;
} failing_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static failing_t *files; /* few: the files failing now */
static size_t count;

/* Under the lock: the entry of path, or NULL. */
static failing_t *find(const char *path)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(files[i].path, path) == 0)
			return &files[i];
	return NULL;
}

bool apexd_write_failed(const char *path, int rc)
{
	bool tell = true;

	pthread_mutex_lock(&lock);
	failing_t *f = find(path);
	if (f != NULL) {
		tell = f->rc != rc;
		f->rc = rc;
	} else {
		failing_t *grown = realloc(files, (count + 1) * sizeof(*grown));
		char *copy = strdup(path);

		if (grown != NULL)
			files = grown;
		if (grown != NULL && copy != NULL)
			files[count++] = (failing_t){ copy, rc };
		else
			free(copy); /* out of memory: told every time, never lost */
	}
	pthread_mutex_unlock(&lock);
	return tell;
}

bool apexd_write_worked(const char *path)
{
	pthread_mutex_lock(&lock);
	failing_t *f = find(path);
	if (f != NULL) {
		free(f->path);
		*f = files[--count];
	}
	pthread_mutex_unlock(&lock);
	return f != NULL;
}

bool apexd_write_behind(const char *path)
{
	pthread_mutex_lock(&lock);
	bool behind = find(path) != NULL;
	pthread_mutex_unlock(&lock);
	return behind;
}
