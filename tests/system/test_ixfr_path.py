# SPDX-License-Identifier: BSD-3-Clause
"""The path of an IXFR from the NOTIFY to the new version served
(doc/transfers.md, "The copy after an IXFR"): the copy of the zone written
later, not on the way to serving (copy-flush-interval), and the SOA query
skipped when the NOTIFY says a newer serial.

apexd is the secondary of Knot DNS for secret.test. with provide-xfr, so
that it keeps a journal, which holds the change sets the copy lags behind.

* test_copy_lags_until_flushed: with copy-flush-interval an hour, an IXFR
  is served while the copy still holds the serial before, a second IXFR
  leaves it there too (not written after each IXFR); a stop writes it
  with the serial served; with copy-flush-interval 1 s the timer writes it.
* test_kill_while_copy_lags: apexd killed (SIGKILL) while its copy lags
  two IXFRs behind: the restart, the primary gone, replays the journal
  over the copy and serves the newest serial, its copy written again.
* test_copy_flushed_before_journal_drops: with a journal of 4 KB that
  drops its oldest change sets as IXFRs come, the copy is written before
  the sets that lead from its serial are dropped (the debug log says
  why it was written), so that the copy and the journal are chained at
  every moment, and a kill after many IXFRs restarts at the newest
  serial.
* test_copy_gives_way_to_a_notify: a copy written after
  copy-flush-interval (made to pause as it starts, by a test hook) gives
  way to a NOTIFY that comes meanwhile: the IXFR is served without
  waiting for the copy, which is written afterwards at the serial served.
* test_compaction_gives_way_to_a_notify: the version served built
  compact after an IXFR that changed most of the zone (made to pause as
  it starts, by a test hook) gives way to a NOTIFY that comes meanwhile:
  the next IXFR is served without waiting for it; three times in a row,
  then the fourth compaction does not give way.
* test_notify_serial_skips_soa_query: a NOTIFY carrying the primary's
  new SOA is followed by the IXFR at once (the debug log says so); one
  whose serial the primary does not have (a hint that lies) gets the
  IXFR answered by the SOA alone, and nothing changes.
"""

import os
import re
import time

import dns.message
import dns.opcode
import dns.flags
import dns.query
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest

from test_crash import (assert_journal_opened, assert_serves_exactly, change_primary,
                        copy_serial, kill, start_pair, text_of)
from test_secondary import (KEY_NAME, KEYRING, ORIGIN, have, notify, query, wait_log,
                            wait_serial)


@pytest.fixture
def tmp(tmp_path):
    return str(tmp_path)


def ixfr_to(apex, primary, path, serial):
    """Change the primary to serial, NOTIFY apexd, wait until served."""
    change_primary(primary, path, serial)
    assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
    wait_serial(apex.port, serial, apex)
    wait_log(apex, "IXFR serial %d" % serial)  # published, journaled


def assert_no_partial(apex):
    assert not os.path.exists(apex.copy + ".xfr"), "a partial copy was left"


def test_copy_lags_until_flushed(tmp):
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path, apex = start_pair(tmp)
    try:
        apex.extra_server = ["    copy-flush-interval: 3600"]
        apex.start()
        wait_serial(apex.port, 1, apex)
        assert copy_serial(apex) == 1  # an AXFR's copy is written as it comes
        ixfr_to(apex, primary, path, 2)
        assert copy_serial(apex) == 1, "the copy was written after the IXFR"
        ixfr_to(apex, primary, path, 3)
        assert copy_serial(apex) == 1, "the copy was written after the second IXFR"
        assert_serves_exactly(apex.port, [3])
        assert apex.stop() == 0, apex.log_tail()
        assert copy_serial(apex) == 3, "the copy was not written at stop"
        assert_no_partial(apex)

        apex.extra_server = ["    copy-flush-interval: 1"]
        apex.start()
        wait_serial(apex.port, 3, apex)
        ixfr_to(apex, primary, path, 4)
        wait_copy(apex, 4)
        assert_no_partial(apex)
        assert apex.stop() == 0, apex.log_tail()
    finally:
        apex.stop()
        primary.stop()


