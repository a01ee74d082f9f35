# SPDX-License-Identifier: BSD-3-Clause
"""apexd as a primary: NSD, Knot DNS and BIND transfer a zone from it.

apexd serves secret.test. from a file and allows transfers to 127.0.0.0/8
with the TSIG key only (provide-xfr).  Each reference server, configured
as its secondary with the key, must transfer the zone and serve exactly
the records apexd's own AXFR holds; after a change of apexd's file (and
SIGHUP) and a NOTIFY, each must follow.  Transfers without the key, with
another key, for a zone not served, and from an address outside the list
are refused with no zone data.  A chain Knot DNS -> apexd -> NSD carries a
change from end to end.
"""

import json
import os
import pwd
import re
import shutil
import signal
import threading
import time

import dns.edns
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.rrset
import dns.tsig
import dns.tsigkeyring
import pytest

import servers
from test_secondary import (KEY_NAME, KEYRING, ORIGIN, SECRET, SecondaryApexd, apexctl,
                            assert_same_records, expire_of, have, primary_records,
                            records_after_ixfr, scrape_metrics, serial_of, start_primary, wait_log,
                            wait_path, zone_text)

WAIT = 30.0


class PrimaryApexd(servers.Server):
    """apexd serving secret.test. from a file, transfers to the key only."""

    kind = "apexd-primary"

    def __init__(self, workdir, path, notify_port=None):
        super().__init__(workdir, [(ORIGIN, path)])
        self.path = path
        self.notify_port = notify_port  # a secondary to NOTIFY
        self.extra_server = []  # more server: lines
        self.socket = None  # a control socket's path (apexctl)
        self.provide = True  # provide-xfr for the zone
        self.blocked = None  # an address provide-xfr blocks

    def command(self):
        conf = os.path.join(self.workdir, "apex.conf")
        control = '"%s"' % self.socket if self.socket else "none"
        lines = ["server:", "    listen: 127.0.0.1@%d" % self.port, "    workers: 2",
                 "    control-socket: %s" % control] + self.extra_server + [
                 "key:", '    name: "%s"' % KEY_NAME, "    algorithm: hmac-sha256",
                 '    secret: "%s"' % SECRET,
                 "zone:", '    name: "%s"' % ORIGIN, '    file: "%s"' % self.path]
        if self.blocked:
            lines.append("    provide-xfr: %s BLOCKED" % self.blocked)
        if self.provide:
            lines.append("    provide-xfr: 127.0.0.0/8 %s" % KEY_NAME)
        if self.notify_port:
            lines.append("    notify: 127.0.0.1@%d %s" % (self.notify_port, KEY_NAME))
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [servers.apexd_path(), "-f", "-c", conf]


class Secondary(servers.Server):
    """A reference server as secondary of 127.0.0.1@primary_port."""

    def __init__(self, workdir, primary_port, port=None):
        super().__init__(workdir, [(ORIGIN, None)])
        self.primary_port = primary_port
        self.fixed_port = port


class KnotSecondary(Secondary):
    kind = "knot-secondary"

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        lines = ["server:", '    rundir: "%s"' % d, "    listen: 127.0.0.1@%d" % self.port]
        if os.geteuid() == 0:
            lines.append("    user: root:root")
        lines += [
            "    background-workers: 1",
            "database:", '    storage: "%s/db"' % d,
            "control:", '    listen: "%s/knot.sock"' % d,
            "log:", "  - target: stderr", "    any: info",
            "key:", "  - id: %s" % KEY_NAME, "    algorithm: hmac-sha256",
            "    secret: %s" % SECRET,
            "remote:", "  - id: apex", "    address: 127.0.0.1@%d" % self.primary_port,
            "    key: %s" % KEY_NAME,
            "acl:", "  - id: notify", "    address: 127.0.0.1", "    key: %s" % KEY_NAME,
            "    action: notify",
            "template:", "  - id: default", '    storage: "%s"' % d,
            "    zonefile-sync: -1", "    semantic-checks: off",
            "zone:", "  - domain: %s" % ORIGIN, "    master: apex", "    acl: notify",
        ]
        conf = os.path.join(d, "knot.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", conf]


