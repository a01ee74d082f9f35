# SPDX-License-Identifier: BSD-3-Clause
"""apexd as a catalog zone consumer (RFC 9432) of real producers.

apexd is configured with a catalog zone (`catalog: consumer`) and
NSD-style patterns:

    pattern:
    	name: "members"
    	zonefile: "%s.zone"
    	request-xfr: 127.0.0.1@PORT NOKEY
    	allow-notify: 127.0.0.1 NOKEY
    zone:
    	name: "catalog.invalid"
    	file: "catalog.invalid.zone"
    	catalog: consumer
    	catalog-member-pattern: "members"
    	request-xfr: 127.0.0.1@PORT NOKEY
    	allow-notify: 127.0.0.1 NOKEY

Every member the transferred catalog lists (a PTR at <id>.zones.<catalog>)
becomes a secondary zone with the settings of the pattern its group
property (TXT at group.<id>.zones.<catalog>) names, when there is such a
pattern, else of catalog-member-pattern; its copy goes to that pattern's
zonefile (%s: the member's name without the trailing dot, relative to the
configuration's directory).

The producers: Knot DNS 3.2 generating the catalog from its member zones
(catalog-role: generate / member, catalog-group), changed at run time with
knotc conf-begin/conf-set/conf-commit, and BIND 9.18 (or apexd itself)
serving a hand-written catalog, changed by editing the file and
`rndc reload ZONE`.  Every primary NOTIFYs apexd's port; the catalogs' SOA
refresh is an hour, so a change can only reach apexd by NOTIFY.  Each test
checks on the producer's side (an AXFR of the catalog) that it serves the
catalog the test means before it looks at apexd.
"""

import base64
import collections
import os
import shutil
import subprocess
import time

import dns.exception
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.zone
import pytest

import servers
from conftest import SANITIZER_RE
from test_reload import SCHED_IDLE, thread_priorities
from test_secondary import apexctl

CATALOG = "catalog.invalid."
WAIT = 20.0  # seconds for apexd to follow a change of a catalog (bounded)

# A pattern of apexd's configuration: its name, its zonefile template, the
# port of the primary its members are transferred from, more lines.
Pattern = collections.namedtuple("Pattern", "name zonefile primary extra")
# A consumer catalog zone of apexd's configuration.
Catalog = collections.namedtuple("Catalog", "name member_pattern primary")


def bare(name):
    """A zone's name without the trailing dot, as %s in a zonefile template."""
    return name.rstrip(".")


# ---------------------------------------------------------------- zone texts

def member_text(origin, serial, tag="first", hosts=20):
    """A member zone: a delegation, a wildcard, and `hosts` names; its
    www TXT says `tag` (which copy of the zone is served)."""
    lines = [
        "$ORIGIN %s" % origin,
        "$TTL 300",
        "@ IN SOA ns1 hostmaster %d 3600 600 86400 60" % serial,
        "@ IN NS ns1",
        "@ IN NS ns2.elsewhere.example.",
        "ns1 IN A 192.0.2.1",
        "www IN A 192.0.2.80",
        'www IN TXT "%s %s serial %d"' % (bare(origin), tag, serial),
        "mail 600 IN MX 10 mx",
        "mx IN AAAA 2001:db8::25",
        '*.wild IN TXT "wildcard"',
        "sub IN NS ns.sub",
        "ns.sub IN A 192.0.2.53",
    ]
    lines += ["host%d IN A 198.51.100.%d" % (i, i % 250 + 1) for i in range(hosts)]
    return "\n".join(lines) + "\n"


Member = collections.namedtuple("Member", "id zone group coo")


def member(id_, zone, group=None, coo=None):
    return Member(id_, zone, group, coo)


def catalog_text(origin, serial, members=(), version='"2"', extra=()):
    """A hand-written catalog zone (RFC 9432): version.<catalog> TXT
    `version` (none if None), a PTR per Member with its group TXT and coo
    PTR, and `extra` lines as they are.  The TTL is not 0: apexd's loader
    gives some records of a `$TTL 0` file another TTL."""
    lines = [
        "$ORIGIN %s" % origin,
        "$TTL 300",
        "@ IN SOA invalid. invalid. %d 3600 600 2147483646 0" % serial,
        "@ IN NS invalid.",
    ]
    if version is not None:
        lines.append("version IN TXT %s" % version)
    for m in members:
        lines.append("%s.zones IN PTR %s" % (m.id, m.zone))
        if m.group is not None:
            lines.append('group.%s.zones IN TXT "%s"' % (m.id, m.group))
        if m.coo is not None:
            lines.append("coo.%s.zones IN PTR %s" % (m.id, m.coo))
    return "\n".join(lines + list(extra)) + "\n"


def write_zone_file(path, text):
    """Write a zone file with a modification time later than its last one
    and than now: BIND and Knot DNS skip a reload of a file whose time they
    have seen."""
    old = os.stat(path).st_mtime if os.path.exists(path) else 0
    with open(path, "w") as f:
        f.write(text)
    t = max(time.time(), old) + 1
    os.utime(path, (t, t))


# --------------------------------------------------------- DNS from the tests

def query(port, name, rdtype=dns.rdatatype.SOA, tcp=False):
    """The answer of 127.0.0.1@port, or None when there is none in time
    (UDP asked twice) or nothing listens there."""
    q = dns.message.make_query(name, rdtype)
    q.flags = 0
    for _ in range(1 if tcp else 2):
        try:
            if tcp:
                return dns.query.tcp(q, "127.0.0.1", port=port, timeout=5)
            return dns.query.udp(q, "127.0.0.1", port=port, timeout=2)
        except dns.exception.Timeout:
            continue
        except OSError:  # refused: nothing listens
            return None
    return None


