# SPDX-License-Identifier: BSD-3-Clause
"""apexd as a secondary with its zone's copy and journal on a full disk.

The test mounts a small tmpfs of its own (1 MiB) for the copy
(secret.test.zone) and the journal (secret.test.zone.jnl); apexd is the
secondary of Knot DNS with provide-xfr, so that it keeps a journal.  After
a first change, recorded, a fill file takes every free page, and the
primary changes the zone three times (IXFR, a whole transfer asked by
`apexctl retransfer`, IXFR).  Then:

1. the log tells each file's failure once, with its path and the real
   cause ("No space left on device"), however many transfers fail;
2. every transfer is applied in memory: the newest serial is served;
3. once the fill file is removed, a refresh (the zone current) writes the
   copy whole again with the serial served, the next transfer writes it
   and the journal too, and the log says that writing works again;
4. nothing on the disk is ever cut short: the copy always parses with
   every record of one serial, and no FILE.xfr is left behind;
5. a restart, the primary gone, serves the newest serial from the copy,
   and the journal (its history started again with the first change
   recorded after the failure) answers an IXFR from the serial before.

test_copy_permission_denied: a copy the server may not write (its
directory not the run user's) goes the same way: the cause and the path
logged once over many refreshes, the zone served from memory, the copy
written at the next refresh once the directory is the user's.

The journal's change from before the disk filled is kept as it was while
appends fail; as it no longer leads to the serial served, an IXFR from
its serials gets the whole zone.
"""

import contextlib
import ctypes
import errno
import os
import pwd
import time

import dns.rcode
import dns.rdatatype
import dns.zone
import pytest

import servers
from test_crash import assert_incremental, ixfr_soas
from test_secondary import (KEY_NAME, KEYRING, ORIGIN, WAIT, FakePrimary, KnotPrimary,
                            SecondaryApexd, apexctl, base_records, have, notify, query,
                            secondary_of_fake, serial_of, wait_log, wait_serial, zone_text)

DISK_SIZE = 1 << 20  # the copy is about 320 KB: two of them fit, while it is renamed
NO_SPACE = os.strerror(errno.ENOSPC)  # "No space left on device"
MNT_DETACH = 2

_libc = ctypes.CDLL(None, use_errno=True)


@contextlib.contextmanager
def small_disk(path, size):
    """A tmpfs of size bytes mounted on path for the test, unmounted after."""
    os.makedirs(path)
    if _libc.mount(b"tmpfs", path.encode(), b"tmpfs", 0,
                   ("size=%d,mode=0755" % size).encode()) != 0:
        err = ctypes.get_errno()
        os.rmdir(path)
        if err == errno.EPERM:
            pytest.skip("mounting a tmpfs is not permitted here (EPERM): the test needs root")
        raise OSError(err, "mount -t tmpfs on %s: %s" % (path, os.strerror(err)))
    try:
        yield path
    finally:
        if _libc.umount2(path.encode(), 0) != 0:
            _libc.umount2(path.encode(), MNT_DETACH)


def fill(path):
    """Take every free page of the disk with a file, written until ENOSPC."""
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as f:
        with pytest.raises(OSError) as e:
            while True:
                f.write(chunk)
    assert e.value.errno == errno.ENOSPC, e.value


def bulk_serial(serial):
    """The serial 40 TXT records carry: they change from serial 2 on, so
    that each change set (about 13 KB) needs more pages of the journal
    than the change from 1 to 2 (a few records) frees when it is cleared."""
    return max(serial, 2)


def text_of(serial):
    bulk = "".join('bulk%02d IN TXT "serial %d %s"\n' % (k, bulk_serial(serial), "y" * 100)
                   for k in range(40))
    return zone_text(serial, bulk)


def records_of_text(text):
    z = dns.zone.from_text(text, origin=ORIGIN, relativize=False)
    return {(name, rds.rdtype): rds for name, node in z.nodes.items() for rds in node}


