/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfr/journal: entries survive a reopen, a torn or damaged tail is cut off
 * without losing what precedes it (torn at any byte of the last entry), a
 * header cut short while the journal was created is written again, the
 * chain of serials holds, the file stays within its bound, a write that
 * fails (a full disk) leaves the journal as it was and a clear needs no
 * space, and a journal is only ever read as its own zone's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dns/name.h"
#include "util/error.h"
#include "xfr/journal.h"

typedef struct fixture {
	char dir[64];
	char path[96];
	uint8_t zone[APEX_NAME_MAX];
	char err[512];
} fixture_t;

static int setup(void **state)
{
	fixture_t *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	strcpy(f->dir, "/tmp/apex-journal-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/example.jnl", f->dir);
	assert_true(apex_name_from_str("Example.", f->zone) > 0);
	*state = f;
	return 0;
}

/* The file may not grow past limit bytes (RLIMIT_FSIZE: a write past it
 * fails with EFBIG, as one on a full disk fails with ENOSPC); 0: no limit. */
static void limit_file_size(rlim_t limit)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = limit > 0 ? limit : rl.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

static int teardown(void **state)
{
	fixture_t *f = *state;
	char tmp[128];

	unlink(f->path);
	snprintf(tmp, sizeof(tmp), "%s.new", f->path);
	unlink(tmp);
	rmdir(f->dir);
	free(f);
	limit_file_size(0); /* also after a test that failed under a limit */
	return 0;
}

/* A payload whose bytes say which change it is. */
static size_t payload(uint32_t serial, size_t size, uint8_t *buf)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = (uint8_t)(serial * 31 + i);
	return size;
}

static void open_ok(fixture_t *f, apex_journal_t *j, uint64_t max, apex_journal_recovery_t *rec)
{
	int rc = apex_journal_open(j, f->path, f->zone, max, false, rec, f->err, sizeof(f->err));
	if (rc != APEX_OK)
		fail_msg("open: %s", f->err);
}

static void append_ok(fixture_t *f, apex_journal_t *j, uint32_t from, uint32_t to, size_t size)
{
	uint8_t buf[8192];
	assert_true(size <= sizeof(buf));
	payload(to, size, buf);
	int rc = apex_journal_append(j, from, to, buf, size, f->err, sizeof(f->err));
	if (rc != APEX_OK)
		fail_msg("append %u..%u: %s", from, to, f->err);
}

static void check_entry(apex_journal_t *j, size_t index, uint32_t from, uint32_t to, size_t size)
{
	uint8_t got[8192], want[8192];

	assert_true(index < j->count);
	assert_int_equal(j->entries[index].serial_from, from);
	assert_int_equal(j->entries[index].serial_to, to);
	assert_int_equal(j->entries[index].size, size);
	assert_int_equal(apex_journal_read(j, index, got, sizeof(got)), APEX_OK);
	payload(to, size, want);
	assert_memory_equal(got, want, size);
}

static off_t file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static void entries_survive_reopen(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_journal_recovery_t rec;
	size_t first;
	uint32_t last;

	open_ok(f, &j, 1 << 20, &rec);
	assert_int_equal(j.count, 0);
	assert_false(apex_journal_last_serial(&j, &last));
	append_ok(f, &j, 1, 2, 10);
	append_ok(f, &j, 2, 3, 0);
	append_ok(f, &j, 3, 4, 3000);
	apex_journal_close(&j);

	open_ok(f, &j, 1 << 20, &rec);
	assert_int_equal(rec.entries, 3);
	assert_int_equal(rec.dropped_bytes, 0);
	check_entry(&j, 0, 1, 2, 10);
	check_entry(&j, 1, 2, 3, 0);
	check_entry(&j, 2, 3, 4, 3000);
	assert_true(apex_journal_last_serial(&j, &last));
	assert_int_equal(last, 4);

	assert_int_equal(apex_journal_find(&j, 1, &first), APEX_OK);
	assert_int_equal(first, 0);
	assert_int_equal(apex_journal_find(&j, 3, &first), APEX_OK);
	assert_int_equal(first, 2);
	assert_int_equal(apex_journal_find(&j, 4, &first), APEX_OK);
	assert_int_equal(first, 3); /* up to date: nothing to send */
	assert_int_equal(apex_journal_find(&j, 0, &first), APEX_ENOENT);
	assert_int_equal(apex_journal_find(&j, 5, &first), APEX_ENOENT);

	uint8_t small[100];
	assert_int_equal(apex_journal_read(&j, 2, small, sizeof(small)), APEX_ESPACE);
	assert_int_equal(apex_journal_read(&j, 3, small, sizeof(small)), APEX_EINVAL);
	apex_journal_close(&j);
}

