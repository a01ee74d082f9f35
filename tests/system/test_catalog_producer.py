# SPDX-License-Identifier: BSD-3-Clause
"""apexd as a catalog zone producer (RFC 9432), and its consumers.

apexd generates a catalog zone from the zones that name it (NSD's keys,
Knot DNS's catalog-group):

    zone:
    	name: "catalog.invalid"
    	file: "catalog.invalid.zone"      # apexd writes this file itself
    	catalog: producer
    	provide-xfr: 127.0.0.0/8 NOKEY
    	notify: 127.0.0.1@PORT NOKEY
    zone:
    	name: "example.com"
    	file: "example.com.zone"
    	catalog-producer-zone: "catalog.invalid"
    	catalog-group: "g1"                # optional
    	provide-xfr: 127.0.0.0/8 NOKEY

The catalog it serves (and writes to its file) has the SOA, NS invalid.,
version TXT "2", a PTR <id>.zones.<catalog> -> <member> per member and a
TXT group.<id>.zones.<catalog> per member with a catalog-group, nothing
else.  A member keeps its id across reconfigs and restarts; the SOA serial
goes up when a member is added or removed or its group changes (apexctl
reconfig with the config file edited), and only then; the catalog is
transferred by AXFR and IXFR and NOTIFYed to its notify: targets.

The consumers of apexd's catalog: Knot DNS 3.2 (catalog-role: interpret,
its catalog-templates "members" and, for group g1, "g1"), BIND 9.18
(catalog-zones with default-primaries) and apexd itself (catalog:
consumer, patterns "members" and, for group g1, "g1").  Each must serve
the members with the primary's content, follow a member added or removed
by a reconfig of the producer within CONSUMER_WAIT seconds, and (Knot DNS
and apexd) take a member's group as the template or pattern named like
it, seen as the file the member's copy goes to.  BIND 9.18 has no setting
per group, so that check is skipped for it.  NSD 4.6 consumes no catalog.

test_producer_consumer_harness_hand_written is the check of this file's
consumers alone: they consume a hand-written catalog served by apexd as
a plain primary, which needs nothing of the producer.

The helpers, the procs fixture (every process stopped by PID; apexd must
exit 0 on SIGTERM and log no sanitizer error) and the hand-written
primaries come from test_catalog.py (apexd as a consumer).
"""

import os
import shutil
import socket
import subprocess
import threading
import time

import dns.exception
import dns.message
import dns.name
import dns.opcode
import dns.query
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.zone
import pytest

import servers
from test_catalog import (  # noqa: F401 (procs: the fixture)
    CATALOG, ApexdProducer, Catalog, ConsumerApexd, Pattern, axfr, bare, catalog_text,
    log_text, member, member_text, need, procs, query, rcode_of, records, serial_of, start,
    start_hand_written, wait_until, www_text)
from test_secondary import apexctl

WAIT = 20.0  # seconds for apexd to show a change of its own catalog (bounded)
CONSUMER_WAIT = 30.0  # seconds for a consumer to follow a change of the catalog

ZONES = dns.name.from_text("zones." + CATALOG)
VERSION = dns.name.from_text("version." + CATALOG)
XFR = "provide-xfr: 127.0.0.0/8 NOKEY"


def serial_after(new, old):
    """new comes after old in serial number arithmetic (RFC 1982)."""
    return 0 < (new - old) % 2 ** 32 < 2 ** 31


# ------------------------------------------------------ the generated catalog

def check_generated(z, want):
    """Check that z (a dnspython zone of the catalog) is the catalog of want
    ({member: group or None}) and nothing else: SOA, NS invalid., version
    TXT "2", one PTR per member at <id>.zones, group.<id>.zones TXT for
    the members with a group, distinct ids.  Returns {member: id}."""
    origin = dns.name.from_text(CATALOG)
    ids, groups, problems = {}, {}, []
    for name, node in z.nodes.items():
        types = sorted(dns.rdatatype.to_text(rds.rdtype) for rds in node)
        if name == origin:
            if types != ["NS", "SOA"]:
                problems.append("apex has %s" % types)
            ns = node.get_rdataset(dns.rdataclass.IN, dns.rdatatype.NS)
            if ns is None or [rd.target.to_text() for rd in ns] != ["invalid."]:
                problems.append("apex NS is %s, not invalid." % ns)
        elif name == VERSION:
            txt = node.get_rdataset(dns.rdataclass.IN, dns.rdatatype.TXT)
            if types != ["TXT"] or len(txt) != 1 or list(txt)[0].strings != (b"2",):
                problems.append("version is %s" % [rds.to_text() for rds in node])
        elif len(name) == len(ZONES) + 1 and name.is_subdomain(ZONES):
            ptr = node.get_rdataset(dns.rdataclass.IN, dns.rdatatype.PTR)
            if types != ["PTR"] or len(ptr) != 1:
                problems.append("member node %s has %s" % (name, [rds.to_text() for rds in node]))
                continue
            target = list(ptr)[0].target.to_text()
            if target in ids:
                problems.append("%s listed twice" % target)
            ids[target] = name.labels[0].decode()
        elif (len(name) == len(ZONES) + 2 and name.is_subdomain(ZONES)
              and name.labels[0].lower() == b"group"):
            txt = node.get_rdataset(dns.rdataclass.IN, dns.rdatatype.TXT)
            if types != ["TXT"] or len(txt) != 1:
                problems.append("%s has %s" % (name, [rds.to_text() for rds in node]))
                continue
            groups[name.labels[1].decode()] = b"".join(list(txt)[0].strings).decode()
        else:
            problems.append("unexpected name %s (%s)" % (name, types))
    if z.get_soa() is None:
        problems.append("no SOA")
    if z.get_node(VERSION) is None:
        problems.append("no version")
    for id_ in groups:
        if id_ not in ids.values():
            problems.append("group property of %s, which is no member" % id_)
    if len(set(ids.values())) != len(ids):
        problems.append("ids not distinct: %s" % ids)
    got = {m: groups.get(id_) for m, id_ in ids.items()}
    if got != want:
        problems.append("members and groups are %s, not %s" % (got, want))
    assert not problems, "apexd's catalog: " + "; ".join(problems) + "\n" + z.to_text()
    return ids


