/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small file written whole and put in place of the old one at once: the
 * text goes to PATH.new, is synced, and renamed over PATH, so a reader (or
 * a crash) sees the old file or the new one, never half of one.  For the
 * files apexd writes for itself: a produced catalog, the zone list.
 */
#ifndef APEX_UTIL_FILE_REPLACE_H
#define APEX_UTIL_FILE_REPLACE_H

#include <stddef.h>

/* path replaced by size bytes of text.  Returns APEX_OK, or the -errno of
 * the step that failed (the temporary file removed then). */
int apex_file_replace(const char *path, const char *text, size_t size);

#endif
