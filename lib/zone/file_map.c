/* SPDX-License-Identifier: BSD-3-Clause */
/* The files of a zone load, named and mapped (see file_map.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/arena.h"
#include "util/error.h"
#include "zone/file_map.h"

int apex_map_file(const char *path, apex_mapping_t *m, char *err, size_t err_size)
{
	m->data = ""; /* an empty file: no mapping, but a valid pointer */
	m->size = 0;
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
	if (st.st_size > 0) {
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
	close(fd);
	return APEX_OK;
}

void apex_unmap_file(apex_mapping_t *m)
{
	if (m->size > 0)
		munmap((void *)m->data, m->size);
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
	return apex_map_file(path, m, ld->b->err, ld->b->err_size);
}
