# SPDX-License-Identifier: BSD-3-Clause
"""apexd as a secondary: zones transferred from NSD, Knot DNS and BIND.

Each reference server is the primary of a small zone, secret.test., and
transfers it only with a TSIG key (hmac-sha256).  apexd is configured as
its secondary (request-xfr) with no copy of the zone: it must transfer
the zone, check it, serve exactly the records the primary has, keep its
copy on disk, follow a change on the primary (the zone's SOA refresh is
one second) and serve from the copy after a restart with the primary
gone.  A primary that is wrong on purpose (a fake one in this file) must
never change what apexd serves.
"""

import base64
import json
import os
import pwd
import shutil
import socket
import struct
import subprocess
import threading
import time
import unittest.mock
import urllib.request

import dns.edns
import dns.exception
import dns.flags
import dns.message
import dns.opcode
import dns.name
import dns.query
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import dns.tsig
import dns.tsigkeyring
import dns.xfr
import dns.zone
import pytest

import servers

ORIGIN = "secret.test."
KEY_NAME = "xfr-key"
SECRET = base64.b64encode(b"apex secondary test key, 32 byt").decode()
WRONG_SECRET = base64.b64encode(b"a wrong key for the same name!!").decode()
KEYRING = dns.tsigkeyring.from_text({KEY_NAME: ("hmac-sha256", SECRET)})
HOSTS = 1500  # about 250 KB: several messages per transfer
WAIT = 30.0  # seconds for apexd to follow a primary (bounded)


def zone_text(serial, extra="", refresh=3600, expire=3600, sub_glue="192.0.2.53"):
    lines = [
        "$ORIGIN %s" % ORIGIN,
        "$TTL 300",
        "@ IN SOA ns1 hostmaster %d %d 1 %d 60" % (serial, refresh, expire),
        "@ IN NS ns1",
        "@ IN NS ns2.elsewhere.example.",
        "ns1 IN A 192.0.2.1",
        "ns1 IN AAAA 2001:db8::1",
        "www IN A 192.0.2.80",
        "www IN TXT \"serial %d\"" % serial,
        "mail IN MX 10 mx.secret.test.",
        "mx IN A 192.0.2.25",
        "alias IN CNAME www",
        "*.wild IN TXT \"wildcard\"",
        "sub IN NS ns.sub",
        "ns.sub IN A %s" % sub_glue,
    ]
    for i in range(HOSTS):  # enough for several messages
        lines.append("host%03d IN A 198.51.100.%d" % (i, i % 250 + 1))
        lines.append("host%03d IN TXT \"%s\"" % (i, "x" * 120))
    return "\n".join(lines) + "\n" + extra


class Primary(servers.Server):
    """A reference server as primary; it NOTIFYs notify_port when set."""

    def __init__(self, workdir, zones, notify_port=None):
        super().__init__(workdir, zones)
        self.notify_port = notify_port


class KnotPrimary(Primary):
    kind = "knot-primary"

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
            "acl:", "  - id: xfr", "    key: %s" % KEY_NAME, "    action: transfer",
        ]
        if self.notify_port:
            lines += ["remote:", "  - id: apex",
                      "    address: 127.0.0.1@%d" % self.notify_port, "    key: %s" % KEY_NAME]
        lines += [
            "template:", "  - id: default", '    storage: "%s"' % d,
            "    zonefile-sync: -1", "    zonefile-load: difference",
            "    journal-content: changes", "    semantic-checks: off",
            "zone:",
        ]
        for origin, path in self.zones:
            lines += ["  - domain: %s" % origin, '    file: "%s"' % path, "    acl: xfr"]
            if self.notify_port:
                lines.append("    notify: apex")
        conf = os.path.join(d, "knot.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", conf]

    def reload(self):
        subprocess.run([shutil.which("knotc") or "/usr/sbin/knotc", "-s",
                        os.path.join(self.workdir, "knot.sock"), "zone-reload"],
                       check=True, stdout=subprocess.DEVNULL, timeout=30)


