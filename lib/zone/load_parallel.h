/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A large zone file parsed on one thread per CPU: cut into chunks at line
 * starts that begin a record with an owner name, each chunk parsed into
 * a sink of its own, the sinks merged in file order, so that line
 * numbers, duplicate removal and the warnings of differing TTLs do not
 * depend on the threads.  Each chunk starts with the $ORIGIN and $TTL in force where it
 * starts, found by a quick scan for lines that begin with '$'.  When the
 * guess could be wrong (a file with $INCLUDE, a '$' line that was not a
 * directive, a chunk that ends inside parentheses) or any chunk fails,
 * the caller parses the file again on one thread, which also gives the
 * first error in file order.
 */
#ifndef APEX_ZONE_LOAD_PARALLEL_H
#define APEX_ZONE_LOAD_PARALLEL_H

#include <stdint.h>

#include "zone/file_map.h"
#include "zone/zone_file_reader.h"

#define THREADS_MAX 64

typedef enum apex_load_parallel {
	APEX_LOAD_PARALLEL_DONE,       /* the records are in the loader's first sink */
	APEX_LOAD_PARALLEL_SEQUENTIAL, /* parse the file on one thread instead */
	APEX_LOAD_PARALLEL_NOMEM,      /* out of memory */
} apex_load_parallel_t;

/* Parse the mapped zone file m (its index among the loader's files is 0)
 * on several threads into a sink added to ld, when it is large enough
 * and that is safe. */
apex_load_parallel_t apex_load_parallel(apex_loader_t *ld, const apex_mapping_t *m,
					const uint8_t *origin);

/* Parser threads to use: apex_load_threads, else the CPUs this process
 * may run on, at most THREADS_MAX. */
unsigned apex_load_cpu_count(void);

#endif