def ixfr_change(port, zone, serial):
    """The change an IXFR from serial gives: (new serial, records deleted,
    records added), SOAs left out; None if the answer is the whole zone
    (AXFR-style) rather than the differences."""
    msgs = dns.query.xfr("127.0.0.1", zone, rdtype=dns.rdatatype.IXFR, serial=serial,
                         port=port, relativize=False, lifetime=30)
    rrs = [(rrset.name.to_text(), rrset.ttl, rrset.rdtype, rd)
           for m in msgs for rrset in m.answer for rd in rrset]
    assert rrs and rrs[0][2] == dns.rdatatype.SOA, rrs[:3]
    new = rrs[0][3].serial
    if len(rrs) == 1:
        return new, set(), set()  # up to date
    if rrs[1][2] != dns.rdatatype.SOA:
        return None
    # rrs[1:-1]: sequences of an old SOA, the records deleted, a new SOA,
    # the records added
    deleted, added, adding = set(), set(), True
    for name, ttl, rdtype, rd in rrs[1:-1]:
        if rdtype == dns.rdatatype.SOA:
            adding = not adding
            continue
        rec = (name, ttl, dns.rdatatype.to_text(rdtype), rd.to_text())
        undone, done = (deleted, added) if adding else (added, deleted)
        if rec in undone:
            undone.discard(rec)
        else:
            done.add(rec)
    assert rrs[-1][2] == dns.rdatatype.SOA and rrs[-1][3].serial == new, rrs[-1]
    return new, deleted, added


def without_soa(recs):
    return {r for r in recs if r[2] != "SOA"}


class Snapshot:
    """apexd's catalog at one time: its serial, records, ids and groups."""

    def __init__(self, z):
        self.zone = z
        self.serial = z.get_soa().serial
        self.records = records(z)
        listing = catalog_members_of(z)
        self.ids = {m: v[0] for m, v in listing.items()}
        self.groups = {m: v[1] for m, v in listing.items()}


def catalog_members_of(z):
    """{member: (id, group)} of a dnspython catalog zone."""
    out = {}
    for name, node in z.nodes.items():
        if name.parent() != ZONES:
            continue
        ptr = node.get_rdataset(dns.rdataclass.IN, dns.rdatatype.PTR)
        if ptr is None:
            continue
        group = z.get_rdataset(dns.name.Name((b"group",) + name.labels), dns.rdatatype.TXT)
        for rd in ptr:
            out[rd.target.to_text()] = (
                name.labels[0].decode(), b"".join(group[0].strings).decode() if group else None)
    return out


# ------------------------------------------------------------- the producer

