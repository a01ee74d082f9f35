/* SPDX-License-Identifier: BSD-3-Clause */
/* The estimated peak of a build (memory_estimate.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "process/memory_estimate.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "zone/zone.h"

#define SAMPLE_SIZE (64u << 10)
#define SAMPLES 16u

uint64_t apexd_estimate_like(uint64_t memory, uint64_t records, double scale)
{
	double per_record = APEXD_PEAK_LOADER_PER_RECORD;

	if (scale < 0)
		scale = 0;
	return APEXD_PEAK_FIXED +
	       (uint64_t)(((double)memory + (double)records * per_record) * scale);
}

uint64_t apexd_estimate_records(uint64_t records, uint64_t bytes)
{
	return APEXD_PEAK_FIXED + records * APEXD_PEAK_PER_RECORD + bytes / 2;
}

uint64_t apexd_estimate_derived(uint64_t change_bytes, uint64_t change_records, uint64_t names)
{
	/* each changed record may copy a page of nodes and its page of
	 * RRsets pointers, up to every page */
	uint64_t page = (uint64_t)APEX_NODE_PAGE * sizeof(apex_node_t) + APEX_RRSETS_PAGE_SIZE;
	uint64_t all_pages = (names + APEX_NODE_PAGE - 1) / APEX_NODE_PAGE * page;
	uint64_t pages = change_records < all_pages / page ? change_records * page : all_pages;

	return APEXD_PEAK_FIXED + change_bytes * APEXD_PEAK_DERIVED_PER_CHANGE_BYTE + pages +
	       names * APEXD_PEAK_DERIVED_PER_NAME;
}

/* The newlines in [offset, offset + size) of fd, into *count; the bytes read into *got. */
static int count_newlines(int fd, char *buf, uint64_t offset, size_t size, uint64_t *count,
			  uint64_t *got)
{
	ssize_t n = pread(fd, buf, size, (off_t)offset);

	if (n < 0)
		return apex_errno();
	for (const char *p = buf, *end = buf + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL;
	     p++)
		(*count)++;
	*got += (uint64_t)n;
	return APEX_OK;
}

int apexd_estimate_file_lines(const char *path, uint64_t size, uint64_t *lines)
{
	uint64_t newlines = 0, got = 0;
	size_t chunk = size <= SAMPLES * SAMPLE_SIZE ? (size_t)size : SAMPLE_SIZE;
	unsigned samples = size <= SAMPLES * SAMPLE_SIZE ? 1 : SAMPLES;
	char *buf = malloc(chunk > 0 ? chunk : 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = APEX_OK;

	if (fd < 0 || buf == NULL) {
		rc = fd < 0 ? apex_errno() : APEX_ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < samples && rc == APEX_OK; i++) {
		uint64_t at = samples > 1 ? (size - chunk) / (samples - 1) * i : 0;

		rc = count_newlines(fd, buf, at, chunk, &newlines, &got);
	}
	/* the lines of the file at the density of the samples */
	if (rc == APEX_OK)
		*lines = got == 0 ? 0
				  : (uint64_t)((double)newlines * (double)size / (double)got) + 1;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}