static void torn_tail_is_cut(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_journal_recovery_t rec;

	open_ok(f, &j, 1 << 20, NULL);
	append_ok(f, &j, 10, 11, 100);
	append_ok(f, &j, 11, 12, 200);
	uint64_t whole = j.file_size;
	uint64_t second = j.entries[1].offset;
	apex_journal_close(&j);

	/* A crash in the middle of writing the second entry. */
	assert_int_equal(truncate(f->path, (off_t)whole - 5), 0);
	open_ok(f, &j, 1 << 20, &rec);
	assert_int_equal(rec.entries, 1);
	assert_int_equal(rec.dropped_bytes, whole - 5 - second);
	assert_int_equal(file_size(f->path), second);
	check_entry(&j, 0, 10, 11, 100);
	/* The chain goes on from what was kept. */
	append_ok(f, &j, 11, 12, 200);
	apex_journal_close(&j);
	open_ok(f, &j, 1 << 20, &rec);
	assert_int_equal(rec.entries, 2);
	assert_int_equal(rec.dropped_bytes, 0);
	check_entry(&j, 1, 11, 12, 200);
	apex_journal_close(&j);
}

/* A crash at any byte of the last append (its header, payload or
 * checksum): the entries before it stay, the chain goes on from them. */
static void torn_at_any_byte(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_journal_recovery_t rec;

	open_ok(f, &j, 1 << 20, NULL);
	append_ok(f, &j, 10, 11, 100);
	append_ok(f, &j, 11, 12, 40);
	uint64_t whole = j.file_size, second = j.entries[1].offset;
	apex_journal_close(&j);
	for (uint64_t cut = second + 1; cut < whole; cut++) {
		assert_int_equal(truncate(f->path, (off_t)cut), 0);
		open_ok(f, &j, 1 << 20, &rec);
		assert_int_equal(rec.entries, 1);
		assert_int_equal(rec.dropped_bytes, cut - second);
		check_entry(&j, 0, 10, 11, 100);
		append_ok(f, &j, 11, 12, 40);
		assert_int_equal(j.file_size, whole);
		apex_journal_close(&j);
	}
}

/* A crash while the journal was created leaves part of its header: the
 * journal is made again, empty; part of another zone's header is not
 * ours and is left alone. */
static void torn_header_is_written_again(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	uint8_t other[APEX_NAME_MAX];

	open_ok(f, &j, 1 << 20, NULL);
	uint64_t header = j.header_size;
	apex_journal_close(&j);
	for (uint64_t cut = 1; cut < header; cut++) {
		assert_int_equal(truncate(f->path, (off_t)cut), 0);
		open_ok(f, &j, 1 << 20, NULL);
		assert_int_equal(j.count, 0);
		assert_int_equal(file_size(f->path), header);
		append_ok(f, &j, 1, 2, 10);
		apex_journal_close(&j);
		open_ok(f, &j, 1 << 20, NULL);
		check_entry(&j, 0, 1, 2, 10);
		apex_journal_close(&j);
	}
	assert_true(apex_name_from_str("example.net.", other) > 0);
	assert_int_equal(truncate(f->path, (off_t)header - 3), 0);
	assert_int_equal(
		apex_journal_open(&j, f->path, other, 1 << 20, false, NULL, f->err, sizeof(f->err)),
		APEX_EMALFORMED);
	assert_int_equal(file_size(f->path), header - 3);
}

static void flip_byte(const char *path, uint64_t offset)
{
	int fd = open(path, O_RDWR);
	uint8_t b;
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)offset), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)offset), 1);
	close(fd);
}

static void damaged_entry_ends_the_chain(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_journal_recovery_t rec;

	open_ok(f, &j, 1 << 20, NULL);
	append_ok(f, &j, 1, 2, 50);
	append_ok(f, &j, 2, 3, 50);
	append_ok(f, &j, 3, 4, 50);
	uint64_t second = j.entries[1].offset, whole = j.file_size;
	apex_journal_close(&j);

	flip_byte(f->path, second + APEX_JOURNAL_ENTRY_OVERHEAD); /* in its payload */
	open_ok(f, &j, 1 << 20, &rec);
	assert_int_equal(rec.entries, 1);
	assert_int_equal(rec.dropped_bytes, whole - second);
	check_entry(&j, 0, 1, 2, 50);
	apex_journal_close(&j);
}

