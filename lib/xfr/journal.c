/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The zone journal file (see journal.h and doc/transfers.md).
 *
 * Layout, integers big-endian:
 *   header: "APEXJRNL" | version u32 | zone name length u32 | zone name |
 *           checksum u64 of what precedes it
 *   entry:  magic u32 "JENT" | payload size u32 | serial from u32 |
 *           serial to u32 | payload | checksum u64 of the 16-byte entry
 *           header and the payload (entry_checksum())
 * The checksums are SipHash-2-4 under a fixed key: they find torn and
 * damaged data, they do not authenticate (the file is the server's own).
 */

#include "xfr/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dns/serial.h"
#include "dns/wire.h"
#include "util/crash_hook.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/siphash.h"
#include "util/siphash_stream.h"

#define JOURNAL_MAGIC "APEXJRNL"
#define JOURNAL_VERSION 1
#define ENTRY_MAGIC UINT32_C(0x4a454e54) /* "JENT" */
#define ENTRY_HEADER 16
#define CHECKSUM_SIZE 8
#define MIN_MAX_SIZE 4096

static const uint8_t checksum_key[APEX_SIPHASH_KEY_SIZE] = "apex journal v1";

static void write_u64(uint8_t *p, uint64_t v)
{
	apex_write_u32(p, (uint32_t)(v >> 32));
	apex_write_u32(p + 4, (uint32_t)v);
}

static uint64_t read_u64(const uint8_t *p)
{
	return ((uint64_t)apex_read_u32(p) << 32) | apex_read_u32(p + 4);
}

/* The file header's checksum: of its bytes before the checksum. */
static uint64_t header_checksum(const uint8_t *header, size_t size)
{
	return apex_siphash24(checksum_key, header, size);
}

/* An entry's checksum: SipHash(entry header | SipHash(payload)), so that
 * the header and payload need not lie together in memory; payload_hash
 * is the payload's (hashed whole, or in pieces as it is written). */
static uint64_t entry_checksum_of(const uint8_t head[ENTRY_HEADER], uint64_t payload_hash)
{
	uint8_t buf[ENTRY_HEADER + 8];

	memcpy(buf, head, ENTRY_HEADER);
	write_u64(buf + ENTRY_HEADER, payload_hash);
	return apex_siphash24(checksum_key, buf, sizeof(buf));
}

static uint64_t entry_checksum(const uint8_t head[ENTRY_HEADER], const void *payload, size_t size)
{
	return entry_checksum_of(head, apex_siphash24(checksum_key, payload, size));
}

/* pwrite all of it, or return -errno. */
static int write_all(int fd, const void *buf, size_t size, uint64_t offset)
{
	const uint8_t *p = buf;

	while (size > 0) {
		ssize_t n = pwrite(fd, p, size, (off_t)offset);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return apex_errno();
		}
		p += n;
		size -= (size_t)n;
		offset += (uint64_t)n;
	}
	return APEX_OK;
}

static int read_all(int fd, void *buf, size_t size, uint64_t offset)
{
	uint8_t *p = buf;

	while (size > 0) {
		ssize_t n = pread(fd, p, size, (off_t)offset);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return apex_errno();
		}
		if (n == 0)
			return APEX_EMALFORMED; /* the file is shorter than its index says */
		p += n;
		size -= (size_t)n;
		offset += (uint64_t)n;
	}
	return APEX_OK;
}

/* ------------------------------------------------------------ header */

/* The header of this journal's zone into buf (room for 16 + 255 + 8). */
static size_t header_bytes(const apex_journal_t *j, uint8_t *buf)
{
	size_t name_len = apex_name_size(j->zone);

	memcpy(buf, JOURNAL_MAGIC, 8);
	apex_write_u32(buf + 8, JOURNAL_VERSION);
	apex_write_u32(buf + 12, (uint32_t)name_len);
	memcpy(buf + 16, j->zone, name_len);
	write_u64(buf + 16 + name_len, header_checksum(buf, 16 + name_len));
	return 16 + name_len + CHECKSUM_SIZE;
}

