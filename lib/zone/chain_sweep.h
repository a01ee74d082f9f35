/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memory of a chain of derived versions that no version reads any
 * more, given back to the system in whole pages.
 *
 * A derivation replaces records and node pages; those of the chain
 * before it stay where they are, interleaved with the records it still
 * shares, until the chain is let go of (xfr/version_compact.h).  The node
 * pages it replaced are given back one by one (zone/page_discard.h); the
 * records are not, as they are too small and too scattered to be given
 * back by themselves.  A version built again part by part
 * (xfr/version_part.h) replaces every record of a range of owners at once:
 * then whole pages of the chain's memory hold nothing any version reads.
 *
 * The sweep finds them without knowing how they were laid out: every
 * page of the chain's arenas (the whole build's and those of the versions
 * derived since, up to the one released) that none of the pieces of
 * memory the newer versions read (zone/version_walk.h) touches, and that
 * is not one of the pages the chain keeps for its next derivations, is
 * given back with madvise(MADV_DONTNEED).  The allocations stay (their
 * arenas free them with the chain); the pages given back that were
 * resident are counted with the node pages given back, out of the
 * chain's memory (apex_zone_chain_memory()).  Under AddressSanitizer they
 * are also poisoned, so that a test reading one fails.
 *
 * It walks every node of the newer versions: a second per 10M records.
 * It runs under the chain's lock, and not while a version is being
 * derived from the chain (its copies, not yet reachable, lie in pages
 * the chain kept).
 */
#ifndef APEX_ZONE_CHAIN_SWEEP_H
#define APEX_ZONE_CHAIN_SWEEP_H

#include <stddef.h>

#include "zone/zone.h"

/*
 * Give back the pages of old's chain that no version from newest down to
 * successor reads (successor derived from old; newest derived from
 * successor, or successor itself), when old is released and the chain
 * private (page_discard.h).  Returns the resident bytes given back; 0
 * when the conditions do not hold or a derivation from the chain is under
 * way.
 */
size_t apex_zone_sweep_chain(apex_zone_t *old, const apex_zone_t *successor,
			     const apex_zone_t *newest);

#endif
