# SPDX-License-Identifier: BSD-3-Clause
"""Start and stop the servers the system tests talk to.

Every server runs on a free loopback port with its own files in a private
temporary directory, and is stopped by its PID at teardown: apexd (the
server under test) and the two reference servers, NSD and Knot DNS,
serving the same zone files.
"""

import os
import random
import shutil
import signal
import socket
import subprocess
import time

import dns.flags
import dns.message
import dns.rdatatype

LOOPBACK = "127.0.0.1"

# Bounded waits, in seconds.  An AddressSanitizer build of apexd loads the
# root zone several times slower than a normal one.
START_TIMEOUT = float(os.environ.get("APEX_START_TIMEOUT", "120"))
STOP_TIMEOUT = 10.0


# Ports are picked below Linux's ephemeral range (32768-60999 by default),
# so that no outgoing connection of a server or a test can take one between
# the pick and the bind, and never twice in one run, so that two servers
# started in one test (a primary and its secondary) cannot get the same one.
PORT_RANGE = (20000, 32767)
_ports_given = set()


def free_port():
    """A port on 127.0.0.1 that is free for both UDP and TCP right now and
    was not handed out before in this run."""
    rng = random.Random()
    for _ in range(500):
        port = rng.randint(*PORT_RANGE)
        if port in _ports_given:
            continue
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            tcp.bind((LOOPBACK, port))
            udp.bind((LOOPBACK, port))
        except OSError:
            continue
        finally:
            tcp.close()
            udp.close()
        _ports_given.add(port)
        return port
    raise RuntimeError("no free loopback port found for UDP and TCP")


def answers_soa(port, origin, timeout=0.5):
    """True if something on 127.0.0.1:port answers an SOA query for origin."""
    q = dns.message.make_query(origin, dns.rdatatype.SOA)
    q.flags = 0
    wire = q.to_wire()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        try:
            s.sendto(wire, (LOOPBACK, port))
            data, _ = s.recvfrom(65535)
        except OSError:
            return False
    try:
        r = dns.message.from_wire(data)
    except Exception:
        return False
    return r.id == q.id and r.rcode() == 0 and any(
        rr.rdtype == dns.rdatatype.SOA for rr in r.answer)