class NsdPrimary(Primary):
    kind = "nsd-primary"

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
        ]
        for origin, path in self.zones:
            lines += ["zone:", '    name: "%s"' % origin, '    zonefile: "%s"' % path,
                      "    provide-xfr: 127.0.0.0/8 %s" % KEY_NAME]
            if self.notify_port:
                lines.append("    notify: 127.0.0.1@%d %s" % (self.notify_port, KEY_NAME))
        conf = os.path.join(d, "nsd.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("nsd") or "/usr/sbin/nsd", "-d", "-c", conf]

    def reload(self):
        self.proc.send_signal(1)  # SIGHUP: NSD reads changed zone files


class BindPrimary(Primary):
    kind = "bind-primary"

    def command(self):
        d = self.workdir
        lines = [
            "options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
            "    listen-on port %d { 127.0.0.1; };" % self.port, "    listen-on-v6 { none; };",
            "    recursion no;", "    notify no;",
            "};",
            "controls { };",
            'key "%s" { algorithm hmac-sha256; secret "%s"; };' % (KEY_NAME, SECRET),
        ]
        for origin, path in self.zones:
            notify = ""
            if self.notify_port:
                notify = " notify explicit; also-notify { 127.0.0.1 port %d key %s; };" % (
                    self.notify_port, KEY_NAME)
            lines += ['zone "%s" { type primary; file "%s"; allow-transfer { key %s; };'
                      ' ixfr-from-differences yes;%s };' % (origin, path, KEY_NAME, notify)]
        conf = os.path.join(d, "named.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-c", conf]

    def reload(self):
        self.proc.send_signal(1)


PRIMARIES = {"knot": KnotPrimary, "nsd": NsdPrimary, "bind": BindPrimary}


def have(kind):
    return shutil.which({"knot": "knotd", "nsd": "nsd", "bind": "named"}[kind]) is not None


class SecondaryApexd(servers.Server):
    """apexd with a config file: secret.test. from primaries, no copy yet."""

    kind = "apexd"

    def __init__(self, workdir, primaries, secret=SECRET, wait_zone=True, port=None,
                 provide=None, notify=None):
        super().__init__(workdir, [(ORIGIN, None)] if wait_zone else [])
        self.primaries = primaries  # ["127.0.0.1@PORT KEY"]
        self.secret = secret
        self.fixed_port = port  # the port the primary NOTIFYs
        self.provide = provide  # provide-xfr, for a chain
        self.notify = notify  # notify, for a chain
        self.extra_server = []  # more server: lines
        self.socket = os.path.join(workdir, "control.sock")
        self.copy = os.path.join(workdir, "secret.test.zone")

    def command(self):
        conf = os.path.join(self.workdir, "apex.conf")
        lines = ["server:", "    listen: 127.0.0.1@%d" % self.port, "    workers: 2",
                 '    control-socket: "%s"' % self.socket,
                 "    xfr-idle-timeout: 3"] + self.extra_server + [
                 "key:", '    name: "%s"' % KEY_NAME, "    algorithm: hmac-sha256",
                 '    secret: "%s"' % self.secret,
                 "zone:", '    name: "%s"' % ORIGIN, '    file: "%s"' % self.copy]
        lines += ["    request-xfr: %s" % p for p in self.primaries]
        lines += ["    allow-notify: 127.0.0.1 %s" % KEY_NAME]
        if self.provide:
            lines += ["    provide-xfr: %s" % self.provide]
        if self.notify:
            lines += ["    notify: %s" % self.notify]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [servers.apexd_path(), "-f", "-c", conf]


def query(port, name, rdtype, tcp=False):
    q = dns.message.make_query(name, rdtype)
    q.flags = 0
    if tcp:
        return dns.query.tcp(q, "127.0.0.1", port=port, timeout=5)
    return dns.query.udp(q, "127.0.0.1", port=port, timeout=5)


def answers(port):
    """Whether apexd answers at all yet (it starts without the zone)."""
    try:
        query(port, ORIGIN, dns.rdatatype.SOA)
        return True
    except dns.exception.Timeout:
        return False


def wait_answering(apex):
    """Wait until apexd answers at all (bounded by the start time-out)."""
    deadline = time.monotonic() + servers.START_TIMEOUT
    while not answers(apex.port):
        assert time.monotonic() < deadline, apex.log_tail()
        time.sleep(0.1)


def serial_of(port):
    r = query(port, ORIGIN, dns.rdatatype.SOA)
    if r.rcode() != dns.rcode.NOERROR or not r.answer:
        return None
    return r.answer[0][0].serial


def wait_log(server, text):
    """Wait for a line of the server's log (it is written just after the
    version it tells of is published)."""
    deadline = time.monotonic() + WAIT
    while text not in server.log_tail(200):
        assert time.monotonic() < deadline, "no %r in the log:\n%s" % (text, server.log_tail(40))
        time.sleep(0.1)


def wait_copy(server):
    """Wait for the server's copy of the zone: written from the version just
    after it is published (doc/transfers.md)."""
    deadline = time.monotonic() + WAIT
    while not os.path.exists(server.copy):
        assert time.monotonic() < deadline, "no copy of the zone was written:\n%s" % (
            server.log_tail(40))
        time.sleep(0.05)


def copy_serial(server):
    """The SOA serial of the server's copy of the zone (written whole under
    a temporary name, then renamed), or None without one."""
    try:
        with open(server.copy) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    zone = dns.zone.from_text(text, origin=ORIGIN, relativize=False, check_origin=False)
    return zone.find_rdataset(ORIGIN, dns.rdatatype.SOA)[0].serial


def wait_copy_serial(server, serial):
    """Wait for the server's copy to hold serial: it is written after the
    version is served, small zones' copies in batches (doc/transfers.md)."""
    deadline = time.monotonic() + WAIT
    while copy_serial(server) != serial:
        assert time.monotonic() < deadline, "the copy never reached serial %d:\n%s" % (
            serial, server.log_tail(40))
        time.sleep(0.05)


def wait_serial(port, serial, server):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if serial_of(port) == serial:
            return
        time.sleep(0.1)
    raise AssertionError("apexd did not serve serial %d within %.0f s:\n%s"
                         % (serial, WAIT, server.log_tail(40)))


def primary_records(port):
    """Every record of the zone, from an AXFR of the primary (with the key)."""
    xfr = dns.query.xfr("127.0.0.1", ORIGIN, port=port, keyring=KEYRING,
                        keyname=KEY_NAME, keyalgorithm="hmac-sha256", lifetime=30,
                        relativize=False)
    z = dns.zone.from_xfr(xfr, relativize=False)
    return {(name, rds.rdtype): rds for name, node in z.nodes.items() for rds in node}


def scrape_metrics(port):
    """The text of apexd's metrics endpoint on 127.0.0.1@port."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=WAIT) as r:
        return r.read().decode()


def records_after_ixfr(port, serial, text):
    """The zone text of serial brought up to date by an IXFR from
    127.0.0.1@port (with the key), applied by dnspython: its RRsets."""
    zone = dns.zone.from_text(text, origin=ORIGIN, relativize=False)
    q, _ = dns.xfr.make_query(zone, serial=serial, keyring=KEYRING, keyname=KEY_NAME,
                              keyalgorithm="hmac-sha256")
    dns.query.inbound_xfr("127.0.0.1", zone, query=q, port=port, timeout=10, lifetime=30)
    return {(name, rds.rdtype): rds for name, node in zone.nodes.items() for rds in node}


def assert_same_records(records, port):
    """apexd answers every RRset of the primary, exactly (asked over TCP)."""
    delegation = dns.name.from_text("sub." + ORIGIN)
    for (name, rdtype), rds in records.items():
        r = query(port, name, rdtype, tcp=True)
        assert r.rcode() == dns.rcode.NOERROR, (name, rdtype, r)
        if name.is_subdomain(delegation) and rdtype != dns.rdatatype.DS:
            section = r.authority if name == delegation else r.additional
        else:
            section = r.answer
        got = [s for s in section if s.name == name and s.rdtype == rdtype]
        assert got, "%s %s missing from apexd's answer:\n%s" % (
            name, dns.rdatatype.to_text(rdtype), r)
        assert set(got[0]) == set(rds), (name, rdtype, got[0], rds)


@pytest.fixture
def tmp(tmp_path):
    return str(tmp_path)


def start_primary(kind, tmp, serial=1, notify_port=None, refresh=3600, expire=3600):
    d = os.path.join(tmp, kind)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "secret.test.zone")
    with open(path, "w") as f:
        f.write(zone_text(serial, refresh=refresh, expire=expire))
    return PRIMARIES[kind](d, [(ORIGIN, path)], notify_port).start(), path


@pytest.mark.parametrize("kind", ["knot", "nsd", "bind"])
def test_secondary_of(kind, tmp):
    """The first transfer, the records, a change announced by NOTIFY (the
    SOA refresh is an hour), and a restart from the copy."""
    if not have(kind):
        pytest.skip("%s is not installed" % kind)
    apex_port = servers.free_port()
    primary, path = start_primary(kind, tmp, notify_port=apex_port)
    apex = None
    try:
        apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                              ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)],
                              port=apex_port).start()
        assert serial_of(apex.port) == 1
        assert_same_records(primary_records(primary.port), apex.port)
        wait_copy(apex)

        # A change on the primary reaches apexd by NOTIFY.
        time.sleep(1.1)  # a new mtime for the primaries that look at it
        with open(path, "w") as f:
            f.write(zone_text(2, "new IN A 192.0.2.99\n"))
        primary.reload()
        wait_serial(apex.port, 2, apex)
        r = query(apex.port, "new." + ORIGIN, dns.rdatatype.A)
        assert [rr.address for rr in r.answer[0]] == ["192.0.2.99"]
        assert_same_records(primary_records(primary.port), apex.port)
        # Knot DNS and BIND keep the difference and send it as IXFR; NSD 4.6
        # (before store-ixfr) answers an IXFR with the whole zone
        how = "IXFR (whole zone) serial 2" if kind == "nsd" else "IXFR serial 2"
        wait_log(apex, how)

        # A change to existing names only (a TXT, the glue of a delegation):
        # an IXFR of it is derived from the version served, in place
        time.sleep(1.1)
        with open(path, "w") as f:
            f.write(zone_text(3, "new IN A 192.0.2.99\n", sub_glue="192.0.2.54"))
        primary.reload()
        wait_serial(apex.port, 3, apex)
        assert_same_records(primary_records(primary.port), apex.port)
        r = query(apex.port, "www.sub." + ORIGIN, dns.rdatatype.A)
        assert [rr.address for s in r.additional for rr in s] == ["192.0.2.54"], r
        if kind != "nsd":
            wait_log(apex, "IXFR serial 3")
            assert "derived in place" in apex.log_tail(50), apex.log_tail(50)

        # Restart with the primary gone: served at once from the copy.
        assert apex.stop() == 0
        # each replaced version was freed once the workers let go of it (the
        # transfer thread held no reference of its own to it)
        assert "still in use" not in apex.log_tail(400), apex.log_tail(400)
        assert primary.stop() is not None
        primary = None
        apex.fixed_port = None
        apex.start()
        assert serial_of(apex.port) == 3
        r = query(apex.port, "new." + ORIGIN, dns.rdatatype.A)
        assert [rr.address for rr in r.answer[0]] == ["192.0.2.99"]
    finally:
        if apex is not None:
            assert apex.stop() == 0, apex.log_tail()
        if primary is not None:
            primary.stop()


def test_copy_written_at_stop(tmp, monkeypatch):
    """A small zone's copy waits to be synced with others (up to 200 ms,
    doc/transfers.md; a minute here, by the test hook): a stop writes it,
    so that a start with the primary gone serves the zone."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, _ = start_primary("knot", tmp)
    apex = None
    monkeypatch.setenv("APEX_TEST_COPY_BATCH_MS", "60000")
    try:
        apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                              ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)]).start()
        assert serial_of(apex.port) == 1
        time.sleep(0.5)
        assert not os.path.exists(apex.copy)  # waiting
        assert apex.stop() == 0, apex.log_tail(40)
        assert os.path.exists(apex.copy), apex.log_tail(40)
        assert not os.path.exists(apex.copy + ".xfr")
        assert primary.stop() is not None
        primary = None
        apex.start()
        assert serial_of(apex.port) == 1
    finally:
        if apex is not None:
            assert apex.stop() == 0, apex.log_tail()
        if primary is not None:
            primary.stop()


