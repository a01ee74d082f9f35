/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The version served built compact (xfr/version_compact.h): when the
 * chain of derived versions behind the version of a zone served holds
 * more than the rule allows, that version is built whole again from its
 * own records and served in its place: same serial, same records, same
 * answers, so neither a journal nor a copy hears of it.
 *
 * One publisher for both chains of derived versions: the transfer
 * thread's after an IXFR (transfers/secondary_transfer.c) and the reload
 * thread's after a reload derived from the version served (reload.c).
 * Each calls it on its own thread once the derived version is published
 * and journaled, never on the way to serving it; the build is claimed on
 * memory-limit as a whole build beside the version served, the workers
 * only ever see the publication (a pointer swap).
 */
#ifndef APEXD_ZONES_COMPACT_H
#define APEXD_ZONES_COMPACT_H

#include <stdbool.h>
#include <stdint.h>

#include "process/memory_limit.h"
#include "serve/server.h"
#include "util/give_way.h"

struct apex_reloader; /* zones/reload.h */

/* Whose version is compacted, and how it is published. */
typedef struct apex_compact_zone {
	apex_server_t *server;
	/* the reloader the zone is configured in, and its id there (reload.h):
	 * the compact version is published only over the version it was
	 * made from; NULL: straight to the zone table (no reloader, in tests) */
	struct apex_reloader *reloader;
	uint64_t zone_id;
	const uint8_t *origin;
	const char *name;                 /* for messages */
	struct apexd_memory_limit *limit; /* NULL: none */
	apexd_memory_kind_t kind;         /* whose claim the build is */
	/* asked before the build and as it goes whether to give way
	 * (xfr/version_compact.h), and within parts; NULL: never */
	apex_give_way_fn give_way;
	void *give_way_ctx;
	/* asked in give_way's place after the last part, before the last
	 * step, with its ctx (NULL: give_way itself): the question a test
	 * hook pauses at (APEX_TEST_COMPACT_LAST_GIVE_WAY_MS) */
	apex_give_way_fn give_way_after_parts;
	/* the caller's, kept from one compaction to the next (NULL: none):
	 * in, a compaction in parts gave way, so this one is in parts too
	 * whatever made the version served; out, this one gave way between
	 * its parts */
	bool *parts_gave_way;
} apex_compact_zone_t;

/*
 * When the version of z served wants it (apex_version_wants_compact()),
 * build its compact form, precompute its answers, publish it over the
 * version it was made from and free that one once the workers let go of
 * it.  Logged either way.  Returns 1 when a compact version was
 * published, 0 when none was wanted, or a negative code when it could
 * not be built or published (the version served stays, derived):
 * APEX_ECANCELED when it gave way (z->give_way), for the caller to call
 * again later.  A compaction in parts (after a large change) gives way
 * within its parts and after the last of them, never within its last
 * step: the parts published stay served (each is a
 * whole version of the zone), and the next compaction, in parts again
 * (z->parts_gave_way), starts over from the first part of the version
 * then served, so that the last step finds the parts one after the
 * other (xfr/version_part.h).
 */
int apex_compact_served(const apex_compact_zone_t *z);

#endif
