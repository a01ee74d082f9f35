# SPDX-License-Identifier: BSD-3-Clause
"""apexd killed during transfers: what a restart serves.

apexd is the secondary of Knot DNS for secret.test. and keeps a journal
for its own secondaries (provide-xfr).  A transfer publishes the new
version, appends its change sets to the journal, then writes the zone's
copy; a kill between the two leaves the journal ahead of the copy, which
the next start replays (doc/transfers.md, "A journal ahead of the zone").

* test_crash_between_journal_and_copy stops apexd exactly there
  (APEX_TEST_CRASH_AT=journal-appended) with two change sets in the
  journal ahead of the copy: the restart, with the primary gone, serves
  the journal's newest version at once; a torn last entry is cut and the
  history before it kept.
* test_kill_during_transfers kills apexd with SIGKILL at a random moment
  around each of many transfers: every restart serves a serial that
  existed with exactly that serial's records, its journal opens, an IXFR
  from the first serial is still answered with change sets, and it
  catches up with the primary.
* test_replay_on_reconfig: the same when the zone comes back by a
  reconfig: its first version is replayed over.
* test_primary_file_behind_journal: a primary's file put back to the
  serial its journal starts at is replayed; a file at a later serial of
  the journal, or with a serial of its own, is the operator's and wins.
* test_crash_point_transfer stops a secondary at each crash point of a
  transfer (the journal's append, its compaction, the copy's flush) and
  test_crash_point_reload a primary at each point of a reload
  (src/apexd/process/crash_point.h lists them).
* test_crash_runs: contrib/bench/crash_runs.py's SIGKILL at random
  moments of an IXFR and a reload at once, a few dozen runs.
doc/reliability.md has what these promise and the figures.
"""

import os
import random
import signal
import time

import dns.name
import dns.query
import dns.rcode
import dns.rdatatype
import dns.xfr
import dns.zone
import pytest

import servers
from test_primary import PrimaryApexd
from test_secondary import (KEY_NAME, KEYRING, ORIGIN, KnotPrimary, SecondaryApexd, apexctl,
                            have, notify, primary_records, query, serial_of, wait_answering,
                            wait_log, wait_serial, zone_text)

CRASH_STATUS = 86  # src/apexd/process/crash_point.h
ROUNDS = int(os.environ.get("APEX_CRASH_ROUNDS", "30"))
BUDGET = float(os.environ.get("APEX_CRASH_SECONDS", "150"))  # for the rounds, at most


def extra(serial):
    """What changes from serial to serial besides the SOA and www's TXT: a
    name added and one removed, a TXT changed, the glue of a delegation."""
    lines = ["r%d IN A 192.0.2.%d" % (k, k % 250 + 1)
             for k in range(max(1, serial - 3), serial + 1)]
    lines.append('moving IN TXT "at %d"' % serial)
    return "\n".join(lines) + "\n"


def text_of(serial):
    return zone_text(serial, extra(serial), sub_glue="192.0.2.%d" % (serial % 200 + 1))


_records = {}


def records_of(serial):
    """{(name, type): rdataset} of the zone at serial (from its text)."""
    if serial not in _records:
        z = dns.zone.from_text(text_of(serial), origin=ORIGIN, relativize=False)
        _records[serial] = {(name, rds.rdtype): rds for name, node in z.nodes.items()
                            for rds in node}
    return _records[serial]


def sample(serial):
    """Names whose records differ from serial to serial, and some that do not."""
    names = [("www", dns.rdatatype.TXT), ("moving", dns.rdatatype.TXT),
             ("ns1", dns.rdatatype.A), ("host017", dns.rdatatype.TXT)]
    names += [("r%d" % k, dns.rdatatype.A) for k in range(max(1, serial - 6), serial + 3)]
    return [(dns.name.from_text(n, dns.name.from_text(ORIGIN)), t) for n, t in names]


def sample_differs(port, serial):
    """Why a sampled name is not answered as the zone at serial has it, or None."""
    want = records_of(serial)
    for name, rdtype in sample(serial):
        r = query(port, name, rdtype)
        if (name, rdtype) in want:
            if r.rcode() != dns.rcode.NOERROR or not r.answer or \
                    set(r.answer[0]) != set(want[(name, rdtype)]):
                return "%s %s: %s" % (name, dns.rdatatype.to_text(rdtype), r)
        elif r.rcode() != dns.rcode.NXDOMAIN:
            return "%s %s: %s" % (name, dns.rdatatype.to_text(rdtype), r)
    glue = query(port, "www.sub." + ORIGIN, dns.rdatatype.A)
    if [rr.address for s in glue.additional for rr in s] != ["192.0.2.%d" % (serial % 200 + 1)]:
        return "glue of sub: %s" % glue
    return None


