# SPDX-License-Identifier: BSD-3-Clause
"""Primaries and secondaries for the transfer benchmarks: apexd, Knot DNS,
NSD and BIND 9 as secondaries of one zone, Knot DNS and apexd as its
primary, each on a free loopback port with its files in a private
directory, pinned with taskset, stopped by PID.

A secondary starts with no copy of the zone (it transfers it whole at
start), accepts NOTIFY from 127.0.0.1 and sends none of its own.  A
primary serves a zone file, allows transfers to 127.0.0.0/8, keeps a
journal so that it answers IXFR, and sends no NOTIFY: the benchmark sends
it, once the primary serves the new serial.  The settings that could
throttle a secondary are set so that none does (see each class).
"""

import os
import random
import shutil
import socket
import struct
import subprocess
import time

import benchlib as B

import dns.flags  # noqa: E402
import dns.message  # noqa: E402
import dns.name  # noqa: E402
import dns.opcode  # noqa: E402
import dns.query  # noqa: E402
import dns.rdataclass  # noqa: E402
import dns.rdatatype  # noqa: E402


def soa_rrset(port, origin, timeout=0.5):
    """The SOA RRset that 127.0.0.1:port serves for origin."""
    q = dns.message.make_query(origin, dns.rdatatype.SOA)
    r = dns.query.udp(q, B.LOOPBACK, port=port, timeout=timeout)
    return r.find_rrset(r.answer, dns.name.from_text(origin), dns.rdataclass.IN,
                        dns.rdatatype.SOA)


def soa_serial(sock, origin_wire):
    """The SOA serial answered on the connected UDP socket sock, or None
    (no answer within the socket's time-out, refused, or no SOA yet)."""
    qid = random.getrandbits(16)
    query = struct.pack("!HHHHHH", qid, 0, 1, 0, 0, 0) + origin_wire + struct.pack("!HH", 6, 1)
    try:
        sock.send(query)
        deadline = time.monotonic() + sock.gettimeout()
        while True:
            r = sock.recv(65535)
            if len(r) >= 12 and r[:2] == query[:2]:
                break
            if time.monotonic() > deadline:
                return None
    except OSError:
        return None
    if (r[3] & 0xF) != 0 or struct.unpack("!H", r[6:8])[0] == 0:
        return None
    pos = len(query)
    if r[pos] & 0xC0 == 0xC0:  # the answer's owner: a pointer or the name
        pos += 2
    else:
        while r[pos]:
            pos += r[pos] + 1
        pos += 1
    rtype, _, _, rdlen = struct.unpack("!HHIH", r[pos:pos + 10])
    if rtype != 6:
        return None
    rdata, i = r[pos + 10:pos + 10 + rdlen], 0
    for _ in range(2):  # mname, rname
        while True:
            if rdata[i] & 0xC0 == 0xC0:
                i += 2
                break
            if rdata[i] == 0:
                i += 1
                break
            i += rdata[i] + 1
    return struct.unpack("!I", rdata[i:i + 4])[0]


def name_wire(origin):
    out = b""
    for label in [x for x in origin.rstrip(".").split(".") if x]:
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


class SerialProbe:
    """SOA queries to 127.0.0.1:port, one at a time on one socket."""

    def __init__(self, port, origin, timeout=0.05):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.connect((B.LOOPBACK, port))
        self.sock.settimeout(timeout)
        self.wire = name_wire(origin)

    def serial(self):
        return soa_serial(self.sock, self.wire)

    def wait(self, serial, bound, interval=0.001, notify=None):
        """Seconds until serial is answered (polling every interval), or
        None after bound seconds; notify (a Notify) is polled alongside."""
        t0 = time.monotonic()
        while True:
            if notify is not None:
                notify.poll()
            if self.serial() == serial:
                return time.monotonic() - t0
            if time.monotonic() - t0 > bound:
                return None
            time.sleep(interval)

    def close(self):
        self.sock.close()


