# SPDX-License-Identifier: BSD-3-Clause
"""The primary: Knot DNS serving the zones from their files, changed by
knotc transactions (each commit a new serial in Knot's journal, so an
IXFR, and a NOTIFY to apexd)."""

import os
import shutil
import subprocess


from . import dnsutil
from .procs import wait_until

START_TIMEOUT = 600.0


def soa_fields(path):
    """(ttl, mname, rname, serial, [refresh, retry, expire, minimum]) of
    the zone file's SOA (its first record)."""
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 11 and fields[3] == "SOA":
                return int(fields[1]), fields[4], fields[5], int(fields[6]), fields[7:11]
    raise RuntimeError("no SOA at the start of %s" % path)


class KnotPrimary:
    def __init__(self, procs, workdir, zones, port, secondary_port):
        """zones: [(origin, file)]; NOTIFY goes to 127.0.0.1@secondary_port."""
        self.procs = procs
        self.dir = os.path.join(workdir, "knot")
        os.makedirs(os.path.join(self.dir, "db"), exist_ok=True)
        self.zones = zones
        self.port = port
        self.secondary_port = secondary_port
        self.sock = os.path.join(self.dir, "knot.sock")
        self.soa = {origin: soa_fields(path) for origin, path in zones}
        self.proc = None

    def config(self):
        d = self.dir
        lines = ["server:", '    rundir: "%s"' % d,
                 "    listen: %s@%d" % (dnsutil.LOOPBACK, self.port)]
        if os.geteuid() == 0:
            lines.append("    user: root:root")
        lines += ["    udp-workers: 1", "    tcp-workers: 1", "    background-workers: 1",
                  "database:", '    storage: "%s/db"' % d,
                  "control:", '    listen: "%s"' % self.sock,
                  "log:", "  - target: stderr", "    any: warning",
                  "remote:", "  - id: secondary",
                  "    address: %s@%d" % (dnsutil.LOOPBACK, self.secondary_port),
                  "acl:", "  - id: transfer", "    address: %s" % dnsutil.LOOPBACK,
                  "    action: transfer",
                  "template:", "  - id: default", '    storage: "%s"' % d,
                  "    zonefile-sync: -1", "    zonefile-load: whole",
                  "    journal-content: changes", "    semantic-checks: off",
                  "    dnssec-signing: off", "    notify: secondary", "    acl: transfer",
                  "zone:"]
        for origin, path in self.zones:
            lines += ["  - domain: %s" % origin, '    file: "%s"' % os.path.abspath(path)]
        return "\n".join(lines) + "\n"

    def start(self):
        conf = os.path.join(self.dir, "knot.conf")
        with open(conf, "w") as f:
            f.write(self.config())
        self.proc = self.procs.start([shutil.which("knotd") or "/usr/sbin/knotd", "-c", conf],
                                     log_path=os.path.join(self.dir, "log"))
        for origin, _ in self.zones:
            if not wait_until(lambda: self.proc.poll() is not None or
                              dnsutil.soa_serial(self.port, origin, 0.2) is not None,
                              START_TIMEOUT, 0.2) or self.proc.poll() is not None:
                raise RuntimeError("knotd did not serve %s; see %s/log" % (origin, self.dir))
        return self

    def knotc(self, *args):
        cmd = ["knotc", "-s", self.sock, "-t", "120"] + [str(a) for a in args]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=180)
        if r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd[3:]), r.stdout.decode(errors="replace")))
        return r.stdout.decode(errors="replace")

    def change(self, history):
        """One transaction: the records of the serial before replaced by
        those of a new serial, and the SOA of the new serial.  Knot commits
        it to its journal and sends NOTIFY; returns the new serial."""
        origin = history.origin
        old = history.latest()
        serial = history.next_serial()
        try:
            self.knotc("zone-begin", origin)
            try:
                for owner, _, rtype, _ in history.records(old):
                    self.knotc("zone-unset", origin, owner, rtype)
                for owner, ttl, rtype, rdata in history.records(serial):
                    self.knotc("zone-set", origin, owner, ttl, rtype, rdata)
                ttl, mname, rname, _, timers = self.soa[origin]
                self.knotc("zone-set", origin, "@", ttl, "SOA", mname, rname, serial, *timers)
                self.knotc("zone-commit", origin)
            except Exception:
                self.knotc("zone-abort", origin)
                raise
        except Exception:
            history.forget(serial)
            raise
        return serial

    def serial(self, origin):
        return dnsutil.soa_serial(self.port, origin)


