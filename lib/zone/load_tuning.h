/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Knobs of apex_zone_load() and of the build for tests and benchmarks.
 * The defaults are what a server wants; tests change them to compare the
 * fast text parser with ldns, to force chunked parsing of small files and
 * to split the build of small zones into parts.  Set them before a load
 * starts, not while one runs.
 */
#ifndef APEX_ZONE_LOAD_TUNING_H
#define APEX_ZONE_LOAD_TUNING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Parse the common types without ldns (lib/zone/rdata_text.h); default true. */
extern _Atomic bool apex_load_fast_rdata;

/* Smallest chunk of a zone file parsed on a thread of its own (bytes;
 * default 8 MiB): a file is cut into at most size / this many chunks. */
extern _Atomic size_t apex_load_chunk_min;

/* Parser threads: 0 (default) for one per CPU the process may run on. */
extern _Atomic unsigned apex_load_threads;

/* Smallest part of a build step (names or records) run on a thread of
 * its own; default 32768.  Tests lower it to split small zones. */
extern _Atomic size_t apex_build_part_min;

#endif
