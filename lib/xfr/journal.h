/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The zone journal: the differences between successive versions of one
 * zone, kept in a file so that they survive a restart, from which
 * outgoing IXFR (RFC 1995) is answered.
 *
 * The journal stores entries. An entry is the change from one serial to
 * the next, as an opaque payload the transfer code writes and reads back
 * (the records of the difference in wire form, in IXFR order); the
 * journal itself only knows the two serials, the length and a checksum.
 * Entries form one chain: each starts at the serial the previous one
 * ended at. The file layout is in doc/transfers.md ("The journal").
 *
 * Guarantees:
 * - An entry is either entirely in the journal or not at all. A file cut
 *   short by a crash (a torn tail), or whose tail fails its checksum, is
 *   cut back to the last whole entry when it is opened; the number of
 *   bytes dropped is reported, nothing before them is lost.
 * - The file never grows past the size bound given at open by more than
 *   one entry: when an append would pass it, the oldest entries are
 *   dropped (the file is rewritten beside the old one and renamed over
 *   it, so a crash leaves either the old or the new file).
 *
 * A journal is used by one thread at a time: the caller serialises
 * appends and reads (none of this runs on a worker). The functions
 * return APEX_OK or a negative apex code (util/error.h); messages for the
 * operator go to the err buffer, naming the file.
 */
#ifndef APEX_XFR_JOURNAL_H
#define APEX_XFR_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/name.h"
#include "util/siphash_stream.h"

/* Bytes of the file one entry takes besides its payload. */
#define APEX_JOURNAL_ENTRY_OVERHEAD 24

/* Where one entry lies in the file. */
typedef struct apex_journal_entry {
	uint32_t serial_from;
	uint32_t serial_to;
	uint64_t offset; /* of the entry's first byte in the file */
	uint32_t size;   /* payload bytes */
} apex_journal_entry_t;

typedef struct apex_journal {
	int fd;
	/* The directory it lies in, open, and its name there: the oldest
	 * entries are dropped by a rewrite renamed over it, which works
	 * after a chroot too (apexd opens journals before it). */
	int dir_fd;
	const char *base;            /* within path */
	char *path;                  /* owned; as given, for messages */
	uint8_t zone[APEX_NAME_MAX]; /* wire form, lower case */
	uint64_t max_size;           /* bound of the file, bytes */
	uint64_t file_size;          /* bytes of whole entries and header */
	uint64_t header_size;
	bool sync;                     /* fdatasync after each append */
	apex_journal_entry_t *entries; /* oldest first; owned */
	size_t count, capacity;
} apex_journal_t;

/* What apex_journal_open() found in an existing file. */
typedef struct apex_journal_recovery {
	uint64_t dropped_bytes; /* torn or corrupt tail cut off */
	size_t entries;         /* whole entries kept */
} apex_journal_recovery_t;

/*
 * Open the journal of zone (wire form) at path, creating it if it does not
 * exist. max_size bounds the file (at least 4096 bytes). sync makes every
 * append durable before it returns. recovery (may be NULL) says what was
 * found. A file that is not a journal, or the journal of another zone, is
 * an error (APEX_EMALFORMED / APEX_EINVAL) and is left untouched. On
 * success the caller owns *j and releases it with apex_journal_close().
 */
int apex_journal_open(apex_journal_t *j, const char *path, const uint8_t *zone, uint64_t max_size,
		      bool sync, apex_journal_recovery_t *recovery, char *err, size_t err_size);

/* Close the file and free what the journal owns (j itself is the caller's). */
void apex_journal_close(apex_journal_t *j);

/*
 * Append the change from serial_from to serial_to with its payload.
 * serial_from must be where the chain ends (any serial when the journal is
 * empty) and serial_to newer than serial_from (RFC 1982), else
 * APEX_EINVAL and nothing changes. A payload too large for the size bound
 * on its own empties the journal (the history it had is gone, IXFR falls
 * back to AXFR) and is not stored; the call still succeeds. On a failed
 * write the file is cut back and the journal is as before.
 */
int apex_journal_append(apex_journal_t *j, uint32_t serial_from, uint32_t serial_to,
			const void *payload, size_t size, char *err, size_t err_size);

/*
 * An entry appended in pieces, for a payload that never lies whole in
 * memory (a reload's difference, xfr/journal_diff.h): its size is known
 * beforehand.  apex_journal_begin() checks the chain as
 * apex_journal_append() does, makes room, and writes the entry's header;
 * a payload larger than the journal takes empties it and is
 * APEX_ESPACE, with nothing to write.  apex_journal_write() adds the
 * next bytes of the payload, apex_journal_commit() ends the entry once
 * all are written (its checksum, fdatasync if asked, then the entry
 * counts).  Until then the journal is as before the entry: a crash
 * leaves a torn tail that the next open cuts, and a failed write, a
 * commit before the last byte, or apex_journal_abort() cut the file
 * back; a writer committed or given up takes nothing more (APEX_EINVAL).
 * Nothing else is done with the journal in between.
 */
typedef struct apex_journal_writer {
	apex_journal_t *j; /* NULL once committed or given up */
	uint8_t head[16];
	size_t size, written;
	apex_siphash_stream_t payload_hash;
} apex_journal_writer_t;

int apex_journal_begin(apex_journal_t *j, uint32_t serial_from, uint32_t serial_to, size_t size,
		       apex_journal_writer_t *w, char *err, size_t err_size);
int apex_journal_write(apex_journal_writer_t *w, const void *data, size_t size, char *err,
		       size_t err_size);
int apex_journal_commit(apex_journal_writer_t *w, char *err, size_t err_size);
void apex_journal_abort(apex_journal_writer_t *w);

/* Forget every entry (a zone whose history is broken: a new AXFR, a serial
 * that went backwards).  The file is cut back to its header in place,
 * which needs no space on the disk. */
int apex_journal_clear(apex_journal_t *j, char *err, size_t err_size);

/*
 * The entries that lead from serial to the newest version: *first is the
 * index of the entry that starts at serial, and there are j->count - *first
 * of them. APEX_ENOENT when serial is not in the chain (the caller answers
 * with the whole zone). When serial is the newest version, *first is
 * j->count (nothing to send).
 */
int apex_journal_find(const apex_journal_t *j, uint32_t serial, size_t *first);

/* The largest payload an append stores: a larger one empties the
 * journal (apex_journal_append()). */
uint64_t apex_journal_payload_max(const apex_journal_t *j);

/* How many of the oldest entries an append of payload bytes would drop
 * to keep the journal within its bound (0 while it fits). */
size_t apex_journal_dropped_by(const apex_journal_t *j, uint64_t payload);

/* The serial the chain ends at; false when the journal is empty. */
bool apex_journal_last_serial(const apex_journal_t *j, uint32_t *serial);

/*
 * Read the payload of entry index into buf (at least its size bytes) and
 * check it against its checksum: APEX_EMALFORMED if it changed on disk.
 */
int apex_journal_read(const apex_journal_t *j, size_t index, void *buf, size_t buf_size);

#endif