static void change_on_disk_is_seen_by_read(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	uint8_t buf[100];

	open_ok(f, &j, 1 << 20, NULL);
	append_ok(f, &j, 1, 2, 50);
	flip_byte(f->path, j.entries[0].offset + 20);
	assert_int_equal(apex_journal_read(&j, 0, buf, sizeof(buf)), APEX_EMALFORMED);
	apex_journal_close(&j);
}

static void chain_is_enforced(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	uint8_t buf[10] = { 0 };

	open_ok(f, &j, 1 << 20, NULL);
	/* RFC 1982: 1 is newer than 0xffffffff. */
	append_ok(f, &j, UINT32_C(0xffffffff), 1, 10);
	assert_int_equal(apex_journal_append(&j, 5, 6, buf, 10, f->err, sizeof(f->err)),
			 APEX_EINVAL);
	assert_non_null(strstr(f->err, "ends at serial 1"));
	assert_int_equal(apex_journal_append(&j, 1, 1, buf, 10, f->err, sizeof(f->err)),
			 APEX_EINVAL);
	assert_int_equal(apex_journal_append(&j, 1, 0, buf, 10, f->err, sizeof(f->err)),
			 APEX_EINVAL);
	/* Exactly half the serial space ahead is not newer either. */
	assert_int_equal(
		apex_journal_append(&j, 1, UINT32_C(0x80000001), buf, 10, f->err, sizeof(f->err)),
		APEX_EINVAL);
	assert_int_equal(j.count, 1);
	append_ok(f, &j, 1, 2, 10);
	assert_int_equal(j.count, 2);
	apex_journal_close(&j);
}

static void file_stays_within_its_bound(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_journal_recovery_t rec;
	const uint64_t bound = 4096;
	size_t first;

	open_ok(f, &j, bound, NULL);
	for (uint32_t s = 100; s < 140; s++) {
		append_ok(f, &j, s, s + 1, 500);
		assert_true((uint64_t)file_size(f->path) <= bound);
		assert_int_equal(j.entries[j.count - 1].serial_to, s + 1);
		for (size_t i = 1; i < j.count; i++)
			assert_int_equal(j.entries[i].serial_from, j.entries[i - 1].serial_to);
	}
	assert_true(j.count >= 4 && j.count < 8);
	assert_int_equal(apex_journal_find(&j, 100, &first), APEX_ENOENT); /* dropped */
	assert_int_equal(apex_journal_find(&j, 140 - j.count, &first), APEX_OK);
	size_t kept = j.count;
	apex_journal_close(&j);

	open_ok(f, &j, bound, &rec);
	assert_int_equal(rec.entries, kept);
	assert_int_equal(rec.dropped_bytes, 0);
	for (size_t i = 0; i < j.count; i++)
		check_entry(&j, i, 140 - (uint32_t)(kept - i), 141 - (uint32_t)(kept - i), 500);
	apex_journal_close(&j);
}

/* apex_journal_dropped_by() tells beforehand what each append drops (a
 * secondary writes its lagging copy before the sets it needs go). */
static void drops_are_told_beforehand(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	const uint64_t bound = 4096;
	bool dropped_some = false;

	open_ok(f, &j, bound, NULL);
	for (uint32_t s = 100; s < 140; s++) {
		size_t before = j.count, drop = apex_journal_dropped_by(&j, 500);
		uint32_t oldest = before > 0 ? j.entries[0].serial_from : s;

		append_ok(f, &j, s, s + 1, 500);
		assert_int_equal(j.count, before - drop + 1);
		if (before > 0)
			assert_int_equal(j.entries[0].serial_from,
					 drop < before ? oldest + drop : s);
		dropped_some |= drop > 0;
	}
	assert_true(dropped_some);
	assert_int_equal(apex_journal_dropped_by(&j, 10), 0); /* room left after a drop */
	apex_journal_close(&j);
}

static void oversized_entry_empties_the_journal(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	uint32_t last;
	size_t first;

	open_ok(f, &j, 4096, NULL);
	append_ok(f, &j, 1, 2, 100);
	append_ok(f, &j, 2, 3, 5000);
	assert_int_equal(j.count, 0);
	assert_false(apex_journal_last_serial(&j, &last));
	assert_int_equal(apex_journal_find(&j, 1, &first), APEX_ENOENT);
	/* A new history starts anywhere. */
	append_ok(f, &j, 3, 4, 100);
	assert_int_equal(j.count, 1);
	assert_int_equal(apex_journal_clear(&j, f->err, sizeof(f->err)), APEX_OK);
	assert_int_equal(j.count, 0);
	apex_journal_close(&j);
	open_ok(f, &j, 4096, NULL);
	assert_int_equal(j.count, 0);
	apex_journal_close(&j);
}