class Notify:
    """A NOTIFY for origin to 127.0.0.1:port, sent again as a primary
    would (RFC 1996 4.7) while it is not answered: every `every` seconds,
    at most `tries` times in all.  soa (a dns.rrset.RRset, or None): the
    zone's SOA for the answer section (RFC 1996 3.7), as Knot DNS, BIND
    and NSD send it, from which a secondary may learn the new serial."""

    def __init__(self, port, origin, every=1.0, tries=5, soa=None):
        q = dns.message.make_query(origin, dns.rdatatype.SOA)
        q.flags = dns.flags.AA  # (this resets the opcode too)
        q.set_opcode(dns.opcode.NOTIFY)
        if soa is not None:
            q.answer.append(soa)
        self.wire, self.qid = q.to_wire(), q.id
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.connect((B.LOOPBACK, port))
        self.sock.setblocking(False)
        self.every, self.left = every, tries
        self.answered = False
        self.sent = 0
        self.send()

    def send(self):
        self.sock.send(self.wire)
        self.sent += 1
        self.left -= 1
        self.last = time.monotonic()

    def poll(self):
        """Reads the answer if it came; sends again if it is due."""
        if self.answered:
            return
        try:
            r = self.sock.recv(512)
            if len(r) >= 2 and struct.unpack("!H", r[:2])[0] == self.qid:
                self.answered = True
                return
        except OSError:
            pass
        if self.left > 0 and time.monotonic() - self.last >= self.every:
            self.send()

    def close(self):
        self.sock.close()


def knot_server_lines(workdir, port):
    """The start of a knot.conf: its server: section with the run
    directory and the loopback listen address (as root, run as root)."""
    lines = ["server:", '    rundir: "%s"' % workdir, "    listen: %s@%d" % (B.LOOPBACK, port)]
    if os.geteuid() == 0:
        lines.append("    user: root:root")
    return lines


def status(pid, key):
    """proc_status, 0 for a process that just ended (NSD's old server)."""
    try:
        return B.proc_status(pid, key)
    except OSError:
        return 0


def pids_with_argument(arg):
    """Processes whose command line holds arg (a path of this run's own
    directory): NSD's server processes, forked again at each reload."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                if arg.encode() in f.read().split(b"\0"):
                    out.append(int(entry))
        except OSError:
            pass
    return out


class Peer(B.Server):
    """A server of one zone whose start is timed to the first answer with
    a given serial (polled every 2 ms)."""

    def __init__(self, workdir, origin, cpus):
        super().__init__(workdir, [(origin, None)], cpus=cpus)
        self.origin = origin
        self.conf = None

    def start_until(self, serial, timeout=B.START_TIMEOUT):
        """Start; returns the seconds from exec to the first answer with
        serial (any serial if None)."""
        self.port = self.pick_port()
        cmd = self.launcher() + self.command()
        self.log = open(os.path.join(self.workdir, "log"), "wb")
        probe = SerialProbe(self.port, self.origin, timeout=0.02)
        t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, cwd=self.workdir)
        try:
            while time.monotonic() - t0 < timeout:
                if self.proc.poll() is not None:
                    raise RuntimeError("%s exited at start-up (%s); see %s/log" % (
                        self.name, self.proc.returncode, self.workdir))
                got = probe.serial()
                if got is not None and (serial is None or got == serial):
                    self.ready_seconds = time.monotonic() - t0
                    return self.ready_seconds
                time.sleep(0.002)
        finally:
            probe.close()
        self.stop()
        raise RuntimeError("%s did not answer serial %s within %.0f s" % (
            self.name, serial, timeout))

    def pids(self):
        pids = super().pids()
        if self.conf:
            pids += [p for p in pids_with_argument(self.conf) if p not in pids]
        return pids

    def rss(self):
        """Largest VmRSS among the server's processes, in bytes."""
        return max([status(p, "VmRSS") for p in self.pids()] or [0])

    def reset_peak(self):
        for p in self.pids():
            try:
                with open("/proc/%d/clear_refs" % p, "w") as f:
                    f.write("5")  # VmHWM back to the current RSS
            except OSError:
                pass

    def peak(self):
        return max([status(p, "VmHWM") for p in self.pids()] or [0])

    def write_conf(self, filename, lines):
        self.conf = os.path.join(self.workdir, filename)
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return self.conf

    def stop(self):
        others = [p for p in self.pids() if p != self.proc.pid] if self.proc else []
        super().stop()
        for p in others:  # an NSD server process left behind (by its PID)
            try:
                os.kill(p, 15)
            except OSError:
                pass


# -- secondaries ---------------------------------------------------------