def test_wrong_key_is_not_served(tmp):
    """A transfer apexd cannot authenticate is never served."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, _ = start_primary("knot", tmp)
    apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                          ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)],
                          secret=WRONG_SECRET, wait_zone=False)
    try:
        apex.start()
        wait_answering(apex)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            # configured, not loaded: SERVFAIL as NSD and Knot DNS answer
            r = query(apex.port, ORIGIN, dns.rdatatype.SOA)
            assert r.rcode() == dns.rcode.SERVFAIL and not r.answer
            time.sleep(0.2)
        assert "secret.test." in apex.log_tail(60)
        assert "NOTAUTH" in apex.log_tail(60), apex.log_tail(60)
        assert not os.path.exists(apex.copy)
    finally:
        assert apex.stop() == 0, apex.log_tail()
        primary.stop()


def test_refresh_timer(tmp):
    """Without NOTIFY, the SOA refresh time (1 s here) finds the change."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path = start_primary("knot", tmp, refresh=1)
    apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                          ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)])
    try:
        apex.start()
        assert serial_of(apex.port) == 1
        with open(path, "w") as f:
            f.write(zone_text(7, "timer IN A 192.0.2.7\n", refresh=1))
        primary.reload()
        wait_serial(apex.port, 7, apex)
        assert_same_records(primary_records(primary.port), apex.port)
    finally:
        assert apex.stop() == 0, apex.log_tail()
        primary.stop()


def soa_rrset(zone, serial, refresh=1):
    """The SOA of zone at serial (retry 1 s, expire an hour, minimum 60)."""
    return dns.rrset.from_text(zone, 300, "IN", "SOA", "ns1.%s hostmaster.%s %d %d 1 3600 60"
                               % (zone, zone, serial, refresh))


def notify(port, zone, keyring=None, keyname=None, edns=-1, source=None, serial=None):
    """A NOTIFY for zone; with serial, its SOA in the answer section."""
    q = dns.message.make_query(zone, dns.rdatatype.SOA, use_edns=edns)
    q.set_opcode(dns.opcode.NOTIFY)
    q.flags = dns.flags.AA | (q.flags & ~dns.flags.RD)
    if serial is not None:
        q.answer.append(soa_rrset(zone, serial))
    if keyring is not None:
        q.use_tsig(keyring, keyname, algorithm="hmac-sha256")
    return dns.query.udp(q, "127.0.0.1", port=port, timeout=5, source=source)