class NsdSecondary(Secondary):
    kind = "nsd-secondary"

    def command(self):
        d = self.workdir
        lines = [
            "server:", "    ip-address: 127.0.0.1@%d" % self.port, "    do-ip6: no",
            "    server-count: 1", '    username: ""', '    chroot: ""',
            '    zonesdir: "%s"' % d, '    database: ""', '    pidfile: "%s/nsd.pid"' % d,
            '    xfrdfile: "%s/xfrd.state"' % d, '    xfrdir: "%s"' % d,
            '    zonelistfile: "%s/zone.list"' % d, "    verbosity: 2",
            "remote-control:", "    control-enable: no",
            "key:", '    name: "%s"' % KEY_NAME, "    algorithm: hmac-sha256",
            '    secret: "%s"' % SECRET,
            "zone:", '    name: "%s"' % ORIGIN, '    zonefile: "%s/secret.test.zone"' % d,
            "    request-xfr: 127.0.0.1@%d %s" % (self.primary_port, KEY_NAME),
            "    allow-notify: 127.0.0.1 %s" % KEY_NAME,
        ]
        conf = os.path.join(d, "nsd.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("nsd") or "/usr/sbin/nsd", "-d", "-c", conf]


class BindSecondary(Secondary):
    kind = "bind-secondary"

    def command(self):
        d = self.workdir
        lines = [
            "options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
            "    listen-on port %d { 127.0.0.1; };" % self.port, "    listen-on-v6 { none; };",
            "    recursion no;", "    notify no;", "};",
            "controls { };",
            'key "%s" { algorithm hmac-sha256; secret "%s"; };' % (KEY_NAME, SECRET),
            'zone "%s" { type secondary; file "%s/secret.test.db"; masterfile-format text;'
            % (ORIGIN, d),
            "    primaries { 127.0.0.1 port %d key %s; };" % (self.primary_port, KEY_NAME),
            "    allow-notify { key %s; }; };" % KEY_NAME,
        ]
        conf = os.path.join(d, "named.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-c", conf]


SECONDARIES = {"knot": KnotSecondary, "nsd": NsdSecondary, "bind": BindSecondary}


def wait_serial(port, serial, server):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if serial_of(port) == serial:
            return
        time.sleep(0.1)
    raise AssertionError("%s did not serve serial %d within %.0f s:\n%s"
                         % (server.label, serial, WAIT, server.log_tail(40)))


def write_zone(path, serial, extra=""):
    with open(path, "w") as f:
        f.write(zone_text(serial, extra))


@pytest.mark.parametrize("kind", ["knot", "nsd", "bind"])
def test_primary_for(kind, tmp_path):
    """A reference secondary transfers the zone from apexd, and follows a
    change that apexd announces with NOTIFY (the SOA refresh is an hour)."""
    if not have(kind):
        pytest.skip("%s is not installed" % kind)
    tmp = str(tmp_path)
    path = os.path.join(tmp, "secret.test.zone")
    write_zone(path, 1)
    secondary_port = servers.free_port()
    apex = PrimaryApexd(os.path.join(tmp, "apexd"), path, notify_port=secondary_port).start()
    secondary = None
    try:
        secondary = SECONDARIES[kind](os.path.join(tmp, kind), apex.port,
                                      port=secondary_port).start()
        assert serial_of(secondary.port) == 1
        assert_same_records(primary_records(apex.port), secondary.port)

        write_zone(path, 2, "new IN A 192.0.2.99\n")
        apex.proc.send_signal(signal.SIGHUP)
        wait_serial(apex.port, 2, apex)
        wait_serial(secondary.port, 2, secondary)
        assert_same_records(primary_records(apex.port), secondary.port)
        log = apex.log_tail(60)
        assert "NOTIFY of serial 2 to 127.0.0.1@%d" % secondary_port in log, log
        # the change went out as an IXFR from the journal, not the whole zone
        assert "journal: serial 1 to 2, 1 removed, 2 added" in log, log
        assert "IXFR serial 2 to" in log, log
    finally:
        if secondary is not None:
            secondary.stop()
        assert apex.stop() == 0, apex.log_tail()


def xfr_rcode(port, zone, keyring=None, keyname=None, rdtype=dns.rdatatype.AXFR):
    """The RCODE of a transfer request, and the records it brought."""
    q = dns.message.make_query(zone, rdtype)
    if rdtype == dns.rdatatype.IXFR:
        q = dns.message.make_query(zone, rdtype)
        q.authority.append(dns.rrset.from_text(zone, 0, "IN", "SOA", ". . 1 0 0 0 0"))
    if keyring is not None:
        q.use_tsig(keyring, keyname, algorithm="hmac-sha256")
    r = dns.query.tcp(q, "127.0.0.1", port=port, timeout=10)
    return r.rcode(), sum(len(rrset) for rrset in r.answer)


def xfr_response(port, zone, keyring, keyname, rdtype=dns.rdatatype.AXFR, source=None, edns=0):
    """The answer to a signed transfer request with EDNS, from source."""
    q = dns.message.make_query(zone, rdtype, use_edns=edns)
    if rdtype == dns.rdatatype.IXFR:
        q.authority.append(dns.rrset.from_text(zone, 0, "IN", "SOA", ". . 1 0 0 0 0"))
    q.use_tsig(keyring, keyname, algorithm="hmac-sha256")
    return dns.query.tcp(q, "127.0.0.1", port=port, timeout=10, source=source)


def test_refusals(tmp_path):
    """No key, another key, another zone: refused, nothing of the zone sent;
    queries are still answered and the allowed transfer still works."""
    tmp = str(tmp_path)
    path = os.path.join(tmp, "secret.test.zone")
    write_zone(path, 1)
    apex = PrimaryApexd(os.path.join(tmp, "apexd"), path)
    apex.blocked = "127.0.0.2"
    apex.start()
    other = dns.tsigkeyring.from_text({"other-key": ("hmac-sha256", SECRET)})
    try:
        assert xfr_rcode(apex.port, ORIGIN) == (dns.rcode.NOTAUTH, 0)
        assert xfr_rcode(apex.port, ORIGIN, rdtype=dns.rdatatype.IXFR) == (dns.rcode.NOTAUTH, 0)
        with pytest.raises(dns.tsig.PeerBadKey):  # NOTAUTH with TSIG error BADKEY
            xfr_rcode(apex.port, ORIGIN, other, "other-key")
        assert xfr_rcode(apex.port, "example.", KEYRING, KEY_NAME) == (dns.rcode.NOTAUTH, 0)
        # with EDNS, a refusal says why (RFC 8914): an address provide-xfr
        # blocks, Prohibited (18); a zone not served, Not Authoritative (20)
        for rdtype in (dns.rdatatype.AXFR, dns.rdatatype.IXFR):
            r = xfr_response(apex.port, ORIGIN, KEYRING, KEY_NAME, rdtype, source="127.0.0.2")
            assert r.rcode() == dns.rcode.REFUSED and not r.answer, r
            assert [o.code for o in r.options if o.otype == dns.edns.EDE] == [
                dns.edns.EDECode.PROHIBITED], r
        r = xfr_response(apex.port, "example.", KEYRING, KEY_NAME)
        assert r.rcode() == dns.rcode.NOTAUTH
        assert [o.code for o in r.options if o.otype == dns.edns.EDE] == [
            dns.edns.EDECode.NOT_AUTHORITATIVE], r
        r = xfr_response(apex.port, ORIGIN, KEYRING, KEY_NAME, source="127.0.0.2", edns=-1)
        assert r.rcode() == dns.rcode.REFUSED and r.edns < 0  # no OPT asked, none sent
        assert serial_of(apex.port) == 1
        rcode, records = xfr_rcode(apex.port, ORIGIN, KEYRING, KEY_NAME)
        assert rcode == dns.rcode.NOERROR and records > 0
        # an IXFR from the current serial: the SOA alone
        q = dns.message.make_query(ORIGIN, dns.rdatatype.IXFR)
        q.authority.append(dns.rrset.from_text(ORIGIN, 0, "IN", "SOA", ". . 1 0 0 0 0"))
        q.use_tsig(KEYRING, KEY_NAME, algorithm="hmac-sha256")
        r = dns.query.tcp(q, "127.0.0.1", port=apex.port, timeout=10)
        assert [rrset.rdtype for rrset in r.answer] == [dns.rdatatype.SOA]
        wait_log(apex, "refused")  # logged once the answer is sent
    finally:
        assert apex.stop() == 0, apex.log_tail()


def test_chain(tmp_path):
    """Knot DNS -> apexd -> NSD: a change at the top reaches the bottom,
    announced by NOTIFY at each step."""
    if not have("knot") or not have("nsd"):
        pytest.skip("knot and nsd are needed")
    tmp = str(tmp_path)
    apex_port = servers.free_port()
    nsd_port = servers.free_port()
    knot, path = start_primary("knot", tmp, notify_port=apex_port)
    apex = nsd = None
    try:
        apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                              ["127.0.0.1@%d %s" % (knot.port, KEY_NAME)], port=apex_port,
                              provide="127.0.0.0/8 %s" % KEY_NAME,
                              notify="127.0.0.1@%d %s" % (nsd_port, KEY_NAME)).start()
        nsd = NsdSecondary(os.path.join(tmp, "nsd"), apex.port, port=nsd_port).start()
        assert serial_of(nsd.port) == 1
        time.sleep(1.1)
        with open(path, "w") as f:
            f.write(zone_text(2, "chain IN A 192.0.2.42\n"))
        knot.reload()
        wait_serial(apex.port, 2, apex)
        wait_serial(nsd.port, 2, nsd)
        assert_same_records(primary_records(knot.port), nsd.port)
    finally:
        if nsd is not None:
            nsd.stop()
        if apex is not None:
            assert apex.stop() == 0, apex.log_tail()
        knot.stop()