class ProducerApexd(ApexdProducer):
    """apexd generating CATALOG from the member zones in its config file
    (members: {zone: group or None}), also serving the zones of others
    (in no catalog), all from hand-written files in workdir, with
    provide-xfr and NOTIFY (NOKEY) to notify_ports.  The catalog's file is
    named relative to the config file, and is not written by the test.
    The config can be changed and put in force with reconfig(); the
    sections of the catalog and the members can be written in any order
    (catalog_first, members_reversed)."""

    kind = "apexd-catalog-producer"

    def __init__(self, workdir, members, notify_ports, others=(), port=None):
        self.members = dict(members)
        self.others = list(others)
        super().__init__(workdir, {z: member_text(z, 1) for z in self.served()}, None)
        self.notify_ports = list(notify_ports)
        self.fixed_port = port
        self.socket = os.path.join(workdir, "control.sock")
        self.conf = os.path.join(workdir, "apex.conf")
        self.catalog_path = os.path.join(workdir, bare(CATALOG) + ".zone")
        self.catalog_first = True
        self.members_reversed = False
        self.extra_zone_lines = []  # more lines for every member's section

    def served(self):
        return list(self.members) + self.others

    def notify_lines(self):
        return ["\tnotify: 127.0.0.1@%d NOKEY" % p for p in self.notify_ports]

    def config(self):
        lines = ["server:", "\tlisten: 127.0.0.1@%d" % self.port, "\tworkers: 2",
                 '\tcontrol-socket: "%s"' % self.socket]
        catalog = ["zone:", '\tname: "%s"' % bare(CATALOG),
                   '\tfile: "%s.zone"' % bare(CATALOG), "\tcatalog: producer",
                   "\t" + XFR] + self.notify_lines()
        zones = []
        order = self.served()
        if self.members_reversed:
            order.reverse()
        for z in order:
            zones += ["zone:", '\tname: "%s"' % bare(z),
                      '\tfile: "%s"' % self.zone_path(z, self.workdir), "\t" + XFR]
            zones += self.notify_lines()
            if z in self.members:
                zones.append('\tcatalog-producer-zone: "%s"' % bare(CATALOG))
                if self.members[z] is not None:
                    zones.append('\tcatalog-group: "%s"' % self.members[z])
                zones += ["\t" + line for line in self.extra_zone_lines]
        lines += catalog + zones if self.catalog_first else zones + catalog
        return "\n".join(lines) + "\n"

    def write_config(self):
        for z in self.served():
            self.texts.setdefault(z, member_text(z, 1))
        self.write_zones()
        with open(self.conf, "w") as f:
            f.write(self.config())

    def command(self):
        self.write_config()
        return [servers.apexd_path(), "-f", "-c", self.conf]

    def start(self):
        """Start it and wait (bounded) until it serves every zone of its
        config and the catalog."""
        self.zones = [(z, self.zone_path(z, self.workdir)) for z in self.served()]
        self.zones.append((CATALOG, self.catalog_path))
        return super().start()

    def reconfig(self):
        """Write the config file from members and others, and put it in
        force with apexctl reconfig."""
        self.write_config()
        r = apexctl(self, "reconfig")
        assert r.returncode == 0, "apexctl reconfig: %s%s\n%s" % (
            r.stdout, r.stderr, self.log_tail(30))
        return r

    def snapshot(self):
        return Snapshot(axfr(self.port, CATALOG))

    def wait_catalog(self, changed_from=None):
        """Wait until the catalog apexd transfers is the one of members
        (and, if changed_from is a Snapshot, has a serial after its);
        check its content; return its Snapshot."""
        want = dict(self.members)
        last = []

        def listed():
            snap = self.snapshot()
            last[:] = [snap]
            if snap.groups != want:
                return False
            return changed_from is None or snap.serial != changed_from.serial
        wait_until(listed, lambda: "apexd's catalog listing %s%s (it lists %s, serial %s)" % (
            want, "" if changed_from is None else " with a new serial",
            last[0].groups if last else "nothing", last[0].serial if last else None),
            self, WAIT)
        snap = last[0]
        ids = check_generated(snap.zone, want)
        assert ids == snap.ids
        if changed_from is not None:
            assert serial_after(snap.serial, changed_from.serial), (
                "serial %d after %d" % (snap.serial, changed_from.serial))
        return snap

    def file_records(self):
        """The records of the catalog's file, or None if it has no complete
        zone."""
        try:
            z = dns.zone.from_file(self.catalog_path, origin=CATALOG, relativize=False)
        except (OSError, dns.exception.DNSException):
            return None
        return records(z)

    def wait_file(self, snap):
        """Wait until the catalog's file holds exactly the catalog of snap."""
        wait_until(lambda: self.file_records() == snap.records,
                   lambda: "%s holding the catalog served, serial %d (it has %s)" % (
                       self.catalog_path, snap.serial,
                       sorted(self.file_records() or ())), self, WAIT)


def start_producer(procs, tmp, members, notify_ports=(), others=(), port=None):
    need("apexd")
    return start(procs, ProducerApexd(os.path.join(tmp, "producer"), members,
                                      notify_ports, others, port))


def assert_change(producer, old, new, deleted, added):
    """An IXFR of the catalog from old's serial gives exactly the records
    deleted and added (SOA left out), and reaches new's serial."""
    change = ixfr_change(producer.port, CATALOG, old.serial)
    assert change is not None, "IXFR from %d answered with the whole catalog" % old.serial
    serial, got_deleted, got_added = change
    assert serial == new.serial, (serial, new.serial)
    assert (got_deleted, got_added) == (deleted, added), (
        "IXFR from %d: deleted %s, added %s; the catalogs differ by: deleted %s, added %s" % (
            old.serial, sorted(got_deleted), sorted(got_added), sorted(deleted), sorted(added)))


def diff(old, new):
    """The records (SOA left out) old has and new not, and new has and old not."""
    a, b = without_soa(old.records), without_soa(new.records)
    return a - b, b - a