def test_notify_checks(tmp):
    """NOTIFY: accepted signed with the key (the answer signed too, which
    dnspython verifies), refused unsigned, with another key, or for a zone
    that is not a secondary here."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, _ = start_primary("knot", tmp)
    apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                          ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)])
    try:
        apex.start()
        r = notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
        assert r.rcode() == dns.rcode.NOERROR and r.opcode() == dns.opcode.NOTIFY
        assert r.flags & dns.flags.QR and r.flags & dns.flags.AA
        assert r.had_tsig
        assert notify(apex.port, ORIGIN).rcode() == dns.rcode.NOTAUTH
        # TSIG errors come back in a TSIG record (RFC 8945 section 5.3.2),
        # which dnspython reads: an unknown key, a wrong MAC, a stale time
        other = dns.tsigkeyring.from_text({"other-key": ("hmac-sha256", SECRET)})
        with pytest.raises(dns.tsig.PeerBadKey):
            notify(apex.port, ORIGIN, other, "other-key")
        wrong = dns.tsigkeyring.from_text({KEY_NAME: ("hmac-sha256", WRONG_SECRET)})
        with pytest.raises(dns.tsig.PeerBadSignature):
            notify(apex.port, ORIGIN, wrong, KEY_NAME)
        with unittest.mock.patch("time.time", return_value=time.time() - 3600):
            stale = dns.message.make_query(ORIGIN, dns.rdatatype.SOA)
            stale.set_opcode(dns.opcode.NOTIFY)
            stale.use_tsig(KEYRING, KEY_NAME, algorithm="hmac-sha256")
            wire = stale.to_wire()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.sendto(wire, ("127.0.0.1", apex.port))
            data = s.recv(65535)
        with pytest.raises(dns.tsig.PeerBadTime):
            dns.message.from_wire(data, keyring=KEYRING, request_mac=stale.mac)
        assert notify(apex.port, "example.", KEYRING, KEY_NAME).rcode() == dns.rcode.REFUSED
        # with EDNS the refusal says why (RFC 8914): not a zone of ours (20),
        # and an address allow-notify does not list (18)
        r = notify(apex.port, "example.", KEYRING, KEY_NAME, edns=0)
        assert r.rcode() == dns.rcode.REFUSED
        assert [o.code for o in r.options if o.otype == dns.edns.EDE] == [
            dns.edns.EDECode.NOT_AUTHORITATIVE], r
        r = notify(apex.port, ORIGIN, KEYRING, KEY_NAME, edns=0, source="127.0.0.2")
        assert r.rcode() == dns.rcode.REFUSED
        assert [o.code for o in r.options if o.otype == dns.edns.EDE] == [
            dns.edns.EDECode.PROHIBITED], r
        # and the zone is still served, queries answered as before
        assert serial_of(apex.port) == 1
    finally:
        assert apex.stop() == 0, apex.log_tail()
        primary.stop()


class FakePrimary:
    """A primary that misbehaves on purpose, unsigned, on a free TCP port:
    it claims serial 2 and answers an AXFR as `mode` says.  With a keyring
    it signs with TSIG, leaving messages of its AXFR answer unsigned as the
    `sparse-*` modes say (SPARSE).  In mode `behind` it serves the serial
    its attribute `serial` says (1 at first), whatever a NOTIFY said: a
    primary of several servers, one of which has not the new serial yet."""

    def __init__(self, mode, records=None, keyring=None):
        self.mode = mode
        self.records = records or []
        self.keyring = keyring
        self.refresh = 1  # the SOA refresh (seconds)
        if mode in ("many-messages", "malformed-middle"):
            self.many = self.many_messages()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.axfrs = 0
        self.ixfrs = 0
        self.requests = 0  # of every kind
        self.serial = 1  # mode behind: the serial served
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        self.sock.close()

    def serve(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    self.answer(conn)
                except OSError:
                    pass

    def read_message(self, conn):
        size = struct.unpack("!H", conn.recv(2, socket.MSG_WAITALL))[0]
        return dns.message.from_wire(conn.recv(size, socket.MSG_WAITALL), keyring=self.keyring)

    @staticmethod
    def send(conn, msg):
        wire = msg.to_wire(max_size=65535)
        conn.sendall(struct.pack("!H", len(wire)) + wire)

    def soa(self, serial):
        return soa_rrset(ORIGIN, serial, self.refresh)

    def answer(self, conn):
        q = self.read_message(conn)
        r = dns.message.make_response(q)
        r.flags |= dns.flags.AA
        self.requests += 1
        if self.mode == "behind" and self.serial == 1:
            # a SOA query, or an IXFR from serial 1 (up to date): the SOA
            r.answer.append(self.soa(1))
            if q.question[0].rdtype == dns.rdatatype.AXFR:
                r.answer.extend([dns.rrset.from_text(n, 300, "IN", t, d)
                                 for n, t, d in self.records] + [self.soa(1)])
            self.send(conn, r)
            return
        if q.question[0].rdtype == dns.rdatatype.SOA:
            r.answer.append(self.soa(2))
            self.send(conn, r)
            return
        if q.question[0].rdtype == dns.rdatatype.IXFR and self.mode == "bad-ixfr":
            # a change set that removes a record the secondary does not have
            self.ixfrs += 1
            r.answer.extend([self.soa(2), self.soa(1),
                             dns.rrset.from_text("nothere." + ORIGIN, 300, "IN", "A", "192.0.2.9"),
                             self.soa(2),
                             dns.rrset.from_text("added." + ORIGIN, 300, "IN", "A", "192.0.2.10"),
                             self.soa(2)])
            self.send(conn, r)
            return
        self.axfrs += 1
        body = [dns.rrset.from_text(n, 300, "IN", t, d) for n, t, d in self.records]
        if self.mode.startswith("sparse"):
            self.send_sparse(conn, q, body)
            return
        if self.mode in ("many-messages", "malformed-middle"):
            r.answer.append(self.soa(2))  # the first message: the question
            self.send(conn, r)
            for wire in self.many:  # each with the request's ID
                conn.sendall(struct.pack("!HH", len(wire), q.id) + wire[2:])
            return
        first = [self.soa(2)] + body[:len(body) // 2]
        rest = body[len(body) // 2:]
        closing = {"no-closing-soa": [], "other-serial": [self.soa(3)]}.get(
            self.mode, [self.soa(2)])
        r.answer.extend(first)
        self.send(conn, r)
        if self.mode == "truncated":
            return  # the connection closes after the first message
        if self.mode == "stall":
            self.stopping.wait(8)  # longer than apexd's xfr-idle-timeout (3 s)
            return
        if self.mode == "slow":
            self.stopping.wait(1.5)  # a transfer under way, within the idle timeout
        r2 = dns.message.make_response(q)
        r2.answer.extend(rest + closing)
        self.send(conn, r2)


    def many_messages(self):
        """The AXFR answer after its first message (the SOA and the
        question) in messages of 100 records without the question, made
        once (in time for apexd's idle time-out however busy the machine);
        in the middle one, when the mode is malformed-middle, an answer
        count one more than it holds."""
        body = [dns.rrset.from_text(n, 300, "IN", t, d) for n, t, d in self.records]
        parts = [body[i:i + 100] for i in range(0, len(body), 100)]
        parts[-1].append(self.soa(2))
        wires = []
        for i, part in enumerate(parts):
            m = dns.message.Message()
            m.flags = dns.flags.QR | dns.flags.AA
            m.answer.extend(part)
            wire = m.to_wire(max_size=65535)
            if self.mode == "malformed-middle" and i == len(parts) // 2:
                ancount = struct.unpack("!H", wire[6:8])[0]
                wire = wire[:6] + struct.pack("!H", ancount + 1) + wire[8:]
            wires.append(wire)
        return wires

    # The messages of the AXFR answer left unsigned, and the one whose bytes
    # the MAC after it covers with one changed (sent as it was).
    SPARSE = {"sparse-good": ({1, 2, 3}, None), "sparse-last-unsigned": ({1, 2, 3, 4}, None),
              "sparse-tampered": ({1, 2, 3}, 2)}

    def send_sparse(self, conn, q, body):
        """The zone in five messages, signed or not as the mode says."""
        unsigned, tampered = self.SPARSE[self.mode]
        parts = [body[i::5] for i in range(5)]
        parts[0].insert(0, self.soa(2))
        parts[4].append(self.soa(2))
        ctx = None
        for i, part in enumerate(parts):
            m = dns.message.make_response(q)
            m.flags |= dns.flags.AA
            m.answer.extend(part)
            if i in unsigned:
                m.keyring, m.tsig = None, None
                wire = m.to_wire(max_size=65535)
                ctx.update(wire[:-1] + bytes([wire[-1] ^ 1]) if i == tampered else wire)
            else:
                wire = m.to_wire(max_size=65535, multi=True, tsig_ctx=ctx)
                ctx = m.tsig_ctx
            conn.sendall(struct.pack("!H", len(wire)) + wire)


def base_records(prefix="host", count=50):
    records = [(ORIGIN, "NS", "ns1.%s" % ORIGIN), ("ns1." + ORIGIN, "A", "192.0.2.1")]
    records += [("%s%d.%s" % (prefix, i, ORIGIN), "A", "10.0.%d.%d" % (i // 250, i % 250 + 1))
                for i in range(count)]
    return records


def secondary_of_fake(tmp, fake, key="NOKEY", dirname="apexd"):
    """apexd (not started) in tmp/dirname, a secondary of fake with key, its
    copy of serial 1 in place (refresh 1 s)."""
    d = os.path.join(tmp, dirname)
    os.makedirs(d)
    apex = SecondaryApexd(d, ["127.0.0.1@%d %s" % (fake.port, key)])
    with open(apex.copy, "w") as f:
        f.write(zone_text(1, refresh=1))
    return apex


def wait_requests(fake, count, apex):
    """Wait for fake to have had count requests in all."""
    deadline = time.monotonic() + WAIT
    while fake.requests < count:
        assert time.monotonic() < deadline, "%d requests of %d came:\n%s" % (
            fake.requests, count, apex.log_tail(40))
        time.sleep(0.05)


def test_notify_serial_not_served_yet(tmp):
    """A NOTIFY said serial 2 and the primary answers serial 1 (a server of
    the primary that has not the change yet, as NSD's old processes just
    after its reload): apexd checks again at the SOA retry interval (1 s)
    rather than at the refresh (an hour), and serves serial 2 once the
    primary does.  A primary that never serves what its NOTIFY said is
    checked again five times, then left to the refresh timer."""
    fake = FakePrimary("behind", base_records())
    apex = secondary_of_fake(tmp, fake)
    metrics_port = servers.free_port()
    apex.extra_server.append("    metrics: 127.0.0.1@%d" % metrics_port)
    with open(apex.copy, "w") as f:
        f.write(zone_text(1))  # refresh 3600, retry 1
    try:
        apex.start()
        wait_requests(fake, 1, apex)  # the check at start: serial 1 is current
        time.sleep(0.5)  # its answer read
        mark = fake.requests

        # never served: the check the NOTIFY asked for and five more, then none
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME, serial=2).rcode() == \
            dns.rcode.NOERROR
        wait_log(apex, "left to the refresh timer")
        assert fake.requests == mark + 6, apex.log_tail(20)
        assert "checked again in 1 s (SOA retry), 5 of 5" in apex.log_tail(20)
        time.sleep(2.5)  # more than two retry intervals: no other check
        assert fake.requests == mark + 6, apex.log_tail(20)
        assert serial_of(apex.port) == 1
        # counted once per NOTIFY, not per check: in zone-status and the statistics
        st = json.loads(apexctl(apex, "--json", "zone-status", ORIGIN).stdout)
        st = st["zones"][0]["secondary"]
        assert (st["notifies_ahead"], st["notifies_ahead_given_up"]) == (1, 1), st
        assert "NOTIFY ahead of the primaries: 1 (given up after the rechecks: 1)" in \
            apexctl(apex, "zone-status", ORIGIN).stdout

        # served at the second check again
        mark = fake.requests
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME, serial=2).rcode() == \
            dns.rcode.NOERROR
        wait_requests(fake, mark + 2, apex)  # the NOTIFY's check and the first again
        fake.serial = 2
        wait_serial(apex.port, 2, apex)
        r = query(apex.port, "host0." + ORIGIN, dns.rdatatype.A)  # the fake's records
        assert [rr.address for rr in r.answer[0]] == ["10.0.0.1"], r
        stats = json.loads(apexctl(apex, "--json", "stats").stdout)["transfers"]
        assert (stats["notify_in_accepted"], stats["notify_in_ahead"],
                stats["notify_in_ahead_given_up"]) == (2, 2, 1), stats
        assert "ahead=2 ahead-given-up=1" in apexctl(apex, "stats").stdout
        metrics = scrape_metrics(metrics_port)
        assert "\napex_notifies_ahead_total 2\n" in metrics, metrics
        assert "\napex_notifies_ahead_given_up_total 1\n" in metrics, metrics
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


def test_notify_during_refresh(tmp):
    """A NOTIFY that comes while its zone's check is under way (a transfer
    of 1.5 s) is not lost: the zone is checked again once that check
    ends, not at its refresh (an hour)."""
    fake = FakePrimary("slow", base_records())
    fake.refresh = 3600
    apex = secondary_of_fake(tmp, fake)
    with open(apex.copy, "w") as f:
        f.write(zone_text(1))  # refresh 3600
    try:
        apex.start()
        wait_requests(fake, 2, apex)  # the SOA query at start, then the transfer
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
        assert fake.axfrs == 1 and serial_of(apex.port) == 1  # still under way
        wait_serial(apex.port, 2, apex)
        wait_requests(fake, 3, apex)  # the NOTIFY's check
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


@pytest.mark.parametrize("mode", ["truncated", "no-closing-soa", "other-serial", "stall",
                                  "too-large", "malformed-middle"])
def test_bad_primary_changes_nothing(mode, tmp):
    """Whatever a primary gets wrong, the version served stays, queries are
    answered at once meanwhile, the copy is not touched, the log says why.
    malformed-middle: a message that does not decode, the 126th of 251,
    after more records than the builder's thread takes at once."""
    count = {"too-large": 2000, "malformed-middle": 25000}.get(mode, 50)
    records = base_records(count=count)
    fake = FakePrimary(mode, records)
    apex = secondary_of_fake(tmp, fake)
    before = open(apex.copy).read()
    if mode == "too-large":
        apex.extra_server = ["    xfr-size-limit: 20000"]
    try:
        apex.start()
        deadline = time.monotonic() + 15
        while fake.axfrs < 2 and time.monotonic() < deadline:
            start = time.monotonic()
            assert serial_of(apex.port) == 1
            assert time.monotonic() - start < 1.0, "a query waited for the transfer"
            time.sleep(0.1)
        assert fake.axfrs >= 1, apex.log_tail()
        assert serial_of(apex.port) == 1
        r = query(apex.port, "host1." + ORIGIN, dns.rdatatype.A)
        assert r.rcode() == dns.rcode.NXDOMAIN  # not from the bad transfer
        assert open(apex.copy).read() == before
        log = apex.log_tail(80)
        assert "the previous version, if any, is still served" in log, log
        why = {"truncated": "closed before the answer was complete",
               "no-closing-soa": "closed before the answer was complete",
               "other-serial": "closing SOA serial 3, first SOA 2",
               "stall": "receiving: timed out", "too-large": "size limit",
               "malformed-middle": "undecodable message"}[mode]
        assert why in log, log
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