/* Check the header at the start of a mapped file of size bytes. */
static int check_header(const apex_journal_t *j, const uint8_t *map, size_t size, char *err,
			size_t err_size)
{
	if (size < 16 || memcmp(map, JOURNAL_MAGIC, 8) != 0)
		return apex_fail(err, err_size, APEX_EMALFORMED, "%s: not an apex journal",
				 j->path);
	if (apex_read_u32(map + 8) != JOURNAL_VERSION)
		return apex_fail(err, err_size, APEX_EMALFORMED,
				 "%s: journal format version %u, expected %u", j->path,
				 apex_read_u32(map + 8), JOURNAL_VERSION);
	uint32_t name_len = apex_read_u32(map + 12);
	if (name_len == 0 || name_len > APEX_NAME_MAX || size < 16 + name_len + CHECKSUM_SIZE ||
	    read_u64(map + 16 + name_len) != header_checksum(map, 16 + name_len))
		return apex_fail(err, err_size, APEX_EMALFORMED, "%s: damaged journal header",
				 j->path);
	if (name_len != apex_name_size(j->zone) || memcmp(map + 16, j->zone, name_len) != 0)
		return apex_fail(err, err_size, APEX_EINVAL, "%s: the journal of another zone",
				 j->path);
	return APEX_OK;
}

/* ------------------------------------------------------------ index */

static int index_push(apex_journal_t *j, const apex_journal_entry_t *e)
{
	apex_journal_entry_t *entries =
		apex_grow(j->entries, &j->capacity, j->count, sizeof(*entries), 16);

	if (entries == NULL)
		return APEX_ENOMEM;
	j->entries = entries;
	j->entries[j->count++] = *e;
	return APEX_OK;
}

/* Does the entry at map[offset..size) hold together, and continue the
 * chain? Fills *e if so. */
static bool entry_valid(const apex_journal_t *j, const uint8_t *map, uint64_t size, uint64_t offset,
			apex_journal_entry_t *e)
{
	if (size - offset < ENTRY_HEADER + CHECKSUM_SIZE)
		return false;
	const uint8_t *p = map + offset;
	uint32_t payload = apex_read_u32(p + 4);
	if (apex_read_u32(p) != ENTRY_MAGIC ||
	    size - offset - ENTRY_HEADER - CHECKSUM_SIZE < payload)
		return false;
	if (read_u64(p + ENTRY_HEADER + payload) != entry_checksum(p, p + ENTRY_HEADER, payload))
		return false;
	e->serial_from = apex_read_u32(p + 8);
	e->serial_to = apex_read_u32(p + 12);
	e->offset = offset;
	e->size = payload;
	if (!apex_serial_newer(e->serial_to, e->serial_from))
		return false;
	return j->count == 0 || j->entries[j->count - 1].serial_to == e->serial_from;
}

/* Index the entries of a mapped file; sets j->file_size to the end of the
 * last whole entry. */
static int index_entries(apex_journal_t *j, const uint8_t *map, uint64_t size)
{
	uint64_t offset = j->header_size;
	apex_journal_entry_t e;

	while (offset < size && entry_valid(j, map, size, offset, &e)) {
		int rc = index_push(j, &e);
		if (rc < 0)
			return rc;
		offset += ENTRY_HEADER + e.size + CHECKSUM_SIZE;
	}
	j->file_size = offset;
	return APEX_OK;
}

/* ------------------------------------------------------------ open */

/* A new journal: the header alone. */
static int create_file(apex_journal_t *j, char *err, size_t err_size)
{
	uint8_t header[16 + APEX_NAME_MAX + CHECKSUM_SIZE];
	size_t size = header_bytes(j, header);
	int rc;

	rc = ftruncate(j->fd, 0) < 0 ? apex_errno() : write_all(j->fd, header, size, 0);
	if (rc == APEX_OK && fdatasync(j->fd) < 0)
		rc = apex_errno();
	if (rc < 0)
		return apex_fail(err, err_size, rc, "%s: cannot write: %s", j->path,
				 apex_strerror(rc));
	j->header_size = j->file_size = size;
	return APEX_OK;
}