def rcode_of(port, zone):
    r = query(port, zone)
    return None if r is None else r.rcode()


def serial_of(port, zone):
    """The SOA serial port answers for zone, or None if it does not."""
    r = query(port, zone)
    if r is None or r.rcode() != dns.rcode.NOERROR:
        return None
    soa = [rrset for rrset in r.answer if rrset.rdtype == dns.rdatatype.SOA]
    return soa[0][0].serial if soa else None


def www_text(port, zone):
    """The www TXT of a member zone as port answers it."""
    r = query(port, "www." + zone, dns.rdatatype.TXT)
    if r is None or r.rcode() != dns.rcode.NOERROR or not r.answer:
        return None
    return b"".join(r.answer[0][0].strings).decode()


def axfr(port, zone):
    """The zone as 127.0.0.1@port transfers it (AXFR, no key)."""
    msgs = dns.query.xfr("127.0.0.1", zone, port=port, lifetime=30, relativize=False)
    return dns.zone.from_xfr(msgs, relativize=False)


def records(zone):
    """Every record of a dnspython zone: {(owner, TTL, type, rdata)}."""
    return {(name.to_text(), rds.ttl, dns.rdatatype.to_text(rds.rdtype), rd.to_text())
            for name, node in zone.nodes.items() for rds in node for rd in rds}


def zone_records(text, origin):
    return records(dns.zone.from_text(text, origin=origin, relativize=False))


def catalog_members(port, origin):
    """{member zone: (id, group or None, coo or None)} of the catalog origin
    as port serves it (AXFR): the producer's side of a test."""
    z = axfr(port, origin)
    zones = dns.name.from_text("zones." + origin)
    out = {}
    for name, node in z.nodes.items():
        if name.parent() != zones:
            continue
        ptr = node.get_rdataset(dns.rdataclass.IN, dns.rdatatype.PTR)
        if ptr is None:
            continue
        group = z.get_rdataset(dns.name.Name((b"group",) + name.labels), dns.rdatatype.TXT)
        coo = z.get_rdataset(dns.name.Name((b"coo",) + name.labels), dns.rdatatype.PTR)
        for rd in ptr:
            out[rd.target.to_text()] = (
                name.labels[0].decode(),
                b"".join(group[0].strings).decode() if group else None,
                coo[0].target.to_text() if coo else None)
    return out


def catalog_version(port, origin):
    """The strings of version.<catalog> TXT as port transfers them (Knot
    DNS answers no query for a catalog it generates, only transfers)."""
    rds = axfr(port, origin).get_rdataset("version." + origin, dns.rdatatype.TXT)
    return [b"".join(rd.strings).decode() for rd in rds or ()]


# ------------------------------------------------------------- bounded waits

def wait_until(cond, what, server, timeout=WAIT):
    """Poll cond() until it is true, at most timeout seconds; else fail with
    what was awaited (a text, or a function giving it then) and the end of
    the server's log."""
    deadline = time.monotonic() + timeout
    while True:
        if cond():
            return
        text = what() if callable(what) else what
        if server.proc is not None and not server.alive():
            raise AssertionError("%s: %s exited with status %s meanwhile:\n%s" % (
                text, server.label, server.proc.returncode, server.log_tail(60)))
        if time.monotonic() > deadline:
            raise AssertionError("%s: not within %.0f s; last lines of %s's log:\n%s" % (
                text, timeout, server.label, server.log_tail(60)))
        time.sleep(0.1)


def wait_served(apex, zone, serial=None):
    """Wait until apexd answers zone's SOA (with that serial, if given)."""
    def served():
        got = serial_of(apex.port, zone)
        return got is not None and (serial is None or got == serial)
    def what():
        rcode = rcode_of(apex.port, zone)
        return "apexd serving %s%s (it answers %s, serial %s)" % (
            zone, "" if serial is None else " serial %d" % serial,
            "nothing" if rcode is None else dns.rcode.to_text(rcode),
            serial_of(apex.port, zone))
    wait_until(served, what, apex)


def wait_refused(apex, zone):
    """Wait until apexd answers REFUSED for zone: not a zone it serves."""
    wait_until(lambda: rcode_of(apex.port, zone) == dns.rcode.REFUSED,
               "apexd no longer serving %s (REFUSED)" % zone, apex)


def assert_refused(apex, zone):
    rcode = rcode_of(apex.port, zone)
    assert rcode == dns.rcode.REFUSED, "%s: apexd answers %s, not REFUSED:\n%s" % (
        zone, None if rcode is None else dns.rcode.to_text(rcode), apex.log_tail(40))


def wait_path(apex, path, exists=True):
    wait_until(lambda: os.path.exists(path) == exists,
               "%s %s" % (path, "written" if exists else "deleted"), apex)


def log_text(server):
    server.log_tail(1)  # flushes
    with open(server.logpath, "rb") as f:
        return f.read().decode("utf-8", "replace")


def wait_log_line(apex, words, what, unless=(), levels=None):
    """Wait for a line of apexd's log (at one of levels, if given) that has
    every one of words and none of unless (case insensitive, the test's
    directory taken out of its paths: pytest names it after the test);
    return it."""
    found = []
    testdir = os.path.dirname(apex.workdir)

    def has():
        for line in log_text(apex).splitlines():
            low = line.replace(testdir, "<dir>").lower()
            if levels is not None and not any(" %s: " % level in low for level in levels):
                continue
            if all(w.lower() in low for w in words) and not any(u in low for u in unless):
                found.append(line)
                return True
        return False
    wait_until(has, what, apex)
    return found[0]


# ------------------------------------------------------------ the processes