def assert_serves_exactly(port, serials):
    """apexd serves one of serials, each sampled name answered as the zone
    at that serial has it: never a mix.  A version published between the
    SOA query and the last sampled name (a transfer under way) is asked
    again.  Returns the serial."""
    for _ in range(5):
        serial = serial_of(port)
        assert serial in serials, (serial, serials)
        why = sample_differs(port, serial)
        if why is None:
            return serial
        assert serial_of(port) != serial, "serial %d answered otherwise: %s" % (serial, why)
    raise AssertionError("apexd's serial does not hold still")


def ixfr_soas(port, serial):
    """The serials of the SOA records of apexd's answer to an IXFR from
    serial: [S, serial, ..., S, S] for change sets, [S, S] for the whole
    zone."""
    msgs = dns.query.xfr("127.0.0.1", ORIGIN, rdtype=dns.rdatatype.IXFR, serial=serial,
                         port=port, keyring=KEYRING, keyname=KEY_NAME,
                         keyalgorithm="hmac-sha256", relativize=False, lifetime=30)
    return [rr.serial for m in msgs for rrset in m.answer
            if rrset.rdtype == dns.rdatatype.SOA for rr in rrset]


def assert_incremental(port, serial, served):
    soas = ixfr_soas(port, serial)
    assert len(soas) >= 4 and soas[:2] == [served, serial] and soas[-1] == served, (
        "IXFR from %d answered with the whole zone, not from the journal: %s" % (serial, soas))


def wait_line(server, text, timeout=30.0):
    """Wait for a line of the server's log, looking often (for timing)."""
    deadline = time.monotonic() + timeout
    while text not in server.log_tail(200):
        assert time.monotonic() < deadline, "no %r in the log:\n%s" % (text, server.log_tail(40))
        time.sleep(0.002)


def copy_serial(apex):
    """The serial of the SOA in apexd's copy of the zone."""
    with open(apex.copy) as f:
        for line in f:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "SOA":
                return int(fields[6])
    raise AssertionError("no SOA in " + apex.copy)


def change_primary(primary, path, serial):
    with open(path, "w") as f:
        f.write(text_of(serial))
    primary.reload()
    wait_serial(primary.port, serial, primary)


def kill(apex):
    apex.proc.send_signal(signal.SIGKILL)
    apex.proc.wait(10)
    apex.log.close()


def wait_checked(apex, serial):
    """Wait for apexd's first check of the primary to find serial current."""
    deadline = time.monotonic() + 60
    while True:
        status = apexctl(apex, "zone-status", ORIGIN).stdout
        if "last result: serial %d is current" % serial in status:
            return
        assert time.monotonic() < deadline, status + apex.log_tail()
        time.sleep(0.1)


def assert_journal_opened(apex):
    log = apex.log_tail(400)
    assert "journal %s.jnl opened" % apex.copy in log, log
    assert "no journal" not in log, log


@pytest.fixture
def tmp(tmp_path):
    return str(tmp_path)


def start_pair(tmp, text=text_of):
    """Knot DNS as primary at serial 1, text(serial) its zone (it sends no
    NOTIFY: the test does), and apexd as its secondary with provide-xfr,
    not started."""
    d = os.path.join(tmp, "knot")
    os.makedirs(d)
    path = os.path.join(d, "secret.test.zone")
    with open(path, "w") as f:
        f.write(text(1))
    primary = KnotPrimary(d, [(ORIGIN, path)]).start()
    apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                          ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)],
                          port=servers.free_port(), provide="127.0.0.0/8 %s" % KEY_NAME)
    return primary, path, apex