def assert_copy_is(apex, serial):
    """The copy on disk is whole: it parses, with every record of serial."""
    z = dns.zone.from_file(apex.copy, origin=ORIGIN, relativize=False)
    got = {(name, rds.rdtype): rds for name, node in z.nodes.items() for rds in node}
    assert got == records_of_text(text_of(serial)), "the copy is not the zone at %d" % serial


def assert_disk_clean(disk, *extra):
    """Only the copy, the journal (and extra) on the disk: no FILE.xfr."""
    assert sorted(os.listdir(disk)) == sorted(
        ["secret.test.zone", "secret.test.zone.jnl"] + list(extra)), os.listdir(disk)


def change_primary(primary, path, serial):
    with open(path, "w") as f:
        f.write(text_of(serial))
    primary.reload()
    wait_serial(primary.port, serial, primary)


def failure_lines(apex):
    """The log's lines that tell of a full disk: (the copy's, the journal's, all)."""
    lines = [line for line in apex.log_tail(2000).splitlines() if NO_SPACE in line]
    copy = [line for line in lines if "the copy %s " % apex.copy in line]
    journal = [line for line in lines if apex.copy + ".jnl" in line]
    return copy, journal, lines


def assert_serves(apex, serial):
    assert serial_of(apex.port) == serial, apex.log_tail()
    r = query(apex.port, "bulk07." + ORIGIN, dns.rdatatype.TXT)
    assert r.rcode() == dns.rcode.NOERROR and r.answer, r
    assert r.answer[0][0].strings[0].decode().startswith("serial %d " % bulk_serial(serial)), r


def test_full_disk(tmp_path):
    if not have("knot"):
        pytest.skip("knot is not installed")
    tmp = str(tmp_path)
    d = os.path.join(tmp, "knot")
    os.makedirs(d)
    path = os.path.join(d, "secret.test.zone")
    with open(path, "w") as f:
        f.write(text_of(1))
    primary = apex = None
    with small_disk(os.path.join(tmp, "disk"), DISK_SIZE) as disk:
        try:
            primary = KnotPrimary(d, [(ORIGIN, path)]).start()
            apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                                  ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)],
                                  port=servers.free_port(),
                                  provide="127.0.0.0/8 %s" % KEY_NAME)
            apex.copy = os.path.join(disk, "secret.test.zone")
            # the copy written after each transfer, whose failures this
            # test follows (with a journal it otherwise lags for
            # copy-flush-interval: test_ixfr_path.py)
            apex.extra_server = ["    copy-flush-interval: 0"]
            apex.start()
            wait_serial(apex.port, 1, apex)
            change_primary(primary, path, 2)
            assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
            wait_log(apex, "IXFR serial 2")
            assert_copy_is(apex, 2)
            assert_incremental(apex.port, 1, 2)

            # the disk full: three transfers, none of which can be written
            fill(os.path.join(disk, "fill"))
            for serial in (3, 4, 5):
                change_primary(primary, path, serial)
                if serial == 4:  # a whole transfer, its records written as they come
                    r = apexctl(apex, "retransfer", ORIGIN)
                    assert r.returncode == 0, r
                    how = "AXFR serial 4"
                else:
                    assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == \
                        dns.rcode.NOERROR
                    how = "IXFR serial %d" % serial
                wait_log(apex, how)  # logged once the copy is done with
                assert_serves(apex, serial)  # applied in memory
                assert_copy_is(apex, 2)  # the last copy written, whole
                assert_disk_clean(disk, "fill")
            # the journal kept, but it does not lead to serial 5
            assert ixfr_soas(apex.port, 1) == [5, 5]

            copy, journal, lines = failure_lines(apex)
            log = apex.log_tail(400)
            assert len(copy) == 1, "the copy's failure told %d times:\n%s" % (len(copy), log)
            assert len(journal) == 1, "the journal's told %d times:\n%s" % (len(journal), log)
            assert len(lines) == 2, log
            assert "Input/output error" not in log, log
            assert "still served" not in log, log  # no transfer failed

            # space again: a refresh writes the copy with the serial served
            os.unlink(os.path.join(disk, "fill"))
            assert apexctl(apex, "refresh", ORIGIN).returncode == 0
            wait_log(apex, "writing the copy %s works again: serial 5 written" % apex.copy)
            assert_copy_is(apex, 5)
            assert_disk_clean(disk)
            # ... and the next transfer writes both, the journal starting again
            change_primary(primary, path, 6)
            assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
            wait_log(apex, "IXFR serial 6")
            assert_serves(apex, 6)
            assert_copy_is(apex, 6)
            assert_disk_clean(disk)
            log = apex.log_tail(400)
            assert "writing the journal %s.jnl works again: its history starts again at " \
                "serial 5" % apex.copy in log, log
            assert failure_lines(apex)[2] == lines, log  # nothing failed again
            assert_incremental(apex.port, 5, 6)
            for serial in (1, 2, 3):  # not recorded, or gone: the whole zone
                assert ixfr_soas(apex.port, serial) == [6, 6]

            # a restart, the primary gone: the copy and the journal agree
            assert apex.stop() == 0, apex.log_tail()
            primary.stop()
            primary = None
            apex.start()
            assert_serves(apex, 6)
            log = apex.log_tail(400)
            assert "journal %s.jnl opened: 1 change set(s), serial 5 to 6" % apex.copy in log, log
            assert "damaged bytes" not in log and "journal replayed" not in log, log
            assert_incremental(apex.port, 5, 6)
            assert_copy_is(apex, 6)
            assert_disk_clean(disk)
        finally:
            if apex is not None and apex.proc is not None and apex.proc.poll() is None:
                apex.stop()
            if primary is not None:
                primary.stop()