def ptr_record(snap, zone):
    owner = "%s.zones.%s" % (snap.ids[zone], CATALOG)
    return {r for r in snap.records if r[0] == owner and r[2] == "PTR"}


def group_record(snap, zone):
    owner = "group.%s.zones.%s" % (snap.ids[zone], CATALOG)
    return {r for r in snap.records if r[0] == owner and r[2] == "TXT"}


class NotifyCatcher:
    """A NOTIFY target on a free loopback UDP port (a thread of the test,
    stopped at its end): it answers every NOTIFY (no key) and keeps
    (time, zone, serial or None) of each."""

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
            except OSError:
                return
            try:
                q = dns.message.from_wire(data)
            except dns.exception.DNSException:
                continue
            if q.opcode() != dns.opcode.NOTIFY or not q.question:
                continue
            soa = [rrset for rrset in q.answer if rrset.rdtype == dns.rdatatype.SOA]
            self.seen.append((time.monotonic(), q.question[0].name.to_text(),
                              soa[0][0].serial if soa else None))
            self.sock.sendto(dns.message.make_response(q).to_wire(), peer)

    def since(self, t, zone):
        """The serials (None: no SOA) of the NOTIFYs for zone since t."""
        return [serial for when, z, serial in list(self.seen) if when >= t and z == zone]

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def catchers():
    made = []

    def make():
        c = NotifyCatcher()
        made.append(c)
        return c
    yield make
    for c in made:
        c.stop()


# ------------------------------------------------------------ the consumers

def wait_serving(server, zone, serial=None, timeout=CONSUMER_WAIT):
    """Wait until server answers zone's SOA (with that serial, if given)."""
    def what():
        rcode = rcode_of(server.port, zone)
        return "%s serving %s%s (it answers %s, serial %s)" % (
            server.label, zone, "" if serial is None else " serial %d" % serial,
            "nothing" if rcode is None else dns.rcode.to_text(rcode),
            serial_of(server.port, zone))
    wait_until(lambda: serial_of(server.port, zone) is not None and (
        serial is None or serial_of(server.port, zone) == serial), what, server, timeout)


def wait_not_serving(server, zone, timeout=CONSUMER_WAIT):
    """Wait until server answers REFUSED for zone, which Knot DNS, BIND
    (recursion off) and apexd answer for a zone they do not have."""
    wait_until(lambda: rcode_of(server.port, zone) == dns.rcode.REFUSED,
               "%s no longer serving %s (REFUSED)" % (server.label, zone), server, timeout)


class PeerConsumer(servers.Server):
    """A consumer of CATALOG from the primary at primary_port, on a port
    fixed in advance (the one the primary NOTIFYs); start() waits until
    it answers at all."""

    def __init__(self, workdir, port, primary_port):
        super().__init__(workdir, [])
        self.fixed_port = port
        self.primary_port = primary_port

    def start(self):
        super().start()
        deadline = time.monotonic() + servers.START_TIMEOUT
        while query(self.port, CATALOG) is None:
            if not self.alive():
                raise RuntimeError("%s exited with status %s at start-up:\n%s" % (
                    self.label, self.proc.returncode, self.log_tail(30)))
            if time.monotonic() > deadline:
                raise RuntimeError("%s did not answer within %.0f s:\n%s" % (
                    self.label, servers.START_TIMEOUT, self.log_tail(30)))
            time.sleep(0.1)
        return self

    def group_path(self, zone, group):
        """The file a member's copy goes to by its group (the template or
        pattern named like it, else the default one), or None when this
        consumer shows no group."""
        return None


class KnotConsumer(PeerConsumer):
    """Knot DNS 3.2 interpreting CATALOG (catalog-role: interpret): its
    members take the template "members" (copy members-<zone>.zone), or
    "g1" (copy g1-<zone>.zone) for group g1; both flush a member's copy
    at once (zonefile-sync: 0), allow NOTIFY and transfers from
    loopback."""

    kind = "knot-consumer"
    TEMPLATES = ("members", "g1")

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
            "remote:", "  - id: primary", "    address: 127.0.0.1@%d" % self.primary_port,
            "acl:", "  - id: notify", "    address: 127.0.0.0/8", "    action: notify",
            "  - id: xfr", "    address: 127.0.0.0/8", "    action: transfer",
            "template:", "  - id: default", '    storage: "%s"' % d,
            "    zonefile-sync: -1", "    semantic-checks: off",
        ]
        for t in self.TEMPLATES:
            lines += ["  - id: %s" % t, '    storage: "%s"' % d, '    file: "%s-%%s.zone"' % t,
                      "    zonefile-sync: 0", "    semantic-checks: off",
                      "    master: primary", "    acl: [notify, xfr]"]
        lines += ["zone:", "  - domain: %s" % CATALOG, "    master: primary",
                  "    acl: [notify, xfr]", "    catalog-role: interpret",
                  "    catalog-template: [%s]" % ", ".join(self.TEMPLATES)]
        conf = os.path.join(d, "knot.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", conf]

    def group_path(self, zone, group):
        t = group if group in self.TEMPLATES else "members"
        return os.path.join(self.workdir, "%s-%s.zone" % (t, bare(zone)))