def test_edns_expire_to_knot(tmp_path):
    """EDNS EXPIRE (RFC 7314) to another implementation: Knot DNS as the
    secondary of an apexd secondary whose primary is gone takes the time
    apexd's copy has left, not a whole SOA expire period."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    tmp = str(tmp_path)
    primary, _ = start_primary("knot", tmp, expire=3600)
    apex = knot = None
    try:
        apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                              ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)],
                              provide="127.0.0.0/8 %s" % KEY_NAME).start()
        wait_serial(apex.port, 1, apex)
        primary.stop()
        time.sleep(3.5)
        left = expire_of(apex.port)
        assert left is not None and left <= 3597, left
        knot = KnotSecondary(os.path.join(tmp, "knot"), apex.port).start()
        wait_serial(knot.port, 1, knot)
        deadline = time.monotonic() + WAIT
        expires = None
        while expires is None and time.monotonic() < deadline:
            found = re.findall(r"expires in (\d+) seconds", knot.log_tail(60))
            expires = int(found[-1]) if found else None
            time.sleep(0.2)
        assert expires is not None, knot.log_tail(60)
        assert expires <= left, "Knot DNS: %d seconds, apexd had %d left" % (expires, left)
        print("expire left: apexd %d, knot %d" % (left, expires))
    finally:
        if knot is not None:
            knot.stop()
        if apex is not None:
            assert apex.stop() == 0, apex.log_tail()
        primary.stop()


def ixfr_soas(port, serial):
    """The serials of the SOA records of an IXFR from serial, in order."""
    msgs = dns.query.xfr("127.0.0.1", ORIGIN, rdtype=dns.rdatatype.IXFR, serial=serial,
                         port=port, keyring=KEYRING, keyname=KEY_NAME,
                         keyalgorithm="hmac-sha256", relativize=False, lifetime=30)
    return [rr.serial for m in msgs for rrset in m.answer
            if rrset.rdtype == dns.rdatatype.SOA for rr in rrset]


def test_ixfr_from_journal(tmp_path):
    """Two reloads with changes, then an IXFR from each older serial: the
    change sets from the journal, applied by dnspython to the old zone, give
    exactly the zone served now; also after a restart (the journal is on
    disk)."""
    tmp = str(tmp_path)
    path = os.path.join(tmp, "secret.test.zone")
    write_zone(path, 1)
    apex = PrimaryApexd(os.path.join(tmp, "apexd"), path).start()
    try:
        write_zone(path, 2, "new IN A 192.0.2.99\n")
        apex.proc.send_signal(signal.SIGHUP)
        wait_serial(apex.port, 2, apex)
        text3 = zone_text(3, "new IN A 192.0.2.100\n").replace("mail IN MX 10", "mail IN MX 20")
        with open(path, "w") as f:
            f.write(text3)
        apex.proc.send_signal(signal.SIGHUP)
        wait_serial(apex.port, 3, apex)
        for restart in (False, True):
            if restart:
                assert apex.stop() == 0
                apex.start()
            want = primary_records(apex.port)
            for serial, extra in ((1, ""), (2, "new IN A 192.0.2.99\n")):
                got = records_after_ixfr(apex.port, serial, zone_text(serial, extra))
                assert got == want, serial
        wait_log(apex, "IXFR serial 3")  # logged once the answer is sent
        # the two change sets from serial 1 come condensed into one: the
        # first and last SOA around it, the old and new SOA in it
        soas = ixfr_soas(apex.port, 1)
        assert soas == [3, 1, 3, 3], soas
    finally:
        assert apex.stop() == 0, apex.log_tail()


def test_ixfr_after_large_reload(tmp_path):
    """A reload whose change set is large beside the zone (over 1/64 of its
    memory) frees the set once the derivation has read it, and the journal
    compares the two versions instead (zones/reload_diff.c): an IXFR from
    the serial before, applied by dnspython, gives exactly the zone served,
    as one change set."""
    tmp = str(tmp_path)
    path = os.path.join(tmp, "secret.test.zone")
    write_zone(path, 1)
    apex = PrimaryApexd(os.path.join(tmp, "apexd"), path).start()
    try:
        extra = "".join("reg%04d IN NS ns.reg%04d\nns.reg%04d IN A 192.0.2.%d\n"
                        % (i, i, i, i % 250 + 1) for i in range(1500))
        text2 = zone_text(2, extra).replace("mail IN MX 10", "mail IN MX 30")
        with open(path, "w") as f:
            f.write(text2)
        apex.proc.send_signal(signal.SIGHUP)
        wait_serial(apex.port, 2, apex)
        log = apex.log_tail(60)
        # the MX and the TXT that holds the serial changed, 3,000 records added
        assert re.search(r"2 removed, 3002 added, serial 2 derived in place in \S+ s \(the "
                         r"change set freed once read", log), log
        wait_log(apex, "journal: serial 1 to 2, 2 removed, 3002 added")
        got = records_after_ixfr(apex.port, 1, zone_text(1))
        assert got == primary_records(apex.port)
        assert ixfr_soas(apex.port, 1) == [2, 1, 2, 2]
    finally:
        assert apex.stop() == 0, apex.log_tail()


def test_reload_past_journal_size(tmp_path):
    """A reload whose difference is larger than journal-size allows does
    not make it: the walk that sizes it stops at the bound (lib/xfr/diff.h),
    the journal is emptied and says so, and an IXFR from the serial before
    gets the whole zone.  The next change that fits is journaled again."""
    tmp = str(tmp_path)
    path = os.path.join(tmp, "secret.test.zone")
    write_zone(path, 1)
    apex = PrimaryApexd(os.path.join(tmp, "apexd"), path)
    apex.extra_server = ["    journal-size: 4096"]
    apex.start()
    try:
        # 3,000 records added: about 90 KB of change set, freed once the
        # derivation has read it, so that the journal compares the versions
        extra = "".join("reg%04d IN NS ns.reg%04d\nns.reg%04d IN A 192.0.2.%d\n"
                        % (i, i, i, i % 250 + 1) for i in range(1500))
        write_zone(path, 2, extra)
        apex.proc.send_signal(signal.SIGHUP)
        wait_serial(apex.port, 2, apex)
        wait_log(apex, "journal: the change from serial 1 to 2 (more than ")
        log = apex.log_tail(100)
        assert "the change set freed once read" in log, log
        assert "is larger than journal-size allows" in log, log
        assert "journal: serial 1 to 2" not in log, log
        assert ixfr_soas(apex.port, 1) == [2, 2]  # the whole zone, between its SOA twice

        write_zone(path, 3, extra + "new IN A 192.0.2.99\n")
        apex.proc.send_signal(signal.SIGHUP)
        wait_serial(apex.port, 3, apex)
        wait_log(apex, "journal: serial 2 to 3, 1 removed, 2 added")
        assert ixfr_soas(apex.port, 2) == [3, 2, 3, 3]
        assert ixfr_soas(apex.port, 1) == [3, 3]
    finally:
        assert apex.stop() == 0, apex.log_tail()


def timed_ixfr_soas(port, serial):
    """ixfr_soas(), how long its answer took in seconds, and when it ended
    (time.monotonic())."""
    start = time.monotonic()
    soas = ixfr_soas(port, serial)
    end = time.monotonic()
    return soas, end - start, end


def reload_held(apex, hold, serial, extra):
    """Reload apex's zone at serial (with extra), its reload thread held
    between publication and journal record while hold exists; returns once
    the serial is served."""
    with open(hold, "w"):
        pass
    write_zone(apex.path, serial, extra)
    apex.proc.send_signal(signal.SIGHUP)
    wait_path(hold + ".held", True, apex)
    wait_serial(apex.port, serial, apex)


def test_ixfr_between_publication_and_journal(tmp_path, monkeypatch):
    """A reload's change is journaled after its version is published.  An
    IXFR that comes in between (the test holds the reload thread there)
    waits for the journal and gets the change set, not the whole zone;
    one for a version whose record is held past the wait's bound (1 s)
    gets the whole zone after it, and the next IXFR for that version does
    not wait again; once the record is made, IXFR comes from the journal.
    The statistics and the metrics count the IXFRs answered, and those
    answered with the whole zone."""
    tmp = str(tmp_path)
    hold = os.path.join(tmp, "hold")
    monkeypatch.setenv("APEX_TEST_HOLD_AT", "journal-recording:" + hold)
    path = os.path.join(tmp, "secret.test.zone")
    write_zone(path, 1)
    apex = PrimaryApexd(os.path.join(tmp, "apexd"), path)
    apex.socket = os.path.join(tmp, "control.sock")
    metrics_port = servers.free_port()
    apex.extra_server.append("    metrics: 127.0.0.1@%d" % metrics_port)
    apex.start()
    try:
        # an IXFR sent while the record is held, which is let go 0.5 s later
        reload_held(apex, hold, 2, "new IN A 192.0.2.99\n")
        got = {}
        asker = threading.Thread(
            target=lambda: got.update(answer=timed_ixfr_soas(apex.port, 1)))
        asker.start()
        time.sleep(0.5)
        released = time.monotonic()
        os.unlink(hold)
        asker.join(WAIT)
        soas, _, ended = got["answer"]
        assert soas == [2, 1, 2, 2], (soas, apex.log_tail())  # the change set
        assert ended >= released  # answered once the record was let go
        assert records_after_ixfr(apex.port, 1, zone_text(1)) == primary_records(apex.port)

        # a record held past the bound: the whole zone, after the wait
        reload_held(apex, hold, 3, "new IN A 192.0.2.100\n")
        soas, took, _ = timed_ixfr_soas(apex.port, 2)
        assert soas == [3, 3], soas  # the whole zone, between its SOA twice
        assert took >= 0.9, took  # after the wait
        wait_log(apex, "serial 3 not recorded within 1000 ms")
        assert ixfr_soas(apex.port, 2) == [3, 3]  # no wait again (the log says it once)
        assert apex.log_tail(400).count("serial 3 not recorded within") == 1, apex.log_tail()
        os.unlink(hold)
        wait_log(apex, "journal: serial 2 to 3")
        soas = ixfr_soas(apex.port, 2)
        assert soas == [3, 2, 3, 3], soas

        # five IXFRs answered (three from the journal), two with the whole
        # zone, and primary_records()'s AXFR; counted once the answer is
        # sent, so waited for
        deadline = time.monotonic() + WAIT
        while True:
            xfr = json.loads(apexctl(apex, "--json", "stats").stdout)["transfers"]
            if xfr["out_ixfr"] >= 5 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert (xfr["out_ok"], xfr["out_ixfr"], xfr["out_ixfr_whole"]) == (6, 5, 2), xfr
        assert "ixfr=5 ixfr-whole=2" in apexctl(apex, "stats").stdout
        metrics = scrape_metrics(metrics_port)
        assert '\napex_ixfr_out_total{answer="incremental"} 3\n' in metrics, metrics
        assert '\napex_ixfr_out_total{answer="whole"} 2\n' in metrics, metrics
    finally:
        if os.path.exists(hold):
            os.unlink(hold)
        assert apex.stop() == 0, apex.log_tail()


def test_journal_after_reconfig(tmp_path):
    """A zone served without provide-xfr gets it by a reconfig: its journal
    is opened then, so the change of the next reload is answered as an IXFR
    from the journal, not with the whole zone."""
    tmp = str(tmp_path)
    path = os.path.join(tmp, "secret.test.zone")
    write_zone(path, 1)
    apex = PrimaryApexd(os.path.join(tmp, "apexd"), path)
    apex.socket = os.path.join(tmp, "control.sock")
    apex.provide = False
    apex.start()
    try:
        assert xfr_rcode(apex.port, ORIGIN, KEYRING, KEY_NAME) == (dns.rcode.REFUSED, 0)
        apex.provide = True
        apex.command()  # writes apex.conf again, on the same port
        r = apexctl(apex, "reconfig")
        assert r.returncode == 0, (r, apex.log_tail())
        write_zone(path, 2, "new IN A 192.0.2.99\n")
        apex.proc.send_signal(signal.SIGHUP)
        wait_serial(apex.port, 2, apex)
        wait_log(apex, "journal: serial 1 to 2")
        assert records_after_ixfr(apex.port, 1, zone_text(1)) == primary_records(apex.port)
        # from the journal: the old and new SOA inside, not the whole zone
        soas = ixfr_soas(apex.port, 1)
        assert soas == [2, 1, 2, 2], soas
    finally:
        assert apex.stop() == 0, apex.log_tail()


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_journal_in_chroot(tmp_path, monkeypatch):
    """With chroot and user nobody, a journal past its journal-size drops
    its oldest change sets (a rewrite renamed over it inside the chroot)
    and still answers an IXFR from the last serial."""
    # LeakSanitizer reads /proc at exit, which the chroot lacks
    asan = os.environ.get("ASAN_OPTIONS")
    monkeypatch.setenv("ASAN_OPTIONS", (asan + ":" if asan else "") + "detect_leaks=0")
    root = os.path.join(str(tmp_path), "chrooted")
    os.makedirs(root)
    nobody = pwd.getpwnam("nobody")
    os.chown(root, nobody.pw_uid, nobody.pw_gid)  # the journal's rewrite is created here
    os.chmod(str(tmp_path), 0o755)
    path = os.path.join(root, "secret.test.zone")
    write_zone(path, 1)
    os.chmod(path, 0o644)
    apex = PrimaryApexd(root, path)
    apex.extra_server = ["    user: nobody", '    chroot: "%s"' % root, "    journal-size: 4096"]
    apex.start()
    try:
        for serial in range(2, 12):
            # each change set removes and adds twenty records: about 900 bytes
            write_zone(path, serial, "".join("change%d-%d IN A 192.0.2.%d\n" % (serial, i, i + 1)
                                             for i in range(20)))
            apex.proc.send_signal(signal.SIGHUP)
            wait_serial(apex.port, serial, apex)
        log = apex.log_tail(200)
        assert "cannot" not in log, log
        journal = path + ".jnl"
        assert os.path.getsize(journal) <= 4096, os.path.getsize(journal)
        want = primary_records(apex.port)
        extra10 = "".join("change10-%d IN A 192.0.2.%d\n" % (i, i + 1) for i in range(20))
        assert records_after_ixfr(apex.port, 10, zone_text(10, extra10)) == want
        wait_log(apex, "IXFR serial 11")  # logged once the answer is sent
    finally:
        assert apex.stop() == 0, apex.log_tail()
