/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zone file compared with the version served, without a second
 * version: the change set (xfr/changes.h) that leads from the version to
 * the file's content, for a reload to derive the new version from it the
 * way an IXFR is applied (xfr/ixfr_apply.h) and for the journal to keep.
 *
 * The file is parsed by the zone loader (zone/load.h: the same threads,
 * checks and "FILE:LINE: reason" errors); each record it reads is looked
 * up in the version as IXFR matches records (owner without regard to
 * case, type, class and RDATA byte for byte), and its TTL as the version
 * keeps it.  A record the version holds is marked in a bitset over the
 * version's records and dropped; any other is kept as an addition.  The
 * version's records left unmarked are the removals.  An owner spelled
 * with other capitals than the version's is an addition (and its old
 * records removals), so that the new spelling is served as a whole build
 * would serve it.  The memory it takes beyond the version: 4 bytes a
 * node and 1 bit a record, and the change itself.
 */
#ifndef APEX_XFR_FILE_DIFF_H
#define APEX_XFR_FILE_DIFF_H

#include "xfr/changes.h"
#include "zone/zone.h"

typedef enum apex_file_diff_result {
	APEX_FILE_DIFF_CHANGED, /* *out holds the change set (maybe the SOA alone) */
	APEX_FILE_DIFF_SAME,    /* the file holds the version's records and SOA */
	/* the file has no SOA, or several, or one elsewhere than at the
	 * apex: only a whole load says what is wrong with it; or it adds
	 * more than a quarter of the version's records (and 4096): a
	 * whole load takes less memory than the change would */
	APEX_FILE_DIFF_WHOLE,
} apex_file_diff_result_t;

/*
 * Compare the zone file `file` with old (only read; any number of threads
 * may serve it meanwhile).  On APEX_OK, *result says what was found and,
 * when the file changed, out (initialised, empty) receives the change set
 * from old to the file: old's SOA, the removals, the file's SOA, the
 * additions.  digest (NULL: not wanted) receives the SHA-256 of the file
 * compared, for the version derived from the change to keep
 * (zone/file_digest.h).  Returns APEX_ELOAD with "FILE:LINE: reason" in
 * err when the file does not parse, or APEX_ENOMEM.
 */
int apex_file_diff(const apex_zone_t *old, const char *file, apex_changes_t *out,
		   apex_file_diff_result_t *result, apex_file_digest_t *digest, char *err,
		   size_t err_size);

#endif