class ApexSecondary(Peer):
    """apexd: one worker; provide-xfr to 127.0.0.1 so that it keeps its
    journal, as a secondary serving secondaries of its own does (the other
    peers keep theirs always)."""

    name = "apex"

    def __init__(self, workdir, origin, cpus, primary_port):
        super().__init__(workdir, origin, cpus)
        self.primary_port = primary_port
        self.extra_server = []  # more server: lines

    def command(self):
        conf = self.write_conf("apex.conf", [
            "server:", "    listen: %s@%d" % (B.LOOPBACK, self.port), "    workers: 1",
            "    control-socket: none"] + self.extra_server + [
            "zone:", '    name: "%s"' % self.origin,
            '    file: "%s"' % os.path.join(self.workdir, "zone.copy"),
            "    request-xfr: %s@%d NOKEY" % (B.LOOPBACK, self.primary_port),
            "    allow-notify: 127.0.0.1 NOKEY",
            "    provide-xfr: 127.0.0.1 NOKEY"])
        return [os.path.join(B.BUILDDIR, "apexd"), "-f", "-c", conf]


class ApexNice0Secondary(ApexSecondary):
    """apexd with reload-priority: 0: its transfer thread at the workers'
    priority instead of SCHED_IDLE, which on a machine shared with other
    work waits for every other runnable thread of its CPU."""

    name = "apex-nice0"

    def __init__(self, workdir, origin, cpus, primary_port):
        super().__init__(workdir, origin, cpus, primary_port)
        self.extra_server = ["    reload-priority: 0"]


class KnotSecondary(Peer):
    """Knot DNS: one UDP and one TCP worker, its journal of changes (the
    default), no rewrite of its zone file (zonefile-sync: -1: the journal
    holds the changes; a flush of the whole zone after every change would
    keep the background worker from the next transfer).  NOTIFY starts a
    refresh at once (refresh-min-interval bounds only the SOA timer)."""

    name = "knot"

    def __init__(self, workdir, origin, cpus, primary_port):
        super().__init__(workdir, origin, cpus)
        self.primary_port = primary_port

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        lines = knot_server_lines(d, self.port)
        lines += ["    udp-workers: 1", "    tcp-workers: 1",
                  "database:", '    storage: "%s/db"' % d,
                  "log:", "  - target: stderr", "    any: info",
                  "remote:", "  - id: primary", "    address: %s@%d" % (B.LOOPBACK,
                                                                      self.primary_port),
                  "acl:", "  - id: notify", "    address: 127.0.0.1", "    action: notify",
                  "template:", "  - id: default", '    storage: "%s"' % d,
                  "    zonefile-sync: -1", "    journal-content: changes",
                  "    semantic-checks: off",
                  "zone:", "  - domain: %s" % self.origin,
                  '    file: "%s/zone.copy"' % d, "    master: primary", "    acl: notify"]
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c",
                self.write_conf("knot.conf", lines)]


class NsdSecondary(Peer):
    """NSD: one server process, no database (its default), response rate
    limiting off, xfrd-reload-timeout: 0 (its default of 1 s spaces the
    reloads after transfers at least a second apart)."""

    name = "nsd"

    def __init__(self, workdir, origin, cpus, primary_port):
        super().__init__(workdir, origin, cpus)
        self.primary_port = primary_port

    def command(self):
        d = self.workdir
        lines = ["server:", "    ip-address: %s@%d" % (B.LOOPBACK, self.port),
                 "    do-ip6: no", "    server-count: 1", '    username: ""',
                 '    chroot: ""', '    zonesdir: "%s"' % d, '    database: ""',
                 '    pidfile: "%s/nsd.pid"' % d, '    xfrdfile: "%s/xfrd.state"' % d,
                 '    xfrdir: "%s"' % d, '    zonelistfile: "%s/zone.list"' % d,
                 "    verbosity: 1", "    rrl-ratelimit: 0", "    rrl-whitelist-ratelimit: 0",
                 "    xfrd-reload-timeout: 0",
                 "remote-control:", "    control-enable: no",
                 "zone:", '    name: "%s"' % self.origin, '    zonefile: "%s/zone.copy"' % d,
                 "    request-xfr: %s@%d NOKEY" % (B.LOOPBACK, self.primary_port),
                 "    allow-notify: 127.0.0.1 NOKEY"]
        return [shutil.which("nsd") or "/usr/sbin/nsd", "-d", "-c",
                self.write_conf("nsd.conf", lines)]


class BindSecondary(Peer):
    """BIND 9: recursion off, notify no (no NOTIFY of its own downstream),
    rate limiting off, IXFR asked for (request-ixfr, its default), NOTIFY
    allowed from 127.0.0.1.  Its threads: as many as the CPUs it is
    pinned to."""

    name = "bind"

    def __init__(self, workdir, origin, cpus, primary_port):
        super().__init__(workdir, origin, cpus)
        self.primary_port = primary_port

    def command(self):
        d = self.workdir
        lines = ["options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
                 "    listen-on port %d { %s; };" % (self.port, B.LOOPBACK),
                 "    listen-on-v6 { none; };", "    recursion no;", "    notify no;",
                 "    request-ixfr yes;", "};", "controls { };",
                 'zone "%s" { type secondary; primaries { %s port %d; }; file "%s/zone.copy";'
                 ' allow-notify { 127.0.0.1; }; };' % (self.origin, B.LOOPBACK,
                                                       self.primary_port, d)]
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-c",
                self.write_conf("named.conf", lines)]