/* apex_journal_payload_max() is exactly the largest payload an append
 * keeps: the journal alone in its file, at its bound. */
static void payload_max_is_the_largest_kept(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	struct stat st;

	open_ok(f, &j, 4096, NULL);
	uint64_t max = apex_journal_payload_max(&j);
	assert_true(max > 0 && max < 4096);
	append_ok(f, &j, 1, 2, 100);
	append_ok(f, &j, 2, 3, (size_t)max); /* drops the first to fit */
	assert_int_equal(j.count, 1);
	check_entry(&j, 0, 2, 3, (size_t)max);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, 4096);
	append_ok(f, &j, 3, 4, (size_t)max + 1);
	assert_int_equal(j.count, 0);
	apex_journal_close(&j);
}

/* The file's bytes, into buf (at most size); how many. */
static size_t file_bytes(const char *path, uint8_t *buf, size_t size)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	size_t n = fread(buf, 1, size, fp);
	fclose(fp);
	return n;
}

/* An entry written in pieces is the entry apex_journal_append() writes,
 * byte for byte, and reads back after a reopen; one given up (aborted,
 * committed short, written past its size) leaves the journal as it was. */
static void entry_in_pieces(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_journal_writer_t w;
	uint8_t buf[3000], once[8192], pieces[8192];

	open_ok(f, &j, 1 << 20, NULL);
	append_ok(f, &j, 1, 2, 100);
	append_ok(f, &j, 2, 3, 2500);
	apex_journal_close(&j);
	size_t n = file_bytes(f->path, once, sizeof(once));
	unlink(f->path);

	open_ok(f, &j, 1 << 20, NULL);
	append_ok(f, &j, 1, 2, 100);
	off_t before = file_size(f->path);
	payload(3, 2500, buf);
	assert_int_equal(apex_journal_begin(&j, 2, 3, 2500, &w, f->err, sizeof(f->err)), APEX_OK);
	assert_int_equal(apex_journal_write(&w, buf, 7, f->err, sizeof(f->err)), APEX_OK);
	apex_journal_abort(&w);
	assert_int_equal(file_size(f->path), before);
	assert_int_equal(j.count, 1);
	/* a writer given up takes nothing more */
	assert_int_equal(apex_journal_write(&w, buf, 7, f->err, sizeof(f->err)), APEX_EINVAL);
	assert_int_equal(apex_journal_commit(&w, f->err, sizeof(f->err)), APEX_EINVAL);
	assert_int_equal(file_size(f->path), before);

	assert_int_equal(apex_journal_begin(&j, 2, 3, 2500, &w, f->err, sizeof(f->err)), APEX_OK);
	assert_int_equal(apex_journal_write(&w, buf, 2499, f->err, sizeof(f->err)), APEX_OK);
	assert_int_equal(apex_journal_commit(&w, f->err, sizeof(f->err)), APEX_EINVAL);
	assert_int_equal(file_size(f->path), before);
	assert_int_equal(j.count, 1);

	assert_int_equal(apex_journal_begin(&j, 2, 3, 2500, &w, f->err, sizeof(f->err)), APEX_OK);
	assert_int_equal(apex_journal_write(&w, buf, 2000, f->err, sizeof(f->err)), APEX_OK);
	assert_int_equal(apex_journal_write(&w, buf, 501, f->err, sizeof(f->err)), APEX_EINVAL);
	assert_int_equal(file_size(f->path), before);
	assert_int_equal(j.count, 1);

	assert_int_equal(apex_journal_begin(&j, 2, 3, 2500, &w, f->err, sizeof(f->err)), APEX_OK);
	for (size_t at = 0; at < 2500; at += 333)
		assert_int_equal(apex_journal_write(&w, buf + at, 2500 - at < 333 ? 2500 - at : 333,
						    f->err, sizeof(f->err)),
				 APEX_OK);
	assert_int_equal(apex_journal_commit(&w, f->err, sizeof(f->err)), APEX_OK);
	check_entry(&j, 1, 2, 3, 2500);
	apex_journal_close(&j);
	assert_int_equal(file_bytes(f->path, pieces, sizeof(pieces)), n);
	assert_memory_equal(pieces, once, n);
	open_ok(f, &j, 1 << 20, NULL);
	assert_int_equal(j.count, 2);
	check_entry(&j, 1, 2, 3, 2500);

	/* larger than the journal takes: emptied, nothing to write */
	assert_int_equal(apex_journal_begin(&j, 3, 4, (size_t)apex_journal_payload_max(&j) + 1, &w,
					    f->err, sizeof(f->err)),
			 APEX_ESPACE);
	assert_int_equal(j.count, 0);
	apex_journal_close(&j);
}