def test_zone_in_many_messages(tmp):
    """A zone of 25,000 records in 251 messages (600 KB: several of the
    batches the records go to the builder's thread in) is served whole,
    and its copy written."""
    records = base_records(count=25000)
    fake = FakePrimary("many-messages", records)
    apex = secondary_of_fake(tmp, fake)
    try:
        apex.start()
        wait_serial(apex.port, 2, apex)
        for i in (0, 12345, 24999):
            r = query(apex.port, "host%d.%s" % (i, ORIGIN), dns.rdatatype.A)
            assert [rr.address for rr in r.answer[0]] == [
                "10.0.%d.%d" % (i // 250, i % 250 + 1)], r
        wait_log(apex, "(whole zone) serial 2")  # logged once the copy is written
        copy = open(apex.copy).read()
        assert "host24999.%s" % ORIGIN in copy and "host0.%s" % ORIGIN in copy
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


@pytest.mark.parametrize("mode", sorted(FakePrimary.SPARSE))
def test_unsigned_messages_between_signed_ones(mode, tmp):
    """RFC 8945 section 5.3.1: a primary may leave up to 99 messages of a
    transfer unsigned between signed ones; the MAC after them covers them.
    Such a transfer is taken; one whose unsigned message does not match the
    MAC after it, or that ends unsigned, is not."""
    fake = FakePrimary(mode, base_records(count=200), keyring=KEYRING)
    apex = secondary_of_fake(tmp, fake, KEY_NAME)
    try:
        apex.start()
        if mode == "sparse-good":
            wait_serial(apex.port, 2, apex)
            r = query(apex.port, "host199." + ORIGIN, dns.rdatatype.A)
            assert [rr.address for rr in r.answer[0]] == ["10.0.0.200"]
            wait_copy_serial(apex, 2)  # written after serial 2 is served
            assert "host199" in open(apex.copy).read()
            return
        deadline = time.monotonic() + 15
        while fake.axfrs < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fake.axfrs >= 2, apex.log_tail()
        assert serial_of(apex.port) == 1
        log = apex.log_tail(80)
        why = {"sparse-last-unsigned": "the last message of the answer is not signed",
               "sparse-tampered": "message 5 of the answer: BADSIG"}[mode]
        assert why in log, log
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_copy_in_chroot(tmp, monkeypatch):
    """With chroot and user nobody, the copy of a transferred zone is
    written inside the chroot (its path given as seen from outside)."""
    asan = os.environ.get("ASAN_OPTIONS")  # LeakSanitizer needs /proc
    monkeypatch.setenv("ASAN_OPTIONS", (asan + ":" if asan else "") + "detect_leaks=0")
    fake = FakePrimary("good", base_records())
    apex = secondary_of_fake(tmp, fake, dirname="chrooted")
    d = apex.workdir
    nobody = pwd.getpwnam("nobody")
    os.chown(d, nobody.pw_uid, nobody.pw_gid)  # the copy is written here
    os.chmod(tmp, 0o755)
    apex.extra_server = ["    user: nobody", '    chroot: "%s"' % d]
    try:
        apex.start()
        wait_serial(apex.port, 2, apex)
        deadline = time.monotonic() + WAIT
        while "host1." not in open(apex.copy).read() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "host1." in open(apex.copy).read(), apex.log_tail()
        assert os.stat(apex.copy).st_uid == nobody.pw_uid
        assert "is not written" not in apex.log_tail(60)
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


def thread_policies(pid):
    """{thread name: [scheduling policies]} of a process (/proc stat field 41)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                comm = f.read().strip()
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out.setdefault(comm, []).append(int(fields[38]))
    return out


SCHED_OTHER, SCHED_IDLE = 0, 5


def test_transfer_thread_below_workers(tmp):
    """The transfer threads build versions, as the reload thread does:
    the scheduler and the thread of the refresh pool that transferred the
    zone run under SCHED_IDLE (reload-priority idle), the workers do not."""
    fake = FakePrimary("good", base_records())
    apex = secondary_of_fake(tmp, fake)
    try:
        apex.start()
        wait_serial(apex.port, 2, apex)
        policies = thread_policies(apex.proc.pid)
        assert policies["apexd-xfr"] == [SCHED_IDLE], policies
        assert policies["apexd-xfr-in"] == [SCHED_IDLE], policies
        assert policies["apexd-reload"] == [SCHED_IDLE], policies
        assert policies["apexd-worker"] == [SCHED_OTHER, SCHED_OTHER], policies
        assert "transfer thread: scheduling policy idle" in apex.log_tail(60)
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


def test_out_of_zone_records_dropped(tmp):
    """Records outside the zone are dropped (and said so); the rest is served."""
    records = base_records() + [("www.elsewhere.example.", "A", "203.0.113.1")]
    fake = FakePrimary("good", records)
    apex = secondary_of_fake(tmp, fake)
    try:
        apex.start()
        wait_serial(apex.port, 2, apex)
        r = query(apex.port, "host1." + ORIGIN, dns.rdatatype.A)
        assert [rr.address for rr in r.answer[0]] == ["10.0.0.2"]
        assert "outside the zone dropped" in apex.log_tail(60)
        wait_copy_serial(apex, 2)  # written after serial 2 is served
        assert "elsewhere" not in open(apex.copy).read()
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


def apexctl(apex, *args):
    builddir = os.environ.get("APEX_BUILDDIR") or os.environ.get("APEX_SRCDIR") or os.getcwd()
    return subprocess.run([os.path.join(builddir, "apexctl"), "-s", apex.socket] + list(args),
                          capture_output=True, text=True, timeout=60)


def test_received_change_sets_kept(tmp):
    """Knot DNS changes the zone twice before apexd asks: the IXFR brings
    both change sets and apexd's journal keeps them as they came, so that
    its own secondary at the middle serial gets an IXFR too, and the sets
    applied give exactly the zone served."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    # the NOTIFYs of the primary go to a port nobody listens on
    primary, path = start_primary("knot", tmp, notify_port=servers.free_port())
    apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                          ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)],
                          provide="127.0.0.0/8 %s" % KEY_NAME)
    try:
        apex.start()
        assert serial_of(apex.port) == 1
        extras = {1: "", 2: "new IN A 192.0.2.99\n", 3: "new IN A 192.0.2.100\n"}
        for serial in (2, 3):
            time.sleep(1.1)  # a new mtime
            with open(path, "w") as f:
                f.write(zone_text(serial, extras[serial]))
            primary.reload()
            wait_serial(primary.port, serial, primary)
        assert serial_of(apex.port) == 1
        r = apexctl(apex, "refresh", ORIGIN)
        assert r.returncode == 0, r
        wait_serial(apex.port, 3, apex)
        wait_log(apex, "IXFR serial 3")
        want = primary_records(primary.port)
        for serial in (2, 1):
            msgs = dns.query.xfr("127.0.0.1", ORIGIN, rdtype=dns.rdatatype.IXFR,
                                 serial=serial, port=apex.port, keyring=KEYRING,
                                 keyname=KEY_NAME, keyalgorithm="hmac-sha256",
                                 relativize=False, lifetime=30)
            soas = [rr.serial for m in msgs for rrset in m.answer
                    if rrset.rdtype == dns.rdatatype.SOA for rr in rrset]
            assert soas == [3, serial, 3, 3], (serial, soas)
            got = records_after_ixfr(apex.port, serial, zone_text(serial, extras[serial]))
            assert got == want, serial
    finally:
        assert apex.stop() == 0, apex.log_tail()
        primary.stop()