class BindConsumer(PeerConsumer):
    """BIND 9.18 with CATALOG as a secondary zone and a catalog-zones
    entry for it (members from default-primaries, their copies in
    zone-directory), transfers allowed from loopback.  A group has no
    effect in BIND 9.18."""

    kind = "bind-consumer"

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "catz"), exist_ok=True)
        primary = "127.0.0.1 port %d" % self.primary_port
        lines = [
            "options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
            "    listen-on port %d { 127.0.0.1; };" % self.port, "    listen-on-v6 { none; };",
            "    recursion no;", "    notify no;", "    allow-transfer { 127.0.0.0/8; };",
            "    catalog-zones {",
            '        zone "%s" default-primaries { %s; } zone-directory "catz"'
            " in-memory no min-update-interval 1;" % (bare(CATALOG), primary),
            "    };",
            "};",
            "controls { };",
            'zone "%s" { type secondary; file "%s.db"; primaries { %s; }; };' % (
                bare(CATALOG), bare(CATALOG), primary),
        ]
        conf = os.path.join(d, "named.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-c", conf]


class ApexdConsumer(ConsumerApexd):
    """apexd consuming CATALOG: members take the pattern "members" (copy
    <zone>.zone), or "g1" (copy g1-<zone>.zone) for group g1; both with
    provide-xfr, so that their content can be compared."""

    def __init__(self, workdir, port, primary_port):
        patterns = [Pattern("members", "%s.zone", primary_port, [XFR]),
                    Pattern("g1", "g1-%s.zone", primary_port, [XFR])]
        super().__init__(workdir, port, patterns, [Catalog(CATALOG, "members", primary_port)])
        self.label = "apexd-consumer"

    def group_path(self, zone, group):
        return self.path("g1-%s.zone" if group == "g1" else "%s.zone", zone)


CONSUMERS = {"knot": KnotConsumer, "bind": BindConsumer, "apexd": ApexdConsumer}


def start_consumer(procs, tmp, kind, port, primary_port):
    need(kind)
    return start(procs, CONSUMERS[kind](os.path.join(tmp, kind + "-consumer"), port,
                                        primary_port))


def assert_same_content(consumer, primary, zone):
    """An AXFR of zone from the consumer gives the primary's records."""
    want = records(axfr(primary.port, zone))
    got = records(axfr(consumer.port, zone))
    assert got == want, "%s's %s differs from the primary's:\nmissing %s\nextra %s" % (
        consumer.label, zone, sorted(want - got)[:10], sorted(got - want)[:10])


def wait_group_paths(consumer, groups):
    """Wait until each member's copy is in the file of its group
    ({zone: group or None}), and in no other group's file."""
    for zone, group in groups.items():
        path = consumer.group_path(zone, group)
        wait_until(lambda: os.path.exists(path), "%s's copy of %s (group %s) in %s" % (
            consumer.label, zone, group, path), consumer, CONSUMER_WAIT)
        for other in (None, "g1"):
            if other != group:
                path = consumer.group_path(zone, other)
                assert not os.path.exists(path), (zone, group, path,
                                                  sorted(os.listdir(consumer.workdir)))


# ------------------------------------------------------ tests: the catalog

def test_producer_generates_catalog(procs, tmp_path):
    """apexd with members m1 (no group), m2 (group g1) and m3, and o.test.
    in no catalog: the catalog is served (SOA query, AXFR) with exactly
    SOA, NS invalid., version "2", a PTR per member and m2's group TXT,
    distinct ids; its file, which did not exist, is written with the same
    records.  The members are served as written."""
    members = {"m1.test.": None, "m2.test.": "g1", "m3.test.": None}
    producer = ProducerApexd(os.path.join(str(tmp_path), "producer"), members, (),
                             others=["o.test."])
    assert not os.path.exists(producer.catalog_path)
    start(procs, producer)
    snap = producer.wait_catalog()
    assert serial_of(producer.port, CATALOG) == snap.serial
    producer.wait_file(snap)
    for z in list(members) + ["o.test."]:
        producer.check_serves(z)


def test_producer_member_added(procs, tmp_path):
    """A member m4 (group g1) added to the config file and apexctl
    reconfig: the catalog lists it, with a serial after the last; the
    other members keep their ids; an IXFR from the last serial gives
    exactly m4's PTR and group TXT; the file follows; m4 is served."""
    producer = start_producer(procs, str(tmp_path), {"m1.test.": None, "m2.test.": "g1"})
    old = producer.wait_catalog()
    producer.wait_file(old)

    producer.members["m4.test."] = "g1"
    producer.reconfig()
    new = producer.wait_catalog(changed_from=old)
    assert {z: new.ids[z] for z in old.ids} == old.ids, "ids changed by the reconfig"
    deleted, added = diff(old, new)
    assert (deleted, added) == (set(), ptr_record(new, "m4.test.") | group_record(new, "m4.test."))
    assert_change(producer, old, new, deleted, added)
    producer.wait_file(new)
    producer.check_serves("m4.test.")


