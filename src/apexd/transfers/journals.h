/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The journals of the served zones (xfr/journal.h), one per zone, in
 * FILE.jnl beside the zone's file: what changed from each version to the
 * next, so that an IXFR is answered incrementally, also after a restart.
 *
 * The thread that publishes a new version (reload or transfer) records
 * the difference from the version it replaced (xfr/diff.h); the threads
 * of outgoing transfers read the change sets an IXFR needs.  Each journal
 * has its own lock; no worker ever takes it.  A version whose serial is
 * not newer than the journal's last one clears the journal: an IXFR from
 * before it is then answered with the whole zone.
 *
 * A failed append (a full disk) leaves the journal as it was, its file
 * cut back to its last whole entry, and is logged once until an append
 * works again (observe/write_failures.h).  The journal then ends before
 * the version served: an IXFR from one of its serials is answered with
 * the whole zone (it does not lead to the serial served), and the next
 * change, which does not chain on it, clears it (in place, which needs
 * no space) and starts the history again, when the disk takes it.  Until
 * then a restart may still replay it over an older copy.
 * A journal ahead of the version loaded from the zone's file is replayed
 * over it (transfers/journal_replay.h), reading its sets here.
 */
#ifndef APEXD_JOURNALS_H
#define APEXD_JOURNALS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/daemon_config.h"
#include "xfr/changes.h"
#include "xfr/journal.h"
#include "xfr/journal_replay.h"
#include "xfr/xfr_serve.h"
#include "zone/zone.h"

typedef struct apex_zone_journal {
	uint8_t origin[APEX_NAME_MAX];
	char *name; /* for logs */
	char *path; /* FILE.jnl */
	pthread_mutex_t lock;
	apex_journal_t journal;
	bool open;
	/* The serial of the last version apex_journals_record() was given
	 * (whatever became of it), or one an IXFR gave up waiting for; an
	 * IXFR that comes between a version's publication and its record
	 * waits on `recorded_cond` (CLOCK_MONOTONIC) for it. */
	bool has_recorded;
	uint32_t recorded;
	pthread_cond_t recorded_cond;
} apex_zone_journal_t;

/* The table only grows (a reconfig adds journals), so an entry found
 * stays valid until apex_journals_free(); its lock guards the table, the
 * entries' own locks their journals. */
typedef struct apex_journals {
	pthread_rwlock_t lock;
	apex_zone_journal_t **zones;
	size_t count, capacity;
	size_t size; /* journal-size at start (0: no journals) */
} apex_journals_t;

/*
 * Open the journal of every zone of cfg that has provide-xfr (journal-size;
 * 0: none).  A journal
 * that cannot be opened is logged and left out (IXFR is then answered with
 * the whole zone).  Returns 0 or APEX_ENOMEM.
 */
int apex_journals_init(apex_journals_t *js, const apex_config_t *cfg);

/*
 * After a reconfig: open the journals of cfg's zones with provide-xfr that
 * have none (a zone added, or given provide-xfr), or whose file changed,
 * with journal-size as at start.  Called on the control thread while the
 * zones reconfig added may be loading: a journal opened before a zone's
 * first version is served is replayed over it when ahead of it, kept when
 * it ends at its serial and cleared otherwise (apex_journals_record());
 * one opened after keeps its history as it is; either way an IXFR is
 * answered from it only if it leads to the serial served.  Returns 0 or
 * APEX_ENOMEM.
 */
int apex_journals_update(apex_journals_t *js, const apex_config_t *cfg);

/* Replace every journal's path by rebase(base, path) (a suffix of path),
 * its path inside a chroot (privs.h), which a reconfig's paths are. */
void apex_journals_rebase(apex_journals_t *js,
			  const char *(*rebase)(const char *base, const char *path),
			  const char *base);

void apex_journals_free(apex_journals_t *js);

/*
 * Whether the journal of origin holds the change sets from serial to its
 * newest version, and still will once bytes more of change sets are
 * appended (0: as it is now; with bytes, serial may also be the serial it
 * ends at).  A secondary's copy at serial may lag the version served only
 * while this holds: a restart replays those sets over it.
 */
bool apex_journals_chains(apex_journals_t *js, const uint8_t *origin, uint32_t serial,
			  uint64_t bytes);

/* Record the change from old (NULL: none) to version, which replaced it:
 * sets[0..count) when they lead from old's serial to version's (the
 * change sets of an IXFR applied to old), else the difference of the two
 * versions, computed here.  A first version (old NULL) keeps a journal
 * that ends at its serial and clears any other. */
void apex_journals_record(apex_journals_t *js, const apex_zone_t *old, const apex_zone_t *version,
			  const apex_changes_t *sets, size_t count);

/*
 * Copies of the change sets the journal of origin holds ahead of a version
 * of serial loaded from the zone's file, under rule
 * (xfr/journal_replay.h), into *sets and *count (released with
 * apex_journal_sets_free()); none without a journal.  Returns APEX_OK, or
 * an apex code with the reason in err (a set that does not read back).
 */
int apex_journals_replay_sets(apex_journals_t *js, const uint8_t *origin, uint32_t serial,
			      apex_replay_rule_t rule, apex_changes_t **sets, size_t *count,
			      char *err, size_t err_size);

/*
 * How an outgoing IXFR reads them (xfr_serve.h); ctx is the apex_journals_t.
 * The journal is appended after the version is published, so an IXFR for
 * a version not recorded yet waits for its record, on the outgoing
 * transfer's own thread and at most APEX_JOURNAL_RECORD_WAIT_MS once per
 * version (a version that is never recorded: a journal opened after it
 * was published); then, or when the record did not reach the journal,
 * the whole zone is sent, as for any serial the journal does not hold.
 */
#define APEX_JOURNAL_RECORD_WAIT_MS 1000
extern const apex_xfr_serve_journal_t apex_journals_reader_template;

#endif