class CountingPrimary(FakePrimary):
    """A good fake primary at serial 2 (SOA refresh 1 s) that counts the
    SOA queries of apexd's refreshes."""

    def __init__(self, records):
        self.soa_queries = 0
        super().__init__("good", records)

    def soa(self, serial):
        self.soa_queries += 1  # also the AXFR's SOAs: enough to see time pass
        return super().soa(serial)


@pytest.mark.skipif(os.geteuid() != 0, reason="the run user nobody needs root")
def test_copy_permission_denied(tmp_path, monkeypatch):
    asan = os.environ.get("ASAN_OPTIONS")  # LeakSanitizer needs /proc
    monkeypatch.setenv("ASAN_OPTIONS", (asan + ":" if asan else "") + "detect_leaks=0")
    tmp = str(tmp_path)
    fake = CountingPrimary(base_records())
    apex = secondary_of_fake(tmp, fake, dirname="chrooted")  # its copy at serial 1
    d = apex.workdir
    os.chmod(tmp, 0o755)
    os.chmod(d, 0o755)  # root's: the run user may not create the new copy here
    with open(apex.copy) as f:
        before = f.read()
    apex.extra_server = ["    user: nobody", '    chroot: "%s"' % d]
    try:
        apex.start()
        wait_serial(apex.port, 2, apex)  # by AXFR, served from memory
        seen = fake.soa_queries
        deadline = time.monotonic() + WAIT
        while fake.soa_queries < seen + 3:  # three more refreshes, each writing again
            assert time.monotonic() < deadline, apex.log_tail()
            time.sleep(0.1)
        denied = [line for line in apex.log_tail(400).splitlines()
                  if os.strerror(errno.EACCES) in line]
        assert len(denied) == 1, apex.log_tail(400)
        assert "the copy /secret.test.zone is not written (/secret.test.zone.xfr: " \
            "Permission denied)" in denied[0], denied
        with open(apex.copy) as f:
            assert f.read() == before
        assert sorted(os.listdir(d)) == ["apex.conf", "apexd.log", "control.sock",
                                         "secret.test.zone"], os.listdir(d)

        nobody = pwd.getpwnam("nobody")
        os.chown(d, nobody.pw_uid, nobody.pw_gid)
        wait_log(apex, "writing the copy /secret.test.zone works again: serial 2 written")
        z = dns.zone.from_file(apex.copy, origin=ORIGIN, relativize=False)
        assert z.get_soa().serial == 2
        assert {str(name) for name in z.nodes} == {name for name, _, _ in base_records()}
        assert serial_of(apex.port) == 2
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()