def test_crash_between_journal_and_copy(tmp, monkeypatch):
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path, apex = start_pair(tmp)
    try:
        monkeypatch.setenv("APEX_TEST_CRASH_AT", "journal-appended")
        apex.start()
        wait_serial(apex.port, 1, apex)  # by AXFR: not a crash point
        # two changes before apexd hears of them: one IXFR of two sets
        change_primary(primary, path, 2)
        change_primary(primary, path, 3)
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
        assert apex.proc.wait(30) == CRASH_STATUS, apex.log_tail()
        apex.log.close()
        assert "ending here" in apex.log_tail(), apex.log_tail()
        assert copy_serial(apex) == 1  # the copy was not written

        # the primary gone: only the journal can bring serial 3
        primary.fixed_port = primary.port
        primary.stop()
        monkeypatch.delenv("APEX_TEST_CRASH_AT")
        apex.start()
        assert serial_of(apex.port) == 3, apex.log_tail()
        assert "journal replayed: serial 1 to 3 (2 change set(s))" in apex.log_tail(), \
            apex.log_tail()
        assert_journal_opened(apex)
        assert_serves_exactly(apex.port, [3])
        assert_incremental(apex.port, 1, 3)
        assert_incremental(apex.port, 2, 3)
        assert copy_serial(apex) == 3  # written again at once
        assert apex.stop() == 0, apex.log_tail()

        # once more, then the last entry torn (a crash in its append)
        monkeypatch.setenv("APEX_TEST_CRASH_AT", "journal-appended")
        primary.start()
        apex.start()
        # apexd asks the primary at start: the change must come after that
        # check, or the check itself fetches serial 4 and the crash point
        # ends apexd before it answers the NOTIFY
        wait_checked(apex, 3)
        change_primary(primary, path, 4)
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
        assert apex.proc.wait(30) == CRASH_STATUS, apex.log_tail()
        apex.log.close()
        primary.stop()
        journal = apex.copy + ".jnl"
        os.truncate(journal, os.path.getsize(journal) - 5)
        monkeypatch.delenv("APEX_TEST_CRASH_AT")
        apex.start()
        assert serial_of(apex.port) == 3, apex.log_tail()
        assert "damaged bytes at its end dropped" in apex.log_tail(), apex.log_tail()
        assert "journal replayed" not in apex.log_tail(), apex.log_tail()
        assert_serves_exactly(apex.port, [3])
        assert_incremental(apex.port, 1, 3)  # the history before it is kept

        # the primary back: the change comes again, chained on the journal
        primary.start()
        wait_serial(apex.port, 4, apex)
        wait_log(apex, "IXFR serial 4")
        assert_serves_exactly(apex.port, [4])
        for serial in (1, 2, 3):
            assert_incremental(apex.port, serial, 4)
    finally:
        if apex.proc is not None and apex.proc.poll() is None:
            apex.stop()
        primary.stop()


def crash_at_journal_appended(primary, path, apex, monkeypatch):
    """apexd at serial 1 ended by the crash point after its IXFR to 2."""
    monkeypatch.setenv("APEX_TEST_CRASH_AT", "journal-appended")
    apex.start()
    wait_serial(apex.port, 1, apex)
    change_primary(primary, path, 2)
    assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
    assert apex.proc.wait(30) == CRASH_STATUS, apex.log_tail()
    apex.log.close()
    monkeypatch.delenv("APEX_TEST_CRASH_AT")
    assert copy_serial(apex) == 1


def test_replay_on_reconfig(tmp, monkeypatch):
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path, apex = start_pair(tmp)
    try:
        crash_at_journal_appended(primary, path, apex, monkeypatch)
        primary.stop()
        # started without the zone, which a reconfig then adds back
        command = apex.command
        conf = os.path.join(apex.workdir, "apex.conf")

        def without_zone():
            cmd = command()
            with open(conf) as f:
                text = f.read()
            with open(conf, "w") as f:
                f.write(text[:text.index("zone:")])
            return cmd

        apex.command, zones = without_zone, apex.zones
        apex.zones = []
        apex.start()
        wait_answering(apex)
        apex.command, apex.zones = command, zones
        apex.command()
        r = apexctl(apex, "reconfig")
        assert r.returncode == 0, (r, apex.log_tail())
        wait_serial(apex.port, 2, apex)
        wait_log(apex, "journal replayed: serial 1 to 2 (1 change set(s))")
        assert_serves_exactly(apex.port, [2])
        assert_incremental(apex.port, 1, 2)
        # the transfer thread may be writing it: left to the next transfer
        assert copy_serial(apex) == 1
        assert "written again by the next transfer" in apex.log_tail(), apex.log_tail()
    finally:
        if apex.proc is not None and apex.proc.poll() is None:
            assert apex.stop() == 0, apex.log_tail()
        primary.stop()


