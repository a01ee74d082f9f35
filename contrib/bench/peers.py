# SPDX-License-Identifier: BSD-3-Clause
"""A zone's primary and its secondaries, for the transfer benchmarks
(contrib/bench/axfr_in.py, and any benchmark of secondaries).

  KnotPrimary(workdir, [(origin, file)])        Knot DNS serving the files,
                                                AXFR/IXFR and NOTIFY to any
                                                address of 127.0.0.0/8, no key
  SECONDARIES["apexd" | "bind" | "knot" | "nsd"](workdir, origin, primary_port)
                                                a secondary of that primary with
                                                no copy of the zone yet

A secondary's start() returns once it answers the zone's SOA with a serial
(any, or the one given to wait_serial()); ready_seconds is the time from
its start to that answer.  Every server runs on the CPUs in BENCH_CPUS
(default: all this process may use), on a free loopback port, with its
files in its own directory under workdir, and is stopped by PID.
"""

import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import secondary_peers as S  # noqa: E402  (its SOA probe and Knot DNS settings)
from secondary_peers import knot_server_lines  # noqa: E402

ALL_CPUS = os.environ.get("BENCH_CPUS",
                          ",".join(str(c) for c in sorted(os.sched_getaffinity(0))))


def soa_serial(port, origin, timeout=0.05):
    """The serial 127.0.0.1:port answers for origin's SOA, or None
    (no answer, an error RCODE, no SOA in the answer)."""
    probe = S.SerialProbe(port, origin, timeout=timeout)
    try:
        return probe.serial()
    except (IndexError, struct.error):  # an answer cut short
        return None
    finally:
        probe.close()


class Peer(B.Server):
    """A server on every CPU of the benchmark (not pinned to one)."""

    def __init__(self, workdir, zones):
        super().__init__(workdir, zones, cpus=ALL_CPUS)


class KnotPrimary(Peer):
    """Knot DNS serving the zone files to secondaries on loopback."""

    name = "knot-primary"

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        lines = knot_server_lines(d, self.port)
        # tcp-io-timeout: a secondary slow to read (a busy machine) must
        # not have its AXFR cut off after the default 0.5 s wait
        lines += ["    background-workers: 1", "    tcp-io-timeout: 60000",
                  "database:", '    storage: "%s/db"' % d,
                  "control:", '    listen: "%s/knot.sock"' % d,
                  "log:", "  - target: stderr", "    any: warning",
                  "acl:", "  - id: xfr", "    address: 127.0.0.0/8",
                  "    action: [transfer, notify]",
                  "template:", "  - id: default", '    storage: "%s"' % d,
                  "    zonefile-sync: -1", "    zonefile-load: whole",
                  "    journal-content: none", "    semantic-checks: off", "zone:"]
        for origin, path in self.zones:
            lines += ["  - domain: %s" % origin, '    file: "%s"' % os.path.abspath(path),
                      "    acl: xfr"]
        with open(os.path.join(d, "knot.conf"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", os.path.join(d, "knot.conf")]


class Secondary(Peer):
    """A secondary of origin from 127.0.0.1@primary_port, with no copy:
    its start() is a whole AXFR."""

    def __init__(self, workdir, origin, primary_port):
        super().__init__(workdir, [(origin, None)])
        self.origin = origin
        self.primary_port = primary_port
        self.wait_serial = None  # None: any serial
        self.copy = os.path.join(self.workdir, "copy.zone")
        if os.path.exists(self.copy):
            os.unlink(self.copy)

    def ready(self, origin):
        serial = soa_serial(self.port, origin)
        return serial is not None and (self.wait_serial is None or serial == self.wait_serial)

    def write(self, name, lines):
        path = os.path.join(self.workdir, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path


class ApexdSecondary(Secondary):
    """apexd; its transfer thread at the workers' priority (reload-priority
    0), as the peers' are, rather than the default SCHED_IDLE."""

    name = "apexd"

    def command(self):
        conf = self.write("apex.conf", [
            "server:", "    listen: %s@%d" % (B.LOOPBACK, self.port), "    workers: 1",
            "    control-socket: none", "    reload-priority: 0",
            "zone:", '    name: "%s"' % self.origin, '    file: "%s"' % self.copy,
            "    request-xfr: %s@%d NOKEY" % (B.LOOPBACK, self.primary_port),
            "    allow-notify: 127.0.0.1 NOKEY"])
        return [os.path.join(B.BUILDDIR, "apexd"), "-f", "-c", conf]


class BindSecondary(Secondary):
    name = "bind"

    def command(self):
        d = self.workdir
        conf = self.write("named.conf", [
            "options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
            "    listen-on port %d { %s; };" % (self.port, B.LOOPBACK),
            "    listen-on-v6 { none; };", "    recursion no;", "    notify no;",
            "    rate-limit { responses-per-second 0; };", "};", "controls { };",
            'zone "%s" { type secondary; file "%s"; primaries port %d { %s; }; };' % (
                self.origin, self.copy, self.primary_port, B.LOOPBACK)])
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-n", "1", "-c", conf]


class KnotSecondary(Secondary):
    name = "knot"

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        lines = knot_server_lines(d, self.port)
        lines += ["    udp-workers: 1", "    tcp-workers: 1",
                  "database:", '    storage: "%s/db"' % d,
                  "control:", '    listen: "%s/knot.sock"' % d,
                  "log:", "  - target: stderr", "    any: warning",
                  "remote:", "  - id: primary",
                  "    address: %s@%d" % (B.LOOPBACK, self.primary_port),
                  "acl:", "  - id: notify", "    address: 127.0.0.0/8", "    action: notify",
                  "template:", "  - id: default", '    storage: "%s"' % d,
                  "    semantic-checks: off", "zone:",
                  "  - domain: %s" % self.origin, '    file: "%s"' % self.copy,
                  "    master: primary", "    acl: notify"]
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", self.write("knot.conf", lines)]


class NsdSecondary(Secondary):
    name = "nsd"

    def command(self):
        d = self.workdir
        conf = self.write("nsd.conf", [
            "server:", "    ip-address: %s@%d" % (B.LOOPBACK, self.port), "    do-ip6: no",
            "    server-count: 1", '    username: ""', '    chroot: ""',
            '    zonesdir: "%s"' % d, '    database: ""', '    pidfile: "%s/nsd.pid"' % d,
            '    xfrdfile: "%s/xfrd.state"' % d, '    xfrdir: "%s"' % d,
            '    zonelistfile: "%s/zone.list"' % d, "    verbosity: 0",
            "    rrl-ratelimit: 0", "    rrl-whitelist-ratelimit: 0",
            "remote-control:", "    control-enable: no",
            "zone:", '    name: "%s"' % self.origin, '    zonefile: "%s"' % self.copy,
            "    request-xfr: AXFR %s@%d NOKEY" % (B.LOOPBACK, self.primary_port),
            "    allow-notify: 127.0.0.1 NOKEY"])
        for name in ("xfrd.state", "zone.list"):
            if os.path.exists(os.path.join(d, name)):
                os.unlink(os.path.join(d, name))
        return [shutil.which("nsd") or "/usr/sbin/nsd", "-d", "-c", conf]


SECONDARIES = {"apexd": ApexdSecondary, "bind": BindSecondary, "knot": KnotSecondary,
               "nsd": NsdSecondary}
