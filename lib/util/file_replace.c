/* SPDX-License-Identifier: BSD-3-Clause */
/* A file replaced whole (file_replace.h). */
#include "util/file_replace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"

int apex_file_replace(const char *path, const char *text, size_t size)
{
	size_t len = strlen(path) + 5;
	char *tmp = malloc(len);
	FILE *f;
	int rc = APEX_OK;

	if (tmp == NULL)
		return APEX_ENOMEM;
	snprintf(tmp, len, "%s.new", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		rc = -errno;
	} else {
		if (fwrite(text, 1, size, f) != size || fflush(f) != 0 || fsync(fileno(f)) != 0)
			rc = -errno;
		if (fclose(f) != 0 && rc == APEX_OK)
			rc = -errno;
		if (rc == APEX_OK && rename(tmp, path) < 0)
			rc = -errno;
		if (rc < 0)
			unlink(tmp);
	}
	free(tmp);
	return rc;
}
