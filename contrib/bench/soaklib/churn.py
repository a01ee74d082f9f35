# SPDX-License-Identifier: BSD-3-Clause
"""The churn: everything that changes apexd's state while it serves.

  ixfr        a new serial of nu. at the primary every interval (and of the
              root zone every second interval): Knot's NOTIFY, apexd's IXFR
  reload      apexd's own zone file rewritten with a new serial, then
              `apexctl reload` of that zone (every 30 s)
  reconfig    a zone added to the configuration file, `apexctl reconfig`,
              checked served; a minute later removed, checked gone
  metrics     the metrics endpoint scraped (every 5 s): each line a sample,
              each zone's serial one the soak made
  vanishing   TCP clients that connect, pipeline queries and go away
              without reading the answers, after half a message, or with
              a reset (every second)
"""

import os
import random
import socket
import struct

from . import dnsutil
from .procs import wait_until

RECONFIG_ZONE = "reconfig.soak.example."


def write_zone(path, origin, serial, records, hosts=200):
    """A small zone file: SOA, NS, hosts A records, and records."""
    lines = ["$ORIGIN %s" % origin, "$TTL 3600",
             "@ SOA ns1.%s hostmaster.%s %d 1800 900 604800 300" % (origin, origin, serial),
             "@ NS ns1.%s" % origin, "ns1 A 127.0.0.1"]
    lines += ["host%d A 192.0.2.%d" % (i, i % 250 + 1) for i in range(hosts)]
    lines += ["%s %d %s %s" % (owner, ttl, rtype, rdata) for owner, ttl, rtype, rdata in records]
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, path)


class Churn:
    def __init__(self, apexd, primary, histories, own_zone, own_path, workdir):
        self.apexd = apexd
        self.primary = primary
        self.histories = histories  # origin -> ZoneHistory
        self.own_zone = own_zone
        self.own_path = own_path
        self.workdir = workdir
        self.ticks = 0
        self.ixfrs = {origin: 0 for origin in histories}
        self.reloads = 0
        self.reconfigs = 0
        self.reconfig_zone_in = False
        self.scrapes = 0
        self.metrics = {}
        self.tcp_clients = 0
        self.rng = random.Random(39)

    # -- the primary's changes: IXFRs
    def ixfr(self):
        self.ticks += 1
        origins = ["nu."] + (["."] if self.ticks % 2 == 0 else [])
        for origin in origins:
            self.primary.change(self.histories[origin])
            self.ixfrs[origin] += 1

    # -- apexd's own zone file reloaded
    def reload(self):
        h = self.histories[self.own_zone]
        serial = h.next_serial()
        write_zone(self.own_path, self.own_zone, serial, h.records(serial))
        rc, out = self.apexd.apexctl("reload", self.own_zone)
        if rc != 0:
            raise RuntimeError("apexctl reload %s: %s" % (self.own_zone, out.strip()))
        self.reloads += 1

    # -- a zone added and removed by reconfig
    def reconfig(self):
        path = os.path.join(self.workdir, "reconfig.zone")
        adding = not self.reconfig_zone_in
        if adding:
            write_zone(path, RECONFIG_ZONE, 1, [], hosts=20)
            self.apexd.primaries.append((RECONFIG_ZONE, path))
        else:
            self.apexd.primaries = [z for z in self.apexd.primaries if z[0] != RECONFIG_ZONE]
        self.apexd.write_config()
        rc, out = self.apexd.apexctl("reconfig")
        if rc != 0:
            raise RuntimeError("apexctl reconfig: %s" % out.strip())
        self.reconfig_zone_in = adding
        if not wait_until(lambda: self.reconfig_served() == adding, 30, 0.1):
            raise RuntimeError("%s still %s 30 s after reconfig" % (
                RECONFIG_ZONE, "not served" if adding else "served"))
        self.reconfigs += 1

    def reconfig_served(self):
        """Whether apexd answers for the reconfig zone from that zone (its
        SOA), rather than from the root zone above it."""
        r = dnsutil.udp(self.apexd.port, dnsutil.query(RECONFIG_ZONE, "SOA", False), 0.5)
        if r is None:
            return None
        return any(rr.rdtype == 6 and rr.name.to_text() == RECONFIG_ZONE for rr in r.answer)

    # -- the metrics endpoint
    def scrape(self):
        text = self.apexd.scrape()
        values = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                key, _, value = line.rpartition(" ")
                try:
                    values[key] = float(value)
                except ValueError:
                    raise RuntimeError("metrics: unreadable line %r" % line)
        if not values:
            raise RuntimeError("metrics: no values")
        for origin, h in self.histories.items():
            serial = values.get('apex_zone_serial{zone="%s"}' % origin)
            if serial is None or not h.known(int(serial)):
                raise RuntimeError("metrics: %s at serial %s, which was never made" % (
                    origin, serial))
        self.metrics = values
        self.scrapes += 1

    # -- TCP clients that vanish
    def vanishing_clients(self, count=4):
        names = ["nu.", "www.example.nu.", ".", "host1." + self.own_zone]
        for i in range(count):
            kind = (self.tcp_clients + i) % 4
            s = dnsutil.tcp_connect(self.apexd.port)
            try:
                pipeline = b"".join(dnsutil.framed(dnsutil.query(self.rng.choice(names), "A",
                                                                 False)) for _ in range(3))
                if kind == 0:    # pipelined, gone without reading
                    s.sendall(pipeline)
                elif kind == 1:  # one answer read, then gone
                    s.sendall(pipeline)
                    s.settimeout(2)
                    s.recv(2)
                elif kind == 2:  # half a message, then gone
                    s.sendall(pipeline[:len(pipeline) // 2 + 3])
                else:            # pipelined, then a reset
                    s.sendall(pipeline)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            finally:
                s.close()
        self.tcp_clients += count


def own_zone_start(history, path):
    """apexd's own zone at its base serial."""
    write_zone(path, history.origin, history.base, [])
    return path