def wait_copy(apex, serial, bound=60.0):
    """Wait (bounded) until the copy holds serial."""
    deadline = time.monotonic() + bound
    while copy_serial(apex) != serial:
        assert time.monotonic() < deadline, "copy at %d, not %d:\n%s" % (
            copy_serial(apex), serial, apex.log_tail())
        time.sleep(0.1)


def test_kill_while_copy_lags(tmp):
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path, apex = start_pair(tmp)
    try:
        apex.extra_server = ["    copy-flush-interval: 3600"]
        apex.start()
        wait_serial(apex.port, 1, apex)
        ixfr_to(apex, primary, path, 2)
        ixfr_to(apex, primary, path, 3)
        assert copy_serial(apex) == 1
        kill(apex)
        primary.stop()
        apex.start()
        wait_serial(apex.port, 3, apex)
        assert_serves_exactly(apex.port, [3])
        assert_journal_opened(apex)
        assert "journal replayed" in apex.log_tail(400), apex.log_tail(400)
        assert copy_serial(apex) == 3  # written again at start from what is served
    finally:
        apex.stop()
        primary.stop()


def test_copy_flushed_before_journal_drops(tmp):
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path, apex = start_pair(tmp)
    last = 16
    try:
        apex.extra_server = ["    copy-flush-interval: 3600", "    journal-size: 4096",
                             "    log-level: debug"]
        apex.start()
        wait_serial(apex.port, 1, apex)
        for serial in range(2, last + 1):
            ixfr_to(apex, primary, path, serial)
        # the journal has dropped its first sets: the copy moved on, written
        # before they went (a crash in between finds the copy and the
        # journal chained), never after
        assert copy_serial(apex) > 1, "the copy was left behind the journal"
        log = apex.log_tail(2000)
        assert "(before the journal drops the changes it lacks)" in log, log
        assert "(after the transfer)" not in log, log
        kill(apex)
        primary.stop()
        apex.start()
        wait_serial(apex.port, last, apex)
        assert_serves_exactly(apex.port, [last])
    finally:
        apex.stop()
        primary.stop()


def test_copy_gives_way_to_a_notify(tmp, monkeypatch):
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path, apex = start_pair(tmp)
    try:
        # each time the timed copy asks whether to give way it first
        # sleeps 4 s: the NOTIFY below comes in the first of those
        monkeypatch.setenv("APEX_TEST_COPY_GIVE_WAY_MS", "4000")
        apex.extra_server = ["    copy-flush-interval: 1", "    log-level: debug"]
        apex.start()
        wait_serial(apex.port, 1, apex)
        ixfr_to(apex, primary, path, 2)
        wait_log(apex, "writing the copy %s at serial 2 (after copy-flush-interval)"
                 % apex.copy)
        change_primary(primary, path, 3)
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
        wait_serial(apex.port, 3, apex)
        # served without the copy at serial 2 written first, which took
        # the 4 s and more before this change
        assert copy_serial(apex) == 1, "the copy at serial 2 was written first"
        wait_log(apex, "writing the copy %s at serial 2 gave way to a transfer" % apex.copy)
        wait_copy(apex, 3)  # written again once the transfer is done
        assert_no_partial(apex)
        assert apex.stop() == 0, apex.log_tail()
    finally:
        apex.stop()
        primary.stop()


# names whose address changes at every serial: an IXFR that changes this
# many of the zone's records makes a chain that the version served is built
# compact after (xfr/version_compact.h: more than APEX_COMPACT_FLOOR)
MOVED = 20000


def moved_text(serial):
    lines = ["m%d IN A 198.18.%d.%d" % (k, serial % 250, k % 250 + 1) for k in range(MOVED)]
    return text_of(serial) + "\n".join(lines) + "\n"


def change_moved(primary, path, serial):
    with open(path, "w") as f:
        f.write(moved_text(serial))
    primary.reload()
    wait_serial(primary.port, serial, primary)


def answers_moved(apex, serial, names=(17,)):
    """apex answers the names m<k> with their addresses at serial."""
    for k in names:
        r = query(apex.port, "m%d.%s" % (k, ORIGIN), dns.rdatatype.A)
        assert [rd.to_text() for rrset in r.answer for rd in rrset] == \
            ["198.18.%d.%d" % (serial % 250, k % 250 + 1)], r