class ConsumerApexd(servers.Server):
    """apexd with consumer catalog zones and patterns, on a port fixed in
    advance (the one the producers NOTIFY), its files in workdir."""

    kind = "apexd"

    def __init__(self, workdir, port, patterns, catalogs):
        super().__init__(workdir, [])
        self.fixed_port = port
        self.patterns = patterns
        self.catalogs = catalogs
        self.socket = os.path.join(workdir, "control.sock")
        self.conf = os.path.join(workdir, "apex.conf")
        self.extra_server = []  # more server: lines

    def config(self):
        lines = ["server:",
                 "\tlisten: 127.0.0.1@%d" % self.port,
                 "\tworkers: 2",
                 '\tcontrol-socket: "%s"' % self.socket]
        lines += ["\t" + line for line in self.extra_server]
        for p in self.patterns:
            lines += ["pattern:",
                      '\tname: "%s"' % p.name,
                      '\tzonefile: "%s"' % p.zonefile,
                      "\trequest-xfr: 127.0.0.1@%d NOKEY" % p.primary,
                      "\tallow-notify: 127.0.0.1 NOKEY"]
            lines += ["\t" + line for line in p.extra]
        for c in self.catalogs:
            lines += ["zone:",
                      '\tname: "%s"' % bare(c.name),
                      '\tfile: "%s.zone"' % bare(c.name),
                      "\tcatalog: consumer",
                      '\tcatalog-member-pattern: "%s"' % c.member_pattern,
                      "\trequest-xfr: 127.0.0.1@%d NOKEY" % c.primary,
                      "\tallow-notify: 127.0.0.1 NOKEY"]
        return "\n".join(lines) + "\n"

    def command(self):
        with open(self.conf, "w") as f:
            f.write(self.config())
        return [servers.apexd_path(), "-f", "-c", self.conf]

    def start(self):
        """Start it and wait (bounded) until it answers at all: it starts
        with no zone it can answer for."""
        super().start()
        deadline = time.monotonic() + servers.START_TIMEOUT
        while query(self.port, self.catalogs[0].name) is None:
            if not self.alive():
                raise RuntimeError("apexd exited with status %s at start-up (%s):\n%s" % (
                    self.proc.returncode, self.conf, self.log_tail(30)))
            if time.monotonic() > deadline:
                raise RuntimeError("apexd did not answer within %.0f s:\n%s" % (
                    servers.START_TIMEOUT, self.log_tail(30)))
            time.sleep(0.1)
        return self

    def path(self, template, zone):
        """Where a member's copy goes by a pattern's zonefile template."""
        return os.path.join(self.workdir, template.replace("%s", bare(zone)))

    def catalog_path(self, catalog=CATALOG):
        return os.path.join(self.workdir, bare(catalog) + ".zone")


def patterns_for(primary_port, extra=()):
    """The two patterns most tests use: "members" (the catalog's
    catalog-member-pattern) and "other" (for group "other"), from one
    primary, each with its own zonefile template."""
    return [Pattern("members", "%s.zone", primary_port, list(extra)),
            Pattern("other", "other-%s.zone", primary_port, list(extra))]


