/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A journal ahead of the version loaded from a zone's file: the change
 * sets that lead from the loaded serial to the journal's newest version,
 * read back to be applied as an IXFR's are (xfr/ixfr_apply.h), so that a
 * server that stopped between its journal's append and the write of its
 * zone's file serves the newest version it had at once.
 *
 * Which sets may be replayed depends on whose the file is
 * (doc/transfers.md, "A journal ahead of the zone"):
 * - a secondary's copy is the server's own: the sets from the entry that
 *   starts at the copy's serial, wherever it lies in the chain;
 * - a primary's file is the operator's, who may have put back or edited
 *   it: only when the journal's first entry starts at the file's serial.
 * In both cases the sets run to the journal's end; nothing is replayed
 * when the journal ends at the loaded serial, does not reach it, or is
 * empty.
 */
#ifndef APEX_XFR_JOURNAL_REPLAY_H
#define APEX_XFR_JOURNAL_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "xfr/changes.h"
#include "xfr/journal.h"

typedef enum apex_replay_rule {
	APEX_REPLAY_SECONDARY, /* from the entry that starts at the serial */
	APEX_REPLAY_PRIMARY,   /* only if that entry is the journal's first */
} apex_replay_rule_t;

/*
 * The index of the first entry of j to replay over a version of serial
 * under rule: APEX_OK and *first, or APEX_ENOENT when there is nothing to
 * replay.
 */
int apex_journal_replay_from(const apex_journal_t *j, uint32_t serial, apex_replay_rule_t rule,
			     size_t *first);

/*
 * Copies of the change sets of j to replay over a version of serial
 * under rule, oldest first, into *sets (owned by the caller, released
 * with apex_journal_sets_free()) and *count; *count is 0 (and *sets NULL)
 * when there is nothing to replay.  Each set carries its serials and
 * reads as a complete set.  Returns APEX_OK, APEX_EMALFORMED (an entry
 * changed on disk since the journal was opened, or does not read as a
 * change set from its serials: the reason in err, nothing returned) or
 * APEX_ENOMEM.
 */
int apex_journal_replay_sets(const apex_journal_t *j, uint32_t serial, apex_replay_rule_t rule,
			     apex_changes_t **sets, size_t *count, char *err, size_t err_size);

void apex_journal_sets_free(apex_changes_t *sets, size_t count);

#endif
