/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Change sets condensed: several consecutive change sets (xfr/changes.h)
 * as the one that goes from the first one's version to the last one's
 * (RFC 1995 section 4 lets a server send that instead of the sequence).
 *
 * A record is removed when a set removes it from the first version and no
 * later set adds it back; added when a set adds it and no later set
 * removes it again (the last addition counts, which carries a TTL change).
 * A record removed and added back is kept as both, so that a receiver
 * still checks it had the record.  Records are matched as IXFR matches
 * them: owner without regard to case, type, class and RDATA byte for
 * byte, in a hash table under a random key (the sets come from peers).
 * Removals and additions keep the order in which they first appear.
 */
#ifndef APEX_XFR_CONDENSE_H
#define APEX_XFR_CONDENSE_H

#include <stddef.h>

#include "xfr/changes.h"

/*
 * Condense sets[0..count) (count >= 1; each read by its data and size
 * only) into out, which this initialises and the caller frees with
 * apex_changes_free().  Returns APEX_OK, APEX_EMALFORMED when a set does
 * not read back or a set does not start at the serial the one before it
 * ends at, or APEX_ENOMEM.
 */
int apex_changes_condense(const apex_changes_t *sets, size_t count, apex_changes_t *out);

#endif