def notified_while_compacting(apex, primary, path, serials):
    """apex started, serial 2 served by an IXFR; then for each serial of
    serials the next one made and NOTIFYed while apex's compaction after
    serial pauses (APEX_TEST_COMPACT_GIVE_WAY_MS, 6 s), and served.
    Yields each serial with apex's log then."""
    apex.start()
    wait_serial(apex.port, 1, apex)
    change_moved(primary, path, 2)
    assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
    wait_serial(apex.port, 2, apex)
    for serial in serials:
        # the refresh goes on to build serial compact, paused
        began = time.monotonic()
        change_moved(primary, path, serial + 1)
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
        assert time.monotonic() - began < 5, "the NOTIFY came after the pause: too slow"
        wait_serial(apex.port, serial + 1, apex)
        yield serial, apex.log_tail(400)


def test_compaction_gives_way_to_a_notify(tmp, monkeypatch):
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path, apex = start_pair(tmp, moved_text)
    try:
        # each compaction that may give way sleeps 6 s before it first
        # asks whether to: the NOTIFYs below come in that time
        monkeypatch.setenv("APEX_TEST_COMPACT_GIVE_WAY_MS", "6000")
        # src/apexd/transfers/secondary_internal.h:
        # APEX_SECONDARY_COMPACT_GIVE_WAY_MAX, 3
        for serial, log in notified_while_compacting(apex, primary, path, (2, 3, 4)):
            # served without serial built compact first, which took the
            # 6 s and more before this change
            assert "serial %d built compact" % serial not in log, \
                "serial %d was built compact first:\n%s" % (serial, log)
            assert "serial %d not built compact yet, after" % serial in log, log
            if serial == 2:
                assert "gave way with 0 of " in log, log  # at its first question
        # the fourth in a row does not give way: serial 5 built compact
        wait_log(apex, "the compaction gave way 3 times in a row: this one does not")
        wait_log(apex, "serial 5 built compact")
        answers_moved(apex, 5)
        assert apex.stop() == 0, apex.log_tail()
    finally:
        apex.stop()
        primary.stop()