def test_apexctl_secondary(tmp):
    """zone-status shows a secondary's primaries and transfers; refresh,
    retransfer and notify are queued; stats count transfers and NOTIFYs."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, _ = start_primary("knot", tmp)
    apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                          ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)])
    try:
        apex.start()
        r = apexctl(apex, "zone-status", ORIGIN)
        assert r.returncode == 0, r.stderr
        assert "primaries: 127.0.0.1@%d %s" % (primary.port, KEY_NAME) in r.stdout, r.stdout
        assert "AXFR serial 1 from" in r.stdout and "transfers: 1 (failed: 0)" in r.stdout
        r = apexctl(apex, "--json", "zone-status", ORIGIN)
        sec = json.loads(r.stdout)["zones"][0]["secondary"]
        assert sec["transfers"] == 1 and sec["expired"] is False

        # retransfer: a whole transfer although the serial did not change
        r = apexctl(apex, "retransfer", ORIGIN)
        assert r.returncode == 0 and "full transfer" in r.stdout, r
        deadline = time.monotonic() + WAIT
        while "transfers: 2" not in apexctl(apex, "zone-status", ORIGIN).stdout:
            assert time.monotonic() < deadline, apex.log_tail()
            time.sleep(0.1)
        assert apexctl(apex, "refresh", ORIGIN).returncode == 0
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
        assert notify(apex.port, ORIGIN).rcode() == dns.rcode.NOTAUTH

        r = apexctl(apex, "refresh", "example.")
        assert r.returncode == 1 and "not a secondary zone" in r.stdout + r.stderr, r
        r = apexctl(apex, "notify", ORIGIN)
        assert r.returncode == 1 and "no notify: targets" in r.stdout + r.stderr, r
        r = apexctl(apex, "refresh")
        assert r.returncode != 0
        stats = json.loads(apexctl(apex, "--json", "stats").stdout)["transfers"]
        assert stats["in_ok"] == 2 and stats["in_failed"] == 0
        assert stats["notify_in_accepted"] == 1 and stats["notify_in_refused"] == 1
        assert "transfers: in ok=2" in apexctl(apex, "stats").stdout

        # a reconfiguration that removes the zone: it is no longer served,
        # and a NOTIFY or a refresh does not bring it back
        conf = os.path.join(apex.workdir, "apex.conf")
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text[:text.index("zone:")])
        r = apexctl(apex, "reconfig")
        assert r.returncode == 0, r
        assert query(apex.port, ORIGIN, dns.rdatatype.SOA).rcode() == dns.rcode.REFUSED
        notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
        time.sleep(1.5)
        assert query(apex.port, ORIGIN, dns.rdatatype.SOA).rcode() == dns.rcode.REFUSED
    finally:
        assert apex.stop() == 0, apex.log_tail()
        primary.stop()


def wait_path(path, exists, apex):
    """Wait (bounded) until path exists, or no longer does."""
    deadline = time.monotonic() + WAIT
    while os.path.exists(path) != exists:
        assert time.monotonic() < deadline, apex.log_tail()
        time.sleep(0.05)


def test_notify_while_zones_are_swapped(tmp, monkeypatch):
    """A worker never waits for the transfer thread: a NOTIFY that arrives
    while that thread holds the write side of its zones' lock (swapping a
    reconfig's secondary zones, held there by the test's hold point) is
    dropped unanswered and counted, the primary being the one to send it
    again, and the worker answers the query that follows it from the same
    socket (so on the same worker) meanwhile.  Once the swap is over, a
    NOTIFY is answered again.  A worker that waited for the lock would
    answer neither while the hold lasts."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, _ = start_primary("knot", tmp)
    hold = os.path.join(tmp, "hold")
    monkeypatch.setenv("APEX_TEST_HOLD_AT", "secondary-zones-swapping:" + hold)
    apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                          ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        apex.start()
        with open(hold, "w"):
            pass
        assert apexctl(apex, "reconfig").returncode == 0
        wait_path(hold + ".held", True, apex)  # the transfer thread holds the lock

        n = dns.message.make_query(ORIGIN, dns.rdatatype.SOA)
        n.flags = dns.flags.AA
        n.set_opcode(dns.opcode.NOTIFY)
        n.use_tsig(KEYRING, KEY_NAME, algorithm="hmac-sha256")
        n.id = 1
        q = dns.message.make_query(ORIGIN, dns.rdatatype.SOA)
        q.id = 2
        sock.settimeout(WAIT)
        sock.bind(("127.0.0.1", 0))
        sock.sendto(n.to_wire(), ("127.0.0.1", apex.port))
        sock.sendto(q.to_wire(), ("127.0.0.1", apex.port))
        # the worker reads them in order: the first answer is the query's
        wire = sock.recv(65535)
        first = dns.message.from_wire(wire, keyring=KEYRING, request_mac=n.mac) \
            if struct.unpack("!H", wire[:2])[0] == 1 else dns.message.from_wire(wire)
        assert first.id == 2 and first.opcode() == dns.opcode.QUERY, first
        assert first.rcode() == dns.rcode.NOERROR and first.answer[0][0].serial == 1
        assert os.path.exists(hold + ".held")  # still held meanwhile

        os.unlink(hold)
        wait_path(hold + ".held", False, apex)
        stats = json.loads(apexctl(apex, "--json", "stats").stdout)["transfers"]
        assert stats["notify_in_dropped"] == 1 and stats["notify_in_accepted"] == 0, stats
        r = notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
        assert r.rcode() == dns.rcode.NOERROR and r.opcode() == dns.opcode.NOTIFY
        stats = json.loads(apexctl(apex, "--json", "stats").stdout)["transfers"]
        assert stats["notify_in_dropped"] == 1 and stats["notify_in_accepted"] == 1, stats
        assert "notify in accepted=1 refused=0 dropped=1" in apexctl(apex, "stats").stdout
    finally:
        sock.close()
        if os.path.exists(hold):
            os.unlink(hold)
        assert apex.stop() == 0, apex.log_tail()
        primary.stop()