/* Index an existing file and cut off a torn or damaged tail. */
static int recover_file(apex_journal_t *j, uint64_t size, apex_journal_recovery_t *recovery,
			char *err, size_t err_size)
{
	uint8_t *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, j->fd, 0);
	if (map == MAP_FAILED) {
		int rc = apex_errno();
		return apex_fail(err, err_size, rc, "%s: cannot map: %s", j->path,
				 apex_strerror(rc));
	}
	int rc = check_header(j, map, size, err, err_size);
	if (rc == APEX_OK) {
		j->header_size = 16 + apex_read_u32(map + 12) + CHECKSUM_SIZE;
		rc = index_entries(j, map, size);
	}
	munmap(map, size);
	if (rc < 0)
		return rc;
	if (recovery != NULL) {
		recovery->dropped_bytes = size - j->file_size;
		recovery->entries = j->count;
	}
	if (j->file_size < size &&
	    (ftruncate(j->fd, (off_t)j->file_size) < 0 || fdatasync(j->fd) < 0)) {
		rc = apex_errno();
		return apex_fail(err, err_size, rc, "%s: cannot cut off the damaged tail: %s",
				 j->path, apex_strerror(rc));
	}
	return APEX_OK;
}

/* Whether a file of size bytes is this journal's header cut short: a
 * crash while the journal was created (the header is written at once). */
static bool header_torn(const apex_journal_t *j, uint64_t size)
{
	uint8_t want[16 + APEX_NAME_MAX + CHECKSUM_SIZE], got[sizeof(want)];
	size_t whole = header_bytes(j, want);

	return size < whole && read_all(j->fd, got, (size_t)size, 0) == APEX_OK &&
	       memcmp(got, want, (size_t)size) == 0;
}

/* The directory of path, open (or -1 with errno), and path's last
 * component in *base. */