class KnotProducer(servers.Server):
    """Knot DNS 3.2 generating CATALOG from its member zones (each given as
    name -> group or None), NOTIFYing notify_port of every change.  It
    answers no query for the catalog (REFUSED), only transfers of it: the
    start waits for the members, wait_catalog() for the catalog."""

    kind = "knot-producer"

    def __init__(self, workdir, members, notify_port):
        self.paths = {m: os.path.join(workdir, bare(m) + ".zone") for m in members}
        super().__init__(workdir, list(self.paths.items()))
        self.members = dict(members)
        self.notify_port = notify_port
        self.sock = os.path.join(workdir, "knot.sock")

    def member_lines(self, name, group):
        lines = ["  - domain: %s" % name, '    file: "%s"' % self.paths[name],
                 "    catalog-role: member", "    catalog-zone: %s" % CATALOG]
        if group is not None:
            lines.append("    catalog-group: %s" % group)
        return lines

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        for name, path in self.paths.items():
            if not os.path.exists(path):
                write_zone_file(path, member_text(name, 1))
        lines = ["server:", '    rundir: "%s"' % d, "    listen: 127.0.0.1@%d" % self.port]
        if os.geteuid() == 0:
            lines.append("    user: root:root")
        lines += [
            "    background-workers: 1",
            "database:", '    storage: "%s/db"' % d,
            "control:", '    listen: "%s"' % self.sock,
            "log:", "  - target: stderr", "    any: info",
            "remote:", "  - id: apex", "    address: 127.0.0.1@%d" % self.notify_port,
            "acl:", "  - id: xfr", "    address: 127.0.0.0/8", "    action: transfer",
            "template:", "  - id: default", '    storage: "%s"' % d,
            "    zonefile-sync: -1", "    zonefile-load: whole", "    journal-content: none",
            "    semantic-checks: off", "    acl: xfr", "    notify: apex",
            "zone:", "  - domain: %s" % CATALOG, "    catalog-role: generate",
        ]
        for name, group in self.members.items():
            lines += self.member_lines(name, group)
        with open(os.path.join(d, "knot.conf"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", os.path.join(d, "knot.conf")]

    def knotc(self, *args):
        r = subprocess.run([shutil.which("knotc") or "/usr/sbin/knotc", "-s", self.sock]
                           + list(args), capture_output=True, text=True, timeout=30)
        return r

    def transaction(self, *commands):
        """One configuration transaction of knotc commands (each a tuple,
        e.g. ("conf-set", "zone[x.].catalog-group", "g")), committed at once:
        one new catalog serial."""
        r = self.knotc("conf-begin")
        assert r.returncode == 0, r
        for cmd in commands:
            r = self.knotc(*cmd)
            if r.returncode != 0:
                self.knotc("conf-abort")
                raise AssertionError("knotc %s: %s%s" % (" ".join(cmd), r.stdout, r.stderr))
        r = self.knotc("conf-commit")
        assert r.returncode == 0, (r, self.log_tail(20))

    def add_commands(self, name, group=None):
        """The knotc commands that add a member zone (its file written)."""
        self.paths[name] = os.path.join(self.workdir, bare(name) + ".zone")
        write_zone_file(self.paths[name], member_text(name, 1))
        self.members[name] = group
        z = "zone[%s]" % name
        cmds = [("conf-set", z), ("conf-set", z + ".file", self.paths[name]),
                ("conf-set", z + ".catalog-role", "member"),
                ("conf-set", z + ".catalog-zone", CATALOG)]
        if group is not None:
            cmds.append(("conf-set", z + ".catalog-group", group))
        return cmds

    def remove_commands(self, name):
        del self.members[name]
        return [("conf-unset", "zone[%s]" % name)]

    def group_commands(self, name, group):
        self.members[name] = group
        if group is None:
            return [("conf-unset", "zone[%s].catalog-group" % name)]
        return [("conf-set", "zone[%s].catalog-group" % name, group)]

    def wait_catalog(self):
        """Wait until the generated catalog lists exactly self.members with
        their groups (checked by an AXFR of it from Knot DNS)."""
        want = dict(self.members)
        got = {}

        def listed():
            got.clear()
            got.update({z: g for z, (_, g, _) in catalog_members(self.port, CATALOG).items()})
            return got == want
        wait_until(listed, "Knot DNS's catalog listing %s (it lists %s)" % (want, got), self)
        assert catalog_version(self.port, CATALOG) == ["2"]

    def change_member(self, name, serial, tag):
        """A new serial of a member zone, loaded by Knot DNS."""
        write_zone_file(self.paths[name], member_text(name, serial, tag))
        r = self.knotc("zone-reload", name)
        assert r.returncode == 0, r
        wait_until(lambda: serial_of(self.port, name) == serial,
                   "Knot DNS serving %s serial %d" % (name, serial), self)


class HandWrittenProducer(servers.Server):
    """A primary serving hand-written catalog and member zones
    ({origin: text}) from files in workdir, NOTIFYing notify_port of every
    zone's changes; update() writes a zone's file again and reloads it."""

    def __init__(self, workdir, zones, notify_port):
        self.texts = dict(zones)
        super().__init__(workdir, [(z, self.zone_path(z, workdir)) for z in zones])
        self.notify_port = notify_port

    @staticmethod
    def zone_path(origin, workdir):
        return os.path.join(workdir, bare(origin) + ".zone")

    def write_zones(self):
        for origin, text in self.texts.items():
            path = self.zone_path(origin, self.workdir)
            if not os.path.exists(path):
                write_zone_file(path, text)

    def reload(self, origin):
        raise NotImplementedError

    def check_serves(self, origin):
        """The producer's side: it transfers exactly the text of origin."""
        want = zone_records(self.texts[origin], origin)
        got = records(axfr(self.port, origin))
        assert got == want, "%s serves %s otherwise than written:\nmissing %s\nextra %s" % (
            self.label, origin, sorted(want - got), sorted(got - want))

    def update(self, origin, text):
        """Write origin's file again, reload it, and wait until it is served
        with the new serial."""
        self.texts[origin] = text
        write_zone_file(self.zone_path(origin, self.workdir), text)
        self.reload(origin)
        serial = dns.zone.from_text(text, origin=origin).get_soa().serial
        wait_until(lambda: serial_of(self.port, origin) == serial,
                   "%s serving %s serial %d" % (self.label, origin, serial), self)
        self.check_serves(origin)


class BindProducer(HandWrittenProducer):
    """BIND 9.18, primary of every zone, NOTIFY to apexd's port only
    (notify explicit), controlled by rndc over loopback with a key made
    here."""

    kind = "bind-producer"

    def command(self):
        d = self.workdir
        self.write_zones()
        self.rndc_port = servers.free_port()
        secret = base64.b64encode(os.urandom(32)).decode()
        key = 'key "rndc-key" { algorithm hmac-sha256; secret "%s"; };' % secret
        with open(os.path.join(d, "rndc.conf"), "w") as f:
            f.write(key + "\noptions { default-key \"rndc-key\"; default-server 127.0.0.1;"
                    " default-port %d; };\n" % self.rndc_port)
        lines = [
            "options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
            "    listen-on port %d { 127.0.0.1; };" % self.port, "    listen-on-v6 { none; };",
            "    recursion no;", "    allow-transfer { 127.0.0.0/8; };",
            "    notify explicit;", "    notify-delay 0;",
            "    also-notify { 127.0.0.1 port %d; };" % self.notify_port,
            "};",
            key,
            'controls { inet 127.0.0.1 port %d allow { 127.0.0.1; } keys { "rndc-key"; }; };'
            % self.rndc_port,
        ]
        for origin in self.texts:
            lines.append('zone "%s" { type primary; file "%s"; };' % (
                origin, self.zone_path(origin, d)))
        with open(os.path.join(d, "named.conf"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-c",
                os.path.join(d, "named.conf")]

    def reload(self, origin):
        r = subprocess.run([shutil.which("rndc") or "/usr/sbin/rndc", "-c",
                            os.path.join(self.workdir, "rndc.conf"), "reload", bare(origin)],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and "up-to-date" not in r.stdout, (r, self.log_tail(20))

    def axfrs_of(self, origin):
        """How many AXFRs of origin BIND has started (its log)."""
        return log_text(self).count("transfer of '%s/IN': AXFR started" % bare(origin))


class ApexdProducer(HandWrittenProducer):
    """apexd as the primary of the hand-written zones (provide-xfr and
    notify with NOKEY), reloaded with apexctl."""

    kind = "apexd-producer"

    def command(self):
        d = self.workdir
        self.write_zones()
        self.socket = os.path.join(d, "control.sock")
        lines = ["server:", "    listen: 127.0.0.1@%d" % self.port, "    workers: 2",
                 '    control-socket: "%s"' % self.socket]
        for origin in self.texts:
            lines += ["zone:", '    name: "%s"' % origin,
                      '    file: "%s"' % self.zone_path(origin, d),
                      "    provide-xfr: 127.0.0.0/8 NOKEY",
                      "    notify: 127.0.0.1@%d NOKEY" % self.notify_port]
        conf = os.path.join(d, "apex.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [servers.apexd_path(), "-f", "-c", conf]

    def reload(self, origin):
        r = apexctl(self, "reload", origin)
        assert r.returncode == 0, (r.stdout, r.stderr, self.log_tail(20))


PRODUCERS = {"bind": BindProducer, "apexd": ApexdProducer}
BINARIES = {"knot": ("knotd", "knotc"), "bind": ("named", "rndc"), "apexd": ()}


def need(kind):
    missing = [b for b in BINARIES[kind] if shutil.which(b) is None]
    if missing:
        pytest.skip("%s is not installed" % " ".join(missing))


@pytest.fixture
def procs():
    """The processes a test starts (append them before starting them);
    each is stopped by its PID at the end.  apexd consumers must then exit
    0 on SIGTERM, not have died during the test, and have no sanitizer
    report in their log."""
    started = []
    yield started
    problems = []
    for p in reversed(started):
        running = p.alive()
        status = p.stop()
        if not isinstance(p, (ConsumerApexd, ApexdProducer)) or p.proc is None:
            continue
        mine = []
        if running and status != 0:
            mine.append("%s exited with status %s on SIGTERM" % (p.label, status))
        elif not running and p.started_ok and status not in (0, None):
            mine.append("%s exited with status %s during the test" % (p.label, status))
        if os.path.exists(p.logpath) and SANITIZER_RE.search(log_text(p)):
            mine.append("sanitizer errors in %s's log" % p.label)
        if mine:
            problems += mine + ["last lines of %s's log:\n%s" % (p.label, p.log_tail(40))]
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def start(procs, server):
    """Start a server, registered first for the stop at the end."""
    procs.append(server)
    server.started_ok = False
    server.start()
    server.started_ok = True
    return server


def start_knot(procs, tmp, members, apex_port):
    """Knot DNS generating CATALOG from members ({zone: group}); checked
    to list them before apexd is involved."""
    need("knot")
    knot = start(procs, KnotProducer(os.path.join(tmp, "knot-producer"), members, apex_port))
    knot.wait_catalog()
    return knot


def start_hand_written(procs, tmp, kind, zones, apex_port):
    """BIND (or apexd) serving the hand-written zones ({origin: text}),
    each checked to be transferred exactly as written."""
    need(kind)
    primary = start(procs, PRODUCERS[kind](os.path.join(tmp, kind + "-producer"), zones,
                                           apex_port))
    for origin in zones:
        primary.check_serves(origin)
    return primary


def start_consumer(procs, tmp, apex_port, patterns, catalogs):
    apex = ConsumerApexd(os.path.join(tmp, "apexd"), apex_port, patterns, catalogs)
    return start(procs, apex)


def start_consumer_of(procs, tmp, apex_port, primary, extra=()):
    """apexd consuming CATALOG from primary with patterns_for(primary)."""
    return start_consumer(procs, tmp, apex_port, patterns_for(primary.port, extra),
                          [Catalog(CATALOG, "members", primary.port)])


# ------------------------------------------------------------------- tests

def test_catalog_members_take_their_group_pattern(procs, tmp_path):
    """Knot DNS's catalog lists m1 (no group), m2 (group "other", a pattern
    of apexd's) and m3 (group "nosuch", no such pattern): each is served,
    m2 with the "other" pattern (its copy in other-m2.test.zone), m1 and m3
    with the catalog's catalog-member-pattern (m1.test.zone,
    m3.test.zone)."""
    apex_port = servers.free_port()
    members = {"m1.test.": None, "m2.test.": "other", "m3.test.": "nosuch"}
    knot = start_knot(procs, tmp_path, members, apex_port)
    apex = start_consumer_of(procs, tmp_path, apex_port, knot)
    wait_path(apex, apex.catalog_path())  # the catalog's copy
    for zone in members:
        wait_served(apex, zone, 1)
        assert www_text(apex.port, zone) == www_text(knot.port, zone)
    expect = {"m1.test.": "%s.zone", "m2.test.": "other-%s.zone", "m3.test.": "%s.zone"}
    for zone, template in expect.items():
        wait_path(apex, apex.path(template, zone))
        other = "%s.zone" if template != "%s.zone" else "other-%s.zone"
        assert not os.path.exists(apex.path(other, zone)), (zone, os.listdir(apex.workdir))


def test_catalog_member_added_and_removed(procs, tmp_path):
    """A member added to Knot DNS's catalog (a new catalog serial, NOTIFY)
    is served within WAIT seconds and its copy written; removed, it is no
    longer served (REFUSED, as for any zone apexd does not have) and its
    copy is deleted.  The member that stays is served throughout."""
    apex_port = servers.free_port()
    knot = start_knot(procs, tmp_path, {"m1.test.": None}, apex_port)
    apex = start_consumer_of(procs, tmp_path, apex_port, knot)
    wait_served(apex, "m1.test.", 1)
    assert_refused(apex, "m4.test.")

    knot.transaction(*knot.add_commands("m4.test."))
    knot.wait_catalog()
    wait_served(apex, "m4.test.", 1)
    assert www_text(apex.port, "m4.test.") == "m4.test first serial 1"
    copy = apex.path("%s.zone", "m4.test.")
    wait_path(apex, copy)

    knot.transaction(*knot.remove_commands("m4.test."))
    knot.wait_catalog()
    wait_refused(apex, "m4.test.")
    wait_path(apex, copy, exists=False)
    assert serial_of(apex.port, "m1.test.") == 1
    assert os.path.exists(apex.path("%s.zone", "m1.test."))

    # the thread that puts the members in force runs below the workers,
    # like the reload thread (reload-priority, by default idle)
    threads = thread_priorities(apex.proc.pid)
    catalog = [(nice, policy) for name, nice, policy in threads.values()
               if name == "apexd-catalog"]
    assert catalog == [(0, SCHED_IDLE)], threads


def test_catalog_member_removed_while_its_copy_waits(procs, tmp_path, monkeypatch):
    """A member's copy waits to be synced with others (a minute here, by
    the test hook; 200 ms by default): removed from the catalog meanwhile,
    the member's files are gone and stay gone, its waiting copy is dropped,
    not renamed over the removed file (nor a failure logged), while the
    copy of the member that stays is written at stop."""
    monkeypatch.setenv("APEX_TEST_COPY_BATCH_MS", "60000")
    apex_port = servers.free_port()
    knot = start_knot(procs, tmp_path, {"m1.test.": None}, apex_port)
    apex = start_consumer_of(procs, tmp_path, apex_port, knot)
    wait_served(apex, "m1.test.", 1)

    knot.transaction(*knot.add_commands("m4.test."))
    knot.wait_catalog()
    wait_served(apex, "m4.test.", 1)
    copy = apex.path("%s.zone", "m4.test.")
    wait_path(apex, copy + ".xfr")  # written, waiting to be synced
    assert not os.path.exists(copy)

    knot.transaction(*knot.remove_commands("m4.test."))
    knot.wait_catalog()
    wait_refused(apex, "m4.test.")
    wait_path(apex, copy + ".xfr", exists=False)
    assert apex.stop() == 0, apex.log_tail(60)
    assert not os.path.exists(copy), os.listdir(apex.workdir)
    assert not os.path.exists(copy + ".xfr"), os.listdir(apex.workdir)
    assert os.path.exists(apex.path("%s.zone", "m1.test.")), os.listdir(apex.workdir)
    log = log_text(apex)
    assert "is not written" not in log, log


def test_catalog_group_change_keeps_member(procs, tmp_path):
    """Knot DNS moves m1 into group "other" and m2 out of it, and adds m5,
    in one catalog change.  The unique ids stay: m1 and m2 keep being
    served all along (never REFUSED or SERVFAIL while apexd takes in the
    change, which m5 being served shows done) with the same data."""
    apex_port = servers.free_port()
    knot = start_knot(procs, tmp_path, {"m1.test.": None, "m2.test.": "other"}, apex_port)
    apex = start_consumer_of(procs, tmp_path, apex_port, knot)
    for zone in ("m1.test.", "m2.test."):
        wait_served(apex, zone, 1)
    before = {z: catalog_members(knot.port, CATALOG)[z][0] for z in ("m1.test.", "m2.test.")}

    knot.transaction(*(knot.group_commands("m1.test.", "other")
                       + knot.group_commands("m2.test.", None)
                       + knot.add_commands("m5.test.")))
    knot.wait_catalog()
    after = catalog_members(knot.port, CATALOG)
    assert {z: after[z][0] for z in before} == before, "Knot DNS changed the ids"

    def kept_then_m5():
        for zone in ("m1.test.", "m2.test."):
            rcode = rcode_of(apex.port, zone)
            assert rcode == dns.rcode.NOERROR and serial_of(apex.port, zone) == 1, (
                "%s answered %s during the group change:\n%s" % (
                    zone, rcode and dns.rcode.to_text(rcode), apex.log_tail(40)))
        return serial_of(apex.port, "m5.test.") == 1
    wait_until(kept_then_m5, "apexd serving m5.test. (the group change taken in)", apex)
    for zone in ("m1.test.", "m2.test."):
        assert www_text(apex.port, zone) == "%s first serial 1" % bare(zone)


def test_catalog_new_unique_id_resets_member(procs, tmp_path):
    """BIND's hand-written catalog lists r.test. under id "a"; apexd has its
    serial 5.  The primary then goes back to serial 3 with other data, which
    a secondary keeping the zone never takes (3 is older than 5).  The
    catalog then lists r.test. under a new id "b" (in group "other"): a new
    member (RFC 9432 section 5.4): the old copy r.test.zone is deleted and
    the zone transferred afresh, into other-r.test.zone, serial 3."""
    apex_port = servers.free_port()
    zones = {CATALOG: catalog_text(CATALOG, 1, [member("a", "r.test.")]),
             "r.test.": member_text("r.test.", 5, "before")}
    bind = start_hand_written(procs, tmp_path, "bind", zones, apex_port)
    apex = start_consumer_of(procs, tmp_path, apex_port, bind)
    wait_served(apex, "r.test.", 5)
    old_copy = apex.path("%s.zone", "r.test.")
    wait_path(apex, old_copy)
    axfrs = bind.axfrs_of("r.test.")
    assert axfrs >= 1, bind.log_tail(20)

    bind.update("r.test.", member_text("r.test.", 3, "after"))
    assert serial_of(apex.port, "r.test.") == 5
    bind.update(CATALOG, catalog_text(CATALOG, 2, [member("b", "r.test.", group="other")]))
    assert catalog_members(bind.port, CATALOG) == {"r.test.": ("b", "other", None)}

    wait_served(apex, "r.test.", 3)
    assert www_text(apex.port, "r.test.") == "r.test after serial 3"
    wait_path(apex, old_copy, exists=False)
    wait_path(apex, apex.path("other-%s.zone", "r.test."))
    assert bind.axfrs_of("r.test.") > axfrs, "no new AXFR of r.test. in BIND's log"


def test_catalog_coo_moves_member(procs, tmp_path):
    """Two consumer catalogs, A and B, each with its own member pattern
    (copies a-%s.zone and b-%s.zone).  A lists m with a coo property
    pointing to B, and n without one.  Once B lists m, n and k: m belongs
    to B (its copy moves to b-m.test.zone); n stays A's (B listing a zone A
    owns without A's consent changes nothing); k, new, is B's.  A then
    drops m (and adds j): m, now B's, stays served."""
    apex_port = servers.free_port()
    cat_a, cat_b = "cat-a.invalid.", "cat-b.invalid."
    zones = {cat_a: catalog_text(cat_a, 1, [member("m", "m.test.", coo=cat_b),
                                            member("n", "n.test.")]),
             cat_b: catalog_text(cat_b, 1, [])}
    for z in ("m.test.", "n.test.", "k.test.", "j.test."):
        zones[z] = member_text(z, 1)
    bind = start_hand_written(procs, tmp_path, "bind", zones, apex_port)
    assert catalog_members(bind.port, cat_a)["m.test."] == ("m", None, cat_b)
    patterns = [Pattern("pa", "a-%s.zone", bind.port, []),
                Pattern("pb", "b-%s.zone", bind.port, [])]
    apex = start_consumer(procs, tmp_path, apex_port, patterns,
                          [Catalog(cat_a, "pa", bind.port), Catalog(cat_b, "pb", bind.port)])
    for z in ("m.test.", "n.test."):
        wait_served(apex, z, 1)
        wait_path(apex, apex.path("a-%s.zone", z))

    bind.update(cat_b, catalog_text(cat_b, 2, [member("mb", "m.test."), member("nb", "n.test."),
                                               member("kb", "k.test.")]))
    wait_served(apex, "k.test.", 1)
    wait_path(apex, apex.path("b-%s.zone", "k.test."))
    wait_path(apex, apex.path("b-%s.zone", "m.test."))  # m is B's now
    wait_path(apex, apex.path("a-%s.zone", "m.test."), exists=False)
    wait_served(apex, "m.test.", 1)
    assert serial_of(apex.port, "n.test.") == 1  # n is still A's
    assert os.path.exists(apex.path("a-%s.zone", "n.test."))
    assert not os.path.exists(apex.path("b-%s.zone", "n.test.")), os.listdir(apex.workdir)

    bind.update(cat_a, catalog_text(cat_a, 2, [member("n", "n.test."), member("j", "j.test.")]))
    wait_served(apex, "j.test.", 1)
    assert serial_of(apex.port, "m.test.") == 1, "m.test., B's, went with A's entry"
    assert os.path.exists(apex.path("b-%s.zone", "m.test."))
    assert serial_of(apex.port, "n.test.") == 1


# The malformed members of test_catalog_malformed_members_skipped, by the
# member node apexd's log must name, and the zones they would bring.
MALFORMED = {
    "twoptr": ("x.test.", "y.test."),  # a member node with two PTR records
    "dup2": (),  # dup.test. again, under a second id (dup1 is the first)
    "self": (),  # the catalog itself as a member
    "badgrp": ("g.test.",),  # a group property with a space
}


@pytest.mark.parametrize("producer", ["bind", "apexd"])
def test_catalog_malformed_members_skipped(producer, procs, tmp_path):
    """A hand-written catalog, served by BIND or by apexd as a primary, with
    valid members (ok1, ok2 in group "other", dup1) and malformed ones: a
    member node with two PTRs, dup.test. listed again under a second id,
    the catalog itself as a member, a group TXT with a space.  Each
    malformed member is skipped with a line in apexd's log naming its
    member node; the valid members are served, the zones only malformed
    members name are not (REFUSED, no copy), and the catalog's own copy is
    not overwritten by the member named like it."""
    apex_port = servers.free_port()
    catalog = catalog_text(CATALOG, 1, [
        member("ok1", "ok1.test."), member("ok2", "ok2.test.", group="other"),
        member("dup1", "dup.test."), member("dup2", "dup.test."),
        member("self", CATALOG), member("badgrp", "g.test.", group="bad group"),
    ], extra=["twoptr.zones IN PTR x.test.", "twoptr.zones IN PTR y.test."])
    zones = {CATALOG: catalog}
    for z in ("ok1.test.", "ok2.test.", "dup.test.", "x.test.", "y.test.", "g.test."):
        zones[z] = member_text(z, 1)
    primary = start_hand_written(procs, tmp_path, producer, zones, apex_port)
    apex = start_consumer_of(procs, tmp_path, apex_port, primary)

    wait_served(apex, "ok1.test.", 1)
    wait_served(apex, "ok2.test.", 1)
    wait_served(apex, "dup.test.", 1)
    wait_path(apex, apex.path("%s.zone", "ok1.test."))
    wait_path(apex, apex.path("other-%s.zone", "ok2.test."))
    for node in MALFORMED:
        wait_log_line(apex, ["%s.zones.%s" % (node, bare(CATALOG))],
                      "a line of apexd's log naming the member node %s.zones.%s" % (
                          node, CATALOG))
    for node, targets in MALFORMED.items():
        for zone in targets:
            assert_refused(apex, zone)
            for template in ("%s.zone", "other-%s.zone"):
                assert not os.path.exists(apex.path(template, zone)), (zone, template)
    with open(apex.catalog_path()) as f:
        copy = f.read()
    assert "twoptr" in copy and "version" in copy, "the catalog's copy is not the catalog"


def test_catalog_without_version_processes_nothing(procs, tmp_path):
    """A catalog without version.<catalog> TXT "2" is not processed: an
    error (or warning) in apexd's log names the catalog and its version,
    and none of its members is served.  Once BIND serves it with the
    version, the members are."""
    apex_port = servers.free_port()
    listed = [member("ok1", "ok1.test."), member("ok2", "ok2.test.")]
    zones = {CATALOG: catalog_text(CATALOG, 1, listed, version=None),
             "ok1.test.": member_text("ok1.test.", 1), "ok2.test.": member_text("ok2.test.", 1)}
    bind = start_hand_written(procs, tmp_path, "bind", zones, apex_port)
    assert catalog_version(bind.port, CATALOG) == []
    apex = start_consumer_of(procs, tmp_path, apex_port, bind)

    wait_path(apex, apex.catalog_path())  # transferred
    # not the lines on versions of a zone ("the previous version, if any,
    # is still served" of a failed transfer, "the version served is kept")
    wait_log_line(apex, [bare(CATALOG), "version"],
                  "an error (or warning) in apexd's log on the catalog's missing version",
                  unless=("still served", "version served", "versions"),
                  levels=("error", "warning"))
    for m in listed:
        assert_refused(apex, m.zone)
        assert not os.path.exists(apex.path("%s.zone", m.zone))

    bind.update(CATALOG, catalog_text(CATALOG, 2, listed))
    assert catalog_version(bind.port, CATALOG) == ["2"]
    for m in listed:
        wait_served(apex, m.zone, 1)


def test_catalog_more_members_than_transfers_at_once(procs, tmp_path):
    """24 members with xfr-in-max: 2: the scheduler hands them out two at
    a time as transfers end (resuming where it stopped, without a pass over
    every zone each time) and every one is served; then a change of one
    member, NOTIFYed by Knot DNS, is served too."""
    apex_port = servers.free_port()
    members = {"m%02d.test." % i: None for i in range(24)}
    knot = start_knot(procs, tmp_path, members, apex_port)
    apex = ConsumerApexd(os.path.join(tmp_path, "apexd"), apex_port, patterns_for(knot.port, ()),
                         [Catalog(CATALOG, "members", knot.port)])
    apex.extra_server = ["xfr-in-max: 2"]
    start(procs, apex)
    for zone in members:
        wait_served(apex, zone, 1)
    knot.change_member("m07.test.", 2, "changed")
    wait_served(apex, "m07.test.", 2)
    assert www_text(apex.port, "m07.test.") == www_text(knot.port, "m07.test.")
    for zone in members:
        assert serial_of(apex.port, zone) == (2 if zone == "m07.test." else 1)


def test_catalog_restart_serves_from_copies(procs, tmp_path):
    """apexd stopped, then Knot DNS stopped: apexd started again with the
    same configuration and directory serves the catalog's members from
    their copies, as before, although no transfer is possible."""
    apex_port = servers.free_port()
    members = {"m1.test.": None, "m2.test.": "other"}
    knot = start_knot(procs, tmp_path, members, apex_port)
    apex = start_consumer_of(procs, tmp_path, apex_port, knot)
    for zone in members:
        wait_served(apex, zone, 1)
    copies = [apex.path("%s.zone", "m1.test."), apex.path("other-%s.zone", "m2.test."),
              apex.catalog_path()]
    for path in copies:
        wait_path(apex, path)
    served = {zone: www_text(apex.port, zone) for zone in members}
    with open(apex.conf) as f:
        conf = f.read()

    assert apex.stop() == 0, apex.log_tail(40)
    assert not SANITIZER_RE.search(log_text(apex)), apex.log_tail(60)
    knot.stop()
    assert query(knot.port, "m1.test.") is None  # nothing to transfer from
    apex.start()
    with open(apex.conf) as f:
        assert f.read() == conf
    for zone in members:
        wait_served(apex, zone, 1)
        assert www_text(apex.port, zone) == served[zone]
    for path in copies:
        assert os.path.exists(path), path


@pytest.mark.parametrize("producer", ["knot", "bind"])
def test_catalog_member_content_equals_primary(producer, procs, tmp_path):
    """The members, transferred from their primary (Knot DNS or BIND), are
    exactly the primary's: an AXFR of each from apexd (provide-xfr in the
    patterns) and from the primary give the same records, TTLs included.
    A change of a member reaches apexd by the member's own NOTIFY (the
    pattern's allow-notify) and is the primary's again."""
    apex_port = servers.free_port()
    if producer == "knot":
        primary = start_knot(procs, tmp_path, {"m1.test.": None, "m2.test.": "other"}, apex_port)
    else:
        zones = {CATALOG: catalog_text(CATALOG, 1, [member("a", "m1.test."),
                                                    member("b", "m2.test.", group="other")])}
        zones.update({z: member_text(z, 1, hosts=500) for z in ("m1.test.", "m2.test.")})
        primary = start_hand_written(procs, tmp_path, "bind", zones, apex_port)
    apex = start_consumer_of(procs, tmp_path, apex_port, primary,
                             extra=["provide-xfr: 127.0.0.0/8 NOKEY"])

    def assert_same(zone):
        want = records(axfr(primary.port, zone))
        got = records(axfr(apex.port, zone))
        assert got == want, "%s differs:\nmissing %s\nextra %s" % (
            zone, sorted(want - got)[:10], sorted(got - want)[:10])

    for zone in ("m1.test.", "m2.test."):
        wait_served(apex, zone, 1)
        assert_same(zone)

    if producer == "knot":
        primary.change_member("m1.test.", 2, "changed")
    else:
        primary.update("m1.test.", member_text("m1.test.", 2, "changed", hosts=480))
    wait_served(apex, "m1.test.", 2)
    assert_same("m1.test.")