def test_producer_member_removed(procs, tmp_path):
    """Two members leave the catalog in one reconfig: m2 (group g1)
    taken out of the config file, m3 kept but without its
    catalog-producer-zone.  The serial goes up, m1 keeps its id, an IXFR
    from the last serial deletes exactly their PTRs and m2's group TXT,
    and m3 is still served."""
    members = {"m1.test.": None, "m2.test.": "g1", "m3.test.": None}
    producer = start_producer(procs, str(tmp_path), members)
    old = producer.wait_catalog()

    del producer.members["m2.test."]
    del producer.members["m3.test."]
    producer.others.append("m3.test.")
    producer.reconfig()
    new = producer.wait_catalog(changed_from=old)
    assert new.ids == {"m1.test.": old.ids["m1.test."]}
    deleted, added = diff(old, new)
    assert added == set() and deleted == (
        ptr_record(old, "m2.test.") | group_record(old, "m2.test.") | ptr_record(old, "m3.test."))
    assert_change(producer, old, new, deleted, added)
    producer.wait_file(new)
    producer.check_serves("m3.test.")
    assert rcode_of(producer.port, "m2.test.") == dns.rcode.REFUSED


def test_producer_group_changes(procs, tmp_path):
    """Three reconfigs, each changing one member's catalog-group: m1 gets
    g1, m2 goes from g1 to g2, m2 loses its group.  Each gives a new
    serial and changes only the group TXT (IXFR from the serial before);
    no member's id changes."""
    producer = start_producer(procs, str(tmp_path), {"m1.test.": None, "m2.test.": "g1"})
    first = old = producer.wait_catalog()
    for zone, group in (("m1.test.", "g1"), ("m2.test.", "g2"), ("m2.test.", None)):
        producer.members[zone] = group
        producer.reconfig()
        new = producer.wait_catalog(changed_from=old)
        assert new.ids == first.ids, "ids changed with a group of %s" % zone
        deleted, added = diff(old, new)
        assert deleted == (group_record(old, zone) if old.groups[zone] else set())
        assert added == (group_record(new, zone) if group else set())
        assert_change(producer, old, new, deleted, added)
        old = new
    producer.wait_file(old)


def test_producer_reconfig_without_member_change(procs, tmp_path):
    """Reconfigs that change no member keep the catalog as it is (same
    serial, same records): the same config again; a zone in no catalog
    added and one removed; the members' sections with one more setting
    that is not the catalog's (a provide-xfr entry)."""
    producer = start_producer(procs, str(tmp_path), {"m1.test.": None, "m2.test.": "g1"},
                              others=["o1.test."])
    old = producer.wait_catalog()
    producer.wait_file(old)

    producer.reconfig()
    producer.others = ["o2.test."]
    producer.reconfig()
    wait_serving(producer, "o2.test.", 1, WAIT)
    producer.extra_zone_lines = ["provide-xfr: 127.0.0.2 BLOCKED"]
    producer.reconfig()
    # apexctl reconfig answers once its work is done; a second more for
    # a change of the catalog that would come late (none must come)
    time.sleep(1)
    new = producer.wait_catalog()
    assert (new.serial, new.records) == (old.serial, old.records), (
        "the catalog changed without a member change: serial %d -> %d\n%s" % (
            old.serial, new.serial, sorted(new.records ^ old.records)))
    assert serial_of(producer.port, CATALOG) == old.serial
    assert ixfr_change(producer.port, CATALOG, old.serial) == (old.serial, set(), set())
    assert producer.file_records() == old.records


def test_producer_ids_stable_across_restart(procs, tmp_path):
    """apexd stopped and started again, with the sections of its config
    file in another order (the catalog's last, the members reversed):
    the same catalog, serial and ids included.  A member added by a
    reconfig then gives a later serial and leaves the others' ids."""
    members = {"m1.test.": None, "m2.test.": "g1", "m3.test.": None}
    producer = start_producer(procs, str(tmp_path), members)
    old = producer.wait_catalog()
    producer.wait_file(old)

    assert producer.stop() == 0, producer.log_tail(30)
    producer.fixed_port = producer.port
    producer.catalog_first = False
    producer.members_reversed = True
    producer.start()
    again = producer.wait_catalog()
    assert (again.serial, again.records) == (old.serial, old.records), (
        "the catalog changed by a restart: serial %d -> %d\n%s" % (
            old.serial, again.serial, sorted(again.records ^ old.records)))

    producer.members["m4.test."] = None
    producer.reconfig()
    new = producer.wait_catalog(changed_from=again)
    assert {z: new.ids[z] for z in old.ids} == old.ids