def test_kill_during_transfers(tmp):
    if not have("knot"):
        pytest.skip("knot is not installed")
    rng = random.Random(os.environ.get("APEX_TEST_SEED"))
    primary, path, apex = start_pair(tmp)
    try:
        apex.start()
        wait_serial(apex.port, 1, apex)
        # how long a transfer takes here, from the NOTIFY to the copy
        # renamed (logged after it): the kills fall in 1.5 times that
        window = 0.0
        for serial in (2, 3):
            change_primary(primary, path, serial)
            start = time.monotonic()
            notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
            wait_line(apex, "IXFR serial %d" % serial)
            window = max(window, time.monotonic() - start)
        window *= 1.5
        serial, replays, started = 3, 0, time.monotonic()
        for round_ in range(ROUNDS):
            if time.monotonic() - started > BUDGET:
                break
            serial += 1
            change_primary(primary, path, serial)
            notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
            time.sleep(rng.uniform(0, window))
            kill(apex)

            apex.start()
            served = assert_serves_exactly(apex.port, [serial - 1, serial])
            assert_journal_opened(apex)
            replays += "journal replayed" in apex.log_tail(400)
            if served < serial:  # the transfer again, from the primary
                wait_line(apex, "IXFR serial %d" % serial)
            assert_serves_exactly(apex.port, [serial])
            assert_incremental(apex.port, 1, serial)
            assert_incremental(apex.port, rng.randint(2, serial - 1), serial)
        print("%d rounds, %d restarts replayed the journal (window %.0f ms)"
              % (round_ + 1, replays, window * 1000))
        assert round_ >= 9, "fewer than ten rounds within %.0f s" % BUDGET
        # the sets from the first serial give exactly the primary's zone
        z = dns.zone.from_text(text_of(1), origin=ORIGIN, relativize=False)
        q, _ = dns.xfr.make_query(z, serial=1, keyring=KEYRING, keyname=KEY_NAME,
                                  keyalgorithm="hmac-sha256")
        dns.query.inbound_xfr("127.0.0.1", z, query=q, port=apex.port, timeout=10, lifetime=30)
        got = {(name, rds.rdtype): rds for name, node in z.nodes.items() for rds in node}
        assert got == primary_records(primary.port)
    finally:
        if apex.proc is not None and apex.proc.poll() is None:
            assert apex.stop() == 0, apex.log_tail()
        primary.stop()


def test_primary_file_behind_journal(tmp):
    path = os.path.join(tmp, "secret.test.zone")

    def write(serial):
        with open(path, "w") as f:
            f.write(text_of(serial))

    write(1)
    apex = PrimaryApexd(os.path.join(tmp, "apexd"), path)
    apex.start()
    try:
        for serial in (2, 3):
            write(serial)
            apex.proc.send_signal(signal.SIGHUP)
            wait_serial(apex.port, serial, apex)
        assert apex.stop() == 0, apex.log_tail()

        # the file put back to where the journal starts: replayed
        write(1)
        apex.start()
        assert serial_of(apex.port) == 3, apex.log_tail()
        assert "journal replayed: serial 1 to 3" in apex.log_tail(), apex.log_tail()
        assert "behind its journal" in apex.log_tail(), apex.log_tail()
        assert_serves_exactly(apex.port, [3])
        assert_incremental(apex.port, 1, 3)
        assert open(path).read() == text_of(1)  # the operator's file is left alone
        assert apex.stop() == 0, apex.log_tail()

        # a file at a later serial of the journal: the operator's, served
        write(2)
        apex.start()
        assert serial_of(apex.port) == 2, apex.log_tail()
        assert "journal replayed" not in apex.log_tail(), apex.log_tail()
        assert apex.stop() == 0, apex.log_tail()

        # an edit with a serial of its own wins too
        with open(path, "w") as f:
            f.write(zone_text(7, "edited IN A 192.0.2.77\n"))
        apex.start()
        assert serial_of(apex.port) == 7, apex.log_tail()
        assert "journal replayed" not in apex.log_tail(), apex.log_tail()
        r = query(apex.port, "edited." + ORIGIN, dns.rdatatype.A)
        assert [rr.address for rr in r.answer[0]] == ["192.0.2.77"]
    finally:
        if apex.proc is not None and apex.proc.poll() is None:
            assert apex.stop() == 0, apex.log_tail()


