/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The files of a zone load: each named once among the builder's files
 * (records keep the index of theirs, for messages) and mapped for
 * reading.
 */
#ifndef APEX_ZONE_FILE_MAP_H
#define APEX_ZONE_FILE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/file_digest.h"
#include "zone/zone_file_reader.h"

/* A file mapped for reading (an empty file maps to nothing). */
typedef struct apex_mapping {
	const char *data;
	size_t size;
	struct apex_digest_job *digest_job; /* a digest taken beside the parse, or NULL */
	bool read_in; /* a small file: data was read into memory of its own, not mapped */
} apex_mapping_t;

/* Map path (read-only, sequential); "FILE: reason" in err on failure
 * (APEX_ELOAD).  Release with apex_unmap_file().  digest (NULL: not
 * wanted) receives the SHA-256 of the file opened (zone/file_digest.h),
 * read with pread() from the same open file: for a large file on a
 * thread of its own while the caller parses the mapping, ready once
 * apex_unmap_file() returns.  A digest that cannot be taken is left not
 * valid: the load goes on without it. */
int apex_map_file(const char *path, apex_mapping_t *m, apex_file_digest_t *digest, char *err,
		  size_t err_size);
void apex_unmap_file(apex_mapping_t *m);

/* Add path to the builder's files: its index in *index. */
int apex_loader_add_file(apex_loader_t *ld, const char *path, uint16_t *index);

/* Name path among the loader's files (*file_index) and map it (*m, for
 * apex_unmap_file()); "FILE: reason" in the loader's error buffer on
 * failure.  The first file of a loader that wants a digest (ld->digest)
 * is digested as it is mapped. */
int apex_loader_open_file(apex_loader_t *ld, const char *path, uint16_t *file_index,
			  apex_mapping_t *m);

#endif
