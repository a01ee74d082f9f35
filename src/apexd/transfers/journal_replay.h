/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zone's journal ahead of the version loaded from its file, replayed
 * (doc/transfers.md, "A journal ahead of the zone").
 *
 * A secondary appends an IXFR's change sets to the journal before it
 * writes the new copy of the zone; a crash between the two leaves the
 * journal ahead of the copy.  When the zone's first version is loaded
 * and its journal is open, the sets that lead from the loaded serial to
 * the journal's newest version (xfr/journal_replay.h: for a secondary's
 * copy from wherever that serial lies in the chain, for a primary's file
 * only from the journal's first set) are applied as an IXFR's are
 * (xfr/ixfr_apply.h), the version checked as a transfer's (precomputed
 * answers, ZONEMD) and published in place of the loaded one, which is
 * then no longer served.  Nothing changes when they do not apply; the log
 * says why.
 */
#ifndef APEXD_JOURNAL_REPLAY_H
#define APEXD_JOURNAL_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "serve/server.h"
#include "transfers/journals.h"
#include "zones/reload.h"

/*
 * Replay the journal of origin over the version of it served now, when
 * the journal is ahead of it; true when a newer version is published.
 * at_start: before the threads start (apexd's start-up): a secondary's
 * copy is then written again from the new version at once, so that the
 * copy matches what is served.  Otherwise (the first load of a zone a
 * reconfig added, on the reload thread) the copy is left to the next
 * transfer, which the transfer thread may be writing already; until then
 * a restart replays the same sets again.  The new version is published
 * only if the loaded one is still served.
 */
bool apex_journal_replay_zone(apex_journals_t *js, apex_server_t *server, apex_reloader_t *r,
			      const uint8_t *origin, bool at_start);

#endif