# ------------------------------------------------------------ named points
#
# Each crash point of src/apexd/process/crash_point.h reached by a
# secondary's transfer: apexd is brought to serial BASE cleanly (its
# journal bounded to 4096 bytes, so that a few more transfers make it drop
# its oldest entries), started again with the point, and driven by IXFRs
# until it ends there.  The restart must serve the serial before the crash
# or the one it was applying, each sampled name as that version has it;
# open its journal (a torn entry cut, the entries before it kept); answer
# IXFR from an older serial from the journal; and catch up with the
# primary.

BASE = 4
TRANSFER_POINTS = ["journal-appended", "journal-append-writing", "journal-compact-writing",
                   "journal-compact-renaming", "journal-compacted", "copy-half-written",
                   "copy-renaming"]


def drive_until_crash(primary, path, apex, serial, point, most=30):
    """Serials serial+1... from the primary, each NOTIFYed and waited
    for, until apexd ends at point: returns the serial it was applying."""
    for _ in range(most):
        serial += 1
        change_primary(primary, path, serial)
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
        deadline = time.monotonic() + 30
        while apex.proc.poll() is None and "IXFR serial %d" % serial not in apex.log_tail(200):
            assert time.monotonic() < deadline, apex.log_tail(40)
            time.sleep(0.01)
        if apex.proc.poll() is not None:
            break
    else:
        raise AssertionError("apexd never reached %s:\n%s" % (point, apex.log_tail(40)))
    return serial


def ended_at(apex, point):
    assert apex.proc.wait(30) == CRASH_STATUS, apex.log_tail()
    apex.log.close()
    assert "APEX_TEST_CRASH_AT=%s: ending here" % point in apex.log_tail(), apex.log_tail()


def oldest_incremental(port, served, lowest=1):
    """The oldest serial an IXFR is answered from with change sets."""
    for serial in range(lowest, served):
        soas = ixfr_soas(port, serial)
        if len(soas) >= 4:
            return serial
    return None


@pytest.mark.parametrize("point", TRANSFER_POINTS)
def test_crash_point_transfer(tmp, monkeypatch, point):
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path, apex = start_pair(tmp)
    # the copy written after each transfer (copy-flush-interval: 0), so
    # that its flush follows each IXFR as the copy's points need
    apex.extra_server = ["    journal-size: 4096", "    copy-flush-interval: 0"]
    journal = apex.copy + ".jnl"
    try:
        apex.start()
        wait_serial(apex.port, 1, apex)
        for serial in range(2, BASE + 1):
            change_primary(primary, path, serial)
            notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
            wait_serial(apex.port, serial, apex)
            wait_line(apex, "IXFR serial %d" % serial)
        assert apex.stop() == 0, apex.log_tail()

        monkeypatch.setenv("APEX_TEST_CRASH_AT", point)
        apex.start()
        wait_serial(apex.port, BASE, apex)
        wait_checked(apex, BASE)  # its check at start done before a change
        crashed = drive_until_crash(primary, path, apex, BASE, point)
        ended_at(apex, point)
        monkeypatch.delenv("APEX_TEST_CRASH_AT")
        # what the point says is on disk
        if point == "copy-half-written":
            with open(apex.copy + ".xfr") as f:
                half = f.read()
            assert half.startswith("; ") and 0 < half.count("\n") < open(apex.copy).read(
            ).count("\n"), half
        if point == "copy-renaming":
            assert os.path.exists(apex.copy + ".xfr")
        if point == "journal-compact-writing":
            assert 0 < os.path.getsize(journal + ".new") < os.path.getsize(journal)
        if point.startswith("copy") or point == "journal-appended":
            assert copy_serial(apex) == crashed - 1

        # the restart with the primary gone: what the disk alone gives
        primary.fixed_port = primary.port
        primary.stop()
        apex.start()
        served = assert_serves_exactly(apex.port, [crashed - 1, crashed])
        assert_journal_opened(apex)
        log = apex.log_tail(400)
        if point == "journal-append-writing":
            assert "damaged bytes at its end dropped" in log, log
        if point in ("journal-appended", "copy-half-written", "copy-renaming"):
            # the journal ahead of the copy: its newest version at once
            assert served == crashed, log
            assert "journal replayed" in log, log
        else:  # the change set never whole in the journal
            assert served == crashed - 1, log
        assert_incremental(apex.port, served - 2, served)
        # the primary back: apexd catches up (a NOTIFY spares the retry)
        primary.start()
        if served < crashed:
            notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
            wait_line(apex, "IXFR serial %d" % crashed)
        assert_serves_exactly(apex.port, [crashed])
        # the history kept: an IXFR two serials back answered from the journal
        assert_incremental(apex.port, crashed - 2, crashed)
        oldest = oldest_incremental(apex.port, crashed)
        assert oldest is not None and oldest <= crashed - 2, (oldest, crashed)
        assert not os.path.exists(apex.copy + ".xfr")
        # and it goes on: the next change too
        change_primary(primary, path, crashed + 1)
        notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
        wait_serial(apex.port, crashed + 1, apex)
        assert_serves_exactly(apex.port, [crashed + 1])
        assert_incremental(apex.port, oldest, crashed + 1)
        print("%s: crashed applying %d, restart served %d, IXFR from %d incremental"
              % (point, crashed, served, oldest))
    finally:
        if apex.proc is not None and apex.proc.poll() is None:
            assert apex.stop() == 0, apex.log_tail()
        primary.stop()


