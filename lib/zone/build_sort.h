/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Step 1 of a build (build.c), on the build's threads: b's owners sorted
 * by lookup key (canonical order), the entries the loader listed twice for
 * one key merged into one (the lowest index, the spelling first in the
 * file), b's records sorted by owner rank, type and canonical RDATA, and
 * duplicate records dropped (the first in the file kept).  Internal to
 * lib/zone.
 */
#ifndef APEX_ZONE_BUILD_SORT_H
#define APEX_ZONE_BUILD_SORT_H

#include <stdint.h>

struct apex_zone_builder; /* zone/build.h */

/*
 * b->owners and b->rrs replaced by sorted arrays, owner_count and rr_count
 * updated; *owner_first (malloc'ed, the caller's to free, owner_count + 1
 * entries) gives the records of owner rank r as [owner_first[r],
 * owner_first[r + 1]).  APEX_OK, or APEX_ENOMEM with the build to be
 * abandoned (b's arrays are still b's to free).
 */
int apex_build_sort(struct apex_zone_builder *b, uint32_t **owner_first);

#endif
