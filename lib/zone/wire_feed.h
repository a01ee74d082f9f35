/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Records in wire form handed to a version builder (zone_from_wire.h)
 * that runs on a thread of its own: the thread that receives a zone
 * transfer (reads the stream, verifies TSIG, decodes and checks each
 * message) copies each record into a batch, and the feed's thread adds
 * the batches' records to the builder in the order they came, while the
 * transfer is still arriving.  At most FEED_BATCHES batches of
 * FEED_BATCH_BYTES wait at once: a builder that falls behind makes the
 * receiving thread wait, the memory stays bounded.
 *
 * The builder is the caller's again, with every record added, once
 * apex_wire_feed_end() returns it.  Its messages go to the error buffer
 * given at the start, which the feed's thread writes: the caller reads
 * it only after apex_wire_feed_end() or apex_wire_feed_abort().
 */
#ifndef APEX_ZONE_WIRE_FEED_H
#define APEX_ZONE_WIRE_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "zone/zone_from_wire.h"

#define FEED_BATCH_BYTES (256u * 1024u)
#define FEED_BATCHES 4

typedef struct apex_wire_feed apex_wire_feed_t;

/*
 * A feed of the records of a version of origin from source, its messages
 * to err (kept until the builder is finished: as for
 * apex_zone_from_wire_begin(), whose builder it begins); its thread is
 * started once a batch is full (the records of a smaller zone are added
 * by apex_wire_feed_end(), on the caller's thread).  APEX_OK with *out
 * (the caller's: end or abort it), or APEX_ENOMEM.
 */
int apex_wire_feed_begin(apex_wire_feed_t **out, const uint8_t *origin, const char *source,
			 char *err, size_t err_size);

/*
 * Add one record (copied): APEX_OK, or the error with which the builder
 * refused an earlier record (APEX_ELOAD, APEX_ENOMEM: the feed is then
 * over, its reason told by apex_wire_feed_end()), or APEX_ENOMEM.
 */
int apex_wire_feed_add(apex_wire_feed_t *f, const uint8_t *owner, uint16_t type, uint32_t ttl,
		       const uint8_t *rdata, uint16_t rdlength);

/*
 * Wait for every record to be added and end the thread: APEX_OK with
 * *builder the builder (the caller's: finish or abort it), or the
 * builder's error with its reason in err (the builder given up).  f is
 * freed.
 */
int apex_wire_feed_end(apex_wire_feed_t *f, apex_zone_from_wire_t **builder);

/* Give up: the thread told to stop and waited for, the builder given
 * up, f freed. */
void apex_wire_feed_abort(apex_wire_feed_t *f);

#endif