def test_producer_notifies_targets(procs, tmp_path, catchers):
    """The catalog's notify: targets (two, each a NOTIFY catcher of the
    test) get a NOTIFY for the catalog after a reconfig that adds a
    member (with the new serial, when the NOTIFY has an SOA)."""
    targets = [catchers(), catchers()]
    producer = start_producer(procs, str(tmp_path), {"m1.test.": None},
                              notify_ports=[c.port for c in targets])
    old = producer.wait_catalog()

    t = time.monotonic()
    producer.members["m2.test."] = "g1"
    producer.reconfig()
    new = producer.wait_catalog(changed_from=old)
    for c in targets:
        wait_until(lambda: any(s in (None, new.serial) for s in c.since(t, CATALOG)),
                   lambda: "a NOTIFY of %s serial %d to 127.0.0.1@%d (seen: %s)" % (
                       CATALOG, new.serial, c.port, c.seen), producer, WAIT)


# -------------------------------------------------------- tests: config errors

def bad_config(d, kind):
    """A config whose member names catalog-producer-zone "catalog.invalid"
    when that zone is (kind) a plain zone, a consumer catalog, missing;
    or (kind "good") a producer.  Every zone file exists."""
    cat = os.path.join(d, "catalog.invalid.zone")
    with open(cat, "w") as f:
        f.write(catalog_text(CATALOG, 1))
    mem = os.path.join(d, "m1.test.zone")
    with open(mem, "w") as f:
        f.write(member_text("m1.test.", 1))
    lines = ["server:", "\tlisten: 127.0.0.1@%d" % servers.free_port()]
    if kind == "consumer":
        lines += ["pattern:", '\tname: "members"', '\tzonefile: "%s.zone"',
                  "\trequest-xfr: 127.0.0.1@%d NOKEY" % servers.free_port()]
    if kind != "missing":
        lines += ["zone:", '\tname: "catalog.invalid"', '\tfile: "%s"' % cat]
    if kind == "good":
        lines.append("\tcatalog: producer")
    elif kind == "consumer":
        lines += ["\tcatalog: consumer", '\tcatalog-member-pattern: "members"',
                  "\trequest-xfr: 127.0.0.1@%d NOKEY" % servers.free_port()]
    lines += ["zone:", '\tname: "m1.test"', '\tfile: "%s"' % mem,
              '\tcatalog-producer-zone: "catalog.invalid"']
    conf = os.path.join(d, "apex.conf")
    with open(conf, "w") as f:
        f.write("\n".join(lines) + "\n")
    return conf


@pytest.mark.parametrize("kind", ["plain", "consumer", "missing"])
def test_producer_zone_not_a_producer_is_config_error(kind, tmp_path):
    """A zone whose catalog-producer-zone names a zone that is not a
    catalog: producer one (a plain zone, a consumer catalog, no zone):
    apexd -t fails and its message names the key; the same config with
    the catalog a producer passes apexd -t."""
    need("apexd")
    d = str(tmp_path)
    conf = bad_config(d, kind)
    r = subprocess.run([servers.apexd_path(), "-t", "-c", conf], capture_output=True,
                       text=True, timeout=60, cwd=d)
    out = r.stdout + r.stderr
    assert r.returncode != 0, "apexd -t accepted catalog-producer-zone naming a %s zone:\n%s" % (
        kind, out)
    assert "catalog-producer-zone" in out, out
    r = subprocess.run([servers.apexd_path(), "-t", "-c", bad_config(d, "good")],
                       capture_output=True, text=True, timeout=60, cwd=d)
    assert r.returncode == 0, "apexd -t refused a good producer config:\n%s%s" % (
        r.stdout, r.stderr)


def test_producer_reconfig_with_bad_reference_refused(procs, tmp_path):
    """A reconfig whose config file has a member naming a
    catalog-producer-zone that does not exist fails (apexctl exits 1,
    naming the key); apexd keeps serving the catalog as it was."""
    producer = start_producer(procs, str(tmp_path), {"m1.test.": None, "m2.test.": "g1"})
    old = producer.wait_catalog()
    producer.write_config()
    with open(producer.conf) as f:
        text = f.read()
    with open(producer.conf, "w") as f:
        f.write(text.replace('catalog-producer-zone: "%s"' % bare(CATALOG),
                             'catalog-producer-zone: "nosuch.invalid"', 1))
    r = apexctl(producer, "reconfig")
    assert r.returncode == 1, (r.stdout, r.stderr, producer.log_tail(20))
    assert "catalog-producer-zone" in r.stdout + r.stderr + log_text(producer), (
        r.stdout, r.stderr)
    now = producer.wait_catalog()
    assert (now.serial, now.records) == (old.serial, old.records)


# ---------------------------------------------------------- tests: consumers

CONSUMER_KINDS = ["knot", "bind", "apexd"]