# A reload of a primary's file: apexd at serial BASE, its file changed to
# BASE + 1 and SIGHUP, ended at each point of the reload (the last: in the
# middle of writing the reload's diff to the journal).  The restart loads
# the file and must serve BASE + 1 whole and open its journal, a torn
# entry cut and the history before it kept.  The diff from BASE to BASE + 1
# is not in it and cannot be made (version BASE is gone with the process),
# as after any restart over a file edited meanwhile: an IXFR from before
# is answered with the whole zone, and the next reload starts the journal
# again, answered from it.
RELOAD_POINTS = ["reload-built", "reload-publishing", "reload-published",
                 "journal-append-writing"]


@pytest.mark.parametrize("point", RELOAD_POINTS)
def test_crash_point_reload(tmp, monkeypatch, point):
    path = os.path.join(tmp, "secret.test.zone")

    def write(serial):
        with open(path, "w") as f:
            f.write(text_of(serial))

    write(1)
    apex = PrimaryApexd(os.path.join(tmp, "apexd"), path)
    apex.start()
    try:
        for serial in range(2, BASE + 1):
            write(serial)
            apex.proc.send_signal(signal.SIGHUP)
            wait_serial(apex.port, serial, apex)
        assert apex.stop() == 0, apex.log_tail()

        monkeypatch.setenv("APEX_TEST_CRASH_AT", point)
        apex.start()
        assert_serves_exactly(apex.port, [BASE])
        write(BASE + 1)
        apex.proc.send_signal(signal.SIGHUP)
        ended_at(apex, point)
        monkeypatch.delenv("APEX_TEST_CRASH_AT")

        apex.start()
        log = apex.log_tail(400)
        assert "journal %s.jnl opened: %d change set(s), serial 1 to %d" % (
            path, BASE - 1, BASE) in log, log
        if point == "journal-append-writing":
            assert "damaged bytes at its end dropped" in log, log
        assert_serves_exactly(apex.port, [BASE + 1])
        assert ixfr_soas(apex.port, 1) == [BASE + 1, BASE + 1]  # the whole zone
        # the next reload is recorded and answered from the journal
        write(BASE + 2)
        apex.proc.send_signal(signal.SIGHUP)
        wait_serial(apex.port, BASE + 2, apex)
        assert_serves_exactly(apex.port, [BASE + 2])
        assert_incremental(apex.port, BASE + 1, BASE + 2)
        print("%s: IXFR from %d: %s" % (point, 1, ixfr_soas(apex.port, 1)))
    finally:
        if apex.proc is not None and apex.proc.poll() is None:
            assert apex.stop() == 0, apex.log_tail()


def test_crash_runs(tmp):
    """contrib/bench/crash_runs.py, reduced: SIGKILL at random moments of
    an IXFR and a reload at once, APEX_CRASH_RUNS runs (24 by default;
    doc/reliability.md has the figures of a long run)."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    import sys
    sys.path.insert(0, os.path.join(os.environ.get("APEX_SRCDIR", os.getcwd()),
                                    "contrib", "bench"))
    import crash_runs
    runs = int(os.environ.get("APEX_CRASH_RUNS", "24"))
    outcomes, failures, done = crash_runs.run(runs, os.environ.get("APEX_TEST_SEED"),
                                              workdir=tmp, budget=BUDGET)
    assert not failures, failures[:3]
    assert done >= min(runs, 10), "fewer than ten runs within %.0f s" % BUDGET
    assert outcomes["run passed"] == done
