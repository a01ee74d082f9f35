/* SPDX-License-Identifier: BSD-3-Clause */
/* The SHA-256 of a zone file's bytes (file_digest.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "util/error.h"
#include "zone/file_digest.h"

/* Read in blocks this size: few system calls, and small enough to stay
 * in the CPU's cache between the copy and the hash. */
#define BLOCK (256u << 10)

int apex_file_digest_fd(int fd, uint64_t size, const char *path, apex_file_digest_t *out, char *err,
			size_t err_size)
{
	unsigned char *block = malloc(BLOCK);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int len = 0;
	uint64_t at = 0;
	int ok;

	memset(out, 0, sizeof(*out));
	if (md == NULL || block == NULL) {
		EVP_MD_CTX_free(md);
		free(block);
		return APEX_ENOMEM;
	}
	ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	while (ok && at < size) {
		size_t want = size - at < BLOCK ? (size_t)(size - at) : BLOCK;
		ssize_t got = pread(fd, block, want, (off_t)at);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) { /* an error, or the file shrank meanwhile */
			snprintf(err, err_size, "%s: cannot read: %s", path,
				 got < 0 ? strerror(errno) : "shorter than it was");
			EVP_MD_CTX_free(md);
			free(block);
			return APEX_ELOAD;
		}
		ok = EVP_DigestUpdate(md, block, (size_t)got);
		at += (uint64_t)got;
	}
	if (ok)
		ok = EVP_DigestFinal_ex(md, out->bytes, &len);
	EVP_MD_CTX_free(md);
	free(block);
	if (!ok || len != APEX_FILE_DIGEST_SIZE) {
		memset(out, 0, sizeof(*out));
		return APEX_ENOMEM; /* OpenSSL fails only for want of memory here */
	}
	out->valid = true;
	return APEX_OK;
}

int apex_file_digest_path(const char *path, apex_file_digest_t *out, char *err, size_t err_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return APEX_ELOAD;
	}
	rc = apex_file_digest_fd(fd, (uint64_t)st.st_size, path, out, err, err_size);
	close(fd);
	return rc;
}

bool apex_file_digest_equal(const apex_file_digest_t *a, const apex_file_digest_t *b)
{
	return a->valid && b->valid && memcmp(a->bytes, b->bytes, APEX_FILE_DIGEST_SIZE) == 0;
}