SECONDARIES = {"apex": ApexSecondary, "apex-nice0": ApexNice0Secondary, "bind": BindSecondary, "knot": KnotSecondary,
               "nsd": NsdSecondary}


# -- primaries -----------------------------------------------------------

class KnotPrimary(Peer):
    """Knot DNS serving the zone file with its journal of changes, from
    which it answers IXFR: a change is a knotc transaction (zone-begin,
    zone-set/zone-unset, zone-commit: the serial incremented by Knot) or
    an edit of the file and zone-reload with zonefile-load: difference
    (Knot computes the change)."""

    name = "knot-primary"

    def __init__(self, workdir, origin, cpus, path):
        super().__init__(workdir, origin, cpus)
        self.path = path

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        self.sock = os.path.join(d, "knot.sock")
        lines = knot_server_lines(d, self.port)
        # 5 s per message of an outgoing transfer, not 0.5: a secondary
        # that reads late on a machine busy with other work is not cut off
        lines += ["    tcp-io-timeout: 5000",
                  "database:", '    storage: "%s/db"' % d,
                  "control:", '    listen: "%s"' % self.sock, "    timeout: 600",
                  "log:", "  - target: stderr", "    any: notice",
                  "acl:", "  - id: xfr", "    address: 127.0.0.0/8", "    action: transfer",
                  "template:", "  - id: default", '    storage: "%s"' % d,
                  "    zonefile-sync: -1", "    zonefile-load: difference",
                  "    journal-content: changes", "    journal-max-usage: 2G",
                  "    semantic-checks: off", "    dnssec-signing: off",
                  "zone:", "  - domain: %s" % self.origin, '    file: "%s"' % self.path,
                  "    acl: xfr"]
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c",
                self.write_conf("knot.conf", lines)]

    def knotc(self, commands, timeout=900):
        r = subprocess.run([shutil.which("knotc") or "/usr/sbin/knotc", "-s", self.sock,
                            "-t", "600"], input=("\n".join(commands) + "\n").encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        out = r.stdout.decode(errors="replace")
        bad = [l for l in out.splitlines() if l.strip() and l.strip() != "OK"]
        if r.returncode != 0 or bad:
            raise RuntimeError("knotc: %s" % "\n".join(bad[:5]))

    def transaction(self, edits):
        """edits: [("unset", owner, type) | ("set", owner, ttl, type, rdata)]."""
        cmds = ["zone-begin %s" % self.origin]
        for e in edits:
            if e[0] == "unset":
                cmds.append("zone-unset %s %s %s" % (self.origin, e[1], e[2]))
            else:
                cmds.append("zone-set %s %s %d %s %s" % (self.origin, e[1], e[2], e[3], e[4]))
        cmds.append("zone-commit %s" % self.origin)
        self.knotc(cmds)

    def reload(self):
        self.knotc(["zone-reload %s" % self.origin])


class ApexPrimary(Peer):
    """apexd serving the zone file, its journal filled from the
    differences of each reload (apexctl reload)."""

    name = "apex-primary"

    def __init__(self, workdir, origin, cpus, path):
        super().__init__(workdir, origin, cpus)
        self.path = path

    def command(self):
        self.sock = os.path.join(self.workdir, "apexd.sock")
        conf = self.write_conf("apex.conf", [
            "server:", "    listen: %s@%d" % (B.LOOPBACK, self.port), "    workers: 1",
            '    control-socket: "%s"' % self.sock, "    journal-size: 1073741824",
            "zone:", '    name: "%s"' % self.origin, '    file: "%s"' % self.path,
            "    provide-xfr: 127.0.0.0/8 NOKEY"])
        return [os.path.join(B.BUILDDIR, "apexd"), "-f", "-c", conf]

    def reload(self):
        r = subprocess.run([os.path.join(B.BUILDDIR, "apexctl"), "-s", self.sock, "reload",
                            self.origin], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=900)
        if r.returncode != 0:
            raise RuntimeError("apexctl reload: %s" % r.stdout.decode(errors="replace"))


PRIMARIES = {"knot": KnotPrimary, "apex": ApexPrimary}
