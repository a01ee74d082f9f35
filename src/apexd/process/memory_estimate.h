/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a build adds to apexd's resident size at its peak, estimated from
 * what is known before it starts (memory_limit.h checks it against the
 * limit; doc/reload.md explains the figures and where they come from).
 *
 * A whole build (a reload, an AXFR, an IXFR built whole) holds at its
 * peak the new version beside the old one, plus the loader's per-record
 * arrays (two of 40 bytes a record during the sort), plus a fixed part
 * (the parser threads' arenas, tables of fixed size): measured on the
 * 1M-record zones of doc/performance.md, the version's own memory plus
 * 68 to 99 bytes a record, and 2 to 3 MiB more on zones of 10,000
 * records.  When the new version is like one served (a reload, a
 * transfer of a zone already served), it is that one's memory and record
 * count scaled to the new file's size (or the records received so far);
 * when nothing is served, 220 bytes a record (the most measured for the
 * version and the loader together: 218 on the 1M-record NSEC3 zone, 229
 * on delegations with glue and short names) plus half a byte per byte of
 * file or transfer (long records: RSA signatures).  An IXFR derived in
 * place copies only the changed nodes' pages and the name index.
 */
#ifndef APEXD_MEMORY_ESTIMATE_H
#define APEXD_MEMORY_ESTIMATE_H

#include <stdint.h>

/* The fixed part of any build. */
#define APEXD_PEAK_FIXED ((uint64_t)4 << 20)
/* The loader's memory a record, beside the new version. */
#define APEXD_PEAK_LOADER_PER_RECORD 100u
/* A new version and its loader, a record, when no version is like it. */
#define APEXD_PEAK_PER_RECORD 220u
/* A derivation: the change sets held and condensed, and the builder of
 * the changed owners' records, a byte of the sets; the name index (its
 * order, key prefixes and hash table) copied, a name of the zone. */
#define APEXD_PEAK_DERIVED_PER_CHANGE_BYTE 8u
#define APEXD_PEAK_DERIVED_PER_NAME 20u

/* A new version like one served (memory bytes, records) scaled by
 * scale (its size over the served one's). */
uint64_t apexd_estimate_like(uint64_t memory, uint64_t records, double scale);

/* A new version of records records, bytes bytes of file or transfer,
 * when no served version is like it. */
uint64_t apexd_estimate_records(uint64_t records, uint64_t bytes);

/* An IXFR derived in place from a version of names names (node_count):
 * change sets of change_bytes bytes changing change_records records. */
uint64_t apexd_estimate_derived(uint64_t change_bytes, uint64_t change_records, uint64_t names);

/*
 * About how many lines the file at path (size bytes) has: counted in
 * whole up to 1 MiB, else in 16 samples of 64 KiB spread over it (a
 * zone file has one record a line, or fewer: comments, records over
 * several lines).  APEX_OK with *lines, or -errno.
 */
int apexd_estimate_file_lines(const char *path, uint64_t size, uint64_t *lines);

#endif