def test_expire(tmp):
    """With every primary gone past the SOA expire time (3 s here), the zone
    is answered SERVFAIL and not transferred on; once a primary answers
    again, a transfer brings it back."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path = start_primary("knot", tmp, refresh=1, expire=3)
    port = primary.port
    apex = SecondaryApexd(os.path.join(tmp, "apexd"), ["127.0.0.1@%d %s" % (port, KEY_NAME)],
                          provide="127.0.0.0/8 %s" % KEY_NAME)
    try:
        apex.start()
        assert serial_of(apex.port) == 1
        primary.stop()
        deadline = time.monotonic() + WAIT
        while query(apex.port, ORIGIN, dns.rdatatype.SOA).rcode() != dns.rcode.SERVFAIL:
            assert time.monotonic() < deadline, apex.log_tail()
            time.sleep(0.2)
        assert "expired" in apex.log_tail(40)
        r = query(apex.port, "www." + ORIGIN, dns.rdatatype.A, tcp=True)
        assert r.rcode() == dns.rcode.SERVFAIL and not r.answer
        # with EDNS, an Extended DNS Error says why (RFC 8914: Not Ready)
        q = dns.message.make_query("www." + ORIGIN, dns.rdatatype.A, use_edns=0)
        r = dns.query.udp(q, "127.0.0.1", port=apex.port, timeout=5)
        assert r.rcode() == dns.rcode.SERVFAIL
        assert [(o.code, o.text) for o in r.options if o.otype == dns.edns.EDE] == \
            [(dns.edns.EDECode.NOT_READY, "zone expired")], r
        q = dns.message.make_query(ORIGIN, dns.rdatatype.AXFR)
        q.use_tsig(KEYRING, KEY_NAME, algorithm="hmac-sha256")
        r = dns.query.tcp(q, "127.0.0.1", port=apex.port, timeout=10)
        assert r.rcode() == dns.rcode.NOTAUTH and not r.answer
        # the primary is back (on the same port): the zone comes back
        primary.fixed_port = port
        primary.start()
        wait_serial(apex.port, 1, apex)
    finally:
        assert apex.stop() == 0, apex.log_tail()
        primary.stop()


def test_ixfr_that_does_not_apply(tmp):
    """A change set that removes a record the served version lacks is not
    applied: apexd says so and takes the whole zone by AXFR instead."""
    fake = FakePrimary("bad-ixfr", base_records())
    apex = secondary_of_fake(tmp, fake)
    try:
        apex.start()
        wait_serial(apex.port, 2, apex)
        assert fake.ixfrs >= 1 and fake.axfrs >= 1
        wait_log(apex, "do not apply; asking for the whole zone")
        r = query(apex.port, "host1." + ORIGIN, dns.rdatatype.A)
        assert [rr.address for rr in r.answer[0]] == ["10.0.0.2"]
        assert query(apex.port, "added." + ORIGIN, dns.rdatatype.A).rcode() == dns.rcode.NXDOMAIN
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


class NotifyCatcher:
    """A NOTIFY target on a free UDP port: it answers every NOTIFY signed
    with the test key and keeps (zone, serial) of each."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.seen = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stopping.is_set():
            try:
                data, peer = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            try:
                q = dns.message.from_wire(data, keyring=KEYRING)
            except dns.exception.DNSException:
                continue  # not signed with the key: not answered
            if q.opcode() != dns.opcode.NOTIFY or not q.had_tsig:
                continue
            serial = q.answer[0][0].serial if q.answer else None
            self.seen.append((q.question[0].name.to_text(), serial))
            self.sock.sendto(dns.message.make_response(q).to_wire(), peer)

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        self.sock.close()