static void failed_append_leaves_the_journal(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	apex_journal_recovery_t rec;
	uint8_t buf[3000];
	uint32_t last;

	open_ok(f, &j, 1 << 20, NULL);
	append_ok(f, &j, 1, 2, 100);
	append_ok(f, &j, 2, 3, 200);
	off_t size = file_size(f->path);

	/* room for part of the entry only: its head is written, then no more */
	limit_file_size((rlim_t)size + 100);
	payload(4, sizeof(buf), buf);
	assert_int_equal(apex_journal_append(&j, 3, 4, buf, sizeof(buf), f->err, sizeof(f->err)),
			 -EFBIG);
	assert_non_null(strstr(f->err, f->path));
	assert_non_null(strstr(f->err, apex_strerror(-EFBIG)));
	assert_int_equal(j.count, 2);
	assert_true(apex_journal_last_serial(&j, &last));
	assert_int_equal(last, 3);
	assert_int_equal(file_size(f->path), size); /* the partial entry cut off */
	check_entry(&j, 1, 2, 3, 200);

	/* a clear needs no room: the file is cut back in place */
	limit_file_size(8);
	assert_int_equal(apex_journal_clear(&j, f->err, sizeof(f->err)), APEX_OK);
	assert_int_equal(j.count, 0);
	assert_true(file_size(f->path) < size);

	/* room again: the history starts at the next change */
	limit_file_size(0);
	append_ok(f, &j, 4, 5, 300);
	apex_journal_close(&j);
	open_ok(f, &j, 1 << 20, &rec);
	assert_int_equal(rec.dropped_bytes, 0);
	assert_int_equal(j.count, 1);
	check_entry(&j, 0, 4, 5, 300);
	apex_journal_close(&j);
}

static void foreign_files_are_refused(void **state)
{
	fixture_t *f = *state;
	apex_journal_t j;
	uint8_t other[APEX_NAME_MAX];

	open_ok(f, &j, 1 << 20, NULL);
	append_ok(f, &j, 1, 2, 10);
	apex_journal_close(&j);
	off_t size = file_size(f->path);

	/* Letter case does not make another zone; another name does. */
	assert_true(apex_name_from_str("EXAMPLE.", other) > 0);
	assert_int_equal(
		apex_journal_open(&j, f->path, other, 1 << 20, false, NULL, f->err, sizeof(f->err)),
		APEX_OK);
	assert_int_equal(j.count, 1);
	apex_journal_close(&j);
	assert_true(apex_name_from_str("example.net.", other) > 0);
	assert_int_equal(
		apex_journal_open(&j, f->path, other, 1 << 20, false, NULL, f->err, sizeof(f->err)),
		APEX_EINVAL);
	assert_non_null(strstr(f->err, "another zone"));
	assert_non_null(strstr(f->err, f->path));
	assert_int_equal(file_size(f->path), size);

	/* Not a journal at all. */
	FILE *fp = fopen(f->path, "w");
	assert_non_null(fp);
	fputs("example. 3600 IN SOA a. b. 1 2 3 4 5\n", fp);
	fclose(fp);
	size = file_size(f->path);
	assert_int_equal(apex_journal_open(&j, f->path, f->zone, 1 << 20, false, NULL, f->err,
					   sizeof(f->err)),
			 APEX_EMALFORMED);
	assert_non_null(strstr(f->err, "not an apex journal"));
	assert_int_equal(file_size(f->path), size);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(entries_survive_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(torn_tail_is_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(torn_at_any_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(torn_header_is_written_again, setup, teardown),
		cmocka_unit_test_setup_teardown(damaged_entry_ends_the_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(change_on_disk_is_seen_by_read, setup, teardown),
		cmocka_unit_test_setup_teardown(chain_is_enforced, setup, teardown),
		cmocka_unit_test_setup_teardown(file_stays_within_its_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(drops_are_told_beforehand, setup, teardown),
		cmocka_unit_test_setup_teardown(oversized_entry_empties_the_journal, setup,
						teardown),
		cmocka_unit_test_setup_teardown(payload_max_is_the_largest_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(entry_in_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_append_leaves_the_journal, setup, teardown),
		cmocka_unit_test_setup_teardown(foreign_files_are_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