def pair_in_parts(tmp, monkeypatch, pause_hook):
    """The primary, its file and apex (not started) of the zone of moving
    addresses, apex's compactions in parts (forced for this small zone by
    APEX_TEST_COMPACT_PARTS_FROM) pausing 6 s where pause_hook says."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    monkeypatch.setenv("APEX_TEST_COMPACT_PARTS_FROM", "0")
    monkeypatch.setenv(pause_hook, "6000")
    return start_pair(tmp, moved_text)


def test_compaction_in_parts_gives_way_to_a_notify(tmp, monkeypatch):
    """A compaction in parts (forced here for a small zone by the test hook
    APEX_TEST_COMPACT_PARTS_FROM) gives way to a NOTIFY within a part, at
    its first question (before the first part's first record): the
    transfer goes first, and the next compaction starts over in parts
    from the version then served."""
    # each compaction that may give way sleeps 6 s before it first asks
    # whether to, before the first part's first record: the NOTIFYs come then
    primary, path, apex = pair_in_parts(tmp, monkeypatch, "APEX_TEST_COMPACT_GIVE_WAY_MS")
    try:
        for serial, log in notified_while_compacting(apex, primary, path, (2, 3, 4)):
            # served before the first part was done, not after the parts
            assert "serial %d built again in" % serial not in log, \
                "serial %d was built again in parts first:\n%s" % (serial, log)
            # within its first part: the parts start over from the first
            assert re.search(r"serial %d not built again in parts yet, after [\d.]+ s: part 1 "
                             r"of 16 gave way before its first record" % serial, log), log
            assert "built compact" not in log, log  # in parts, never whole
            answers_moved(apex, serial + 1)
        # the fourth in a row does not give way: serial 5 in all its parts
        wait_log(apex, "the compaction gave way 3 times in a row: this one does not")
        wait_log(apex, "serial 5 built again in 16 parts")
        log = apex.log_tail(400)
        assert "not built again in parts:" not in log, log
        answers_moved(apex, 5, (0, 17, MOVED - 1))
        assert apex.stop() == 0, apex.log_tail()
    finally:
        apex.stop()
        primary.stop()


def test_compaction_in_parts_gives_way_after_its_last_part(tmp, monkeypatch):
    """A compaction in parts asks once more after its last part, before
    its last step (which does not ask): a NOTIFY that comes then goes
    first, the 16 parts published stay served, and the next compaction
    starts over in parts from the version then served; once the chain
    has no room left to start over again, the parts go on to the last
    step without asking."""
    # each compaction in parts that may give way sleeps 6 s after its
    # 16th part, before that question: the NOTIFYs come then
    primary, path, apex = pair_in_parts(tmp, monkeypatch, "APEX_TEST_COMPACT_LAST_GIVE_WAY_MS")
    try:
        for serial, log in notified_while_compacting(apex, primary, path, (2, 3, 4)):
            answers_moved(apex, serial + 1)
            assert "gave way before its first record" not in log, log  # never within a part
            if serial == 4:
                break
            assert "serial %d built again in" % serial not in log, \
                "serial %d was built again in parts first:\n%s" % (serial, log)
            # every part done, then the question before the last step
            assert re.search(r"serial %d not built again in parts yet, after [\d.]+ s: gave way "
                             r"after part 16 of 16" % serial, log), log
        # Each part is a version derived from the one before: serial 4
        # arrives at a chain of 35 (serial 2's IXFR, 16 parts, serial 3's,
        # 16 parts, serial 4's), and after its 16 parts (51) the NOTIFY's
        # version, 16 parts and the last step would pass
        # APEX_DERIVE_DEPTH_MAX (64): no question, the last step is made
        # (src/apexd/zones/compact.c, may_start_over()).
        assert re.search(r"serial 4 built again in 16 parts in [\d.]+ s, [\d.]+ MiB of derived "
                         r"versions let go \(a chain of 35\)", log), log
        assert "serial 4 not built again" not in log, log
        assert "not built again in parts:" not in log, log
        answers_moved(apex, 5, (0, 17, MOVED - 1))
        assert apex.stop() == 0, apex.log_tail()
    finally:
        apex.stop()
        primary.stop()


def notify_with_soa(port, serial):
    """A NOTIFY signed with the key, its answer section the SOA at serial."""
    q = dns.message.make_query(ORIGIN, dns.rdatatype.SOA, use_edns=-1)
    q.flags = dns.flags.AA
    q.set_opcode(dns.opcode.NOTIFY)
    q.answer.append(dns.rrset.from_text(
        ORIGIN, 3600, "IN", "SOA",
        "ns1.%s hostmaster.%s %d 3600 1 3600 60" % (ORIGIN, ORIGIN, serial)))
    q.use_tsig(KEYRING, KEY_NAME, algorithm="hmac-sha256")
    r = dns.query.udp(q, "127.0.0.1", port=port, timeout=5)
    assert r.opcode() == dns.opcode.NOTIFY, r
    return r


def test_notify_serial_skips_soa_query(tmp):
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path, apex = start_pair(tmp)
    try:
        apex.extra_server = ["    log-level: debug"]
        apex.start()
        wait_serial(apex.port, 1, apex)
        change_primary(primary, path, 2)
        assert notify_with_soa(apex.port, 2).rcode() == dns.rcode.NOERROR
        wait_serial(apex.port, 2, apex)
        wait_log(apex, "IXFR serial 2")
        log = apex.log_tail(400)
        assert "NOTIFY said serial 2: asking" in log, log
        assert "serial 1 is current" not in log, log
        # a serial the primary does not have: its IXFR answer (the SOA
        # alone) decides, and serial 2 stays
        assert notify_with_soa(apex.port, 9).rcode() == dns.rcode.NOERROR
        wait_log(apex, "NOTIFY said serial 9: asking")
        ixfr_to(apex, primary, path, 3)  # the thread went on: the next change comes
        assert_serves_exactly(apex.port, [3])
        assert "still served" not in apex.log_tail(400), apex.log_tail(400)
    finally:
        apex.stop()
        primary.stop()
