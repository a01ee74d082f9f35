/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4 (util/siphash.h) of data given in pieces: the same value as
 * apex_siphash24() of the pieces end to end, whatever their sizes.  For
 * a checksum of bytes that are written as they are made and never lie
 * whole in memory (a journal entry, xfr/journal.h).
 */
#ifndef APEX_UTIL_SIPHASH_STREAM_H
#define APEX_UTIL_SIPHASH_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "util/siphash.h"

typedef struct apex_siphash_stream {
	uint64_t v0, v1, v2, v3;
	uint8_t pending[8]; /* the bytes of an unfinished 8-byte word */
	size_t pending_size;
	uint64_t total; /* bytes given */
} apex_siphash_stream_t;

void apex_siphash_stream_init(apex_siphash_stream_t *s, const uint8_t key[APEX_SIPHASH_KEY_SIZE]);

void apex_siphash_stream_add(apex_siphash_stream_t *s, const void *data, size_t size);

/* The hash of everything added; s is spent. */
uint64_t apex_siphash_stream_end(apex_siphash_stream_t *s);

#endif