def start_pair(procs, tmp, kind, members):
    """apexd producing the catalog of members, NOTIFYing a consumer of
    kind, which is started next and transfers from it."""
    port = servers.free_port()
    producer = start_producer(procs, tmp, members, notify_ports=[port])
    producer.wait_catalog()
    consumer = start_consumer(procs, tmp, kind, port, producer.port)
    return producer, consumer


@pytest.mark.parametrize("kind", CONSUMER_KINDS)
def test_producer_consumer_serves_members(kind, procs, tmp_path):
    """Knot DNS, BIND or apexd consuming apexd's catalog serves its members
    (m1, m2 in group g1) with the primary's content (AXFR compared)."""
    members = {"m1.test.": None, "m2.test.": "g1"}
    producer, consumer = start_pair(procs, str(tmp_path), kind, members)
    for zone in members:
        wait_serving(consumer, zone, 1)
        assert_same_content(consumer, producer, zone)
    assert rcode_of(consumer.port, "o.test.") == dns.rcode.REFUSED


@pytest.mark.parametrize("kind", CONSUMER_KINDS)
def test_producer_consumer_follows_added_and_removed(kind, procs, tmp_path):
    """A member added to apexd's config file (apexctl reconfig) is served
    by the consumer within CONSUMER_WAIT seconds, with the primary's
    content; removed again, it is no longer (REFUSED).  m1 stays served."""
    producer, consumer = start_pair(procs, str(tmp_path), kind, {"m1.test.": None})
    wait_serving(consumer, "m1.test.", 1)
    assert rcode_of(consumer.port, "m3.test.") == dns.rcode.REFUSED

    old = producer.snapshot()
    producer.members["m3.test."] = None
    producer.reconfig()
    old = producer.wait_catalog(changed_from=old)
    wait_serving(consumer, "m3.test.", 1)
    assert_same_content(consumer, producer, "m3.test.")

    del producer.members["m3.test."]
    producer.reconfig()
    producer.wait_catalog(changed_from=old)
    wait_not_serving(consumer, "m3.test.")
    assert serial_of(consumer.port, "m1.test.") == 1


@pytest.mark.parametrize("kind", CONSUMER_KINDS)
def test_producer_consumer_takes_group(kind, procs, tmp_path):
    """The catalog-group of a member reaches the consumer: Knot DNS applies
    the catalog-template named like it, apexd the pattern named like it
    (m2, group g1: copy g1-m2.test.zone; m1, no group: the default
    template's or pattern's file).  A member added with group g1 by a
    reconfig takes it too.  BIND 9.18 has no settings per group."""
    if kind == "bind":
        pytest.skip("BIND 9.18 applies no settings by a member's group")
    members = {"m1.test.": None, "m2.test.": "g1"}
    producer, consumer = start_pair(procs, str(tmp_path), kind, members)
    for zone in members:
        wait_serving(consumer, zone, 1)
    wait_group_paths(consumer, members)

    old = producer.snapshot()
    producer.members["m4.test."] = "g1"
    producer.reconfig()
    producer.wait_catalog(changed_from=old)
    wait_serving(consumer, "m4.test.", 1)
    wait_group_paths(consumer, {"m4.test.": "g1"})


# ------------------------------------------- the consumers, without the producer

@pytest.mark.parametrize("kind", CONSUMER_KINDS)
def test_producer_consumer_harness_hand_written(kind, procs, tmp_path):
    """The check of this file's consumers, without apexd's producer: apexd
    as a plain primary serves a hand-written catalog (m1, m2 in group g1)
    and NOTIFYs the consumer; the members are served with the primary's
    content and (Knot DNS, apexd) in their group's file; m3, added to the
    catalog by hand, is served; m3 removed again is not (REFUSED)."""
    port = servers.free_port()
    tmp = str(tmp_path)
    listed = [member("a1", "m1.test."), member("a2", "m2.test.", group="g1")]
    zones = {CATALOG: catalog_text(CATALOG, 1, listed)}
    zones.update({z: member_text(z, 1) for z in ("m1.test.", "m2.test.", "m3.test.")})
    primary = start_hand_written(procs, tmp, "apexd", zones, port)
    consumer = start_consumer(procs, tmp, kind, port, primary.port)
    for zone in ("m1.test.", "m2.test."):
        wait_serving(consumer, zone, 1)
        assert_same_content(consumer, primary, zone)
    if kind != "bind":
        wait_group_paths(consumer, {"m1.test.": None, "m2.test.": "g1"})
    assert rcode_of(consumer.port, "m3.test.") == dns.rcode.REFUSED

    primary.update(CATALOG, catalog_text(CATALOG, 2, listed + [member("a3", "m3.test.")]))
    wait_serving(consumer, "m3.test.", 1)
    assert www_text(consumer.port, "m3.test.") == www_text(primary.port, "m3.test.")
    primary.update(CATALOG, catalog_text(CATALOG, 3, listed))
    wait_not_serving(consumer, "m3.test.")
    assert serial_of(consumer.port, "m1.test.") == 1