class Server:
    """One server process on 127.0.0.1:port serving zones [(origin, file)]."""

    kind = "server"

    def __init__(self, workdir, zones, label=None):
        self.workdir = workdir
        self.zones = zones
        self.label = label or self.kind
        self.port = None
        self.proc = None
        self.logpath = os.path.join(workdir, self.kind + ".log")
        os.makedirs(workdir, exist_ok=True)

    def command(self):
        raise NotImplementedError

    def start(self):
        # a port fixed in advance (a peer's configuration names it), else a free one
        self.port = getattr(self, "fixed_port", None) or free_port()
        cmd = self.command()
        self.log = open(self.logpath, "wb")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=self.workdir)
        deadline = time.monotonic() + START_TIMEOUT
        pending = [origin for origin, _ in self.zones]
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with status %s at start-up: %s\n%s" % (
                    self.label, self.proc.returncode, " ".join(cmd), self.log_tail()))
            # Every zone must be loaded, not just the first one.
            while pending and answers_soa(self.port, pending[0]):
                pending.pop(0)
            if not pending:
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("%s did not answer an SOA query for %s within %.0f s: %s\n%s" % (
            self.label, pending[0], START_TIMEOUT, " ".join(cmd), self.log_tail()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """Stop the process by its PID: SIGTERM, then SIGKILL if it lingers.
        Returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT)
        self.log.close()
        return self.proc.returncode

    def log_tail(self, lines=30):
        try:
            if not self.log.closed:
                self.log.flush()
            with open(self.logpath, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def __repr__(self):
        return "%s@%s" % (self.label, self.port)


def apexd_path():
    builddir = os.environ.get("APEX_BUILDDIR") or os.environ.get("APEX_SRCDIR") or os.getcwd()
    return os.path.join(builddir, "apexd")


class Apexd(Server):
    kind = "apexd"

    def __init__(self, workdir, zones, label=None, extra_args=()):
        super().__init__(workdir, zones, label)
        self.extra_args = list(extra_args)

    def command(self):
        path = apexd_path()
        if not os.access(path, os.X_OK):
            raise RuntimeError("apexd not found at %s (build it, or set APEX_BUILDDIR)" % path)
        cmd = [path, "-f", "-n", "2", "-l", "%s@%d" % (LOOPBACK, self.port)]
        for origin, path in self.zones:
            cmd += ["-z", "%s=%s" % (origin, path)]
        return cmd + self.extra_args


class Nsd(Server):
    """NSD 4 with its defaults, except that response rate limiting (compiled
    into Debian's NSD and on by default) is off: it would silently drop
    bursts of answers."""

    kind = "nsd"

    def command(self):
        d = self.workdir
        conf = os.path.join(d, "nsd.conf")
        lines = [
            "server:",
            "    ip-address: %s@%d" % (LOOPBACK, self.port),
            "    do-ip6: no",
            "    server-count: 1",
            '    username: ""',
            '    chroot: ""',
            '    zonesdir: "%s"' % d,
            '    database: ""',
            '    pidfile: "%s/nsd.pid"' % d,
            '    xfrdfile: "%s/xfrd.state"' % d,
            '    xfrdir: "%s"' % d,
            '    zonelistfile: "%s/zone.list"' % d,
            "    verbosity: 1",
            "    rrl-ratelimit: 0",
            "    rrl-whitelist-ratelimit: 0",
            "    tcp-count: 200",
            "remote-control:",
            "    control-enable: no",
        ]
        for origin, path in self.zones:
            lines += ["zone:", '    name: "%s"' % origin,
                      '    zonefile: "%s"' % os.path.abspath(path)]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("nsd") or "/usr/sbin/nsd", "-d", "-c", conf]


class Bind(Server):
    """BIND 9 as an authoritative server of the zone files, recursion off:
    the reference for zones that NSD and Knot DNS refuse to load (data
    below a DNAME's owner, which RFC 6672 section 2.4 lets a server
    refuse or occlude)."""

    kind = "bind"

    def command(self):
        d = self.workdir
        lines = [
            "options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
            "    listen-on port %d { %s; };" % (self.port, LOOPBACK), "    listen-on-v6 { none; };",
            "    recursion no;", "    notify no;", "    rate-limit { responses-per-second 0; };",
            "};",
            "controls { };",
        ]
        for origin, path in self.zones:
            lines.append('zone "%s" { type primary; file "%s"; };' % (origin, os.path.abspath(path)))
        conf = os.path.join(d, "named.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-c", conf]


class Knot(Server):
    """Knot DNS serving the zone files as they are: no signing, no journal,
    no zone file rewrite."""

    kind = "knot"

    def command(self):
        d = self.workdir
        conf = os.path.join(d, "knot.conf")
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        lines = [
            "server:",
            '    rundir: "%s"' % d,
            "    listen: %s@%d" % (LOOPBACK, self.port),
        ]
        if os.geteuid() == 0:
            lines.append("    user: root:root")  # do not switch to the knot user
        lines += [
            "    udp-workers: 1",
            "    tcp-workers: 1",
            "    background-workers: 1",
            "    tcp-idle-timeout: 120",
            "database:",
            '    storage: "%s/db"' % d,
            "control:",
            '    listen: "%s/knot.sock"' % d,
            "log:",
            "  - target: stderr",
            "    any: notice",
            "template:",
            "  - id: default",
            '    storage: "%s"' % d,
            "    zonefile-sync: -1",
            "    zonefile-load: whole",
            "    journal-content: none",
            "    semantic-checks: off",
            "    dnssec-signing: off",
            "zone:",
        ]
        for origin, path in self.zones:
            lines += ["  - domain: %s" % origin,
                      '    file: "%s"' % os.path.abspath(path)]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", conf]