def test_reconfig_applies_transfer_settings(tmp):
    """reconfig puts in force, without a restart, a key's new secret, a
    secondary zone's new primaries, and new provide-xfr and notify lists;
    a secondary zone removed and added again is transferred at once."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, _ = start_primary("knot", tmp)
    fake = FakePrimary("good", base_records())  # serial 2, unsigned
    catcher = NotifyCatcher()
    apex = SecondaryApexd(os.path.join(tmp, "apexd"),
                          ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)],
                          secret=WRONG_SECRET, wait_zone=False)

    def reconfig():
        apex.command()  # writes apex.conf again, on the same port
        r = apexctl(apex, "reconfig")
        assert r.returncode == 0, (r, apex.log_tail())

    def signed_soa():
        q = dns.message.make_query(ORIGIN, dns.rdatatype.SOA)
        q.use_tsig(KEYRING, KEY_NAME, algorithm="hmac-sha256")
        return dns.query.udp(q, "127.0.0.1", port=apex.port, timeout=5)

    def axfr_with_key():
        xfr = dns.query.xfr("127.0.0.1", ORIGIN, port=apex.port, keyring=KEYRING,
                            keyname=KEY_NAME, keyalgorithm="hmac-sha256", lifetime=30,
                            relativize=False)
        return dns.zone.from_xfr(xfr, relativize=False)

    try:
        apex.start()
        wait_answering(apex)
        # the wrong secret: nothing transferred (SERVFAIL: configured, not
        # loaded), a NOTIFY with the right one fails its MAC check
        assert query(apex.port, ORIGIN, dns.rdatatype.SOA).rcode() == dns.rcode.SERVFAIL
        with pytest.raises(dns.tsig.PeerBadSignature):
            notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
        with pytest.raises(dns.tsig.PeerBadSignature):  # a worker's signed answer
            signed_soa()

        # the right secret, a provide-xfr list and a notify target
        apex.secret = SECRET
        apex.provide = "127.0.0.0/8 %s" % KEY_NAME
        apex.notify = "127.0.0.1@%d %s" % (catcher.port, KEY_NAME)
        reconfig()
        wait_log(apex, "secondary zones: 1 now (0 added, 0 no longer secondary, 1 with new "
                 "primaries or allow-notify)")
        wait_serial(apex.port, 1, apex)
        assert notify(apex.port, ORIGIN, KEYRING, KEY_NAME).rcode() == dns.rcode.NOERROR
        r = signed_soa()  # the workers sign with the new secret
        assert r.rcode() == dns.rcode.NOERROR and r.had_tsig and r.answer
        zone = axfr_with_key()
        assert zone.get_rdataset("www", "TXT") is not None
        deadline = time.monotonic() + WAIT
        while (ORIGIN, 1) not in catcher.seen:
            assert time.monotonic() < deadline, (catcher.seen, apex.log_tail())
            time.sleep(0.1)

        # another primary (unsigned, serial 2); provide-xfr and notify gone
        apex.primaries = ["127.0.0.1@%d NOKEY" % fake.port]
        apex.provide = apex.notify = None
        reconfig()
        wait_serial(apex.port, 2, apex)
        assert "primaries: 127.0.0.1@%d NOKEY" % fake.port in apexctl(
            apex, "zone-status", ORIGIN).stdout
        with pytest.raises(dns.xfr.TransferError) as refused:
            axfr_with_key()
        assert refused.value.rcode == dns.rcode.REFUSED
        notified = len(catcher.seen)

        # the zone removed, then added again with a new copy: transferred
        conf = os.path.join(apex.workdir, "apex.conf")
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text[:text.index("zone:")])
        assert apexctl(apex, "reconfig").returncode == 0
        assert query(apex.port, ORIGIN, dns.rdatatype.SOA).rcode() == dns.rcode.REFUSED
        apex.copy = os.path.join(apex.workdir, "again.zone")
        reconfig()
        wait_serial(apex.port, 2, apex)
        wait_copy(apex)
        assert query(apex.port, "host1." + ORIGIN, dns.rdatatype.A).answer
        time.sleep(1)
        assert len(catcher.seen) == notified  # no notify target any more
    finally:
        assert apex.stop() == 0, apex.log_tail()
        catcher.stop()
        fake.stop()
        primary.stop()


def test_zone_removed_during_transfer(tmp):
    """A reconfig removes a secondary zone while its transfer runs: that
    transfer is not published, the zone stays removed.  Removed and added
    again (with a new copy) while a transfer runs: the zone is transferred
    afresh into its new copy, not served from the transfer of the zone that
    was removed."""
    fake = FakePrimary("slow", base_records())  # 1.5 s per transfer
    apex = SecondaryApexd(os.path.join(tmp, "apexd"), ["127.0.0.1@%d NOKEY" % fake.port],
                          wait_zone=False)
    conf = os.path.join(apex.workdir, "apex.conf")

    def reconfig():
        r = apexctl(apex, "reconfig")
        assert r.returncode == 0, (r, apex.log_tail())

    def remove_zone():
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text[:text.index("zone:")])
        reconfig()

    def add_zone(copy):
        apex.copy = copy
        apex.command()  # writes apex.conf again, on the same port
        reconfig()

    def wait_axfrs(count):
        deadline = time.monotonic() + WAIT
        while fake.axfrs < count:
            assert time.monotonic() < deadline, apex.log_tail()
            time.sleep(0.01)

    removed = "not published: the zone was removed meanwhile"
    try:
        apex.start()
        # removed while its first transfer runs
        wait_axfrs(1)
        remove_zone()
        wait_log(apex, removed)
        time.sleep(0.5)
        assert query(apex.port, ORIGIN, dns.rdatatype.SOA).rcode() == dns.rcode.REFUSED
        assert not os.path.exists(apex.copy) or serial_of(apex.port) is None

        # added again: transferred
        add_zone(os.path.join(apex.workdir, "second.zone"))
        wait_serial(apex.port, 2, apex)

        # removed and added again while a transfer runs
        axfrs = fake.axfrs
        r = apexctl(apex, "retransfer", ORIGIN)
        assert r.returncode == 0, (r, apex.log_tail())
        wait_axfrs(axfrs + 1)
        third = os.path.join(apex.workdir, "third.zone")
        remove_zone()
        add_zone(third)
        wait_serial(apex.port, 2, apex)
        deadline = time.monotonic() + WAIT
        while not os.path.exists(third):
            assert time.monotonic() < deadline, apex.log_tail()
            time.sleep(0.1)
        assert apex.log_tail(200).count(removed) == 2, apex.log_tail()
        assert query(apex.port, "host1." + ORIGIN, dns.rdatatype.A).answer
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


EXPIRE_OPTION = 9  # EDNS EXPIRE, RFC 7314


def expire_of(port, rdtype=dns.rdatatype.SOA, option=b"", tcp=False, keyring=None):
    """The EDNS EXPIRE value of the answer to an SOA (or AXFR) query asking
    for it, or None when the answer has none."""
    q = dns.message.make_query(ORIGIN, rdtype, use_edns=0,
                               options=[dns.edns.GenericOption(EXPIRE_OPTION, option)])
    if keyring is not None:
        q.use_tsig(keyring, KEY_NAME, algorithm="hmac-sha256")
    if rdtype == dns.rdatatype.AXFR:
        r = dns.query.tcp(q, "127.0.0.1", port=port, timeout=10)
    elif tcp:
        r = dns.query.tcp(q, "127.0.0.1", port=port, timeout=5)
    else:
        r = dns.query.udp(q, "127.0.0.1", port=port, timeout=5)
    assert r.rcode() == dns.rcode.NOERROR, r
    values = [struct.unpack("!I", o.to_wire())[0] for o in r.options
              if o.otype == EXPIRE_OPTION]
    assert len(values) <= 1, r
    return values[0] if values else None


def test_edns_expire_along_a_chain(tmp):
    """EDNS EXPIRE (RFC 7314): a zone loaded from its file answers its SOA
    expire field; a secondary answers the time its copy has left, on SOA
    queries and in the first message of a transfer; a secondary of a
    secondary takes that time rather than a whole expire period, so that a
    copy taken from a copy expires when the copy it came from does."""
    if not have("knot"):
        pytest.skip("knot is not installed")
    primary, path = start_primary("knot", tmp, expire=3600)
    a = SecondaryApexd(os.path.join(tmp, "a"),
                       ["127.0.0.1@%d %s" % (primary.port, KEY_NAME)],
                       provide="127.0.0.0/8 %s" % KEY_NAME)
    b = None
    loaded = None
    try:
        a.start()
        wait_serial(a.port, 1, a)
        left = expire_of(a.port)
        assert left is not None and 3590 <= left <= 3600, left
        # the primary gone: a's copy ages; a copy of it must not start afresh
        primary.stop()
        time.sleep(3.5)
        left_a = expire_of(a.port)
        assert left_a is not None and left_a <= 3597, left_a
        assert expire_of(a.port, tcp=True) in (left_a, left_a - 1)
        # the first message of an AXFR carries it too (with TSIG after it)
        axfr = expire_of(a.port, dns.rdatatype.AXFR, keyring=KEYRING)
        assert axfr is not None and left_a - 1 <= axfr <= left_a, (axfr, left_a)
        # a query with a value in the option (meaningless there): answered
        assert expire_of(a.port, option=b"\x00\x00\x00\x05") is not None

        b = SecondaryApexd(os.path.join(tmp, "b"), ["127.0.0.1@%d %s" % (a.port, KEY_NAME)])
        b.start()
        wait_serial(b.port, 1, b)
        left_b = expire_of(b.port)
        left_a = expire_of(a.port)
        assert left_b is not None and left_b <= left_a + 1, (left_b, left_a)
        assert left_b <= 3597, "b restarted the expire period: %d" % left_b
        print("expire left: a %d, b %d, axfr %d" % (left_a, left_b, axfr))

        # a zone loaded from its file: the SOA's expire field
        loaded = servers.Apexd(os.path.join(tmp, "loaded"), [(ORIGIN, path)])
        loaded.start()
        assert expire_of(loaded.port) == 3600
        q = dns.message.make_query(ORIGIN, dns.rdatatype.SOA, use_edns=0)
        r = dns.query.udp(q, "127.0.0.1", port=loaded.port, timeout=5)
        assert not [o for o in r.options if o.otype == EXPIRE_OPTION], "not asked for"
    finally:
        for server in (loaded, b):
            if server is not None:
                assert server.stop() == 0, server.log_tail()
        assert a.stop() == 0, a.log_tail()
        primary.stop()