static int open_directory(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	size_t len;

	if (slash == NULL) {
		*base = path;
		return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	*base = slash + 1;
	len = slash == path ? 1 : (size_t)(slash - path);
	if (len >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, len);
	dir[len] = '\0';
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int apex_journal_open(apex_journal_t *j, const char *path, const uint8_t *zone, uint64_t max_size,
		      bool sync, apex_journal_recovery_t *recovery, char *err, size_t err_size)
{
	struct stat st;
	int rc;

	memset(j, 0, sizeof(*j));
	j->fd = j->dir_fd = -1;
	if (recovery != NULL)
		memset(recovery, 0, sizeof(*recovery));
	j->max_size = max_size < MIN_MAX_SIZE ? MIN_MAX_SIZE : max_size;
	j->sync = sync;
	memcpy(j->zone, zone, apex_name_size(zone));
	apex_name_lower(j->zone);
	j->path = strdup(path);
	if (j->path == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "%s: out of memory", path);
	j->dir_fd = open_directory(j->path, &j->base);
	if (j->dir_fd >= 0)
		j->fd = openat(j->dir_fd, j->base, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (j->dir_fd < 0 || j->fd < 0 || fstat(j->fd, &st) < 0) {
		rc = apex_errno();
		apex_fail(err, err_size, rc, "%s: cannot open: %s", path, apex_strerror(rc));
		apex_journal_close(j);
		return rc;
	}
	/* Shorter than the magic, or than the header it begins: a file
	 * created and then cut by a crash. */
	if (st.st_size < 8 || header_torn(j, (uint64_t)st.st_size))
		rc = create_file(j, err, err_size);
	else
		rc = recover_file(j, (uint64_t)st.st_size, recovery, err, err_size);
	if (rc < 0)
		apex_journal_close(j);
	return rc;
}

void apex_journal_close(apex_journal_t *j)
{
	if (j->fd >= 0)
		close(j->fd);
	if (j->dir_fd >= 0)
		close(j->dir_fd);
	free(j->path);
	free(j->entries);
	memset(j, 0, sizeof(*j));
	j->fd = j->dir_fd = -1;
}

/* ------------------------------------------------------------ bound */

/* Copy the entries from index keep on into a new file, renamed over the
 * journal: the oldest entries are gone, a crash leaves one whole file. */
static int rewrite_from(apex_journal_t *j, size_t keep, char *err, size_t err_size)
{
	size_t tmp_size = strlen(j->base) + sizeof(".new");
	char *tmp = malloc(tmp_size);
	uint8_t header[16 + APEX_NAME_MAX + CHECKSUM_SIZE];
	uint64_t from = keep < j->count ? j->entries[keep].offset : j->file_size;
	uint64_t moved = j->file_size - from;
	int rc = APEX_OK, fd = -1;

	if (tmp == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "%s: out of memory", j->path);
	snprintf(tmp, tmp_size, "%s.new", j->base);
	fd = openat(j->dir_fd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		rc = apex_errno();
		goto out;
	}
	size_t hsize = header_bytes(j, header);
	rc = write_all(fd, header, hsize, 0);
	/* in chunks that end half way too, for the crash point there */
	for (uint64_t done = 0, half = moved / 2; rc == APEX_OK && done < moved;) {
		uint8_t buf[65536];
		uint64_t end = done < half ? half : moved;
		size_t n = end - done < sizeof(buf) ? (size_t)(end - done) : sizeof(buf);
		rc = read_all(j->fd, buf, n, from + done);
		if (rc == APEX_OK)
			rc = write_all(fd, buf, n, hsize + done);
		done += n;
		if (done == half)
			apex_crash_at("journal-compact-writing");
	}
	if (rc == APEX_OK && fdatasync(fd) < 0)
		rc = apex_errno();
	if (rc == APEX_OK)
		apex_crash_at("journal-compact-renaming");
	if (rc == APEX_OK && renameat(j->dir_fd, tmp, j->dir_fd, j->base) < 0)
		rc = apex_errno();
	if (rc < 0)
		goto out;
	if (j->sync)
		(void)fsync(j->dir_fd); /* the rename made durable; best effort */
	apex_crash_at("journal-compacted");
	close(j->fd);
	j->fd = fd;
	fd = -1;
	for (size_t i = keep; i < j->count; i++) {
		j->entries[i - keep] = j->entries[i];
		j->entries[i - keep].offset = j->entries[i].offset - from + hsize;
	}
	j->count -= keep;
	j->header_size = hsize;
	j->file_size = hsize + moved;
out:
	if (fd >= 0) {
		close(fd);
		unlinkat(j->dir_fd, tmp, 0);
	}
	free(tmp);
	if (rc < 0)
		apex_fail(err, err_size, rc, "%s: cannot rewrite: %s", j->path, apex_strerror(rc));
	return rc;
}

/* The oldest entries an entry of total bytes drops to stay within the
 * bound: none while it fits, else as many as bring the file to at most
 * three quarters of the bound (so that the rewrite is not repeated at
 * every append), or all of them. */
static size_t dropped_for(const apex_journal_t *j, uint64_t total)
{
	if (j->file_size + total <= j->max_size)
		return 0;
	uint64_t target = j->max_size / 4 * 3;
	size_t drop = 0;
	uint64_t size = j->file_size;
	while (drop < j->count && size + total > target) {
		size -= ENTRY_HEADER + j->entries[drop].size + CHECKSUM_SIZE;
		drop++;
	}
	return drop;
}

uint64_t apex_journal_payload_max(const apex_journal_t *j)
{
	uint64_t overhead = j->header_size + ENTRY_HEADER + CHECKSUM_SIZE;

	if (j->max_size <= overhead)
		return 0;
	return j->max_size - overhead < UINT32_MAX ? j->max_size - overhead : UINT32_MAX;
}

size_t apex_journal_dropped_by(const apex_journal_t *j, uint64_t payload)
{
	return dropped_for(j, ENTRY_HEADER + payload + CHECKSUM_SIZE);
}

/* Make room for an entry of total bytes within the bound (dropped_for()). */
static int make_room(apex_journal_t *j, uint64_t total, char *err, size_t err_size)
{
	size_t drop = dropped_for(j, total);

	if (drop == 0)
		return APEX_OK;
	return drop == j->count ? apex_journal_clear(j, err, err_size)
				: rewrite_from(j, drop, err, err_size);
}

/* ------------------------------------------------------------ append */

int apex_journal_clear(apex_journal_t *j, char *err, size_t err_size)
{
	/* In place: the file cut back to its header needs no space (a full
	 * disk) and is a whole journal at every moment, an empty one or a
	 * shorter chain of the same entries. */
	if (ftruncate(j->fd, (off_t)j->header_size) < 0 || (j->sync && fdatasync(j->fd) < 0)) {
		int rc = apex_errno();
		return apex_fail(err, err_size, rc, "%s: cannot clear: %s", j->path,
				 apex_strerror(rc));
	}
	j->count = 0;
	j->file_size = j->header_size;
	return APEX_OK;
}

/* A writer's entry given up (rc, the cause): the file cut back to the
 * last whole entry, the journal as before it began.  Returns rc, with
 * the message in err when err_size allows. */
static int journal_writer_failed(apex_journal_writer_t *w, int rc, char *err, size_t err_size)
{
	apex_journal_t *j = w->j;

	w->j = NULL;
	if (j == NULL)
		return rc;
	/* a failure here too is repaired by the next open, which cuts the
	 * torn tail */
	if (ftruncate(j->fd, (off_t)j->file_size) < 0) {
		/* nothing more to do */
	}
	if (err_size == 0)
		return rc;
	return apex_fail(err, err_size, rc, "%s: cannot append: %s", j->path, apex_strerror(rc));
}

int apex_journal_begin(apex_journal_t *j, uint32_t serial_from, uint32_t serial_to, size_t size,
		       apex_journal_writer_t *w, char *err, size_t err_size)
{
	memset(w, 0, sizeof(*w));
	if (!apex_serial_newer(serial_to, serial_from))
		return apex_fail(err, err_size, APEX_EINVAL, "%s: serial %u is not newer than %u",
				 j->path, serial_to, serial_from);
	if (j->count > 0 && j->entries[j->count - 1].serial_to != serial_from)
		return apex_fail(err, err_size, APEX_EINVAL,
				 "%s: the journal ends at serial %u, not %u", j->path,
				 j->entries[j->count - 1].serial_to, serial_from);
	if (size > apex_journal_payload_max(j)) {
		int rc = apex_journal_clear(j, err, err_size);
		return rc < 0 ? rc : APEX_ESPACE;
	}
	uint64_t total = (uint64_t)size + ENTRY_HEADER + CHECKSUM_SIZE;
	int rc = make_room(j, total, err, err_size);
	if (rc < 0)
		return rc;
	w->j = j;
	w->size = size;
	apex_write_u32(w->head, ENTRY_MAGIC);
	apex_write_u32(w->head + 4, (uint32_t)size);
	apex_write_u32(w->head + 8, serial_from);
	apex_write_u32(w->head + 12, serial_to);
	apex_siphash_stream_init(&w->payload_hash, checksum_key);
	rc = write_all(j->fd, w->head, sizeof(w->head), j->file_size);
	if (rc < 0)
		return journal_writer_failed(w, rc, err, err_size);
	return APEX_OK;
}

int apex_journal_write(apex_journal_writer_t *w, const void *data, size_t size, char *err,
		       size_t err_size)
{
	apex_journal_t *j = w->j;

	if (j == NULL) /* committed or given up already */
		return APEX_EINVAL;
	if (size > w->size - w->written)
		return journal_writer_failed(w, APEX_EINVAL, err, err_size);
	int rc = write_all(j->fd, data, size, j->file_size + ENTRY_HEADER + w->written);
	if (rc < 0)
		return journal_writer_failed(w, rc, err, err_size);
	apex_siphash_stream_add(&w->payload_hash, data, size);
	w->written += size;
	return APEX_OK;
}

int apex_journal_commit(apex_journal_writer_t *w, char *err, size_t err_size)
{
	apex_journal_t *j = w->j;
	uint8_t tail[CHECKSUM_SIZE];

	if (j == NULL) /* committed or given up already */
		return APEX_EINVAL;
	if (w->written != w->size)
		return journal_writer_failed(w, APEX_EINVAL, err, err_size);
	apex_crash_at("journal-append-writing");
	write_u64(tail, entry_checksum_of(w->head, apex_siphash_stream_end(&w->payload_hash)));
	uint64_t total = (uint64_t)w->size + ENTRY_HEADER + CHECKSUM_SIZE;
	int rc = write_all(j->fd, tail, sizeof(tail), j->file_size + ENTRY_HEADER + w->size);
	if (rc == APEX_OK && j->sync && fdatasync(j->fd) < 0)
		rc = apex_errno();
	if (rc == APEX_OK) {
		apex_journal_entry_t e = { apex_read_u32(w->head + 8), apex_read_u32(w->head + 12),
					   j->file_size, (uint32_t)w->size };
		rc = index_push(j, &e);
	}
	if (rc < 0)
		return journal_writer_failed(w, rc, err, err_size);
	j->file_size += total;
	w->j = NULL;
	return APEX_OK;
}

void apex_journal_abort(apex_journal_writer_t *w)
{
	if (w->j != NULL)
		journal_writer_failed(w, APEX_EIO, NULL, 0);
}

int apex_journal_append(apex_journal_t *j, uint32_t serial_from, uint32_t serial_to,
			const void *payload, size_t size, char *err, size_t err_size)
{
	apex_journal_writer_t w;
	int rc = apex_journal_begin(j, serial_from, serial_to, size, &w, err, err_size);

	if (rc == APEX_ESPACE)
		return APEX_OK; /* emptied: the history is gone, the set not stored */
	if (rc == APEX_OK)
		rc = apex_journal_write(&w, payload, size, err, err_size);
	if (rc == APEX_OK)
		rc = apex_journal_commit(&w, err, err_size);
	return rc;
}

/* ------------------------------------------------------------ read */

int apex_journal_find(const apex_journal_t *j, uint32_t serial, size_t *first)
{
	if (j->count > 0 && j->entries[j->count - 1].serial_to == serial) {
		*first = j->count;
		return APEX_OK;
	}
	for (size_t i = j->count; i-- > 0;) {
		if (j->entries[i].serial_from == serial) {
			*first = i;
			return APEX_OK;
		}
	}
	return APEX_ENOENT;
}

bool apex_journal_last_serial(const apex_journal_t *j, uint32_t *serial)
{
	if (j->count == 0)
		return false;
	*serial = j->entries[j->count - 1].serial_to;
	return true;
}

int apex_journal_read(const apex_journal_t *j, size_t index, void *buf, size_t buf_size)
{
	uint8_t head[ENTRY_HEADER], tail[CHECKSUM_SIZE];

	if (index >= j->count)
		return APEX_EINVAL;
	const apex_journal_entry_t *e = &j->entries[index];
	if (buf_size < e->size)
		return APEX_ESPACE;
	int rc = read_all(j->fd, head, sizeof(head), e->offset);
	if (rc == APEX_OK)
		rc = read_all(j->fd, buf, e->size, e->offset + sizeof(head));
	if (rc == APEX_OK)
		rc = read_all(j->fd, tail, sizeof(tail), e->offset + sizeof(head) + e->size);
	if (rc < 0)
		return rc;
	if (read_u64(tail) != entry_checksum(head, buf, e->size) ||
	    apex_read_u32(head + 8) != e->serial_from || apex_read_u32(head + 12) != e->serial_to)
		return APEX_EMALFORMED;
	return APEX_OK;
}
