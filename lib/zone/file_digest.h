/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SHA-256 of a zone file's bytes, taken from the file a load maps
 * (the same open file the parser reads) and kept with the version.  A
 * reload whose file has the digest of the version served holds what is
 * served: it is kept without the file being parsed (apexd's reload,
 * doc/reload.md), so an unchanged file costs a read, not a comparison.
 *
 * A version has a digest only when its load read one file: one with
 * $INCLUDE has none (an included file may change alone), nor has a
 * version from a transfer or derived from an IXFR.
 */
#ifndef APEX_ZONE_FILE_DIGEST_H
#define APEX_ZONE_FILE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define APEX_FILE_DIGEST_SIZE 32 /* SHA-256 */

typedef struct apex_file_digest {
	uint8_t bytes[APEX_FILE_DIGEST_SIZE];
	bool valid; /* false: no digest (see above) */
} apex_file_digest_t;

/* The digest of the size bytes of the open file fd, read from its start
 * with pread() (no mapping: nothing is added to the caller's resident
 * memory).  APEX_OK; APEX_ELOAD with "FILE: reason" (path as given) in
 * err when the file cannot be read; APEX_ENOMEM.  out->valid says
 * whether there is a digest. */
int apex_file_digest_fd(int fd, uint64_t size, const char *path, apex_file_digest_t *out, char *err,
			size_t err_size);

/* The digest of the file at path, as above. */
int apex_file_digest_path(const char *path, apex_file_digest_t *out, char *err, size_t err_size);

/* Both valid and equal. */
bool apex_file_digest_equal(const apex_file_digest_t *a, const apex_file_digest_t *b);

#endif
