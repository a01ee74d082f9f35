/* SPDX-License-Identifier: BSD-3-Clause */
/* The files of a zone load, named and mapped (see file_map.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/arena.h"
#include "util/error.h"
#include "zone/file_map.h"
#include "zone/load_tuning.h"

/* A digest being taken beside the parse (apex_map_file()). */
struct apex_digest_job {
	pthread_t thread;
	int fd; /* a duplicate of the file mapped, closed by apex_unmap_file() */
	uint64_t size;
	apex_file_digest_t *digest;
};

static void *digest_main(void *arg)
{
	struct apex_digest_job *job = arg;
	char err[16]; /* not reported: the digest is then not valid */

	(void)apex_file_digest_fd(job->fd, job->size, "", job->digest, err, sizeof(err));
	return NULL;
}

/* The digest of fd (size bytes) into *digest: started on a thread for a
 * file large enough to be parsed in chunks (zone/load_tuning.h), else
 * taken now.  SHA-256 takes about 0.6 ms a MB: on the load's own thread,
 * 13% of a 1M-record load on two CPUs; beside the parse, 5%. */
static void start_digest(apex_mapping_t *m, int fd, uint64_t size, apex_file_digest_t *digest)
{
	bool large = size >= atomic_load_explicit(&apex_load_chunk_min, memory_order_relaxed);
	struct apex_digest_job *job = large ? malloc(sizeof(*job)) : NULL;
	char err[16];

	memset(digest, 0, sizeof(*digest));
	if (job != NULL) {
		job->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		job->size = size;
		job->digest = digest;
		if (job->fd >= 0 && pthread_create(&job->thread, NULL, digest_main, job) == 0) {
			m->digest_job = job;
			return;
		}
		if (job->fd >= 0)
			close(job->fd);
		free(job);
	}
	(void)apex_file_digest_fd(fd, size, "", digest, err, sizeof(err));
}

/* A file this small is read, not mapped: the unmapping of each of
 * thousands of small zones, a TLB shootdown on every CPU of the
 * process, cost more than their parse.  Only a file parsed whole on one
 * thread is: the parse in chunks releases the pages it has scanned
 * (MADV_DONTNEED), which for memory of our own would zero them, and the
 * reader releases pages only after 2 * DROP_BEHIND, more than this. */
#define READ_IN_MAX (256u * 1024u)
_Static_assert(READ_IN_MAX < 2 * DROP_BEHIND, "a file read in would have pages released");

/* size bytes of fd read into memory of its own (a NUL after them): the
 * pointer, or NULL with errno set. */
static char *read_whole(int fd, size_t size)
{
	char *buf = malloc(size + 1);
	size_t got = 0;

	while (buf != NULL && got < size) {
		ssize_t n = pread(fd, buf + got, size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO; /* the file shrank under us */
			free(buf);
			return NULL;
		}
		got += (size_t)n;
	}
	if (buf != NULL)
		buf[size] = '\0';
	return buf;
}

int apex_map_file(const char *path, apex_mapping_t *m, apex_file_digest_t *digest, char *err,
		  size_t err_size)
{
	m->data = ""; /* an empty file: no mapping, but a valid pointer */
	m->size = 0;
	m->digest_job = NULL;
	m->read_in = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return APEX_ELOAD;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_size, "%s: cannot open: not a regular file", path);
		close(fd);
		return APEX_ELOAD;
	}
	if (st.st_size > 0 && st.st_size <= READ_IN_MAX &&
	    (uint64_t)st.st_size <
		    atomic_load_explicit(&apex_load_chunk_min, memory_order_relaxed)) {
		char *p = read_whole(fd, (size_t)st.st_size);
		if (p == NULL) {
			snprintf(err, err_size, "%s: cannot read: %s", path, strerror(errno));
			close(fd);
			return APEX_ELOAD;
		}
		m->data = p;
		m->size = (size_t)st.st_size;
		m->read_in = true;
	} else if (st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			snprintf(err, err_size, "%s: cannot read: %s", path, strerror(errno));
			close(fd);
			return APEX_ELOAD;
		}
		madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
		m->data = p;
		m->size = (size_t)st.st_size;
	}
	/* the bytes of this open file, the ones the parser reads: a file
	 * renamed over path meanwhile is not mixed in */
	if (digest != NULL)
		start_digest(m, fd, (uint64_t)st.st_size, digest);
	close(fd);
	return APEX_OK;
}

void apex_unmap_file(apex_mapping_t *m)
{
	if (m->digest_job != NULL) {
		pthread_join(m->digest_job->thread, NULL);
		close(m->digest_job->fd);
		free(m->digest_job);
		m->digest_job = NULL;
	}
	if (m->read_in)
		free((void *)m->data);
	else if (m->size > 0)
		munmap((void *)m->data, m->size);
	m->read_in = false;
}

int apex_loader_add_file(apex_loader_t *ld, const char *path, uint16_t *index)
{
	apex_zone_builder_t *b = ld->b;
	if (b->file_count >= UINT16_MAX)
		return APEX_ENOMEM;
	if (b->file_count == ld->file_cap) {
		size_t cap = ld->file_cap ? ld->file_cap * 2 : 8;
		const char **p = realloc(b->files, cap * sizeof(*p));
		if (p == NULL)
			return APEX_ENOMEM;
		b->files = p;
		ld->file_cap = cap;
	}
	const char *copy = apex_arena_strdup(b->tmp, path);
	if (copy == NULL)
		return APEX_ENOMEM;
	b->files[b->file_count] = copy;
	*index = (uint16_t)b->file_count++;
	return APEX_OK;
}

int apex_loader_open_file(apex_loader_t *ld, const char *path, uint16_t *file_index,
			  apex_mapping_t *m)
{
	int rc = apex_loader_add_file(ld, path, file_index);
	if (rc != APEX_OK)
		return rc;
	return apex_map_file(path, m, *file_index == 0 ? ld->digest : NULL, ld->b->err,
			     ld->b->err_size);
}
